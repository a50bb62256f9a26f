// SPDX-License-Identifier: GPL-3.0-or-later
// Collimated beams (DiskSource, MMC's "disk"; PlanarSource, MMC's "planar"): where their packets
// enter and in which direction, with tolerances from the variance of uniform points on a disk or
// parallelogram; lit areas against the circular segment and the rectangle beside the mesh; an
// end-to-end run through a non-scattering slab against its closed form; and the beams refused.
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "Common/Errors.hpp"
#include "Geometry/CollimatedBeam.hpp"
#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Kernels/Core/Emitters.hpp"
#include "Tests/Geometry/LaunchSampler.hpp"
#include "Tests/TestUtil.hpp"

using namespace fm;

namespace {

// A 10 x 10 x 6 mm slab (top face z = 0) of non-scattering tissue, n 1.4, in air.
struct Slab {
    TetraMesh mesh = makeBoxMesh({-5, -5, 0}, {5, 5, 6}, 5, 5, 3, [](const Point3&) { return 1u; });
    MaterialSet mats;
    explicit Slab(double mu_a = 0.2) {
        mats.exterior(Material(0, 0, 0, 1.0));
        mats.append(Material(mu_a, 0, 0, 1.4));
    }
    std::vector<LaunchRecord> launch(const Source& s, int n, KernelInput* keep = nullptr) {
        KernelInput in = packModel(mesh, mats, s);
        std::vector<LaunchRecord> out = fmtest::sampleLaunches(in, n, 3);
        if (keep) *keep = std::move(in);
        return out;
    }
};

DiskSource disk(Point3 centre, Point3 dir, double r) {
    DiskSource d;
    d.centre = centre;
    d.direction = dir;
    d.radius = r;
    return d;
}

PlanarSource planar(Point3 corner, Point3 a, Point3 b, Point3 dir) {
    PlanarSource p;
    p.corner = corner;
    p.side1 = a;
    p.side2 = b;
    p.direction = dir;
    return p;
}

// Unpolarised Fresnel reflectance from n1 into n2 at incidence cosine ci.
double fresnel(double n1, double n2, double ci) {
    double si = std::sqrt(1 - ci * ci), st = n1 / n2 * si, ct = std::sqrt(1 - st * st);
    double rs = (n1 * ci - n2 * ct) / (n1 * ci + n2 * ct), rp = (n1 * ct - n2 * ci) / (n1 * ct + n2 * ci);
    return 0.5 * (rs * rs + rp * rp);
}

// Uniform points on a disk of radius R: the squared distance from the centre is uniform on
// [0, R^2] (mean R^2 / 2, sd R^2 / sqrt 12), each coordinate has mean 0 and sd R / 2.
void checkUniformOnDisk(const std::vector<double>& u, const std::vector<double>& v, double R, const std::string& what) {
    const double n = double(u.size());
    double su = 0, sv = 0, sr2 = 0;
    for (size_t i = 0; i < u.size(); ++i) {
        BOOST_REQUIRE_LE(u[i] * u[i] + v[i] * v[i], R * R * (1 + 1e-5));
        su += u[i], sv += v[i], sr2 += u[i] * u[i] + v[i] * v[i];
    }
    fmtest::checkWithinSigma(what + ": mean u", {su / n, R / 2 / std::sqrt(n)}, 0, 4);
    fmtest::checkWithinSigma(what + ": mean v", {sv / n, R / 2 / std::sqrt(n)}, 0, 4);
    fmtest::checkWithinSigma(what + ": mean squared radius", {sr2 / n, R * R / std::sqrt(12 * n)}, R * R / 2, 4);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(beam_sources)

// Normal incidence: packets start on the top face inside the disk's shadow, uniform, along the
// beam, with weight 1 - R.
BOOST_AUTO_TEST_CASE(normal_incidence_uniform_over_the_disk) {
    Slab s;
    const int n = 40000;
    auto L = s.launch(disk({0.3, -0.2, -1}, {0, 0, 1}, 2.0), n);
    std::vector<double> u, v;
    const double R = fresnel(1.0, 1.4, 1.0);
    for (const LaunchRecord& l : L) {
        BOOST_REQUIRE_CLOSE(l.weight, 1 - R, 1e-4);
        BOOST_REQUIRE_SMALL(double(l.pos.z), 1e-6);
        BOOST_REQUIRE(l.dir.z == 1.f);
        BOOST_REQUIRE(s.mesh.contains(l.tetra, {l.pos.x, l.pos.y, l.pos.z}, 1e-5));
        u.push_back(l.pos.x - 0.3);
        v.push_back(l.pos.y + 0.2);
    }
    checkUniformOnDisk(u, v, 2.0, "normal incidence");
}

// A disk laid on the surface (centre at z = 0, facing the tissue) starts there, as one in front of it.
BOOST_AUTO_TEST_CASE(disk_on_the_surface) {
    Slab s;
    auto L = s.launch(disk({0.5, 0.5, 0}, {0, 0, 1}, 1.0), 2000);
    for (const LaunchRecord& l : L) {
        BOOST_REQUIRE_SMALL(double(l.pos.z), 1e-6);
        BOOST_REQUIRE_LE(std::hypot(l.pos.x - 0.5, l.pos.y - 0.5), 1.0 + 1e-5);
    }
}

// At 30 degrees the shadow on the surface is an ellipse; seen along the beam the entry points
// are still uniform over the disk, the direction is refracted by Snell's law (sin t = sin 30 / n)
// and the weight is the transmittance at 30 degrees.
BOOST_AUTO_TEST_CASE(oblique_beam_refracted_and_uniform_across_the_beam) {
    Slab s;
    const double th = M_PI / 6;
    const Point3 u{std::sin(th), 0, std::cos(th)}, c{-1, 0.5, -2};
    const int n = 40000;
    auto L = s.launch(disk(c, u, 1.5), n);
    const double R = fresnel(1.0, 1.4, std::cos(th)), st = std::sin(th) / 1.4;
    std::vector<double> a, b;
    for (const LaunchRecord& l : L) {
        BOOST_REQUIRE_CLOSE(l.weight, 1 - R, 1e-3);
        BOOST_REQUIRE_SMALL(double(l.pos.z), 1e-6);
        BOOST_REQUIRE_CLOSE(l.dir.x, st, 1e-3);
        BOOST_REQUIRE_CLOSE(l.dir.z, std::sqrt(1 - st * st), 1e-3);
        // Coordinates across the beam: e1 = (cos th, 0, -sin th), e2 = (0, 1, 0).
        Point3 d{l.pos.x - c[0], l.pos.y - c[1], l.pos.z - c[2]};
        a.push_back(d[0] * std::cos(th) - d[2] * std::sin(th));
        b.push_back(d[1]);
    }
    checkUniformOnDisk(a, b, 1.5, "30 degrees");
}

// Part of the beam passes beside the slab: the lit area is the disk less the circular segment
// beyond x = 5 (exact), nothing is emitted there, and a warning gives the share.
BOOST_AUTO_TEST_CASE(beam_partly_beside_the_mesh) {
    Slab s;
    const double r = 2, d = 0.5;  // centre 0.5 from the slab's side x = 5
    BeamPlan plan = planDiskBeam(s.mesh, {4.5, 0, -1}, {0, 0, 1}, r, "disk");
    const double segment = r * r * std::acos(d / r) - d * std::sqrt(r * r - d * d);
    BOOST_CHECK_CLOSE(plan.litArea, M_PI * r * r - segment, 1e-9);
    KernelInput in;
    auto L = s.launch(disk({4.5, 0, -1}, {0, 0, 1}, r), 5000, &in);
    for (const LaunchRecord& l : L) BOOST_REQUIRE_LE(l.pos.x, 5.0f + 1e-5f);
    BOOST_REQUIRE_EQUAL(in.warnings.size(), 1u);
    BOOST_CHECK(in.warnings[0].find("of its beam misses the mesh") != std::string::npos);
    // The area function on its own: a triangle wholly inside, and one around the disk.
    double p[2] = {0, 0}, q[2] = {1, 0}, t[2] = {0, 1}, big[3][2] = {{-10, -10}, {20, -10}, {-10, 20}};
    BOOST_CHECK_CLOSE(triangleDiskArea(p, q, t, 2), 0.5, 1e-12);
    BOOST_CHECK_CLOSE(triangleDiskArea(big[0], big[1], big[2], 1), M_PI, 1e-12);
}

// End to end: the slab (mu_a 0.2, 6 mm, non-scattering) under a disk or planar beam at normal incidence
// absorbs (1 - R)(1 - a) / (1 - R a), a = exp(-mu_a L), as a pencil beam does; a packet is
// absorbed whole (weight 1 - R) or not at all, so the standard error is (1 - R) sqrt(p (1 - p) / N)
// with p the absorbed fraction over 1 - R.
BOOST_AUTO_TEST_CASE(slab_absorbs_its_closed_form) {
    Slab s;
    DiskSource d = disk({0, 0, -1}, {0, 0, 1}, 3.0);
    PlanarSource p = planar({-3, -2, -1}, {5, 0, 0}, {0, 4, 0}, {0, 0, 1});
    for (const Source* src : {static_cast<const Source*>(&d), static_cast<const Source*>(&p)}) {
        RunOptions o;
        o.packets = 100000;
        o.threads = 2;
        o.params.seed = 9;
        RunResult r = runCpu(packModel(s.mesh, s.mats, *src), o);
        const double R = fresnel(1.0, 1.4, 1.0), a = std::exp(-0.2 * 6);
        const double A = (1 - R) * (1 - a) / (1 - R * a), q = A / (1 - R);
        fmtest::checkWithinSigma("absorbed under a " + src->typeName() + " beam",
                                 {r.ledger.absorbed / r.ledger.launched, (1 - R) * std::sqrt(q * (1 - q) / double(o.packets))},
                                 A, 4);
        BOOST_CHECK_CLOSE(r.ledger.specular / r.ledger.launched, R, 1e-3);
        BOOST_CHECK_EQUAL(r.ledger.abnormal, 0.0);
        BOOST_CHECK_SMALL(r.ledger.imbalance() / r.ledger.launched, 1e-12);
    }
}



// A slanted parallelogram (sides (3, 0, 0) and (1, 2, 0.5), so its plane is not across the beam)
// over the slab, beam along z: each packet enters the top face at (x, y) = corner + s side1 + t side2
// with s and t uniform on [0, 1] (mean 1/2, sd 1/sqrt 12), along z, with weight 1 - R.
BOOST_AUTO_TEST_CASE(planar_uniform_over_a_slanted_parallelogram) {
    Slab s;
    const int n = 40000;
    auto L = s.launch(planar({-2, -1, -2}, {3, 0, 0}, {1, 2, 0.5}, {0, 0, 1}), n);
    const double R = fresnel(1.0, 1.4, 1.0);
    double ss = 0, st = 0;
    for (const LaunchRecord& l : L) {
        BOOST_REQUIRE_CLOSE(l.weight, 1 - R, 1e-4);
        BOOST_REQUIRE_SMALL(double(l.pos.z), 1e-6);
        BOOST_REQUIRE(l.dir.z == 1.f);
        double t = (l.pos.y + 1) / 2, u = (l.pos.x + 2 - t) / 3;
        BOOST_REQUIRE(t >= -1e-5 && t <= 1 + 1e-5 && u >= -1e-5 && u <= 1 + 1e-5);
        ss += u, st += t;
    }
    const double sd = 1 / std::sqrt(12.0 * n);
    fmtest::checkWithinSigma("planar: mean s", {ss / n, sd}, 0.5, 4);
    fmtest::checkWithinSigma("planar: mean t", {st / n, sd}, 0.5, 4);
}

// A 4 x 4 square centred 1 mm beyond the slab's side x = 5: a 3 x 4 part lights it, exactly.
BOOST_AUTO_TEST_CASE(planar_partly_beside_the_mesh) {
    Slab s;
    BeamPlan plan = planParallelogramBeam(s.mesh, {4, -2, -1}, {4, 0, 0}, {0, 4, 0}, {0, 0, 1}, "planar");
    BOOST_CHECK_CLOSE(plan.beamArea, 16.0, 1e-9);
    BOOST_CHECK_CLOSE(plan.litArea, 4.0, 1e-9);
    KernelInput in;
    auto L = s.launch(planar({4, -2, -1}, {4, 0, 0}, {0, 4, 0}, {0, 0, 1}), 2000, &in);
    for (const LaunchRecord& l : L) BOOST_REQUIRE(l.pos.x >= 4.0f - 1e-5f && l.pos.x <= 5.0f + 1e-5f);
    BOOST_REQUIRE_EQUAL(in.warnings.size(), 1u);
    BOOST_CHECK_MESSAGE(in.warnings[0].find(": 75% of its beam misses the mesh") != std::string::npos, in.warnings[0]);
}


BOOST_AUTO_TEST_CASE(refused_beams_say_why) {
    Slab s;
    auto expect = [&](const Source& d, const std::string& needle) {
        try {
            packModel(s.mesh, s.mats, d);
            BOOST_ERROR("no error; expected '" << needle << "'");
        } catch (const ModelError& e) {
            BOOST_TEST_MESSAGE("error as expected: " << e.what());
            BOOST_CHECK_MESSAGE(std::string(e.what()).find(needle) != std::string::npos, e.what() << " lacks " << needle);
        }
    };
    expect(disk({0, 0, 1}, {0, 0, 1}, 1), "its centre lies in tissue");
    expect(disk({0, 0, -1}, {0, 1, 1}, 3), "its plane cuts the tissue");
    expect(disk({20, 0, -1}, {0, 0, 1}, 1), "misses the mesh");
    expect(disk({0, 0, -1}, {0, 0, 1}, 0), "radius must be > 0");
    expect(disk({0, 0, -1}, {0, 0, 0}, 1), "not a usable vector");
    expect(planar({0, 0, -1}, {1, 0, 0}, {2, 0, 0}, {0, 0, 1}), "no area");
    expect(planar({0, 0, -1}, {1, 0, 0}, {0, 1, 0}, {1, 0, 0}), "its direction lies in its plane");
    expect(planar({-1, -1, 1}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}), "its centre lies in tissue");
    // Two slabs one above the other: the beam would meet the second through the gap.
    BoxMeshArrays lower = makeBoxMeshArrays({-5, -5, 0}, {5, 5, 2}, 2, 2, 1, [](const Point3&) { return 1u; });
    BoxMeshArrays upper = makeBoxMeshArrays({-5, -5, 4}, {5, 5, 6}, 2, 2, 1, [](const Point3&) { return 1u; });
    const uint32_t shift = uint32_t(lower.points.size() - 1);
    lower.points.insert(lower.points.end(), upper.points.begin() + 1, upper.points.end());
    for (size_t t = 1; t < upper.tetras.size(); ++t) {
        TetraPoints T = upper.tetras[t];
        for (uint32_t& v : T) v += shift;
        lower.tetras.push_back(T);
        lower.regions.push_back(1);
    }
    s.mesh = TetraMesh(lower.points, lower.tetras, lower.regions);
    expect(disk({0, 0, 8}, {0, 0, -1}, 1), "meets the mesh surface more than once");
}

BOOST_AUTO_TEST_SUITE_END()
