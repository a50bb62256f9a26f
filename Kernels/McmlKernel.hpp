// SPDX-License-Identifier: GPL-3.0-or-later
// MCML mode: a packed layered model (Geometry/Layered.hpp packLayered: its slab cells) run
// through the slab photon loop (Kernels/McmlSlabLoop.hpp: the common packet loop's physics
// written out for layers) into raw MCML tallies. Kernels choose by name: "cpu"
// (Kernels/CPU/McmlCpu.cpp) or "cuda" (runMcmlCuda, built with Kernels/CUDA). MCML's files and
// normalisations: Storage/MCML/MCMLKernelRun.hpp.
#pragma once
#include <string>
#include <vector>

#include "Kernels/KernelInput.hpp"
#include "Kernels/McmlScorer.hpp"
#include "fm_config.h"

namespace fm {

// Raw MCML tallies in units of launched packet weight (each packet launches weight 1).
struct McmlTallies {
    std::vector<double> absorbedRZ;     // [ir*nz + iz]
    std::vector<double> reflectedRA;    // [ir*na + ia]
    std::vector<double> transmittedRA;  // [ir*na + ia]
    std::vector<double> absorbedCell;   // [cell]; layer i (0-based) is cell i+1
    // Time-resolved runs (RunOptions::gates on; Kernels/McmlTimeTally.hpp), else empty: bins as
    // TimeGates (the gates, then early, then late).
    TimeGates gates;
    std::vector<double> reflectedRT;    // [bin*nr + ir]
    std::vector<double> transmittedRT;  // [bin*nr + ir]
    std::vector<double> absorbedZT;     // [bin*nz + iz]
    // Runs with RunOptions::detection (layeredDetection, Kernels/McmlRecords.hpp): the photons'
    // exit records, else empty.
    DetectedPackets records;
    Ledger ledger;
    Events events;
    uint64_t packetsRequested = 0;
    uint64_t packetsDone = 0;
    double seconds = 0;
    double kernelSeconds = 0;  // GPU: the run's launches (a records refill not included); CPU: 0
    // GPU: the layer cells were added up per thread in rows of shared memory and once per block
    // into global memory (TuningKnobs::mcmlCellRows, where they fit), not by an atomic per visit.
    bool layerRows = false;
    bool cancelled = false;
    std::string kernel;
};

// The layer count of a packed layered model (packLayered: in.slabs). Throws ParameterError
// where `in` has no slab cells (a mesh) or its materials do not match them.
uint32_t slabLayers(const KernelInput& in);

// Host memory a run of this grid takes at its peak: the 2-D tallies (nr*nz + 2*nr*na doubles)
// once per CPU worker, and at least twice (raw tallies and MCML's normalised arrays).
double mcmlMemoryBytes(const McmlGrid& grid, unsigned threads);

// Runs kernel "cpu" or "cuda" over a packed layered model, with per-photon records where
// opt.detection is set (on "cuda" for at most kGpuDetectMaterials - 2 layers: ParameterError
// otherwise). Refuses (ParameterError, with the
// numbers) a grid whose tallies would not fit in the available memory (Common/ResourceLimits.hpp). Throws ParameterError for an unknown
// kernel, bad options, or "CUDA MCML kernel not available in this build".
McmlTallies runMcmlKernel(const std::string& kernel, const KernelInput& in, const McmlGrid& grid,
                          const RunOptions& opt);

#if FM_HAVE_CUDA && defined(FM_HAVE_CUDA_MCML)
// Provided by Kernels/CUDA (McmlCuda.cu): the slab photon loop (Kernels/McmlSlabLoop.hpp) over in,
// arrays sized nr*nz, nr*na, nr*na and in.cells.size(), zeroed, filled as McmlTallies.
McmlTallies runMcmlCuda(const KernelInput& in, const McmlGrid& grid, const RunOptions& opt);
#endif

}  // namespace fm
