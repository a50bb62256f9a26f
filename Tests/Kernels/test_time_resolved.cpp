// SPDX-License-Identifier: GPL-3.0-or-later
// The time-resolved tallies of the CPU kernel (issue 28 item 3): the bins of every element sum to
// its CW tally and gating changes no history; time-resolved fluence in an infinite medium and
// the TPSF of a semi-infinite medium against the diffusion references at several gates; the mean
// path length under uniform Lambertian illumination of a closed non-absorbing mesh (4V/S times n
// for the optical path). Tolerances from the spread of independent runs.
#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "Common/Errors.hpp"
#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Kernels/Core/Packet.hpp"
#include "Kernels/Core/Tally.hpp"
#include "Tests/Kernels/DiffusionReference.hpp"
#include "Tests/TestUtil.hpp"

using namespace fm;
namespace dif = fmtest::diffusion;

namespace {

RunOptions gatedOptions(const TimeGates& g, uint64_t packets, uint64_t first = 0) {
    RunOptions o;
    o.packets = packets;
    o.firstPacket = first;
    o.threads = 2;
    o.gates = g;
    o.outputs.gatedVolume = o.outputs.gatedSurface = true;
    return o;
}

// A box of half-width h mm in n^3 cubes, region 1 below z = 0 and 2 above; two tissues in air;
// a point source near its centre.
TetraMesh twoRegionBox(double h, unsigned n) {
    return makeBoxMesh({-h, -h, -h}, {h, h, h}, n, n, n, [](const Point3& c) { return c[2] < 0 ? 1u : 2u; });
}
MaterialSet twoMaterials() {
    MaterialSet ms;
    ms.exterior(Material(0, 0, 0, 1.0));
    ms.append(Material(0.1, 5, 0.8, 1.37));
    ms.append(Material(0.3, 10, 0.9, 1.45));
    return ms;
}
PointSource innerPoint() {
    PointSource P;
    P.position = {0.1, 0.2, 0.3};
    return P;
}

Point3 centroid(const TetraMesh& m, uint32_t t) {
    Point3 c{0, 0, 0};
    for (uint32_t p : m.tetra(t))
        for (int k = 0; k < 3; ++k) c[k] += m.point(p)[k] / 4;
    return c;
}

double norm(const Point3& p) { return std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]); }

// The integral of f over tetra t: the degree-2 four-point rule.
template <class F>
double overTetra(const TetraMesh& m, uint32_t t, F f) {
    const double a = 0.5854101966249685, b = 0.1381966011250105;
    const auto& P = m.tetra(t);
    double s = 0;
    for (int i = 0; i < 4; ++i) {
        Point3 x{0, 0, 0};
        for (int j = 0; j < 4; ++j)
            for (int k = 0; k < 3; ++k) x[k] += (i == j ? a : b) * m.point(P[j])[k];
        s += f(x) / 4;
    }
    return s * m.volume(t);
}

// The integral of f over face id f, a triangle: centroids of its 16 sub-triangles.
template <class F>
double overFace(const TetraMesh& m, uint32_t face, F f) {
    const auto& P = m.face(face).points;
    const Point3 A = m.point(P[0]), B = m.point(P[1]), C = m.point(P[2]);
    const int n = 4;
    double s = 0;
    auto at = [&](double u, double v) {
        Point3 x;
        for (int k = 0; k < 3; ++k) x[k] = A[k] + u * (B[k] - A[k]) + v * (C[k] - A[k]);
        return x;
    };
    for (int i = 0; i < n; ++i)
        for (int j = 0; i + j < n; ++j) {
            s += f(at((i + 1.0 / 3) / n, (j + 1.0 / 3) / n));                       // upward sub-triangle
            if (i + j < n - 1) s += f(at((i + 2.0 / 3) / n, (j + 2.0 / 3) / n));   // downward one
        }
    return s / (n * n) * m.face(face).area;
}

