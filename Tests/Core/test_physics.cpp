// SPDX-License-Identifier: GPL-3.0-or-later
// Unit physics: Henyey-Greenstein sampling, Fresnel, refraction, tetra exit face.
#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "Geometry/ModelPacker.hpp"
#include "Geometry/MeshBuilder.hpp"
#include "Kernels/Core/Packet.hpp"
#include "Kernels/Core/Physics.hpp"

using namespace fm;

namespace {
double chi2Critical(double k) {
    double z = 3.719, t = 1 - 2 / (9 * k) + z * std::sqrt(2 / (9 * k));
    return k * t * t * t;
}
// Probability that cos(theta) falls in [a, b] under Henyey-Greenstein with anisotropy g (the CDF
// in closed form).
double hgCdf(double g, double mu) {
    if (std::fabs(g) < 1e-9) return 0.5 * (mu + 1);
    return (1 - g * g) / (2 * g) * (1 / std::sqrt(1 + g * g - 2 * g * mu) - 1 / (1 + g));
}
}  // namespace

BOOST_AUTO_TEST_SUITE(physics)

BOOST_AUTO_TEST_CASE(hg_mean_cosine_and_distribution) {
    // 5e-7: under the isotropic threshold (hgScale 0, the cosine 2u - 1 without a branch).
    for (double g : {0.0, 5e-7, 0.3, 0.75, 0.9, 0.95, 0.99, -0.5}) {
        MaterialRecord m = packMaterial(Material(0.1, 10, g, 1.4));
        PacketRng rng(11, uint64_t(g * 1000 + 5000));
        const int n = 400000, bins = 50;
        std::vector<double> count(bins, 0);
        double sum = 0, sum2 = 0;
        for (int i = 0; i < n; ++i) {
            double c = sampleHG(m, rng);
            sum += c;
            sum2 += c * c;
            count[std::min(bins - 1, int((c + 1) / 2 * bins))]++;
        }
        double mean = sum / n, sd = std::sqrt((sum2 / n - mean * mean) / n);
        BOOST_TEST_MESSAGE("g = " << g << ": mean cosine " << mean << " +- " << sd);
        BOOST_CHECK_LE(std::fabs(mean - g), 4 * sd);
        double chi2 = 0;
        for (int b = 0; b < bins; ++b) {
            double lo = -1 + 2.0 * b / bins, hi = -1 + 2.0 * (b + 1) / bins;
            double e = n * (hgCdf(g, hi) - hgCdf(g, lo));
            if (e > 5) chi2 += (count[b] - e) * (count[b] - e) / e;
        }
        BOOST_TEST_MESSAGE("g = " << g << ": chi2 " << chi2 << " (dof <= " << bins - 1 << ")");
        BOOST_CHECK_LT(chi2, chi2Critical(bins - 1));
    }
}

BOOST_AUTO_TEST_CASE(deflection_keeps_unit_length_and_angle) {
    PacketRng rng(2, 2);
    for (int i = 0; i < 10000; ++i) {
        Vec3 d = isotropicDirection(rng);
        float cost = 2 * rng.uniform() - 1;
        Vec3 e = deflect(d, cost, rng);
        BOOST_REQUIRE_CLOSE(norm(e), 1.0f, 1e-3);
        BOOST_REQUIRE_SMALL(dot(d, e) - cost, 2e-3f);
    }
}

