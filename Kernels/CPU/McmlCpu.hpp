// SPDX-License-Identifier: GPL-3.0-or-later
// The CPU MCML kernel: the slab photon loop in lanes (Kernels/CPU/McmlLanes.hpp) on std::thread
// workers.
#pragma once
#include "Kernels/McmlKernel.hpp"

namespace fm {

// Per-worker tallies, summed at the end; like runCpu, results depend on the thread count only
// through the order of that sum.
McmlTallies runMcmlCpu(const KernelInput& in, const McmlGrid& grid, const RunOptions& opt);

}  // namespace fm
