// SPDX-License-Identifier: GPL-3.0-or-later
// The CPU trace run (TetraTraceKernel): the standard volume and surface tallies plus the trace of
// every packet. Meant for a few packets (traces take ~36 bytes per event); the ordinary kernels
// (runCpu) are separate and unaffected.
#pragma once
#include <vector>

#include "Kernels/Core/PacketTrace.hpp"
#include "Kernels/KernelInput.hpp"

namespace fm {

struct TracedRunResult {
    RunResult run;  // volume and surface per opt.outputs (directed is not kept), ledger, events
    TraceSet traces;
};

// Default limit on the points all traces may hold (2^25 points, 2.4 GB at the peak, see
// traceMemoryBytes): a run that would pass it stops with a ParameterError asking for fewer
// packets, as soon as it passes (also within one packet's trace).
constexpr uint64_t kDefaultMaxTracePoints = uint64_t(1) << 25;

// The peak memory of `points` trace points: the workers' steps and their concatenation in
// packet order are both held at the end of the run (2 x 36 bytes a point).
constexpr uint64_t traceMemoryBytes(uint64_t points) { return 2 * points * sizeof(TraceStep); }

// Same packets, random streams and physics as runCpu with the same options, so the tallies agree
// with an untraced run (to summation order). Throws ParameterError when the traces would exceed
// maxPoints.
TracedRunResult runCpuTraced(const KernelInput& in, const RunOptions& opt,
                             uint64_t maxPoints = kDefaultMaxTracePoints);

}  // namespace fm
