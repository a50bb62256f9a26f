// SPDX-License-Identifier: GPL-3.0-or-later
// Batches of runs over one mesh: one run per candidate source, per optical-property guess, or
// both (PDT plan optimisation runs thousands). The mesh is packed once and, on the GPU, uploaded
// once per device; only materials and emitters change from run to run.
//
// Where runs go:
//   - one host, CPU kernel: one run at a time on all threads (a run is already parallel);
//   - one host, CUDA kernel: each device keeps the mesh uploaded and takes the next run the
//     moment it finishes one (a shared counter), so a faster GPU does more runs; a batch of
//     fewer runs than devices splits each run's packets over all of them instead;
//   - MPI ranks: whole runs are handed to ranks from one counter (a one-sided fetch-and-add on
//     rank 0, or a fixed interleaving where the MPI library has no one-sided transport), and each
//     finished run is sent to rank 0. Whole runs, not packet ranges: a run then never waits for
//     other ranks, there is one message per run instead of a reduction per run, and a run's
//     tallies are bit-identical to a one-process run (no change of summation order).
// Every run's result equals runKernel(kernel, mesh + that run's materials/emitters, options with
// its seed and packets): bit-identical on the CPU at the same thread count; on the GPU to the
// order of floating-point atomics, as any GPU run.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "Kernels/KernelInput.hpp"

