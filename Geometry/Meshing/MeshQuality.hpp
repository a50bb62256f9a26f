// SPDX-License-Identifier: GPL-3.0-or-later
// What a user checks after meshing: element quality, and each region's mesh volume next to the
// voxel volume of its label in the image it came from. No CGAL here.
#pragma once
#include <string>
#include <vector>

#include "Geometry/Meshing/LabelImage.hpp"
#include "Geometry/TetraMesh.hpp"

namespace fm {

struct MeshQuality {
    double minDihedral = 0, medianDihedral = 0;        // degrees, over every tetra's 6 angles
    double medianRadiusEdge = 0, maxRadiusEdge = 0;  // circumradius / shortest edge (regular: 0.61)
};
MeshQuality meshQuality(const TetraMesh& mesh);

struct RegionVolume {
    int32_t label = 0;
    size_t tetras = 0, voxels = 0;
    double meshVolume = 0, voxelVolume = 0;  // mm^3
    double relativeError() const { return voxelVolume > 0 ? meshVolume / voxelVolume - 1 : 0; }
};
// One row per label in the mesh or (non-zero) in the image; image may be null (surfaces).
std::vector<RegionVolume> regionVolumes(const TetraMesh& mesh, const LabelImage* image);

// Labels of the image that the mesh lost (no tetras) or whose mesh volume differs from their
// voxel volume by more than `tolerance` (relative): thin or few-voxel structures the sizes do
// not resolve. One sentence each, naming the label and the options that help.
std::vector<std::string> regionVolumeWarnings(const std::vector<RegionVolume>& volumes, double tolerance = 0.2);

// The report fullmonte-mesh prints: counts, per-region volumes, quality, then a "warning:" line
// for each of regionVolumeWarnings.
std::string formatMeshReport(const TetraMesh& mesh, const std::vector<RegionVolume>& volumes,
                             const MeshQuality& quality);

}  // namespace fm
