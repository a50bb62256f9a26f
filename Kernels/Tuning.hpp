// SPDX-License-Identifier: GPL-3.0-or-later
// The run-time tuning knobs of the kernels: the few settings a benchmark or a test needs to
// change without rebuilding. Results do not depend on them (every packet keeps its history);
// only speed and the order of summation do. Carried in RunOptions::tuning; the library never
// reads or changes the environment for them: the command-line tools, Tcl and Python fill them
// from environment variables with tuningFromEnvironment() (docs/PERFORMANCE.md, "Tuning knobs").
#pragma once
#include <cstdint>

namespace fm {

enum class CellLayout : uint8_t;  // Kernels/Core/CellLayout.hpp (Auto, the default, is 0)

// Which CPU lane loop runs (Kernels/CPU/CpuLanes.hpp).
enum class CpuIsa : uint8_t {
    Best,     // AVX2 where the CPU has it (and the build has the AVX2 loop), else generic
    Generic,  // one packet at a time, without AVX2
};

struct TuningKnobs {
    // GPU mesh and MCML kernels: at most this many thread blocks per SM (0: as many as fit).
    uint32_t cudaBlocksPerSm = 0;
    // GPU MCML kernel: lanes at a layer boundary wait for others of their warp and cross together
    // (Kernels/CUDA/McmlCuda.cu); false: each lane crosses at once.
    bool mcmlGroupCrossings = true;
    // GPU MCML kernel: each thread adds its layer visits into a row of shared memory of its own,
    // the rows summed once per block (where they fit without costing a block per SM); false: every
    // visit is a global atomic add into the block's replica of the layer cells.
    bool mcmlCellRows = true;
    // GPU MCML kernel: replicas of the (r, z) grid that the blocks add into (0: the default, 32;
    // fewer where the grid is large: a 64 MB budget).
    uint32_t mcmlRzReplicas = 0;
    // GPU MCML kernel: replicas of the (r, z) bins at the beam (the grid's first rows), which
    // take most sends (0: the default, 256, fewer where the rows are large: a 16 MB budget; 1:
    // none of their own, they are in the grid's replicas), and about how many bins they are
    // (0: the default, 4096; whole rows, at least one).
    uint32_t mcmlRzNearCopies = 0;
    uint32_t mcmlRzNearBins = 0;
    CpuIsa cpuIsa = CpuIsa::Best;
    // GPU batches: runs in flight per device, 1 or 2 (0: BatchOptions::slotsPerDevice decides).
    uint32_t batchSlotsPerDevice = 0;
    // GPU batches: runs per launch (0: BatchOptions::runsPerLaunch decides; 1: one run per launch).
    uint32_t batchRunsPerLaunch = 0;
    // GPU batches' run-group kernel (Kernels/CUDA/MultiRunCuda.cu): the variant compiled for 3
    // resident blocks per SM (0, the default) or for 4 (64 registers, as the single-run kernel;
    // to compare).
    uint32_t cudaGroupBlocksPerSm = 0;
    // GPU mesh kernel (runKernel "cuda"): the cells' layout on the device (Kernels/Core/CellLayout.hpp):
    // auto (default: compact for meshes whose records outgrow the L2, where memory allows, else
    // the 112-byte records), record, split (planes and crossing fields in arrays of their own)
    // or compact (the planes in 32 bytes per cell, decoded at each event). The one knob that
    // changes histories: compact's planes differ from the records' by up to 1e-4 rad, the same
    // physics within statistics, not the same packets. Batches choose as single runs do, so a
    // batch's run follows the same histories as the run alone.
    CellLayout cudaCellLayout{};
    // GPU detecting runs: the record buffer is put in (packet index, detector) order on the device
    // (a radix sort and a gather, then one download of the ordered records) where its memory
    // allows; false: downloaded as filled and ordered on the host (Kernels/DetectedOrder.hpp).
    bool cudaDeviceRecordOrder = true;
};

// The knobs from the environment, defaults where a variable is unset: FM_CUDA_BLOCKS_PER_SM=N,
// FM_CUDA_MCML_GROUP_CROSSINGS=0, FM_CUDA_RZ_REPLICAS=N, FM_CUDA_RZ_NEAR_COPIES=N,
// FM_CUDA_RZ_NEAR_BINS=N, FM_CPU_ISA=generic,
// FM_BATCH_SLOTS_PER_DEVICE=1|2, FM_BATCH_RUNS_PER_LAUNCH=N, FM_CUDA_CELL_LAYOUT=auto|record|split|compact,
// FM_CUDA_GROUP_BLOCKS_PER_SM=3|4, FM_CUDA_DEVICE_RECORD_ORDER=0. Throws ParameterError
// naming the variable for a value it cannot use. For the applications' main(), not the library.
TuningKnobs tuningFromEnvironment();

// Sets CUDA_DEVICE_MAX_CONNECTIONS=1 (one hardware work queue per GPU) unless the user set it:
// every launch of a run is ordered by events anyway, and the runtime's default of 8 queues makes
// the CUDA context's creation and teardown slower. For an application's main(), before any CUDA
// call; the library itself leaves the environment alone.
void preferOneCudaQueue();

}  // namespace fm