// Eight independent runs of `packets` packets (consecutive packet ranges; roulette at 1e-2,
// unbiased) keeping the gated volume (or exit) tally only: per gate, the sum over `elements`
// (tetras or faces) times `factor` per launched packet, their mean within 4 standard errors of
// the spread of the runs from expected[gate].
void checkGatesOverRuns(const std::string& what, const KernelInput& in, const TimeGates& g, uint64_t packets,
                        bool volume, const std::vector<uint32_t>& elements, double factor,
                        const std::vector<double>& expected) {
    std::vector<std::vector<double>> perGate(g.count);
    for (int j = 0; j < 8; ++j) {
        RunOptions o = gatedOptions(g, packets, uint64_t(j) * packets);
        (volume ? o.outputs.surface : o.outputs.volume) = false;
        (volume ? o.outputs.gatedSurface : o.outputs.gatedVolume) = false;
        o.params.wmin = 1e-2f;
        o.batches = 1;
        const RunResult r = runCpu(in, o);
        const std::vector<double>& gated = volume ? r.gatedVolume : r.gatedSurface;
        const size_t stride = gated.size() / g.bins();
        for (uint32_t k = 0; k < g.count; ++k) {
            double e = 0;
            for (uint32_t i : elements) e += gated[k * stride + (volume ? i : uint32_t(r.gates.faces->slot.at(i)))];
            perGate[k].push_back(e * factor / double(packets));
        }
    }
    for (uint32_t k = 0; k < g.count; ++k)
        fmtest::checkWithinSigma(what + ", gate " + std::to_string(k), fmtest::meanSd(perGate[k]), expected[k], 4);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(time_resolved)

// Every tetra's and face's bins hold its CW tally (the same adds, to the rounding of summing
// them in another order: at most 2 x adds x DBL_EPSILON of the sum), the per-bin totals hold the
// ledger, and the CW tallies of a gated run are those of a run without gates, bit for bit.
BOOST_AUTO_TEST_CASE(bins_sum_to_cw) {
    TetraMesh m = twoRegionBox(3, 4);
    KernelInput in = packModel(m, twoMaterials(), innerPoint());
    const TimeGates g = makeTimeGates(0.005, 0.1, 0.005, "gates");
    RunOptions cwOpt = gatedOptions(g, 20000);
    cwOpt.gates = TimeGates{};
    cwOpt.outputs.gatedVolume = cwOpt.outputs.gatedSurface = false;
    const RunResult cw = runCpu(in, cwOpt), r = runCpu(in, gatedOptions(g, 20000));
    BOOST_TEST(r.volume == cw.volume);
    BOOST_TEST(r.surface == cw.surface);
    BOOST_TEST(r.standardError.volume == cw.standardError.volume);
    BOOST_REQUIRE(r.gates.count == g.count);
    BOOST_REQUIRE(r.gatedVolume.size() == g.bins() * r.volume.size());
    // The gated exit tally's elements: the mesh's boundary faces, ascending, element 0 a dummy;
    // every other face exits nothing.
    BOOST_REQUIRE(r.gates.faces);
    std::vector<uint32_t> boundary = m.boundaryFaces();
    std::sort(boundary.begin(), boundary.end());
    const std::vector<uint32_t>& faces = r.gates.faces->faces;
    BOOST_REQUIRE(faces.size() == boundary.size() + 1);
    BOOST_TEST(std::equal(boundary.begin(), boundary.end(), faces.begin() + 1));
    BOOST_REQUIRE(r.gates.faces->slot.size() == r.surface.size());
    for (size_t k = 0; k < faces.size(); ++k) BOOST_REQUIRE(r.gates.faces->slot[faces[k]] == int32_t(k) || k == 0);
    double interior = 0;
    for (size_t f = 1; f < r.surface.size(); ++f)
        if (r.gates.faces->slot[f] < 0) interior += r.surface[f];
    BOOST_TEST(interior == 0.0);
    BOOST_REQUIRE(r.gatedSurface.size() == g.bins() * faces.size());
    const double bound = 2.0 * double(r.events.absorb + r.events.exit) * DBL_EPSILON;
    // ids[k]: the CW tally's index of gated element k (null: k itself).
    auto checkBins = [&](const std::vector<double>& gated, const std::vector<double>& total,
                         const std::vector<uint32_t>* ids, const char* what) {
        const size_t n = ids ? ids->size() : total.size();
        size_t bad = 0;
        for (size_t i = 0; i < n; ++i) {
            double s = 0;
            for (uint32_t b = 0; b < g.bins(); ++b) s += gated[b * n + i];
            const double t = total[ids ? (*ids)[i] : i];
            if (std::fabs(s - t) > bound * t) ++bad;
        }
        BOOST_TEST(bad == 0u, what << ": " << bad << " elements whose bins do not sum to the CW tally");
    };
    checkBins(r.gatedVolume, r.volume, nullptr, "volume");
    checkBins(r.gatedSurface, r.surface, &faces, "exit");
    const std::vector<double> a = gateBinTotals(g, r.gatedVolume), e = gateBinTotals(g, r.gatedSurface);
    double sa = 0, se = 0;
    for (uint32_t b = 0; b < g.bins(); ++b) sa += a[b], se += e[b];
    BOOST_TEST(std::fabs(sa - r.ledger.absorbed) <= bound * r.ledger.absorbed);
    BOOST_TEST(std::fabs(se - r.ledger.exited) <= bound * r.ledger.exited);
    BOOST_TEST(a[g.earlyBin()] > 0);  // packets absorbed within 5 ps of launch
    BOOST_TEST(e[g.lateBin()] > 0);   // and some exiting after 100 ps
    // The one-packet-at-a-time loop gives the same histories, so the same gated tallies to
    // summation order (a lane losing its clock would move weight between bins).
    RunOptions generic = gatedOptions(g, 20000);
    generic.tuning.cpuIsa = CpuIsa::Generic;
    const RunResult rg = runCpu(in, generic);
    BOOST_TEST(fmtest::l1(r.gatedVolume, rg.gatedVolume) < 1e-12);
    BOOST_TEST(fmtest::l1(r.gatedSurface, rg.gatedSurface) < 1e-12);
    // Standard errors per element and per bin total.
    BOOST_TEST(r.standardError.gatedVolume.size() == r.gatedVolume.size());
    BOOST_TEST(r.standardError.gatedSurfaceTotals.size() == g.bins());
    BOOST_TEST(r.standardError.gatedVolumeTotals[3] > 0);
    BOOST_TEST(r.standardError.gatedVolumeTotals[3] < a[3]);
}

// The gated exit tally's elements are the boundary faces, made from the packed cells; a caller's
// list is reused only for the cells it was made from, and a model whose face ids exceed its face
// count is refused by name.
BOOST_AUTO_TEST_CASE(exit_faces_are_the_boundary) {
    TetraMesh m = twoRegionBox(3, 4), other = twoRegionBox(2, 3);
    const KernelInput in = packModel(m, twoMaterials(), innerPoint()), in2 = packModel(other, twoMaterials(), innerPoint());
    const std::shared_ptr<const GatedFaces> f = gatedExitFaces(in);
    std::vector<uint32_t> boundary = m.boundaryFaces();
    std::sort(boundary.begin(), boundary.end());
    BOOST_REQUIRE(f->faces.size() == boundary.size() + 1);
    BOOST_TEST(f->faces[0] == 0u);
    BOOST_TEST(std::equal(boundary.begin(), boundary.end(), f->faces.begin() + 1));
    BOOST_REQUIRE(f->slot.size() == m.faceCount() + 1);
    size_t listed = 0;
    for (uint32_t id = 1; id <= m.faceCount(); ++id)
        if (f->slot[id] >= 0) {
            BOOST_REQUIRE(f->faces[size_t(f->slot[id])] == id);
            ++listed;
        }
    BOOST_TEST(listed == boundary.size());
    BOOST_TEST(boundary.size() < m.faceCount());  // interior faces exist and are left out
    // Reused for the same cells, made anew for others.
    TimeGates g = makeTimeGates(0, 1, 0.1, "gates");
    const TimeGates a = withExitFaces(in, g);
    BOOST_REQUIRE(in.cellsIdentity != 0 && a.faces && a.faces->cellsIdentity == in.cellsIdentity);
    BOOST_TEST(withExitFaces(in, a).faces == a.faces);
    const TimeGates b = withExitFaces(in2, a);
    BOOST_REQUIRE(b.faces != a.faces);
    BOOST_TEST(b.faces->faces == gatedExitFaces(in2)->faces);
    // A run given the other model's list books into its own model's exit faces.
    RunOptions o = gatedOptions(a, 2000);
    o.outputs.volume = o.outputs.gatedVolume = false;
    const RunResult r = runCpu(in2, o);
    BOOST_REQUIRE(r.gates.faces);
    BOOST_TEST(r.gates.faces->faces == b.faces->faces);
    BOOST_TEST(r.gatedSurface.size() == g.bins() * b.faces->faces.size());
    // Face ids beyond the model's face count: refused, naming the cell.
    KernelInput bad = in;
    bad.faceCount = 3;
    bad.cellsIdentity = 0;
    try {
        gatedExitFaces(bad);
        BOOST_ERROR("face ids beyond the face count accepted");
    } catch (const ModelError& e) {
        BOOST_TEST_MESSAGE("error: " << e.what());
        BOOST_TEST(std::string(e.what()).find("outside the model's 3 face ids") != std::string::npos);
    }
}

// Time-resolved fluence 6-9 mm (12-18 transport mean free paths) from a point source in an
// infinite medium (a 48 mm cube, index 1.4 matched outside) against the diffusion Green's
// function integrated over each gate and each tetra of the shell.
BOOST_AUTO_TEST_CASE(infinite_medium_green_function) {
    const dif::Medium med{0.02, 2.0, 1.4};
    TetraMesh m = makeBoxMesh({-24, -24, -24}, {24, 24, 24}, 24, 24, 24, [](const Point3&) { return 1u; });
    MaterialSet ms;
    ms.exterior(Material(0, 0, 0, med.n));
    ms.append(Material(med.mua, med.musp, 0.0, med.n));
    PointSource P;
    P.position = {0.013, 0.021, 0.034};
    KernelInput in = packModel(m, ms, P);
    const TimeGates g = makeTimeGates(0.1, 0.4, 0.1, "gates");
    std::vector<uint32_t> shell;
    for (uint32_t t = 1; t <= m.tetraCount(); ++t) {
        const double r = norm(centroid(m, t));
        if (r > 6 && r < 9) shell.push_back(t);
    }
    std::vector<double> expected(g.count, 0.0);
    for (uint32_t k = 0; k < g.count; ++k)
        for (uint32_t t : shell)
            expected[k] += overTetra(m, t, [&](const Point3& x) {
                return dif::overGate([&](double s) { return dif::infiniteFluenceRate(med, norm(x), s); }, g, k);
            });
    // The gated volume tally over the shell / mu_a: fluence x volume.
    checkGatesOverRuns("infinite medium", in, g, 8000, true, shell, 1 / med.mua, expected);
}

// The time-resolved diffuse reflectance (TPSF) of a semi-infinite medium (a 50 x 50 x 25 mm
// slab, index 1.4 matched outside) 6-10 mm from a pencil beam, against the extrapolated-boundary
// solution integrated over each gate and each exit face.
BOOST_AUTO_TEST_CASE(semi_infinite_tpsf) {
    const dif::Medium med{0.01, 2.0, 1.4};
    TetraMesh m = makeBoxMesh({-25, -25, 0}, {25, 25, 25}, 25, 25, 12, [](const Point3&) { return 1u; });
    MaterialSet ms;
    ms.exterior(Material(0, 0, 0, med.n));
    ms.append(Material(med.mua, med.musp, 0.0, med.n));
    PencilBeamSource B;
    B.position = {0.013, 0.021, -1};
    B.direction = {0, 0, 1};
    KernelInput in = packModel(m, ms, B);
    const TimeGates g = makeTimeGates(0.1, 0.4, 0.1, "gates");
    std::vector<uint32_t> ring;
    for (uint32_t f : m.boundaryFaces()) {
        const auto& P = m.face(f).points;
        Point3 c{0, 0, 0};
        for (uint32_t p : P)
            for (int k = 0; k < 3; ++k) c[k] += m.point(p)[k] / 3;
        const double rho = std::hypot(c[0], c[1]);
        if (std::fabs(c[2]) < 1e-9 && rho > 6 && rho < 10) ring.push_back(f);
    }
    std::vector<double> expected(g.count, 0.0);
    for (uint32_t k = 0; k < g.count; ++k)
        for (uint32_t f : ring)
            expected[k] += overFace(m, f, [&](const Point3& x) {
                const double rho = std::hypot(x[0], x[1]);
                return dif::overGate([&](double s) { return dif::semiInfiniteReflectance(med, rho, s); }, g, k);
            });
    // The gated exit tally over the ring.
    checkGatesOverRuns("semi-infinite TPSF", in, g, 40000, false, ring, 1.0, expected);
}

// The invariance law (Blanco and Fournier 2003): under uniform Lambertian illumination of a closed
// non-absorbing body, packets travel a mean length 4V/S inside, whatever the scattering; with the
// index n matched outside, their mean optical path (the clock) is n 4V/S. Read at exit by a
// tally of the packet clock through the scalar loop, and from the gated exit tally of the CPU
// kernel (gate midpoints: at most half a gate from each packet's time).
struct ExitClockTally {
    static constexpr bool kNeedsClock = true;
    static constexpr bool kScoresFaces = true;
    double sum = 0, sum2 = 0, weight = 0;
    FM_HD void exit(const PacketState& st, uint32_t) {
        sum += st.pk.w * double(st.opl);
        sum2 += st.pk.w * double(st.opl) * double(st.opl);
        weight += st.pk.w;
    }
};

BOOST_AUTO_TEST_CASE(invariance_law_mean_path) {
    TetraMesh m = makeBoxMesh({0, 0, 0}, {10, 8, 6}, 5, 4, 3, [](const Point3&) { return 1u; });
    double V = 0, S = 0;
    for (uint32_t t = 1; t <= m.tetraCount(); ++t) V += m.volume(t);
    for (uint32_t f : m.boundaryFaces()) S += m.face(f).area;
    for (double n : {1.0, 1.4}) {
        MaterialSet ms;
        ms.exterior(Material(0, 0, 0, n));
        ms.append(Material(0.0, 1.5, 0.7, n));
        SurfaceSource src;
        src.region = 1;
        src.emission = SurfaceSource::Lambert;
        KernelInput in = packModel(m, ms, src);
        const double expected = n * 4 * V / S;
        // The clock read at exit: every packet exits (mu_a = 0) with weight 1.
        TallyPack<uint64_t, ExitClockTally> sc;
        const ArrayModel am = in.view();
        KernelParams kp;
        const uint64_t N = 40000;
        for (uint64_t i = 0; i < N; ++i) runPacket(am, kp, i, sc);
        const ExitClockTally& t = sc.tally<ExitClockTally>();
        BOOST_REQUIRE(t.weight == double(N));
        const double mean = t.sum / t.weight, se = std::sqrt((t.sum2 / t.weight - mean * mean) / t.weight);
        BOOST_TEST_MESSAGE("n = " << n << ": mean optical path " << mean << " +- " << se << " mm vs n 4V/S = " << expected);
        BOOST_TEST(std::fabs(mean - expected) <= 4 * se);
        // The gated exit tally of the same packets: its mean time within half a gate of the clock's.
        const TimeGates g = makeTimeGates(0, 1, 0.001, "gates");
        RunOptions o = gatedOptions(g, N);
        o.outputs.volume = o.outputs.gatedVolume = false;
        o.batches = 1;
        const RunResult r = runCpu(in, o);
        const std::vector<double> e = gateBinTotals(g, r.gatedSurface);
        BOOST_REQUIRE(e[g.lateBin()] == 0 && e[g.earlyBin()] == 0);
        double sum = 0, wt = 0;
        for (uint32_t b = 0; b < g.count; ++b) {
            sum += e[b];
            wt += e[b] * 0.5 * (g.gateStart(b) + g.gateStop(b));
        }
        const double gatedMean = wt / sum * kLightMmPerNs;
        BOOST_TEST_MESSAGE("  from the gated exit tally: " << gatedMean << " mm");
        BOOST_TEST(std::fabs(gatedMean - mean) <= 0.5 * g.stepNs * kLightMmPerNs);
    }
}

BOOST_AUTO_TEST_SUITE_END()