// deflect() does not renormalise: its length error must shrink from turn to turn rather than
// add up. Over 2e6 turns of one direction (the longest packets take 1e5) the length stays
// within 1e-5 of 1; with extra noise of up to 1e-6 per turn on the whole result's length (more
// than the GPU's approximate sine and cosine, 3.6e-7 on the sideways part only, and its
// reciprocal and square root leave) within 1e-4, where errors that added up would reach ~1e-3.
// A direction started 1e-3 too long is back within 1e-5 of 1 after 2000 turns.
BOOST_AUTO_TEST_CASE(deflection_length_error_does_not_accumulate) {
    for (double g : {0.0, 0.9, 0.99, -0.7}) {
        const MaterialRecord m = packMaterial(Material(0.1, 10, g, 1.4));
        for (float noise : {0.f, 1e-6f}) {
            PacketRng rng(5, uint64_t(g * 1000 + 7000));
            std::mt19937 jitter(9);
            std::uniform_real_distribution<float> u(-1.f, 1.f);
            Vec3 d{0.f, 0.f, 1.f};
            double worst = 0;
            for (int i = 0; i < 2000000; ++i) {
                d = deflect(d, sampleHG(m, rng), rng);
                if (noise > 0) d = (1.f + noise * u(jitter)) * d;
                worst = std::max(worst, std::fabs(double(norm(d)) - 1));
            }
            BOOST_TEST_MESSAGE("g = " << g << ", noise " << noise << ": max |length - 1| " << worst);
            BOOST_CHECK_LT(worst, noise > 0 ? 1e-4 : 1e-5);
        }
        PacketRng rng(6, 1);
        Vec3 d = 1.001f * Vec3{0.6f, 0.f, 0.8f};
        for (int i = 0; i < 2000; ++i) d = deflect(d, sampleHG(m, rng), rng);
        BOOST_CHECK_LT(std::fabs(double(norm(d)) - 1), 1e-5);
    }
}

// moveEvent's distance is st.s * mfp, and mfp is +inf where mu_t = 0: a step never ends inside a
// cell of vacuum, not even one of 0 mean free paths (u = 1, -log u = 0: the distance is NaN),
// which kInfinity (the largest float) as mfp would have let end at once. Where mu_t > 0 a step
// of 0 ends where it starts, and a step of s mean free paths ends s / mu_t away.
BOOST_AUTO_TEST_CASE(step_distance_from_mean_free_path) {
    // The tetra (0,0,0), (1,0,0), (0,1,0), (0,0,1): faces x = 0, y = 0, z = 0, x + y + z = 1.
    struct OneCell {
        CellPlanes P;
        const CellPlanes& planes(uint32_t) const { return P; }
    } cell;
    const float r = float(1 / std::sqrt(3.0));
    cell.P = CellPlanes{{-1.f, 0.f, 0.f, r}, {0.f, -1.f, 0.f, r}, {0.f, 0.f, -1.f, r}, {0.f, 0.f, 0.f, r}};
    const KernelParams kp;
    auto move = [&](const Material& mat, float s) {
        PacketState st;
        st.pk = Packet{Vec3{0.1f, 0.1f, 0.1f}, Vec3{1.f, 0.f, 0.f}, 1u, 1.f};
        st.s = s;
        const Event e = moveEvent(cell, kp, packMaterial(mat), st);
        return std::make_pair(e.kind, st.pk.pos.x);
    };
    for (float s : {0.f, 1e-30f, 0.5f, 40.f}) {
        const auto [kind, x] = move(Material(0, 0, 0.9, 1.4), s);
        BOOST_TEST_CONTEXT("vacuum, s = " << s) {
            BOOST_CHECK_EQUAL(kind, kEventHop);
            BOOST_CHECK_CLOSE(x, 0.8f, 1e-4);  // onto the face x + y + z = 1
        }
    }
    const auto [k0, x0] = move(Material(0.5, 1.5, 0.9, 1.4), 0.f);
    BOOST_CHECK_EQUAL(k0, kEventInteract);
    BOOST_CHECK_EQUAL(x0, 0.1f);
    const auto [k1, x1] = move(Material(0.5, 1.5, 0.9, 1.4), 1.f);  // 1 / mu_t = 0.5 < 0.7 to the face
    BOOST_CHECK_EQUAL(k1, kEventInteract);
    BOOST_CHECK_CLOSE(x1, 0.6f, 1e-4);
    const auto [k2, x2] = move(Material(0.5, 1.5, 0.9, 1.4), 2.f);  // 1.0 > 0.7: the face first
    BOOST_CHECK_EQUAL(k2, kEventHop);
    BOOST_CHECK_CLOSE(x2, 0.8f, 1e-4);
}

