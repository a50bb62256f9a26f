// SPDX-License-Identifier: GPL-3.0-or-later
// Pictures read back: size, not blank, and orientation: a source at x < 0 is drawn left of the
// centre in both planes that show x (z- and y-planes), and high z is at the top.
#include <boost/test/unit_test.hpp>

#include <cairo.h>

#include <filesystem>
#include <set>
#include <unistd.h>

#include "Geometry/MeshBuilder.hpp"
#include "Planning/Figures.hpp"

using namespace fm;
using namespace fm::planning;

namespace {

struct Png {
    int w = 0, h = 0;
    std::vector<uint32_t> px;  // 0xRRGGBB
};

Png readPng(const std::string& f) {
    cairo_surface_t* s = cairo_image_surface_create_from_png(f.c_str());
    BOOST_REQUIRE(cairo_surface_status(s) == CAIRO_STATUS_SUCCESS);
    Png p;
    p.w = cairo_image_surface_get_width(s), p.h = cairo_image_surface_get_height(s);
    const unsigned char* d = cairo_image_surface_get_data(s);
    int stride = cairo_image_surface_get_stride(s);
    for (int y = 0; y < p.h; ++y)
        for (int x = 0; x < p.w; ++x) p.px.push_back(*reinterpret_cast<const uint32_t*>(d + y * stride + 4 * x) & 0xFFFFFF);
    cairo_surface_destroy(s);
    return p;
}

// Mean position of pure-magenta pixels (source markers only use it).
std::array<double, 3> magenta(const Png& p) {
    double sx = 0, sy = 0, n = 0;
    for (int y = 0; y < p.h; ++y)
        for (int x = 0; x < p.w; ++x)
            if (p.px[size_t(y) * p.w + x] == 0xFF00FF) sx += x, sy += y, n += 1;
    return {n ? sx / n : -1, n ? sy / n : -1, n};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(planning_figures)

BOOST_AUTO_TEST_CASE(slices_keep_orientation) {
    TetraMesh mesh = makeBoxMesh({-10, -10, -10}, {10, 10, 10}, 10, 10, 10,
                                 [](const Point3& c) { return std::hypot(c[0], c[1], c[2]) < 5 ? 2u : 1u; });
    // A dose falling off from a point at (-6, 0, 4): x < 0 and z > 0.
    std::vector<double> dose(mesh.tetraCount() + 1, 0.0);
    for (uint32_t t = 1; t <= mesh.tetraCount(); ++t) {
        Point3 c{};
        for (int k = 0; k < 4; ++k)
            for (int a = 0; a < 3; ++a) c[a] += mesh.point(mesh.tetra(t)[k])[a] / 4;
        dose[t] = 100 * std::exp(-std::hypot(c[0] + 6, c[1], c[2] - 4) / 4);
    }
    std::vector<SourceMarker> src{{"P", {-6, 0, 4}, {-6, 0, 4}}};
    SliceStyle style;
    style.isodose = {20, 50};
    auto dir = std::filesystem::temp_directory_path() / ("fm_fig_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const double plotCentreX = 90 + (900 - 90 - 190) / 2.0;  // the square plot of a cubic mesh
    for (int axis : {2, 1, 0}) {
        std::string f = (dir / ("slice" + std::to_string(axis) + ".png")).string();
        renderDoseSlice(f, mesh, dose, {{1, "tissue"}, {2, "tumour"}}, src, {axis, axis == 0 ? -6.0 : axis == 1 ? 0.0 : 4.0},
                        style, "test");
        Png p = readPng(f);
        BOOST_TEST(p.w == 900);
        BOOST_TEST(p.h == 760);
        std::set<uint32_t> colours(p.px.begin(), p.px.end());
        BOOST_TEST(colours.size() > 50u);  // a colour wash, not a blank page
        auto m = magenta(p);
        BOOST_TEST_MESSAGE("plane " << axis << ": source marker at " << m[0] << ", " << m[1] << " (" << m[2] << " px)");
        BOOST_REQUIRE(m[2] > 10);
        if (axis != 0) BOOST_TEST(m[0] < plotCentreX - 50);          // x < 0: left, in the z- and y-planes
        if (axis == 0) BOOST_TEST(std::fabs(m[0] - plotCentreX) < 10);  // y = 0: centre of the x-plane
        if (axis != 2) BOOST_TEST(m[1] < 70 + 310 - 50);              // z > 0: upper half where z is shown
    }
    std::vector<DvhCurve> curves{{"tumour", {1, 2, 3}, {1, 0.5, 0.1}}};
    std::string f = (dir / "dvh.png").string();
    renderDvh(f, curves, {{"tumour V100", 2, 0.9, false, 0}}, "test");
    Png p = readPng(f);
    BOOST_TEST(p.w == 900);
    BOOST_TEST(std::set<uint32_t>(p.px.begin(), p.px.end()).size() > 5u);
    std::filesystem::remove_all(dir);
}

BOOST_AUTO_TEST_SUITE_END()
