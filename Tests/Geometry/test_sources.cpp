// SPDX-License-Identifier: GPL-3.0-or-later
// Sources compile to emitters whose launch records have the right distributions.
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "Common/Errors.hpp"
#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/Core/Emitters.hpp"
#include "Tests/Geometry/LaunchSampler.hpp"

using namespace fm;

namespace {
struct Fixture {
    TetraMesh mesh = makeBoxMesh({-5, -5, 0}, {5, 5, 10}, 10, 10, 10,
                                 [](const Point3& c) { return c[2] < 5 ? 1u : 2u; });
    MaterialSet mats;
    Fixture() {
        mats.exterior(Material(0, 0, 0, 1.0));
        mats.append(Material(0.1, 10, 0.9, 1.5));
        mats.append(Material(0.2, 5, 0.8, 1.5));
    }
    std::vector<LaunchRecord> launch(const Source& s, int n) {
        return fmtest::sampleLaunches(packModel(mesh, mats, s), n, 7);
    }
    // Points at z = 2 (lower half) and z = 8 (upper half) with powers wa and wb.
    static CompositeSource twoPoints(double wa, double wb) {
        auto A = std::make_shared<PointSource>();
        A->position = {0, 0, 2};
        A->power = wa;
        auto B = std::make_shared<PointSource>();
        B->position = {0, 0, 8};
        B->power = wb;
        CompositeSource C;
        C.elements = {A, B};
        return C;
    }
    bool inTetra(const LaunchRecord& L) {
        return L.tetra && mesh.contains(L.tetra, {L.pos.x, L.pos.y, L.pos.z}, 1e-5);
    }
};
}  // namespace

BOOST_FIXTURE_TEST_SUITE(sources, Fixture)

BOOST_AUTO_TEST_CASE(point_isotropic) {
    PointSource P;
    P.position = {0.3, -0.2, 4.1};
    auto L = launch(P, 20000);
    double mz = 0;
    for (auto& l : L) {
        BOOST_REQUIRE(inTetra(l));
        BOOST_REQUIRE_CLOSE(norm(l.dir), 1.0f, 1e-3);
        mz += l.dir.z;
    }
    BOOST_CHECK_SMALL(mz / L.size(), 4 * std::sqrt(1.0 / 3 / L.size()));
}

BOOST_AUTO_TEST_CASE(pencil_from_outside_takes_specular) {
    PencilBeamSource B;
    B.position = {0.25, 0.25, -3};
    B.direction = {0, 0, 1};
    auto L = launch(B, 10);
    BOOST_CHECK_CLOSE(L[0].weight, 0.96f, 1e-3);  // ((1.5 - 1) / 2.5)^2 = 0.04
    BOOST_CHECK_SMALL(L[0].pos.z, 1e-5f);
    BOOST_CHECK(inTetra(L[0]));
    B.position = {0.25, 0.25, 3};  // inside: no specular
    auto I = launch(B, 1);
    BOOST_CHECK_EQUAL(I[0].weight, 1.0f);
    B.position = {20, 0, -3};  // misses
    BOOST_CHECK_THROW(launch(B, 1), ModelError);
}

BOOST_AUTO_TEST_CASE(ball_uniform_in_sphere) {
    BallSource S;
    S.centre = {0.1, 0.2, 5.3};
    S.radius = 2.0;
    auto L = launch(S, 20000);
    double below = 0;
    for (auto& l : L) {
        BOOST_REQUIRE(inTetra(l));
        double r = std::sqrt(std::pow(l.pos.x - 0.1, 2) + std::pow(l.pos.y - 0.2, 2) + std::pow(l.pos.z - 5.3, 2));
        BOOST_REQUIRE_LE(r, 2.0 + 1e-5);
        below += r < 2.0 * std::cbrt(0.5);  // half the volume lies inside r = R / 2^(1/3)
    }
    double f = below / L.size();
    BOOST_CHECK_SMALL(f - 0.5, 4 * std::sqrt(0.25 / L.size()));
}

