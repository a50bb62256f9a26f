// SPDX-License-Identifier: GPL-3.0-or-later
// Tetrahedral meshing of segmentations: a labelled image or closed organ surfaces in, a conforming
// TetraMesh out whose regions are the labels. CGAL's Mesh_3 does the work behind this interface
// (CGALImageMesher.cpp, CGALSurfaceMesher.cpp); nothing else in the project includes CGAL.
// Built only when CMake finds CGAL (FM_USE_CGAL).
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "Geometry/Meshing/LabelImage.hpp"
#include "Geometry/TetraMesh.hpp"

namespace fm {

struct MeshingOptions {
    // Sizes in mm; 0 picks a default from the image's smallest voxel spacing s: cell size 2.5 s,
    // facet size 2 s, facet distance 0.5 s (for surfaces: from the bounding box, see
    // meshSurfaces). Per-label sizes override the global ones for that label's cells, and for
    // the facets of the interfaces it touches (the smaller of the two labels' sizes).
    double cellSize = 0;
    double facetSize = 0;
    double facetDistance = 0;
    double facetAngle = 25;           // degrees, lower bound on surface triangles' angles
    double cellRadiusEdgeRatio = 3;   // upper bound, cells
    std::map<int32_t, double> cellSizeByLabel, facetSizeByLabel;
    bool perturb = true;  // sliver perturbation after refinement
    bool exude = true;    // sliver exudation after refinement
    // The optimisers work on tetras whose smallest dihedral angle is below this (degrees); a
    // higher bound improves more tetras and takes longer (0: as far as they get, CGAL's default).
    double sliverBound = 10;
    // Seeds the mesher and CGAL's process-wide default generator: the same seed, options and
    // input give the same mesh. Meshing is not meant to run in two threads at once.
    uint32_t seed = 0;
    double optimiserTimeLimit = 0;  // s per optimiser (perturb, exude); 0 = no limit
    // Called at each stage start/end and every few seconds during long stages.
    std::function<void(const std::string&)> progress;
};

// Checks sizes (finite, >= 0), angle and ratio; throws ParameterError naming the option.
void validateMeshingOptions(const MeshingOptions& o);
// The options with every 0 size replaced by its default for cells of size `spacing`.
MeshingOptions resolveMeshingDefaults(MeshingOptions o, double spacing);

// Meshes every non-zero label of `image` (label 0 is the outside: map it to another label with
// applyLabelMap to mesh it). Regions of the result are the labels. The image is padded with one
// voxel of outside, so a label touching the image's edge is closed at the edge voxels' faces.
// Throws ParameterError for bad options, a per-label size for a label the image does not have,
// sizes whose mesh cannot fit in memory (estimateImageMeshing), or an image with no label but 0;
// Error when CGAL fails.
TetraMesh meshLabelImage(const LabelImage& image, const MeshingOptions& options);

// The least meshLabelImage(image, options) makes and needs: the tetras of the labelled volume
// at the cell sizes, the surface triangles of the interfaces at the facet sizes (lower bounds:
// refinement goes further), and the bytes of the padded image plus the tetras (at least a
// quarter of the triangles, each being a face of a tetra) at the mesher's peak bytes per tetra
// (the triangulation, its cells outside the domain, the extracted mesh). Callers compare `bytes`
// with the memory available before meshing (Common/ResourceLimits.hpp) and refuse with
// `detail`; meshLabelImage and meshSurfaces refuse the same way themselves.
struct MeshingEstimate {
    double tetras = 0, triangles = 0, bytes = 0;
    // "at least 1.2e+05 tetras (cell size 0.5 mm over 9.3e+03 mm^3) and 3.4e+04 surface
    // triangles (facet size 0.4 mm over 2.1e+03 mm^2)"
    std::string detail;
};
MeshingEstimate estimateImageMeshing(const LabelImage& image, const MeshingOptions& options);
// What to tell a user whose image (labelImageReadBytes) or mesh (estimateImageMeshing) does not fit.
inline const char* const kImageTooLargeAdvice =
    "crop or downsample the image with an imaging tool first (fullmonte-mesh --downsample works on an image "
    "that can be read)";
inline const char* const kMeshTooLargeAdvice =
    "give a larger cell size (the number of tetras goes as its cube) or facet size (the number of surface "
    "triangles goes as its square), or mesh a downsampled image (fullmonte-mesh --downsample N)";
// What to tell a user whose surfaces' mesh (meshSurfaces) does not fit.
inline const char* const kSurfaceMeshTooLargeAdvice =
    "give a larger cell size (the number of tetras goes as its cube) or facet size (the number of surface "
    "triangles goes as its square)";

// A triangle surface in mm, points and 0-based triangles.
struct TriangleSurface {
    std::vector<Point3> points;
    std::vector<std::array<uint32_t, 3>> triangles;
    // For a labelled surface: per triangle, the label behind it and the label its normal (the
    // counter-clockwise side) points into. Empty for a closed surface of one region.
    std::vector<std::array<int32_t, 2>> sides;
};
// A closed triangle surface bounding region `label` (>= 1): read from `file` (STL, OBJ, OFF or
// PLY) unless `surface` is filled in already (.vtp: Storage/VTK reads it). Or, with label 0, a
// labelled surface: every interface of the model at once, `surface.sides` naming both labels of
// each triangle; it is then the only input.
struct RegionSurface {
    std::string file;
    int32_t label = 0;
    TriangleSurface surface;
};
// Meshes closed surfaces as a polyhedral complex: each surface bounds its label; the label
// outside a surface is that of the smallest other surface containing it (0 if none); triangles
// that two surfaces share (the same three vertices) become one interface between the two labels,
// so touching organs conform. Default sizes from the bounding box's largest side L: facet size
// L/40, cell size L/30, facet distance L/200. Surfaces must meet only along triangles they
// share: a surface that intersects itself, two surfaces that cross, overlap in a plane or touch
// with different triangles (or, for a labelled surface, interfaces meeting other than at their
// triangles' edges and corners) are refused with FormatError naming the files and a point near
// the contact. Throws FormatError naming the file for unreadable or open surfaces,
// ParameterError for bad options, a per-label size for a label no surface has, or sizes whose
// mesh cannot fit in memory (as estimateImageMeshing, from the surfaces' area and volume).
TetraMesh meshSurfaces(const std::vector<RegionSurface>& surfaces, const MeshingOptions& options);

}  // namespace fm