namespace fm {

class MpiSession;

// What changes between the runs of a batch over one mesh: materials and compiled emitters.
struct RunVariant {
    std::vector<MaterialRecord> materials;  // index 0 = exterior
    std::vector<EmitterRecord> emitters;
    std::vector<double> emitterCdf;
    std::vector<Piece> pieces;
    std::vector<double> pieceCdf;
};

// Copies a variant's materials and emitters into `in` (whose cells and faceCount stay).
void applyVariant(KernelInput& in, const RunVariant& v);
// The variant part of a packed input (materials and emitters), moved out of it.
RunVariant takeVariant(KernelInput& in);

struct BatchRunSpec {
    RunVariant model;
    uint64_t packets = 1000000;
    uint64_t seed = 1;
};

// Runs per GPU launch of a batch when BatchOptions::runsPerLaunch is 0: groups of 8 runs share a
// launch, so that one run's last packets overlap the next ones' instead of draining the GPU
// (docs/PERFORMANCE.md, "Planning loops with run groups": 8 keeps most of the gain of larger
// groups with results coming in small groups).
constexpr unsigned kDefaultRunsPerLaunch = 8;

struct BatchOptions {
    std::string kernel = "cpu";  // "cpu" or "cuda"
    KernelParams params;         // wmin, prwin, maxSteps, maxHits (each run's seed is its own)
    unsigned threads = 0;        // CPU threads per run, 0 = all
    std::vector<int> devices;    // CUDA devices (empty: device 0; {-1}: every device)
    // CUDA: runs (or groups of runs) in flight per device, 1 or 2; 0: 2 where runs go in groups
    // (runsPerLaunch), else 1. With 2, the next run's packets start while the last ones of the
    // run before finish and while its tallies come back (no idle tail or gap between runs), at
    // the cost of a second copy of the mesh and tallies per device; used only when every run has
    // the same materials (else 1). tuning.batchSlotsPerDevice, when set, overrides.
    unsigned slotsPerDevice = 0;
    // CUDA: runs whose packets share one launch (Kernels/MultiRun.hpp), so that a launch's tail
    // is paid once per group instead of once per run. 0: kDefaultRunsPerLaunch; 1: one run per
    // launch. Groups hold consecutive runs with the same materials, only in one process (not over
    // MPI ranks), only when every run has at most MultiRunLimits::maxPacketsPerRun packets, and
    // not for models with fewer than 32 tally cells. tuning.batchRunsPerLaunch, when set, overrides.
    unsigned runsPerLaunch = 0;
    TuningKnobs tuning;  // passed to every run (Kernels/Tuning.hpp)
    OutputSelection outputs;
    // The time gates of outputs.gatedVolume / gatedSurface (Kernels/TimeGates.hpp): every run
    // returns its own gated tallies, as the single run would. Gated runs go one per GPU launch
    // (groups switch the standard tallies only) and only in one process (not over MPI ranks).
    TimeGates gates;
    // Runs finished so far, on the calling thread (rank 0 only); must be cheap.
    std::function<void(size_t runsDone, size_t runsTotal)> progress;
    const std::atomic<bool>* cancel = nullptr;  // stops the runs in flight, starts no more
};

// Called on rank 0, on the calling thread, once per finished run (in completion order, not run
// order); a cancelled run arrives with result.cancelled set.
using BatchResultFn = std::function<void(size_t run, RunResult&& result)>;

struct BatchSummary {
    size_t runs = 0;          // runs in the batch
    size_t delivered = 0;     // results passed to onResult (rank 0)
    size_t ranks = 1;
    std::vector<size_t> runsPerRank;  // rank 0: how many runs each rank did (load balance)
    size_t slots = 1;         // devices (CUDA) or 1 (CPU) per rank
    bool splitRuns = false;   // fewer runs than devices: each run's packets shared by all devices
    unsigned slotsPerDevice = 1;  // runs in flight per device (BatchOptions::slotsPerDevice)
    unsigned runsPerLaunch = 1;   // most runs in one GPU launch (BatchOptions::runsPerLaunch)
    // Summed over slots: time a slot waited for its next run while runs remained (rank 0's own
    // slots). Near zero when runs are handed out fast enough to keep every device busy.
    double idleSeconds = 0;
    // Where the batch's time went (rank 0's own slots). A kernel's interval is taken from its
    // slot's clock: the run's upload ends where it starts, its download starts where it ends.
    double setupSeconds = 0;       // from the call to the first kernel's start (devices, mesh upload)
    double kernelBusySeconds = 0;  // time at least one kernel of the batch was running
    double kernelGapSeconds = 0;   // between the first kernel's start and the last one's end, time none ran
    double tailSeconds = 0;        // from the last kernel's end to the return (last results, teardown)
    double deliverSeconds = 0;     // in onResult (the caller writing results), on the calling thread
    double heldSeconds = 0;        // summed over slots: waiting for onResult to take finished runs
    double seconds = 0;
    bool cancelled = false;
    std::string kernel;       // e.g. "cpu", "cuda x2"
};

// `mesh` holds the packed cells and faceCount (its materials/emitters are ignored). With an MPI
// session of several ranks (mpi non-null), every rank must call this with the same batch; only
// rank 0 receives results. Throws ParameterError/Error for bad options or a failing device.
BatchSummary runBatch(const KernelInput& mesh, const std::vector<BatchRunSpec>& runs, const BatchOptions& opt,
                      const BatchResultFn& onResult, const MpiSession* mpi = nullptr);

// Fills s.setupSeconds, kernelBusySeconds, kernelGapSeconds and tailSeconds from the kernels'
// intervals (seconds since the batch's start, overlapping where slots share a device) and
// s.seconds.
void timeKernels(std::vector<std::pair<double, double>> kernels, BatchSummary& s);

// The split above by name, in this order, as the CLI's summary.json `time`, Python's
// BatchResult.time and Tcl's BatchRunner timeSplit give it: setup_seconds, kernel_busy_seconds,
// kernel_gap_seconds, tail_seconds, deliver_seconds, slot_idle_seconds, slot_held_seconds.
std::vector<std::pair<std::string, double>> batchTimeSplit(const BatchSummary& s);

// The options a single run equal to batch run `r` would use (for tests and for reproducing one
// column of a batch with fullmonte-run).
RunOptions singleRunOptions(const BatchOptions& opt, const BatchRunSpec& r);

}  // namespace fm
