// SPDX-License-Identifier: GPL-3.0-or-later
// Surface sources on any faces with a chosen emitting side (SurfaceSource::sides, used by the Tcl
// SurfaceSourceBuilder for internal region surfaces) and numerical-aperture (cone) emission.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <algorithm>

#include "Common/Errors.hpp"
#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/Core/Emitters.hpp"
#include "Tests/Geometry/LaunchSampler.hpp"

using namespace fm;

namespace {
struct SidesModel {
    // A 2 mm cube (region 2) inside a 6 mm box (region 1): its surface is internal.
    TetraMesh mesh = makeBoxMesh({-3, -3, -3}, {3, 3, 3}, 6, 6, 6, [](const Point3& c) {
        return std::fabs(c[0]) < 1 && std::fabs(c[1]) < 1 && std::fabs(c[2]) < 1 ? 2u : 1u;
    });
    MaterialSet mats;
    SidesModel() {
        mats.exterior(Material(0, 0, 0, 1.0));
        mats.append(Material(0.1, 10, 0.9, 1.4));
        mats.append(Material(0.1, 10, 0.9, 1.4));
    }
    std::vector<LaunchRecord> launch(const Source& s, int n) {
        return fmtest::sampleLaunches(packModel(mesh, mats, s), n, 3);
    }
    // Unit normal of face f pointing into tetra t (one of its two sides).
    Point3 into(uint32_t f, uint32_t t) const {
        const MeshFace& F = mesh.face(f);
        double s = t == F.owner ? -1.0 : 1.0;
        return {s * F.normal[0], s * F.normal[1], s * F.normal[2]};
    }
    double planeDistance(uint32_t f, const Point3& p) const {
        const MeshFace& F = mesh.face(f);
        return std::fabs(dotP(F.normal, sub(p, mesh.point(F.points[0]))));
    }
    // The face of S.sides whose emitting tetra is the launch's and whose plane holds the launch
    // point (0 if none): where the packet was emitted from.
    uint32_t faceUnder(const SurfaceSource& S, const LaunchRecord& l) const {
        for (auto [f, t] : S.sides)
            if (t == l.tetra && planeDistance(f, {l.pos.x, l.pos.y, l.pos.z}) < 1e-5) return f;
        return 0;
    }
};
}  // namespace

BOOST_FIXTURE_TEST_SUITE(surface_sides, SidesModel)

BOOST_AUTO_TEST_CASE(internal_faces_emit_from_the_face_into_the_chosen_side) {
    // The inner cube's surface, emitting outward (into region 1).
    SurfaceSource S;
    for (auto [f, inside] : mesh.regionBoundary(2)) {
        const MeshFace& F = mesh.face(f);
        BOOST_REQUIRE(F.other != 0);  // internal: the inner cube never touches the mesh boundary
        S.sides.push_back({f, inside == F.owner ? F.other : F.owner});
    }
    BOOST_REQUIRE_EQUAL(S.sides.size(), 6u * 2 * 2 * 2);  // 6 sides of 2x2 squares, 2 triangles each
    S.emission = SurfaceSource::Lambert;
    double cosSum = 0;
    auto L = launch(S, 4000);
    for (const auto& l : L) {
        uint32_t f = faceUnder(S, l);  // a selected face, emitting into the launch tetra
        BOOST_REQUIRE(f);
        Point3 p{l.pos.x, l.pos.y, l.pos.z};
        BOOST_CHECK(mesh.contains(l.tetra, p, 1e-5));
        BOOST_CHECK_EQUAL(mesh.region(l.tetra), 1u);
        // On the inner cube's surface: |x|, |y| or |z| is 1 and none exceeds it.
        double m = std::max({std::fabs(p[0]), std::fabs(p[1]), std::fabs(p[2])});
        BOOST_CHECK_SMALL(m - 1.0, 1e-5);
        double c = dotP(into(f, l.tetra), Point3{l.dir.x, l.dir.y, l.dir.z});
        BOOST_CHECK_GT(c, 0.0);
        cosSum += c;
    }
    // Lambertian: mean cosine to the normal 2/3.
    BOOST_CHECK_CLOSE(cosSum / L.size(), 2.0 / 3.0, 2.0);
}

BOOST_AUTO_TEST_CASE(numerical_aperture_limits_the_cone) {
    SurfaceSource S;
    for (auto [f, inside] : mesh.regionBoundary(2)) S.sides.push_back({f, inside});
    S.emission = SurfaceSource::Cone;
    S.numericalAperture = 0.7;
    const double cosMax = std::sqrt(1 - (0.7 / 1.4) * (0.7 / 1.4));  // asin(NA / n) = 30 degrees
    double minCos = 1;
    for (const auto& l : launch(S, 3000)) {
        uint32_t f = faceUnder(S, l);
        BOOST_REQUIRE(f);
        BOOST_CHECK_EQUAL(mesh.region(l.tetra), 2u);
        minCos = std::min(minCos, dotP(into(f, l.tetra), Point3{l.dir.x, l.dir.y, l.dir.z}));
    }
    BOOST_CHECK_GE(minCos, cosMax - 1e-5);
    BOOST_CHECK_LT(minCos, cosMax + 0.02);  // and the cone is filled out to its edge
}

BOOST_AUTO_TEST_CASE(bad_sides_are_model_errors) {
    SurfaceSource S;
    auto [f, inside] = mesh.regionBoundary(2).front();
    S.sides.push_back({f, 1});  // tetra 1 is far from this face
    BOOST_CHECK_THROW(packModel(mesh, mats, S), ModelError);
    S.sides = {{uint32_t(mesh.faceCount() + 1), inside}};
    BOOST_CHECK_THROW(packModel(mesh, mats, S), ModelError);
    S.sides = {{f, inside}};
    S.emission = SurfaceSource::Cone;
    S.numericalAperture = 2.0;  // > n
    BOOST_CHECK_THROW(packModel(mesh, mats, S), ModelError);
}

BOOST_AUTO_TEST_SUITE_END()
