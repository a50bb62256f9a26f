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
// With a 2-component cell array "Labels" (label behind each polygon, label in front), the
// surface is a labelled surface (TriangleSurface::sides). Throws FormatError naming the file
// (not polydata, no polygons, a malformed Labels array).
TriangleSurface readVTKSurface(const std::string& path);

}  // namespace fm
