// The CPU kernel: std::thread workers over packet-index ranges.
#pragma once
#include <functional>

#include "Kernels/KernelInput.hpp"

namespace fm {

// Splits packets [first, first+count) into one contiguous range per worker (fixed for a given
// thread count, so results are bit-identical run to run), runs body(worker, begin, end) on each
// in chunks, reports progress from the calling thread and honours cancel between chunks.
// Returns the number of packets completed.
uint64_t forEachPacketRange(const RunOptions& opt, unsigned threads,
                            const std::function<void(unsigned, uint64_t, uint64_t)>& body);

unsigned resolveThreads(unsigned requested);

// Runs the standard tallies (volume/surface/directed per opt.outputs, ledger, events).
RunResult runCpu(const KernelInput& in, const RunOptions& opt);

}  // namespace fm
