// SPDX-License-Identifier: GPL-3.0-or-later
// A mesh as a file gives it, before a TetraMesh (faces, adjacency, checks) is built from it;
// and reading a whole file in one go, for the fast mesh readers.
#pragma once
#include <string>
#include <vector>

#include "Geometry/TetraMesh.hpp"

namespace fm {

// points[0], tetras[0] and regions[0] are the dummies TetraMesh expects.
struct MeshArrays {
    std::vector<Point3> points;
    std::vector<TetraPoints> tetras;
    std::vector<uint32_t> regions;
};

// The bytes of a file (one read); FormatError naming the file when it cannot be read.
std::string readWholeFile(const std::string& path);

// TetraMesh from the arrays; a ModelError from the checks names the file (`path: ...`).
TetraMesh buildMesh(MeshArrays&& a, const std::string& path, const MeshCheckOptions& check);

}  // namespace fm