BOOST_AUTO_TEST_CASE(fresnel_matches_formula) {
    float cost;
    // Normal incidence: ((n1 - n2) / (n1 + n2))^2
    BOOST_CHECK_CLOSE(fresnelReflectance(1.0f, 1.5f, 1.0f, cost), 0.04f, 1e-3);
    BOOST_CHECK_CLOSE(cost, 1.0f, 1e-4);
    // Oblique, against the Fresnel equations evaluated in double.
    for (double n1 : {1.0, 1.33, 1.5})
        for (double n2 : {1.0, 1.37, 1.5})
            for (double ci = 0.05; ci <= 1.0; ci += 0.05) {
                double si = std::sqrt(1 - ci * ci), st = n1 / n2 * si;
                float R = fresnelReflectance(float(n1), float(n2), float(ci), cost);
                if (st >= 1) {
                    BOOST_CHECK_EQUAL(R, 1.0f);  // total internal reflection
                    continue;
                }
                double ct = std::sqrt(1 - st * st);
                double rs = (n1 * ci - n2 * ct) / (n1 * ci + n2 * ct);
                double rp = (n1 * ct - n2 * ci) / (n1 * ct + n2 * ci);
                BOOST_CHECK_SMALL(R - 0.5 * (rs * rs + rp * rp), 1e-5);
                BOOST_CHECK_SMALL(double(cost) - ct, 1e-5);
            }
    // Critical angle from 1.5 into 1.0: asin(1/1.5) = 41.81 deg
    double crit = std::cos(std::asin(1 / 1.5));
    BOOST_CHECK_EQUAL(fresnelReflectance(1.5f, 1.0f, float(crit - 1e-3), cost), 1.0f);
    BOOST_CHECK_LT(fresnelReflectance(1.5f, 1.0f, float(crit + 1e-3), cost), 1.0f);
}

BOOST_AUTO_TEST_CASE(refraction_obeys_snell) {
    Vec3 n{0, 0, 1};
    for (float ci = 0.1f; ci <= 1.0f; ci += 0.1f) {
        Vec3 d{std::sqrt(1 - ci * ci), 0, ci};
        float cost;
        fresnelReflectance(1.0f, 1.4f, ci, cost);
        Vec3 t = refract(d, n, 1.0f, 1.4f, ci, cost);
        float si = std::sqrt(1 - ci * ci), st = std::sqrt(1 - t.z * t.z);
        BOOST_CHECK_SMALL(1.0f * si - 1.4f * st, 1e-5f);
        BOOST_CHECK_CLOSE(norm(t), 1.0f, 1e-4);
        Vec3 r = reflect(d, n, ci);
        BOOST_CHECK_CLOSE(r.z, -ci, 1e-4);
    }
}

// Each cell record names the material across each face: the neighbour's region, or the
// exterior's (material 0, or the cell's own with a matched boundary), as a crossing needs it.
BOOST_AUTO_TEST_CASE(records_name_the_material_across_each_face) {
    TetraMesh mesh = makeBoxMesh({0, 0, 0}, {2, 2, 2}, 2, 2, 2, [](const Point3& c) { return c[0] < 1 ? 1u : 2u; });
    for (bool matched : {false, true}) {
        MaterialSet ms;
        ms.append(Material(0.1, 1, 0, 1.4));
        ms.append(Material(0.2, 2, 0, 1.3));
        ms.matchedBoundary = matched;
        PointSource P;
        P.position = {0.5, 0.5, 0.5};
        KernelInput in = packModel(mesh, ms, P);
        int interfaces = 0;
        for (uint32_t t = 1; t <= mesh.tetraCount(); ++t)
            for (int i = 0; i < 4; ++i) {
                const TetraRecord& T = in.cells[t];
                const uint32_t nb = mesh.neighbour(t, i);
                const uint32_t expect = nb ? mesh.region(nb) : (matched ? mesh.region(t) : 0u);
                BOOST_CHECK_EQUAL(T.adjMaterial[i], expect);
                BOOST_CHECK_EQUAL(T.adjMaterial[i], isExterior(T.adj[i]) ? exteriorMaterial(T.adj[i]) : in.cells[T.adj[i]].material);
                interfaces += nb && mesh.region(nb) != mesh.region(t);
            }
        BOOST_CHECK_GT(interfaces, 0);
    }
}

