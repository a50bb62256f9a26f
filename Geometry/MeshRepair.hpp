// SPDX-License-Identifier: GPL-3.0-or-later
// Mesh repair for the common defect of hand-made meshes: organs meshed separately, so that a
// shared surface exists twice (coincident vertices under two ids, a crack between the organs).
#pragma once
#include <string>
#include <vector>

#include "Geometry/TetraMesh.hpp"

namespace fm {

struct RepairReport {
    double tolerance = 0;        // the merge distance used
    size_t pointsMerged = 0;     // points replaced by a coincident one (and removed)
    size_t facesJoined = 0;      // boundary faces before minus after (2 per joined crack face)
    size_t pointsBefore = 0, pointsAfter = 0;
    std::vector<std::string> examples;  // a few merges: ids and coordinates
    std::string summary() const;        // one line for people
};

// A copy of `mesh` with every cluster of points closer than `tolerance` (mesh units; <= 0:
// MeshCheckOptions::kRelativeTolerance x the bounding-box diagonal) merged into its lowest-id
// point, the points left unused removed and the rest renumbered in their order. Tetras keep
// their order and regions. The result is checked like any mesh (opt): it throws ModelError when
// merging collapses a tetra (tolerance larger than an edge) or leaves a defect that is an error.
TetraMesh mergeCoincidentVertices(const TetraMesh& mesh, double tolerance, RepairReport* report = nullptr,
                                  const MeshCheckOptions& opt = {});

}  // namespace fm
