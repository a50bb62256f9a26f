// SPDX-License-Identifier: GPL-3.0-or-later
// Adjoint fluence per detector (docs/DETECTORS.md "Adjoint fluence"): a run with the detector as
// the source (its faces emitting into the tissue, Lambertian) gives, per tetra, the fluence the
// detector "sees". By reciprocity, with index-matched boundaries, the detected weight per
// launched packet of a forward run whose source density is q (unit total, per mm^3) is
//     S = (A / 4) sum_t q_t V_t phi_t,
// A the detector's area, phi_t the adjoint fluence per launched adjoint packet (mm^-2): an
// exit counted whatever its direction is the adjoint of a cosine-law inward emission of total
// power pi A, whose fluence at a point is 4 pi times the response to a unit isotropic source there.
#pragma once
#include <functional>
#include <vector>

#include "Geometry/MaterialSet.hpp"
#include "Geometry/ModelFingerprint.hpp"
#include "Geometry/Sources.hpp"
#include "Geometry/TetraMesh.hpp"
#include "Kernels/KernelInput.hpp"

namespace fm {

// The faces of detector d (boundary faces of its compiled spec; for a disk, every face it
// touches, so the source covers whole faces) emitting inward with the cosine law. Throws
// ParameterError for a detector out of range or without faces.
SurfaceSource detectorAdjointSource(const TetraMesh& mesh, const DetectionSpec& spec, uint32_t d);
// The area of those faces (mm^2).
double detectorArea(const TetraMesh& mesh, const DetectionSpec& spec, uint32_t d);

// A kernel run (Kernels/Dispatch.hpp runKernel with its kind bound, which this layer may not call).
using KernelRunner = std::function<RunResult(const KernelInput&, const RunOptions&)>;

// Per detector, the fluence per tetra of its adjoint run (mm^-2 per launched packet; index 0
// unused; NaN where mu_a = 0), each run by `run` with opt's packets, seed and threads (no
// detectors, volume tally on).
std::vector<std::vector<double>> adjointFluence(const TetraMesh& mesh, const MaterialSet& mats,
                                                const DetectionSpec& spec, const RunOptions& opt,
                                                const KernelRunner& run);
// The model fingerprint of that matrix (one column per detector): the mesh, the materials, the
// detectors' adjoint sources, opt's packets for each and its roulette and step limits.
ModelFingerprint adjointFingerprint(const TetraMesh& mesh, const MaterialSet& mats, const DetectionSpec& spec,
                                    const RunOptions& opt);

}  // namespace fm
