// SPDX-License-Identifier: GPL-3.0-or-later
// meshLabelImage with CGAL's Mesh_3 over a labelled image domain. The only translation unit that
// includes CGAL's image meshing (it compiles slowly).
#include <CGAL/Exact_predicates_inexact_constructions_kernel.h>
#include <CGAL/Image_3.h>
#include <CGAL/Labeled_mesh_domain_3.h>
#include <CGAL/Mesh_complex_3_in_triangulation_3.h>
#include <CGAL/Mesh_criteria_3.h>
#include <CGAL/Mesh_triangulation_3.h>
#include <CGAL/Random.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>

#include "Common/Errors.hpp"
#include "Geometry/Meshing/CGALPipeline.hpp"
#include "Kernels/Core/Records.hpp"

namespace fm {

namespace {

using K = CGAL::Exact_predicates_inexact_constructions_kernel;
using Domain = CGAL::Labeled_mesh_domain_3<K>;
using Tr = CGAL::Mesh_triangulation_3<Domain, CGAL::Default, CGAL::Sequential_tag>::type;
using C3t3 = CGAL::Mesh_complex_3_in_triangulation_3<Tr>;
using Criteria = CGAL::Mesh_criteria_3<Tr>;
namespace params = CGAL::parameters;

// The image padded by one voxel of outside on every side, as CGAL's word type (the smallest
// unsigned type that holds every label). Voxel (0,0,0) of the result is at the local origin.
template <class Word>
CGAL::Image_3 paddedImage(const LabelImage& im, WORD_KIND kind, SIGN sign) {
    const size_t nx = im.dims[0] + 2, ny = im.dims[1] + 2, nz = im.dims[2] + 2;
    _image* raw = ::_createImage(nx, ny, nz, 1, float(im.spacing[0]), float(im.spacing[1]),
                                 float(im.spacing[2]), sizeof(Word), kind, sign);
    if (!raw) throw Error("meshing: cannot allocate the " + std::to_string(nx * ny * nz) + "-voxel image");
    Word* d = static_cast<Word*>(raw->data);
    std::memset(d, 0, nx * ny * nz * sizeof(Word));
    for (size_t k = 0; k < im.dims[2]; ++k)
        for (size_t j = 0; j < im.dims[1]; ++j)
            for (size_t i = 0; i < im.dims[0]; ++i)
                d[(i + 1) + nx * ((j + 1) + ny * (k + 1))] = Word(im.at(i, j, k));
    return CGAL::Image_3(raw);
}

CGAL::Image_3 toCGALImage(const LabelImage& im) {
    int32_t maxLabel = *std::max_element(im.labels.begin(), im.labels.end());
    if (maxLabel < 256) return paddedImage<uint8_t>(im, WK_FIXED, SGN_UNSIGNED);
    if (maxLabel < 65536) return paddedImage<uint16_t>(im, WK_FIXED, SGN_UNSIGNED);
    return paddedImage<uint32_t>(im, WK_FIXED, SGN_UNSIGNED);
}

// Relative accuracy with which the image domain locates surface points (of its bounding box's
// diagonal).
constexpr double kSurfaceErrorBound = 1e-5;
// Voxel faces over the smooth surface they stand for: up to sqrt(3), for a plane across the
// diagonal of the voxels.
constexpr double kStaircaseArea = 1.733;

double labelSize(const std::map<int32_t, double>& byLabel, double global, int32_t label) {
    auto it = byLabel.find(label);
    return it == byLabel.end() ? global : it->second;
}

// The fewest tetras and surface triangles Mesh_3 makes of the image at these (resolved) sizes: the
// labelled volume at each label's cell size, and the faces between voxels of different labels
// (label 0 beyond the image) at the smaller facet size of the two labels, less the staircase.
MeshingEstimate fewestElements(const LabelImage& im, const std::map<int32_t, size_t>& counts, const MeshingOptions& o) {
    MeshingEstimate e;
    double volume = 0, cellSize = o.cellSize, facetSize = o.facetSize;
    for (const auto& [label, n] : counts) {
        if (label == 0) continue;
        double size = labelSize(o.cellSizeByLabel, o.cellSize, label);
        e.tetras += fewestTetras(double(n) * im.voxelVolume(), size);
        volume += double(n) * im.voxelVolume();
        cellSize = std::min(cellSize, size);
    }
    // Per pair of facet sizes (few), the voxel-face area between labels that use it.
    std::map<double, double> areaBySize;
    const double faceArea[3] = {im.spacing[1] * im.spacing[2], im.spacing[0] * im.spacing[2],
                                im.spacing[0] * im.spacing[1]};
    const size_t nx = im.dims[0], ny = im.dims[1], nz = im.dims[2];
    auto face = [&](int32_t a, int32_t b, int axis) {
        if (a == b) return;
        double size = std::min(labelSize(o.facetSizeByLabel, o.facetSize, a), labelSize(o.facetSizeByLabel, o.facetSize, b));
        areaBySize[size] += faceArea[axis];
    };
    for (size_t k = 0; k < nz; ++k)
        for (size_t j = 0; j < ny; ++j)
            for (size_t i = 0; i < nx; ++i) {
                int32_t l = im.at(i, j, k);
                face(l, i + 1 < nx ? im.at(i + 1, j, k) : 0, 0);
                face(l, j + 1 < ny ? im.at(i, j + 1, k) : 0, 1);
                face(l, k + 1 < nz ? im.at(i, j, k + 1) : 0, 2);
                if (i == 0) face(l, 0, 0);
                if (j == 0) face(l, 0, 1);
                if (k == 0) face(l, 0, 2);
            }
    double area = 0;
    for (const auto& [size, a] : areaBySize) {
        e.triangles += fewestTriangles(a / kStaircaseArea, size);
        area += a / kStaircaseArea;
        facetSize = std::min(facetSize, size);
    }
    const double voxels = double(nx + 2) * double(ny + 2) * double(nz + 2);
    completeEstimate(e, voxels * 4, volume, cellSize, area, facetSize);
    return e;
}

// The non-zero labels of the image (those meshed).
std::set<int32_t> meshedLabels(const std::map<int32_t, size_t>& counts) {
    std::set<int32_t> s;
    for (const auto& [label, n] : counts)
        if (label != 0) s.insert(label);
    return s;
}

// Refuses a facet distance below the accuracy of the domain's surface points: refinement could
// not meet it.
void requireResolvableDistance(const LabelImage& im, const MeshingOptions& o) {
    double d2 = 0;
    for (int a = 0; a < 3; ++a) d2 += std::pow(double(im.dims[a] + 1) * im.spacing[a], 2);
    const double accuracy = kSurfaceErrorBound * std::sqrt(d2);
    if (o.facetDistance < accuracy) {
        char msg[256];
        std::snprintf(msg, sizeof msg,
                      "facet distance %g mm is below %g mm, the accuracy with which the image's surfaces are "
                      "located (%g of its diagonal): give a larger facet distance",
                      o.facetDistance, accuracy, kSurfaceErrorBound);
        throw ParameterError(msg);
    }
}

// Labels on the two sides of a surface point: the labelled domain's patch index is that pair.
struct PatchPair {
    Domain::Surface_patch_index operator()(const Domain::Surface_patch_index& p) const { return p; }
};
using Sizing = LabelSizing<Domain, PatchPair>;

}  // namespace

MeshingEstimate estimateImageMeshing(const LabelImage& image, const MeshingOptions& options) {
    image.validate("estimateImageMeshing");
    validateMeshingOptions(options);
    MeshingOptions o =
        resolveMeshingDefaults(options, std::min({image.spacing[0], image.spacing[1], image.spacing[2]}));
    auto counts = image.labelCounts();
    requireKnownLabels(o, meshedLabels(counts), "the image has");
    requireResolvableDistance(image, o);
    return fewestElements(image, counts, o);
}

TetraMesh meshLabelImage(const LabelImage& image, const MeshingOptions& options) {
    image.validate("meshLabelImage");
    validateMeshingOptions(options);
    auto counts = image.labelCounts();
    if (counts.size() == 1 && counts.begin()->first == 0)
        throw ParameterError("meshLabelImage: the image has only label 0 (the outside): nothing to mesh");
    // A region is a material index of the packed cells: refused here rather than after meshing.
    int32_t maxLabel = counts.rbegin()->first;
    if (uint32_t(maxLabel) >= kMaxPackedMaterials)
        throw ParameterError("meshLabelImage: label " + std::to_string(maxLabel) + " (" +
                             std::to_string(counts.rbegin()->second) + " voxels) is past " +
                             std::to_string(kMaxPackedMaterials - 1) +
                             ", the largest region a mesh holds (a region is a material index): renumber "
                             "the labels (a label map a=b, or fullmonte-mesh --compact-labels)");
    double spacing = std::min({image.spacing[0], image.spacing[1], image.spacing[2]});
    MeshingOptions o = resolveMeshingDefaults(options, spacing);
    requireKnownLabels(o, meshedLabels(counts), "the image has");
    requireResolvableDistance(image, o);
    const MeshingEstimate least = fewestElements(image, counts, o);
    requireMeshingMemory(least, "meshing", kMeshTooLargeAdvice);
    StageReporter report(o.progress);
    if (o.progress) o.progress("labelled image: " + least.detail);

    CGAL::Random rng(o.seed);
    CGAL::get_default_random() = CGAL::Random(o.seed);
    report.start("image domain");
    CGAL::Image_3 cgalImage = toCGALImage(image);
    // Surface points are located to 1e-5 of the bounding box's diagonal: far below a voxel.
    Domain domain = Domain::create_labeled_image_mesh_domain(cgalImage, params::relative_error_bound = 1e-5,
                                                             params::p_rng = &rng);
    report.end();

    Sizing cellSize{&domain, o.cellSize, &o.cellSizeByLabel, {}};
    Sizing facetSize{&domain, o.facetSize, &o.facetSizeByLabel, {}};
    Criteria criteria(params::facet_angle = o.facetAngle, params::facet_size = facetSize,
                      params::facet_distance = o.facetDistance,
                      params::cell_radius_edge_ratio = o.cellRadiusEdgeRatio, params::cell_size = cellSize);
    C3t3 c3t3 = refineAndOptimise<C3t3>(domain, criteria, o, report);

    // Local coordinates start at the padding voxel's centre: shift to the image's millimetres.
    Point3 shift;
    for (int a = 0; a < 3; ++a) shift[a] = image.origin[a] - image.spacing[a];
    return extractTetraMesh(c3t3, shift);
}

}  // namespace fm
