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
#include <cstdio>
#include <cstring>

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

// The fewest tetras Mesh_3 makes of the labelled volume at these sizes: cells of circumradius up to
// the cell size average at least kCellVolumeFraction x size^3 (a regular tetra's is 0.51 size^3;
// refinement and the radius-edge bound leave most smaller), and surfaces refine further. A per-label
// cell size counts for its label's voxels.
double fewestTetras(const LabelImage& im, const std::map<int32_t, size_t>& counts, const MeshingOptions& o) {
    constexpr double kCellVolumeFraction = 0.3;
    double tetras = 0;
    for (const auto& [label, n] : counts) {
        if (label == 0) continue;
        auto it = o.cellSizeByLabel.find(label);
        double size = it == o.cellSizeByLabel.end() ? o.cellSize : it->second;
        tetras += double(n) * im.voxelVolume() / (kCellVolumeFraction * size * size * size);
    }
    return tetras;
}

// Labels on the two sides of a surface point: the labelled domain's patch index is that pair.
struct PatchPair {
    Domain::Surface_patch_index operator()(const Domain::Surface_patch_index& p) const { return p; }
};
using Sizing = LabelSizing<Domain, PatchPair>;

}  // namespace

MeshingEstimate estimateImageMeshing(const LabelImage& image, const MeshingOptions& options) {
    constexpr double kPeakBytesPerTetra = 700;
    image.validate("estimateImageMeshing");
    validateMeshingOptions(options);
    MeshingOptions o =
        resolveMeshingDefaults(options, std::min({image.spacing[0], image.spacing[1], image.spacing[2]}));
    MeshingEstimate e;
    e.tetras = fewestTetras(image, image.labelCounts(), o);
    const double voxels = double(image.dims[0] + 2) * double(image.dims[1] + 2) * double(image.dims[2] + 2);
    e.bytes = voxels * 4 + e.tetras * kPeakBytesPerTetra;
    return e;
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
    StageReporter report(o.progress);
    if (o.progress) {
        char line[160];
        std::snprintf(line, sizeof line, "labelled volume at cell size %g mm: at least %.2g tetras", o.cellSize,
                      fewestTetras(image, counts, o));
        o.progress(line);
    }

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