// A ball far smaller than its tetras: drawn in the tetras and kept when inside, nearly every
// draw would be rejected (the packets booked abnormal); it is drawn in the ball itself.
BOOST_AUTO_TEST_CASE(ball_small_against_its_tetras_draws_in_the_ball) {
    BallSource S;
    S.centre = {0.1, 0.2, 5.3};
    S.radius = 0.001;
    const KernelInput in = packModel(mesh, mats, S);
    BOOST_REQUIRE_EQUAL(in.emitters.size(), 1u);
    BOOST_CHECK_EQUAL(in.emitters[0].inShape, 1u);
    auto L = fmtest::sampleLaunches(in, 5000, 7);
    double below = 0;
    for (auto& l : L) {
        BOOST_REQUIRE_EQUAL(l.weight, 1.f);
        BOOST_REQUIRE(inTetra(l));
        double r = std::sqrt(std::pow(l.pos.x - 0.1, 2) + std::pow(l.pos.y - 0.2, 2) + std::pow(l.pos.z - 5.3, 2));
        BOOST_REQUIRE_LE(r, 0.001 * (1 + 1e-3) + 1e-6);
        below += r < 0.001 * std::cbrt(0.5);
    }
    BOOST_CHECK_SMALL(below / L.size() - 0.5, 4 * std::sqrt(0.25 / L.size()));
}

// A ball drawn in itself whose part outside the mesh is drawn again, not lost: uniform over its
// part inside. Centre 0.5 mm inside the box's x = 5 face, radius 2: of the part inside, the half
// ball x < 4.5 holds (2/3) pi R^3 / ((2/3) pi R^3 + pi (R^2 h - h^3 / 3)) with h = 0.5.
BOOST_AUTO_TEST_CASE(ball_drawn_in_itself_rejects_its_part_outside_the_mesh) {
    BallSource S;
    S.centre = {4.5, 0, 5};
    S.radius = 2;
    const KernelInput in = packModel(mesh, mats, S);
    BOOST_CHECK_EQUAL(in.emitters[0].inShape, 1u);
    auto L = fmtest::sampleLaunches(in, 20000, 7);
    double below = 0;
    for (auto& l : L) {
        BOOST_REQUIRE_EQUAL(l.weight, 1.f);
        BOOST_REQUIRE(inTetra(l));
        below += l.pos.x < 4.5;
    }
    const double half = 2.0 / 3.0 * M_PI * 8, cap = M_PI * (4 * 0.5 - 0.125 / 3), p = half / (half + cap);
    BOOST_CHECK_SMALL(below / L.size() - p, 4 * std::sqrt(p * (1 - p) / L.size()));
}

// A diffuser 0.01 mm thin emitting from its volume (a 2 mm cylinder in 1 mm cells): drawn in the
// cylinder, uniform along it; the tetras' draws would keep about one in ten thousand.
BOOST_AUTO_TEST_CASE(thin_cylinder_volume_draws_in_the_cylinder) {
    CylinderSource C;
    C.endpoint[0] = {0.1, 0.2, 2};
    C.endpoint[1] = {0.1, 0.2, 8};
    C.radius = 0.01;
    C.emitVolume = true;
    const KernelInput in = packModel(mesh, mats, C);
    BOOST_CHECK_EQUAL(in.emitters[0].inShape, 1u);
    auto L = fmtest::sampleLaunches(in, 20000, 7);
    double lower = 0, inner = 0;
    for (auto& l : L) {
        BOOST_REQUIRE_EQUAL(l.weight, 1.f);
        BOOST_REQUIRE(inTetra(l));
        const double r = std::hypot(l.pos.x - 0.1, l.pos.y - 0.2);
        BOOST_REQUIRE_LE(r, 0.01 * (1 + 1e-3) + 1e-6);
        BOOST_REQUIRE(l.pos.z >= 2 - 1e-5 && l.pos.z <= 8 + 1e-5);
        lower += l.pos.z < 5;
        inner += r < 0.01 * std::sqrt(0.5);  // half the area of the cross-section
    }
    BOOST_CHECK_SMALL(lower / L.size() - 0.5, 4 * std::sqrt(0.25 / L.size()));
    BOOST_CHECK_SMALL(inner / L.size() - 0.5, 4 * std::sqrt(0.25 / L.size()));
}

