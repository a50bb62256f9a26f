// SPDX-License-Identifier: GPL-3.0-or-later
// MCML mode: a layered model run through the slab photon loop (Kernels/McmlSlabLoop.hpp: the
// common packet loop's physics written out for layers), then MCML's normalisations into an
// MCMLResult (.mco content, cm units). Kernels choose by name: "cpu" (Kernels/CPU/McmlCpu.cpp)
// or "cuda" (runMcmlCuda, built with Kernels/CUDA).
#pragma once
#include <string>
#include <vector>

#include "Geometry/Layered.hpp"
#include "Kernels/KernelInput.hpp"
#include "Kernels/McmlScorer.hpp"
#include "Storage/MCML/MCMLTypes.hpp"
#include "fm_config.h"

namespace fm {

// Raw MCML tallies in units of launched packet weight (each packet launches weight 1).
struct McmlTallies {
    std::vector<double> absorbedRZ;     // [ir*nz + iz]
    std::vector<double> reflectedRA;    // [ir*na + ia]
    std::vector<double> transmittedRA;  // [ir*na + ia]
    std::vector<double> absorbedCell;   // [cell]; layer i (0-based) is cell i+1
    Ledger ledger;
    Events events;
    uint64_t packetsRequested = 0;
    uint64_t packetsDone = 0;
    double seconds = 0;
    bool cancelled = false;
    std::string kernel;
};

// The .mci grid (cm) in kernel units (mm).
McmlGrid mcmlGrid(const MCMLRun& run);

// Options matching MCML for this run: packets = run.photons, roulette wmin = run.wth and
// prwin = run.chance. Seed, threads, firstPacket, progress and cancel are left to the caller.
RunOptions mcmlRunOptions(const MCMLRun& run);

// The layer bounds of a packed layered model (packLayered) for Core/SlabModel.hpp: z[i] = top of
// cell i (1..L), z[L+1] = bottom, read back from the cells' planes so both views agree to the
// bit. Throws ParameterError if the cells are not slabs.
std::vector<float> slabBounds(const KernelInput& in);

// Host memory a run of this grid takes at its peak: the 2-D tallies (nr*nz + 2*nr*na doubles)
// once per CPU worker, and at least twice (raw tallies and MCML's normalised arrays).
double mcmlMemoryBytes(const McmlGrid& grid, unsigned threads);
// The size of the run's ASCII .mco file (about 14 bytes a value), before it is written.
double mcoFileBytes(const MCMLRun& run);

// Runs kernel "cpu" or "cuda" over a packed layered model. Refuses (ParameterError, with the
// numbers) a grid whose tallies would not fit in the available memory (ResourceLimits.hpp). Throws ParameterError for an unknown
// kernel, bad options, or "CUDA MCML kernel not available in this build".
McmlTallies runMcmlKernel(const std::string& kernel, const KernelInput& in, const McmlGrid& grid,
                          const RunOptions& opt);

// MCML's outputs from raw tallies, normalised by the packets done (MCML's N). The run supplies
// the grid and is echoed into result.run (photons = packets done); Rsp is the analytic
// specular reflectance.
MCMLResult mcmlResult(const McmlTallies& t, const MCMLRun& run, double Rsp);

// The whole MCML run: pack the model, run the kernel with opt as given (see mcmlRunOptions),
// normalise. model must have run's layer count. raw, when given, receives the raw tallies. With
// opt.batches > 1 (the default) the run is made of that many contiguous batches and the result
// carries the standard error of every value (MCMLResult::standardError).
MCMLResult runMcml(const std::string& kernel, const LayeredModel& model, const MCMLRun& run,
                   const RunOptions& opt, McmlTallies* raw = nullptr);

// runMcml's batched run over a packed layered model (Rsp: its specular reflectance).
MCMLResult runMcmlBatches(const std::string& kernel, const KernelInput& in, const MCMLRun& run, double Rsp,
                          const RunOptions& opt, McmlTallies* raw = nullptr);

#if FM_HAVE_CUDA && defined(FM_HAVE_CUDA_MCML)
// Provided by Kernels/CUDA (McmlCuda.cu): the slab photon loop (Kernels/McmlSlabLoop.hpp) over in,
// arrays sized nr*nz, nr*na, nr*na and in.cells.size(), zeroed, filled as McmlTallies.
McmlTallies runMcmlCuda(const KernelInput& in, const McmlGrid& grid, const RunOptions& opt);
#endif

}  // namespace fm
