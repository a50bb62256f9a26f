// SPDX-License-Identifier: GPL-3.0-or-later
// What other atlases bring to the mesher, on small images these tests make: sparse and large
// label codes (refused past a mesh's largest region before meshing, or renumbered 1..N),
// structures the mesh sizes do not resolve (named in the report), images and meshes too large
// for the memory (refused before reading or meshing), and downsampling.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <unistd.h>

#include "Common/Errors.hpp"
#include "Geometry/Meshing/MeshQuality.hpp"
#include "Geometry/Meshing/Mesher.hpp"
#include "Common/ResourceLimits.hpp"
#include "Tests/TestUtil.hpp"

using namespace fm;

namespace {

// n^3 voxels of spacing s, origin 0, labelled by f(i, j, k).
template <class F>
LabelImage gridImage(size_t n, double s, F f) {
    LabelImage im;
    im.dims = {n, n, n};
    im.spacing = {s, s, s};
    im.labels.resize(n * n * n);
    for (size_t k = 0; k < n; ++k)
        for (size_t j = 0; j < n; ++j)
            for (size_t i = 0; i < n; ++i) im.labels[im.index(i, j, k)] = f(i, j, k);
    return im;
}

bool inside(size_t i, size_t j, size_t k, size_t lo, size_t hi) {
    return i >= lo && i < hi && j >= lo && j < hi && k >= lo && k < hi;
}

std::string scratchPath(const std::string& name) {
    return (std::filesystem::temp_directory_path() / ("fm_anatomy_" + std::to_string(::getpid()) + "_" + name)).string();
}

std::string messageOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

}  // namespace

// A label past 65535 is refused before meshing starts (not by the mesh check after the work),
// naming the label and the label map that renumbers it.
BOOST_AUTO_TEST_CASE(label_past_largest_region_refused_before_meshing) {
    LabelImage im = gridImage(12, 1.0, [](size_t i, size_t j, size_t k) { return inside(i, j, k, 3, 9) ? 70000 : 0; });
    MeshingOptions o;
    std::string progress;
    o.progress = [&](const std::string& s) { progress += s + "\n"; };
    std::string msg;
    BOOST_CHECK_THROW(
        try { meshLabelImage(im, o); } catch (const ParameterError& e) {
            msg = e.what();
            throw;
        },
        ParameterError);
    BOOST_TEST_INFO(msg);
    BOOST_CHECK(msg.find("label 70000") != std::string::npos);
    BOOST_CHECK(msg.find("label map") != std::string::npos);
    BOOST_CHECK(progress.find("refinement") == std::string::npos);  // refused before any stage
    // 65535 itself is the largest region a mesh holds: meshed.
    for (int32_t& l : im.labels)
        if (l) l = 65535;
    TetraMesh m = meshLabelImage(im, o);
    BOOST_CHECK_EQUAL(m.region(1), 65535u);
}

// Sparse codes (an atlas's 1000, 2035, 30000) renumbered 1..N in ascending order; 0 stays.
BOOST_AUTO_TEST_CASE(compact_label_map_numbers_present_labels) {
    LabelImage im = gridImage(4, 1.0, [](size_t i, size_t, size_t) { return i == 0 ? 0 : i == 1 ? 30000 : i == 2 ? 1000 : 2035; });
    LabelMap m = compactLabelMap(im);
    BOOST_CHECK_EQUAL(m.size(), 3u);
    BOOST_CHECK_EQUAL(m.at(1000), 1);
    BOOST_CHECK_EQUAL(m.at(2035), 2);
    BOOST_CHECK_EQUAL(m.at(30000), 3);
    applyLabelMap(im, m);
    auto counts = im.labelCounts();
    BOOST_CHECK_EQUAL(counts.size(), 4u);
    BOOST_CHECK_EQUAL(counts.at(0), 16u);
    BOOST_CHECK_EQUAL(counts.at(3), 16u);
}

// Blocks of 2^3 voxels: the majority label (ties to the lowest), spacing doubled, each new voxel
// centred on its block; a partial block at the far edge votes with its own voxels.
BOOST_AUTO_TEST_CASE(downsample_majority_and_geometry) {
    LabelImage im;
    im.dims = {5, 2, 2};
    im.spacing = {0.5, 1, 2};
    im.origin = {10, 20, 30};
    im.labels.assign(20, 0);
    auto set = [&](size_t i, size_t j, size_t k, int32_t l) { im.labels[im.index(i, j, k)] = l; };
    for (size_t j = 0; j < 2; ++j)
        for (size_t k = 0; k < 2; ++k) {
            set(0, j, k, 7);  // block 0: four 7s, four 0s: a tie, the lowest (0) wins
            set(2, j, k, 3);  // block 1: 3 in six of eight voxels
            set(3, j, k, 3);
            set(4, j, k, 5);  // block 2: the partial block, all 5
        }
    set(2, 0, 0, 9);
    LabelImage d = downsampleLabels(im, 2);
    BOOST_CHECK((d.dims == std::array<size_t, 3>{3, 1, 1}));
    BOOST_CHECK((d.spacing == Point3{1, 2, 4}));
    BOOST_CHECK((d.origin == Point3{10.25, 20.5, 31}));
    BOOST_CHECK_EQUAL(d.labels[0], 0);
    BOOST_CHECK_EQUAL(d.labels[1], 3);
    BOOST_CHECK_EQUAL(d.labels[2], 5);
    BOOST_CHECK_THROW(downsampleLabels(im, 0), ParameterError);
}