// A ball that fills most of the tetras it touches keeps the tetras' draws.
BOOST_AUTO_TEST_CASE(ball_filling_its_tetras_keeps_the_tetra_draws) {
    BallSource S;
    S.centre = {0, 0, 5};
    S.radius = 7;  // all of the box but its corners: most of the tetras' draws fall inside
    const KernelInput in = packModel(mesh, mats, S);
    BOOST_CHECK_EQUAL(in.emitters[0].inShape, 0u);
    for (auto& l : launch(S, 2000)) {
        BOOST_REQUIRE_EQUAL(l.weight, 1.f);
        BOOST_REQUIRE(inTetra(l));
    }
}

// An element hint that does not exist, or does not hold the point, is set aside with a warning
// (TIM-OS type 11 and MMC's InitElem carry one); a right hint gives no warning.
BOOST_AUTO_TEST_CASE(wrong_element_hints_are_warned_about) {
    PointSource P;
    P.position = {0.1, 0.2, 5.3};
    const uint32_t right = packModel(mesh, mats, P).emitters[0].tetra;
    P.elementHint = right;
    BOOST_CHECK(packModel(mesh, mats, P).warnings.empty());
    P.elementHint = 99999;
    KernelInput in = packModel(mesh, mats, P);
    BOOST_REQUIRE_EQUAL(in.warnings.size(), 1u);
    BOOST_CHECK_NE(in.warnings[0].find("element hint 99999 does not exist (tetras 1.."), std::string::npos);
    BOOST_CHECK_EQUAL(in.emitters[0].tetra, right);
    P.elementHint = right == 1 ? 2 : 1;
    in = packModel(mesh, mats, P);
    BOOST_REQUIRE_EQUAL(in.warnings.size(), 1u);
    BOOST_CHECK_NE(in.warnings[0].find("does not contain it; located by its position instead"), std::string::npos);
    PencilBeamSource B;
    B.position = {0.1, 0.2, 0};  // on the surface: no warning of its own
    B.direction = {0, 0, 1};
    B.elementHint = 99999;
    in = packModel(mesh, mats, B);
    BOOST_REQUIRE_EQUAL(in.warnings.size(), 1u);
    BOOST_CHECK_NE(in.warnings[0].find("element hint 99999 does not exist"), std::string::npos);
}

BOOST_AUTO_TEST_CASE(volume_region_uniform) {
    VolumeSource V;
    V.region = 2;
    auto L = launch(V, 20000);
    double inUpperHalf = 0;
    for (auto& l : L) {
        BOOST_REQUIRE(inTetra(l));
        BOOST_REQUIRE_EQUAL(mesh.region(l.tetra), 2u);
        inUpperHalf += l.pos.z > 7.5;
    }
    BOOST_CHECK_SMALL(inUpperHalf / L.size() - 0.5, 4 * std::sqrt(0.25 / L.size()));
}

BOOST_AUTO_TEST_CASE(line_uniform_along_segment_and_normal_pattern) {
    LineSource S;
    S.endpoint[0] = {0.1, 0.1, 1};
    S.endpoint[1] = {0.1, 0.1, 9};
    S.pattern = LineSource::Normal;
    auto L = launch(S, 20000);
    double lowerQuarter = 0;
    for (auto& l : L) {
        BOOST_REQUIRE(inTetra(l));
        BOOST_REQUIRE_SMALL(l.dir.z, 1e-5f);  // perpendicular to the z axis
        lowerQuarter += l.pos.z < 3;
    }
    BOOST_CHECK_SMALL(lowerQuarter / L.size() - 0.25, 4 * std::sqrt(0.1875 / L.size()));
}

BOOST_AUTO_TEST_CASE(surface_lambert_into_tissue) {
    SurfaceSource S;
    S.region = 1;
    S.emission = SurfaceSource::Lambert;
    auto L = launch(S, 20000);
    double mcos = 0;
    int bottom = 0;
    for (auto& l : L) {
        BOOST_REQUIRE(inTetra(l));
        if (l.pos.z < 1e-4) {  // bottom face of the box: inward normal is +z
            ++bottom;
            mcos += l.dir.z;
        }
    }
    BOOST_REQUIRE_GT(bottom, 1000);
    BOOST_CHECK_SMALL(mcos / bottom - 2.0 / 3, 4 * std::sqrt((0.5 - 4.0 / 9) / bottom));  // Lambert: <cos> = 2/3
}

