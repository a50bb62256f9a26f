// SPDX-License-Identifier: GPL-3.0-or-later
// COMSOL Multiphysics text mesh files (.mphtxt), as FullMonte 2018's COMSOLMeshReader/Writer used
// them: one Mesh object with 3-D vertices and element types; the tetrahedra ("tet") are read,
// other element types (vtx, edg, tri, ...) are skipped. Region of a tetra: its geometric entity
// index (the COMSOL domain); when the file numbers domains from 0 every label is shifted by one,
// since region 0 is the exterior here. Lines are read by their COMSOL labels ("# number of
// elements", "# Elements", ...), both the COMSOL 3.5/4 ("mesh points", "Domains") and 5.x
// ("mesh vertices", "Geometric entity indices") wordings. Errors: FormatError "file:line: ...".
#pragma once
#include <iosfwd>
#include <string>

#include "Geometry/TetraMesh.hpp"

namespace fm {

TetraMesh readCOMSOLMesh(const std::string& path);
TetraMesh readCOMSOLMesh(std::istream& in, const std::string& name);

// Writes the mesh as one COMSOL Mesh object (version 4 layout): vertices (0-based) and one "tet"
// element type with the regions as geometric entity indices. Through "<path>.partial".
void writeCOMSOLMesh(const std::string& path, const TetraMesh& mesh);

}  // namespace fm