// Exit face and distance against brute force: march along the ray until the point leaves.
BOOST_AUTO_TEST_CASE(exit_face_matches_brute_force) {
    TetraMesh mesh = makeBoxMesh({0, 0, 0}, {1, 1, 1}, 1, 1, 1, [](const Point3&) { return 1u; });
    MaterialSet ms;
    ms.append(Material(0.1, 1, 0, 1));
    PointSource P;
    P.position = {0.5, 0.5, 0.5};
    KernelInput in = packModel(mesh, ms, P);
    std::mt19937 gen(3);
    std::uniform_real_distribution<double> U(0, 1);
    int checked = 0;
    for (uint32_t t = 1; t <= mesh.tetraCount(); ++t) {
        const TetraRecord& T = in.cells[t];
        for (int trial = 0; trial < 200; ++trial) {
            // random interior point: barycentric
            double w[4], s = 0;
            for (double& x : w) s += (x = -std::log(U(gen)));
            Point3 p{0, 0, 0};
            for (int k = 0; k < 4; ++k)
                for (int c = 0; c < 3; ++c) p[c] += w[k] / s * mesh.point(mesh.tetra(t)[k])[c];
            double z = 2 * U(gen) - 1, ph = 6.283185307 * U(gen);
            Point3 d{std::sqrt(1 - z * z) * std::cos(ph), std::sqrt(1 - z * z) * std::sin(ph), z};
            FaceHit h = exitFace(T, Vec3{float(p[0]), float(p[1]), float(p[2])},
                                 Vec3{float(d[0]), float(d[1]), float(d[2])});
            // brute force in double: smallest positive distance to any face plane
            double best = 1e300;
            int bestFace = -1;
            for (int i = 0; i < 4; ++i) {
                const MeshFace& F = mesh.face(mesh.tetraFace(t, i) & 0x7fffffff);
                double sgn = (mesh.tetraFace(t, i) & 0x80000000u) ? -1 : 1;
                double dn = sgn * dotP(F.normal, d);
                if (dn <= 0) continue;
                double dist = sgn * dotP(F.normal, sub(mesh.point(F.points[0]), p)) / dn;
                if (dist < best) { best = dist; bestFace = i; }
            }
            BOOST_REQUIRE_EQUAL(h.face, bestFace);
            BOOST_REQUIRE_SMALL(h.t - best, 1e-5);
            // The GPU's form (no normal, each distance divided out): the same face and distance.
            FaceHit g = exitFaceNearest(T, Vec3{float(p[0]), float(p[1]), float(p[2])},
                                        Vec3{float(d[0]), float(d[1]), float(d[2])});
            BOOST_REQUIRE_EQUAL(g.face, bestFace);
            BOOST_REQUIRE_SMALL(g.t - best, 1e-5);
            ++checked;
        }
    }
    BOOST_CHECK_EQUAL(checked, 6 * 200);
}

