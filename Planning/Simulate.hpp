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
// The matrix's model fingerprint is planFingerprint(plan, plan.simulation.batches).
DoseMatrix simulateSources(const PlanSpec& plan, SimulationReport& report,
                           const std::function<void(size_t, size_t)>& progress = {},
                           const std::atomic<bool>* cancel = nullptr, const MpiSession* mpi = nullptr);

// The packets of each run when the plan's sources are simulated in `batches` batches: run
// batch * sources + source gets ceil(n / batches) (at least 1) of the source's n packets.
std::vector<uint64_t> planRunPackets(const PlanSpec& plan, size_t batches);
// The model fingerprint of the matrix simulateSources gives for this plan in `batches` batches:
// its mesh, its materials, its candidate sources in order, planRunPackets and the kernel's
// default roulette and step limits (the plan has no others).
ModelFingerprint planFingerprint(const PlanSpec& plan, size_t batches);

// A saved matrix to reuse instead of simulating.
struct MatrixReuse {
    std::string file;
    size_t batches = 0;            // its batches (0: its columns / the plan's sources)
    bool unchecked = false;        // use it even where its model fingerprint differs from the plan's
    std::string uncheckedOption;   // how the user asks for that, named in the refusal
};
// Reads a saved matrix for this plan and checks it: its shape (doseMatrixFrom), then its model
// fingerprint against planFingerprint(plan, its batches). A fingerprint that differs is a
// ParameterError naming the file, the parts that differ and reuse.uncheckedOption, unless
// reuse.unchecked (then a warning); a file without a fingerprint loads with a warning that it
// cannot be checked. Warnings are appended to `warnings`; `check` (when given) gets the outcome
// for the report: "matches the plan", "none in the file: not checked" or "differs (...): used unchecked".
DoseMatrix loadPlanMatrix(const PlanSpec& plan, const MatrixReuse& reuse, std::vector<std::string>& warnings,
                          std::string* check = nullptr);

}  // namespace fm::planning
