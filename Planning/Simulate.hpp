// The per-source simulations of a plan through the batch machinery (Kernels/Batch.hpp): every
// candidate source is run as `batches` independent sub-runs (seeds seed, seed+1, ...) with its
// packets split between them, the mesh packed once (and uploaded once per GPU).
#pragma once
#include <atomic>
#include <functional>
#include <string>

#include "Planning/DoseMatrix.hpp"
#include "Planning/PlanSpec.hpp"

namespace fm::planning {

struct SimulationReport {
    double seconds = 0;
    std::string kernel;
    uint64_t packets = 0;  // all runs together
    size_t runs = 0;
};

// progress(runsDone, runsTotal) on the calling thread. Throws fm::Error for bad models/options
// and when cancelled.
DoseMatrix simulateSources(const PlanSpec& plan, SimulationReport& report,
                           const std::function<void(size_t, size_t)>& progress = {},
                           const std::atomic<bool>* cancel = nullptr);

}  // namespace fm::planning
