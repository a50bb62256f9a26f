// SPDX-License-Identifier: GPL-3.0-or-later
// The per-source simulations of a plan through the batch machinery (Kernels/Batch.hpp): every
// candidate source is run as `batches` independent sub-runs (seeds seed, seed+1, ...) with its
// packets split between them, the mesh packed once (and uploaded once per GPU).
#pragma once
#include <atomic>
#include <functional>
#include <string>

#include "Planning/DoseMatrix.hpp"
#include "Planning/PlanSpec.hpp"

namespace fm {
class MpiSession;
}

namespace fm::planning {

struct SimulationReport {
    double seconds = 0;
    std::string kernel;
    uint64_t packets = 0;  // all runs together
    size_t runs = 0;
    size_t ranks = 1;  // MPI ranks that shared the runs
    // The source compiler's warnings (e.g. a diffuser partly outside the mesh) and each source
    // whose runs booked more than kAbnormalWarningFraction of their weight abnormal: the matrix
    // misses that light, so the plan over-doses by that much.
    std::vector<std::string> warnings;
};

// progress(runsDone, runsTotal) on the calling thread. Throws fm::Error for bad models/options
// and when cancelled. With an MPI session of several ranks every rank must call it; whole runs go
// to the ranks and the matrix comes back on rank 0 (empty elsewhere).
DoseMatrix simulateSources(const PlanSpec& plan, SimulationReport& report,
                           const std::function<void(size_t, size_t)>& progress = {},
                           const std::atomic<bool>* cancel = nullptr, const MpiSession* mpi = nullptr);

}  // namespace fm::planning
