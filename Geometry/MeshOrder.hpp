// SPDX-License-Identifier: GPL-3.0-or-later
// Numbering a mesh for memory locality: tetras along a space-filling (Morton) curve of their
// centroids, points in the order the tetras first use them. A packet walks from a tetra to its
// neighbours, so neighbours stored close together share cache lines and pages on every kernel.
// The geometry, the regions and each tetra's vertex order are unchanged: a run on the renumbered
// mesh follows the same histories, with the tallies permuted.
#pragma once
#include <cstdint>
#include <vector>

#include "Geometry/TetraMesh.hpp"

namespace fm {

struct MeshNumbering {
    std::vector<uint32_t> tetraFrom;  // new tetra id -> old tetra id (index 0 stays 0)
    std::vector<uint32_t> pointFrom;  // new point id -> old point id (index 0 stays 0)
};

// The locality numbering of raw mesh arrays (index 0 of each a dummy, as TetraMesh takes
// them), applied in place; returns the maps back to the old ids. Deterministic: ties on the
// curve keep their input order.
MeshNumbering orderForLocality(std::vector<Point3>& points, std::vector<TetraPoints>& tetras,
                               std::vector<uint32_t>& regions);

// A renumbered copy of `mesh` (checked like any mesh, with `opt`); `numbering` receives the maps.
TetraMesh orderForLocality(const TetraMesh& mesh, MeshNumbering* numbering = nullptr,
                           const MeshCheckOptions& opt = {});

}  // namespace fm