// A packet that rounding left just outside a face it moves towards leaves through that face at
// once (distance 0), in both forms; faces it moves away from or along never count.
BOOST_AUTO_TEST_CASE(exit_face_from_just_outside_and_along_faces) {
    // The unit tetra (0,0,0), (1,0,0), (0,1,0), (0,0,1): faces x >= 0, y >= 0, z >= 0 (outward
    // normals -x, -y, -z, C = 0) and x + y + z <= 1.
    const float r = 0.57735026919f;
    CellPlanes T{{-1.f, 0.f, 0.f, r}, {0.f, -1.f, 0.f, r}, {0.f, 0.f, -1.f, r}, {0.f, 0.f, 0.f, r}};
    const Vec3 outsideX{-1e-6f, 0.2f, 0.2f}, towardsX{-0.6f, 0.f, 0.8f};
    for (FaceHit h : {exitFace(T, outsideX, towardsX), exitFaceNearest(T, outsideX, towardsX)}) {
        BOOST_CHECK_EQUAL(h.face, 0);
        BOOST_CHECK_EQUAL(h.t, 0.f);
    }
    // Along the face z = 0 (cosn = 0 there) towards the slanted face: distance 0.2 / (r * 1).
    const Vec3 onZ{0.2f, 0.2f, 0.f}, alongZ{1.f, 0.f, 0.f};
    for (FaceHit h : {exitFace(T, onZ, alongZ), exitFaceNearest(T, onZ, alongZ)}) {
        BOOST_CHECK_EQUAL(h.face, 3);
        BOOST_CHECK_CLOSE(h.t, 0.6f, 1e-4);
    }
    // Moving away from a face it is just outside of, through the tetra: the far face, not that one.
    const Vec3 up{0.f, 0.f, 1.f}, belowZ{0.2f, 0.2f, -1e-6f};
    for (FaceHit h : {exitFace(T, belowZ, up), exitFaceNearest(T, belowZ, up)}) {
        BOOST_CHECK_EQUAL(h.face, 3);
        BOOST_CHECK_CLOSE(h.t, 0.6f + 1e-6f, 1e-3);
    }
}

// The step draw's log, exhaustively over the 2^24 values uniformOpen gives: the relative error
// of -log(u) must stay far below what Monte Carlo statistics could see (documented bound 1e-6;
// the host's inline polynomial stays below 1e-7).
BOOST_AUTO_TEST_CASE(fast_log_is_accurate_on_every_step_draw) {
    double worst = 0;
    for (uint32_t k = 1; k <= (1u << 24); ++k) {
        float u = float(int32_t(k)) * (1.0f / 16777216.0f);
        double exact = -std::log(double(u));
        double got = -double(fm_log(u));
        if (k == (1u << 24)) BOOST_REQUIRE_EQUAL(got, 0.0);
        else worst = std::max(worst, std::fabs(got - exact) / exact);
    }
    BOOST_TEST_MESSAGE("fm_log worst relative error of -log(u): " << worst);
    BOOST_CHECK_LT(worst, 1e-6);
}

// Azimuth sine and cosine on a fine grid of u in [0, 1] (and every 24-bit uniform near the
// quarter turns): absolute error below 1e-6.
BOOST_AUTO_TEST_CASE(fast_sincos_is_accurate) {
    double worst = 0;
    auto check = [&](float u) {
        float s, c;
        fm_sincos2pi(u, s, c);
        double a = 6.283185307179586 * double(u);
        worst = std::max(worst, std::max(std::fabs(s - std::sin(a)), std::fabs(c - std::cos(a))));
    };
    for (uint32_t k = 0; k < (1u << 24); k += 7) check(float(int32_t(k)) * (1.0f / 16777216.0f));
    for (int q = 0; q <= 4; ++q)
        for (int k = -4096; k <= 4096; ++k) {
            int64_t i = int64_t(q) * (1 << 22) + k;
            if (i >= 0 && i <= (1 << 24)) check(float(i) * (1.0f / 16777216.0f));
        }
    BOOST_TEST_MESSAGE("fm_sincos2pi worst absolute error: " << worst);
    BOOST_CHECK_LT(worst, 1e-6);
}

BOOST_AUTO_TEST_SUITE_END()