// A structure one voxel thick and a two-voxel label, meshed at sizes far coarser than both: the
// report names each label the mesh lost or badly misses, and the options that help.
BOOST_AUTO_TEST_CASE(report_names_labels_the_mesh_does_not_resolve) {
    LabelImage im = gridImage(24, 0.5, [](size_t i, size_t j, size_t k) {
        if (i == 6 && j == 6 && (k == 6 || k == 7)) return 4;
        if (inside(i, j, k, 2, 22)) return k == 12 ? 3 : 1;
        return 0;
    });
    MeshingOptions o;
    o.cellSize = 4;
    o.facetSize = 4;
    o.facetDistance = 1;
    o.seed = 3;
    TetraMesh m = meshLabelImage(im, o);
    auto volumes = regionVolumes(m, &im);
    std::string report = formatMeshReport(m, volumes, meshQuality(m));
    BOOST_TEST_INFO(report);
    BOOST_CHECK(report.find("warning: label 4 (2 voxels)") != std::string::npos);
    BOOST_CHECK(report.find("--facet-size-label") != std::string::npos);
    BOOST_CHECK(report.find("warning: label 1 ") == std::string::npos);  // the bulk is resolved
    // Each warned label is absent from the mesh or off by more than 20%; no other is warned.
    for (const RegionVolume& r : volumes) {
        bool warned = report.find("warning: label " + std::to_string(r.label) + " ") != std::string::npos;
        BOOST_CHECK_EQUAL(warned, r.voxels > 0 && (r.tetras == 0 || std::fabs(r.relativeError()) > 0.2));
    }
}

// A mesh far beyond the memory is refused before meshing starts, with the numbers (a cell size of
// 0.01 mm over 8000 mm^3: ~1e10 tetras); the estimate is a lower bound on a mesh actually made.
BOOST_AUTO_TEST_CASE(mesh_too_large_for_memory_refused_before_meshing) {
    LabelImage im = gridImage(20, 1.0, [](size_t i, size_t j, size_t k) { return inside(i, j, k, 4, 16) ? 1 : 0; });
    MeshingOptions o;
    o.cellSize = 0.01;
    MeshingEstimate huge = estimateImageMeshing(im, o);
    BOOST_CHECK_GT(huge.tetras, 1e9);
    std::string msg = messageOf([&] { requireMemory(huge.bytes, "meshing", kMeshTooLargeAdvice); });
    BOOST_TEST_INFO(msg);
    BOOST_CHECK(msg.find("of memory") != std::string::npos);
    BOOST_CHECK(msg.find("--downsample") != std::string::npos);
    o.cellSize = 1.5;
    o.seed = 2;
    MeshingEstimate e = estimateImageMeshing(im, o);
    TetraMesh m = meshLabelImage(im, o);
    BOOST_TEST_INFO(e.tetras << " estimated, " << m.tetraCount() << " made");
    BOOST_CHECK(e.tetras > 0 && e.tetras <= double(m.tetraCount()));
}

// An image whose voxels would not fit in memory is found from its header, before its data is
// read: a NIfTI header of 4000^3 voxels and a MetaImage of 5000^3, neither with the data.
BOOST_AUTO_TEST_CASE(image_too_large_for_memory_found_from_its_header) {
    std::string mha = scratchPath("huge.mha");
    {
        std::ofstream f(mha, std::ios::binary);
        f << "ObjectType = Image\nNDims = 3\nDimSize = 5000 5000 5000\nElementType = MET_USHORT\n"
             "ElementDataFile = LOCAL\n";
    }
    double bytes = labelImageReadBytes(mha);
    std::filesystem::remove(mha);
    BOOST_CHECK_GE(bytes, 125e9 * (2 + 4));
    BOOST_CHECK_THROW(requireMemory(bytes, mha, kImageTooLargeAdvice), ParameterError);
    std::string nii = scratchPath("huge.nii");
    {
        char h[352] = {};
        int32_t sizeofHdr = 348;
        int16_t dim[8] = {3, 4000, 4000, 4000, 1, 1, 1, 1}, datatype = 2, bitpix = 8;
        float pixdim[8] = {1, 1, 1, 1, 1, 1, 1, 1}, voxOffset = 352;
        std::memcpy(h, &sizeofHdr, 4);
        std::memcpy(h + 40, dim, sizeof dim);
        std::memcpy(h + 70, &datatype, 2);
        std::memcpy(h + 72, &bitpix, 2);
        std::memcpy(h + 76, pixdim, sizeof pixdim);
        std::memcpy(h + 108, &voxOffset, 4);
        std::memcpy(h + 344, "n+1\0", 4);
        std::ofstream(nii, std::ios::binary).write(h, sizeof h);
    }
    bytes = labelImageReadBytes(nii);
    std::filesystem::remove(nii);
    BOOST_CHECK_GE(bytes, 64e9 * (1 + 4));
    BOOST_CHECK_THROW(requireMemory(bytes, nii, kImageTooLargeAdvice), ParameterError);
}

// A background coded 255 (on every border voxel) is named before meshing, with the label map that
// makes it the outside; an image whose border has two labels, or 0, is not.
BOOST_AUTO_TEST_CASE(background_coded_other_than_zero_named) {
    LabelImage im = gridImage(8, 1.0, [](size_t i, size_t j, size_t k) { return inside(i, j, k, 1, 7) ? 1 : 255; });
    auto w = labelImageWarnings(im);
    BOOST_REQUIRE_EQUAL(w.size(), 1u);
    BOOST_CHECK(w[0].find("--label-map 255=0") != std::string::npos);
    im.labels[im.index(7, 3, 4)] = 1;  // a tissue reaching one face: a slab, not a background
    BOOST_CHECK(labelImageWarnings(im).empty());
    applyLabelMap(im, parseLabelMap("255=0"));
    BOOST_CHECK(labelImageWarnings(im).empty());
}
