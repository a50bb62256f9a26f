// SPDX-License-Identifier: GPL-3.0-or-later
// MCML's files through the MCML kernels (Kernels/McmlKernel.hpp): a .mci run (cm, 1/cm) as the
// kernels' input (Geometry/Layered.hpp LayeredModel, McmlGrid, RunOptions; mm, 1/mm), and their
// raw tallies as MCML's normalised outputs (MCMLResult: .mco content, cm units). The kernels and
// the geometry never see the file types; this is where they are converted.
#pragma once
#include <string>

#include "Geometry/Layered.hpp"
#include "Kernels/McmlKernel.hpp"
#include "Storage/MCML/MCMLTypes.hpp"

namespace fm {

// MCML .mci run (cm, 1/cm) -> model (mm, 1/mm).
LayeredModel layeredFromMcml(const MCMLRun& run);

// The .mci grid (cm) in kernel units (mm).
McmlGrid mcmlGrid(const MCMLRun& run);

// Options matching MCML for this run: packets = run.photons, roulette wmin = run.wth and
// prwin = run.chance. Seed, threads, firstPacket, progress and cancel are left to the caller.
RunOptions mcmlRunOptions(const MCMLRun& run);

// The size of the run's ASCII .mco file (about 14 bytes a value), before it is written.
double mcoFileBytes(const MCMLRun& run);

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

}  // namespace fm
