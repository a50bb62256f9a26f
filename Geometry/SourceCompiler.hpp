// SPDX-License-Identifier: GPL-3.0-or-later
// Sources -> kernel emitters (Kernels/Core/Emitters.hpp). All geometric work (point location,
// ray entry, clipping segments to tetras, choosing tetras that overlap a ball) happens here, once.
#pragma once
#include "Geometry/MaterialSet.hpp"
#include "Geometry/Sources.hpp"
#include "Kernels/KernelInput.hpp"

namespace fm {

// Fills emitters/emitterCdf/pieces/pieceCdf of `out`. Throws ModelError naming the source and
// what is wrong (outside the mesh, zero power, empty region...).
void compileSources(const Source& src, const TetraMesh& mesh, const MaterialSet& mats,
                    KernelInput& out);

// First boundary face entered by the ray p + t d (t >= -tol): face id and t, or {0, 0}.
std::pair<uint32_t, double> rayEntry(const TetraMesh& mesh, const Point3& p, const Point3& d);

}  // namespace fm
