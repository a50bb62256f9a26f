// SPDX-License-Identifier: GPL-3.0-or-later
// TetraMesh: adjacency computed from tetras, orientation, volumes, boundary, point location,
// and clear errors for broken meshes.
#include <boost/test/unit_test.hpp>
#include <random>

#include "Common/Errors.hpp"
#include "Geometry/MeshBuilder.hpp"

using namespace fm;

BOOST_AUTO_TEST_SUITE(mesh)

BOOST_AUTO_TEST_CASE(box_mesh_topology) {
    TetraMesh m = makeBoxMesh({0, 0, 0}, {2, 3, 4}, 2, 3, 4, [](const Point3& c) { return c[2] < 2 ? 1u : 2u; });
    BOOST_CHECK_EQUAL(m.tetraCount(), 6u * 24);
    BOOST_CHECK_EQUAL(m.pointCount(), 3u * 4 * 5);
    double v = 0;
    for (uint32_t t = 1; t <= m.tetraCount(); ++t) v += m.volume(t);
    BOOST_CHECK_CLOSE(v, 24.0, 1e-9);
    BOOST_CHECK_CLOSE(m.regionVolume(1), 12.0, 1e-9);
    // Boundary: each unit square of the box surface is 2 triangles.
    BOOST_CHECK_EQUAL(m.boundaryFaces().size(), 2u * 2 * (2 * 3 + 3 * 4 + 2 * 4));
    double area = 0;
    for (uint32_t f : m.boundaryFaces()) area += m.face(f).area;
    BOOST_CHECK_CLOSE(area, 2 * (6 + 12 + 8.0), 1e-9);
    // Euler: F = (4T + B) / 2
    BOOST_CHECK_EQUAL(m.faceCount(), (4 * m.tetraCount() + m.boundaryFaces().size()) / 2);
    // Adjacency is symmetric, and each face normal points away from the owner's centroid.
    for (uint32_t t = 1; t <= m.tetraCount(); ++t)
        for (int i = 0; i < 4; ++i) {
            uint32_t nb = m.neighbour(t, i);
            if (nb) {
                bool back = false;
                for (int j = 0; j < 4; ++j) back |= m.neighbour(nb, j) == t;
                BOOST_REQUIRE(back);
            }
            const MeshFace& F = m.face(m.tetraFace(t, i) & 0x7fffffff);
            double sgn = (m.tetraFace(t, i) & 0x80000000u) ? -1 : 1;
            Point3 c{0, 0, 0};
            for (uint32_t p : m.tetra(t))
                for (int k = 0; k < 3; ++k) c[k] += 0.25 * m.point(p)[k];
            BOOST_REQUIRE_LT(sgn * dotP(F.normal, sub(c, m.point(F.points[0]))), 0);
        }
    // Region boundary of region 1: its bottom (2*3 squares) + sides below z=2 + the interface.
    BOOST_CHECK_EQUAL(m.regionBoundary(1).size(), 2u * (6 + 6 + 2 * (2 * 2 + 3 * 2)));
}

BOOST_AUTO_TEST_CASE(point_location) {
    TetraMesh m = makeBoxMesh({-1, -1, -1}, {1, 1, 1}, 5, 5, 5, [](const Point3&) { return 1u; });
    std::mt19937 g(1);
    std::uniform_real_distribution<double> U(-1.2, 1.2);
    for (int i = 0; i < 2000; ++i) {
        Point3 p{U(g), U(g), U(g)};
        uint32_t t = m.locate(p);
        bool inside = std::fabs(p[0]) < 1 && std::fabs(p[1]) < 1 && std::fabs(p[2]) < 1;
        if (!inside) {
            BOOST_CHECK_EQUAL(t, 0u);
            continue;
        }
        BOOST_REQUIRE_NE(t, 0u);
        BOOST_CHECK(m.contains(t, p));
    }
}

BOOST_AUTO_TEST_CASE(inverted_tetra_is_reoriented) {
    std::vector<Point3> p{{0, 0, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    TetraMesh m(p, {{0, 0, 0, 0}, {1, 2, 4, 3}}, {0, 1});  // negative orientation as given
    BOOST_CHECK_CLOSE(m.volume(1), 1.0 / 6, 1e-9);
    BOOST_CHECK_EQUAL(m.boundaryFaces().size(), 4u);
}

BOOST_AUTO_TEST_CASE(broken_meshes_are_rejected_with_the_tetra_named) {
    std::vector<Point3> p{{0, 0, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {2, 0, 0}, {1, 1, 1}};
    auto expectError = [&](std::vector<TetraPoints> t, std::vector<uint32_t> r, const std::string& needle) {
        try {
            TetraMesh m(p, t, r);
            BOOST_ERROR("no error for " << needle);
        } catch (const ModelError& e) {
            BOOST_CHECK_MESSAGE(std::string(e.what()).find(needle) != std::string::npos,
                                "message '" << e.what() << "' lacks '" << needle << "'");
        }
    };
    expectError({{0, 0, 0, 0}, {1, 2, 3, 5}}, {0, 1}, "tetra 1 is degenerate");      // coplanar
    expectError({{0, 0, 0, 0}, {1, 2, 3, 9}}, {0, 1}, "refers to point 9");
    expectError({{0, 0, 0, 0}, {1, 2, 3, 4}}, {0, 0}, "region 0");
    expectError({{0, 0, 0, 0}, {1, 2, 3, 4}, {1, 2, 3, 6}, {2, 3, 4, 1}}, {0, 1, 1, 1}, "shared by");
    std::vector<Point3> bad = p;
    bad[3][1] = std::nan("");
    try {
        TetraMesh m(bad, {{0, 0, 0, 0}, {1, 2, 3, 4}}, {0, 1});
        BOOST_ERROR("NaN coordinate accepted");
    } catch (const ModelError& e) {
        BOOST_CHECK(std::string(e.what()).find("point 3") != std::string::npos);
    }
}

BOOST_AUTO_TEST_SUITE_END()
