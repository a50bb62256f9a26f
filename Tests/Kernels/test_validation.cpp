// SPDX-License-Identifier: GPL-3.0-or-later
// Physics validation of the CPU kernel against analytic references, with tolerances from the
// observed batch-to-batch variance (independent packet ranges of one seed).
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <random>

#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Tests/TestUtil.hpp"

using namespace fm;
using fmtest::meanSd;

namespace {

// Runs `batches` independent batches; f(result) -> the quantity per batch.
template <class F>
fmtest::MeanSd batchStatistic(const KernelInput& in, uint64_t perBatch, int batches, F f) {
    std::vector<double> x;
    for (int b = 0; b < batches; ++b) {
        RunOptions o;
        o.packets = perBatch;
        o.firstPacket = uint64_t(b) * perBatch;
        o.threads = 2;
        RunResult r = runCpu(in, o);
        BOOST_REQUIRE_SMALL(r.ledger.imbalance() / r.ledger.launched, 1e-12);
        x.push_back(f(r));
    }
    return meanSd(x);
}

// Sum of surface exit weight over boundary faces whose outward normal z-component has sign s.
double exitThrough(const TetraMesh& m, const RunResult& r, double s) {
    double e = 0;
    for (uint32_t f : m.boundaryFaces())
        if (m.face(f).normal[2] * s > 0.5) e += r.surface[f];
    return e / r.ledger.launched;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(validation)

// van de Hulst (1980) tables as used by MCML's manual: a = 0.9, tau = 2 (mu_a 1, mu_s 9 /mm,
// 0.2 mm), g = 0.75, matched boundaries: Rd = 0.09739, Tt = 0.66096.
BOOST_AUTO_TEST_CASE(van_de_hulst_slab) {
    TetraMesh m = makeBoxMesh({-10, -10, 0}, {10, 10, 0.2}, 10, 10, 1, [](const Point3&) { return 1u; });
    MaterialSet ms;
    ms.exterior(Material(0, 0, 0, 1.0));
    ms.append(Material(1, 9, 0.75, 1.0));
    PencilBeamSource B;
    B.position = {0.013, 0.027, -1};
    B.direction = {0, 0, 1};
    KernelInput in = packModel(m, ms, B);
    auto rd = batchStatistic(in, 40000, 10, [&](const RunResult& r) { return exitThrough(m, r, -1); });
    auto tt = batchStatistic(in, 40000, 10, [&](const RunResult& r) { return exitThrough(m, r, +1); });
    fmtest::checkWithinSigma("van de Hulst Rd", rd, 0.09739);
    fmtest::checkWithinSigma("van de Hulst Tt", tt, 0.66096);
}

// mu_s = 0 slab, n = 1.5 in air: T = (1-R)^2 e^{-x} / (1 - R^2 e^{-2x}), with internal
// reflections summed incoherently; R = 0.04 at normal incidence.
BOOST_AUTO_TEST_CASE(beer_lambert_with_fresnel) {
    TetraMesh m = makeBoxMesh({-5, -5, 0}, {5, 5, 1}, 5, 5, 2, [](const Point3&) { return 1u; });
    MaterialSet ms;
    ms.exterior(Material(0, 0, 0, 1.0));
    ms.append(Material(0.5, 0, 0, 1.5));
    PencilBeamSource B;
    B.position = {0.013, 0.027, -1};
    B.direction = {0, 0, 1};
    KernelInput in = packModel(m, ms, B);
    double R = 0.04, x = 0.5 * 1.0;
    double T = (1 - R) * (1 - R) * std::exp(-x) / (1 - R * R * std::exp(-2 * x));
    double Rtot = R + (1 - R) * (1 - R) * R * std::exp(-2 * x) / (1 - R * R * std::exp(-2 * x));
    auto tt = batchStatistic(in, 40000, 10, [&](const RunResult& r) { return exitThrough(m, r, +1); });
    auto rr = batchStatistic(in, 40000, 10, [&](const RunResult& r) {
        return exitThrough(m, r, -1) + r.ledger.specular / r.ledger.launched;
    });
    fmtest::checkWithinSigma("Beer-Lambert+Fresnel transmission", tt, T);
    fmtest::checkWithinSigma("Beer-Lambert+Fresnel reflection", rr, Rtot);
}

// Isotropic point in a large homogeneous medium: absorbed energy in spherical shells against
// the diffusion solution phi(r) = exp(-mu_eff r) / (4 pi D r), integrated over the same tetras.
BOOST_AUTO_TEST_CASE(point_source_diffusion) {
    const double mua = 0.01, mus = 1.0, L = 20;
    TetraMesh m = makeBoxMesh({-L, -L, -L}, {L, L, L}, 20, 20, 20, [](const Point3&) { return 1u; });
    MaterialSet ms;
    ms.exterior(Material(0, 0, 0, 1.0));
    ms.append(Material(mua, mus, 0.0, 1.0));
    PointSource P;
    P.position = {0.0, 0.0, 0.0};
    KernelInput in = packModel(m, ms, P);
    const double D = 1 / (3 * (mua + mus)), mueff = std::sqrt(mua / D);
    auto phi = [&](double r) { return std::exp(-mueff * r) / (4 * M_PI * D * r); };
    struct Shell { double lo, hi; std::vector<uint32_t> tets; double expected = 0; };
    std::vector<Shell> shells{{4, 6, {}}, {6, 8, {}}, {8, 11, {}}};
    std::mt19937 gen(5);
    std::uniform_real_distribution<double> U(0, 1);
    for (uint32_t t = 1; t <= m.tetraCount(); ++t) {
        Point3 c{0, 0, 0};
        for (uint32_t p : m.tetra(t)) for (int k = 0; k < 3; ++k) c[k] += 0.25 * m.point(p)[k];
        double rc = normP(c);
        for (auto& s : shells) {
            if (rc < s.lo || rc >= s.hi) continue;
            s.tets.push_back(t);
            double acc = 0;  // mean of phi over the tetra by sampling
            const int n = 64;
            for (int i = 0; i < n; ++i) {
                double w[4], sw = 0;
                for (double& a : w) sw += (a = -std::log(U(gen)));
                Point3 q{0, 0, 0};
                for (int k = 0; k < 4; ++k) for (int d = 0; d < 3; ++d) q[d] += w[k] / sw * m.point(m.tetra(t)[k])[d];
                acc += phi(normP(q));
            }
            s.expected += mua * m.volume(t) * acc / n;
        }
    }
    for (auto& s : shells) {
        auto e = batchStatistic(in, 4000, 8, [&](const RunResult& r) {
            double sum = 0;
            for (uint32_t t : s.tets) sum += r.volume[t];
            return sum / r.ledger.launched;
        });
        double rel = e.mean / s.expected - 1;
        BOOST_TEST_MESSAGE("shell [" << s.lo << "," << s.hi << ") mm: MC " << e.mean << " +- " << e.sdMean
                                     << ", diffusion " << s.expected << " (" << 100 * rel << " %)");
        // Diffusion theory holds to a few percent at 4-11 transport lengths; the statistical
        // error is added so a noisy estimate cannot fail spuriously.
        BOOST_CHECK_LE(std::fabs(rel), 0.04 + 3 * e.sdMean / s.expected);
    }
}

BOOST_AUTO_TEST_SUITE_END()
