// SPDX-License-Identifier: GPL-3.0-or-later
// Segmentations in VTK's XML formats for the mesher: a labelled image (.vti, the point scalars:
// one value per voxel centre; origin, spacing and direction honoured) and a closed triangle
// surface (.vtp, polygons triangulated as fans). No VTK types here.
#pragma once
#include <string>

#include "Geometry/Meshing/LabelImage.hpp"
#include "Geometry/Meshing/Mesher.hpp"

namespace fm {

// Throws FormatError naming the file (not an image, no scalars, non-integer labels, oblique).
LabelImage readVTKLabelImage(const std::string& path);
// Throws FormatError naming the file (not polydata, no triangles, lines/strips only).
TriangleSurface readVTKSurface(const std::string& path);

}  // namespace fm