BOOST_AUTO_TEST_CASE(fiber_cone_and_cylinder) {
    FiberSource F;
    F.position = {0, 0, 2};
    F.direction = {0, 0, 1};
    F.numericalAperture = 0.3;
    auto L = launch(F, 5000);
    double cosMax = std::sqrt(1 - std::pow(0.3 / 1.5, 2));
    for (auto& l : L) BOOST_REQUIRE_GE(l.dir.z, cosMax - 1e-4);
    CylinderSource C;
    C.endpoint[0] = {0, 0, 2};
    C.endpoint[1] = {0, 0, 8};
    C.radius = 0.5;
    C.emitHemiSphere = true;
    auto Lc = launch(C, 5000);
    for (auto& l : Lc) {
        BOOST_REQUIRE(inTetra(l));
        double r = std::hypot(l.pos.x, l.pos.y);
        BOOST_REQUIRE_CLOSE(r, 0.5, 1e-2);
        BOOST_REQUIRE_GE(l.dir.x * l.pos.x + l.dir.y * l.pos.y, -1e-4);  // outward hemisphere
    }
}

BOOST_AUTO_TEST_CASE(composite_by_power) {
    CompositeSource C = twoPoints(3, 1);
    auto L = launch(C, 20000);
    double fa = 0;
    for (auto& l : L) fa += l.pos.z < 5;
    BOOST_CHECK_SMALL(fa / L.size() - 0.75, 4 * std::sqrt(0.1875 / L.size()));
}

// Issue 26: weights near DBL_MAX overflowed their sum (inf), so every packet started from the last
// source. Two equal weights of 1e308 must split the packets evenly, as weights of 1 do.
BOOST_AUTO_TEST_CASE(composite_huge_weights_do_not_overflow) {
    CompositeSource C = twoPoints(1e308, 1e308);
    KernelInput in = packModel(mesh, mats, C);
    BOOST_REQUIRE_EQUAL(in.emitterCdf.size(), 2u);
    BOOST_CHECK_EQUAL(in.emitterCdf[0], 0.5);
    BOOST_CHECK_EQUAL(in.emitterCdf[1], 1.0);
    auto L = launch(C, 20000);
    double fa = 0;
    for (auto& l : L) fa += l.pos.z < 5;
    BOOST_CHECK_SMALL(fa / L.size() - 0.5, 4 * std::sqrt(0.25 / L.size()));
}

BOOST_AUTO_TEST_CASE(composite_bad_weights_and_cycles_refused) {
    auto A = std::make_shared<PointSource>();
    A->position = {0, 0, 2};
    for (double w : {-1.0, double(INFINITY), double(NAN)}) {
        A->power = w;
        CompositeSource C;
        C.elements = {A};
        BOOST_CHECK_EXCEPTION(packModel(mesh, mats, C), ModelError, [](const ModelError& e) {
            return std::string(e.what()).find("power must be >= 0") != std::string::npos;
        });
    }
    A->power = 0;
    CompositeSource Z;
    Z.elements = {A, A};
    BOOST_CHECK_THROW(packModel(mesh, mats, Z), ModelError);  // total power zero
    // A cycle built behind the Tcl layer's back is an error, not a stack overflow.
    A->power = 1;
    auto C1 = std::make_shared<CompositeSource>(), C2 = std::make_shared<CompositeSource>();
    C1->elements = {A, C2};
    C2->elements = {C1};
    BOOST_CHECK_EXCEPTION(packModel(mesh, mats, *C1), ModelError, [](const ModelError& e) {
        return std::string(e.what()).find("nested deeper than") != std::string::npos;
    });
    C2->elements.clear();  // break the cycle so the shared pointers free each other
}

BOOST_AUTO_TEST_CASE(bad_sources_named) {
    PointSource P;
    P.position = {50, 0, 0};
    BOOST_CHECK_EXCEPTION(launch(P, 1), ModelError, [](const ModelError& e) {
        return std::string(e.what()).find("outside the mesh") != std::string::npos;
    });
    VolumeSource V;
    V.element = 999999;
    BOOST_CHECK_THROW(launch(V, 1), ModelError);
    BallSource B;
    B.radius = -1;
    BOOST_CHECK_THROW(launch(B, 1), ModelError);
}

BOOST_AUTO_TEST_SUITE_END()
