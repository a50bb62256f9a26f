// SPDX-License-Identifier: GPL-3.0-or-later
// MCML mode: the layered model as cells of the common packet loop, the MCML scorer and its
// normalisations, MCML manual reference cases, and layered vs tetrahedral mesh.
#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Kernels/CPU/McmlCpu.hpp"
#include "Kernels/CPU/McmlLanes.hpp"
#include "Kernels/Core/Packet.hpp"
#include "Kernels/Core/SlabModel.hpp"
#include "Kernels/McmlSlabLoop.hpp"
#include "Storage/MCML/MCIReader.hpp"
#include "Storage/MCML/MCOReader.hpp"
#include "Storage/MCML/MCOWriter.hpp"
#include "Tests/Kernels/McmlTestUtil.hpp"

using namespace fm;

namespace {

constexpr double kPi = 3.14159265358979323846;

// A small three-layer run in MCML's units: mismatched indices, a thin top layer.
MCMLRun smallRun() {
    MCMLRun r;
    r.outName = "small.mco";
    r.photons = 4000;
    r.dz = 0.005;
    r.dr = 0.01;
    r.nz = 40;
    r.nr = 30;
    r.na = 6;
    r.nAbove = 1.0;
    r.nBelow = 1.2;
    r.layers = {{1.4, 2, 100, 0.8, 0.01}, {1.33, 1, 50, 0.9, 0.05}, {1.45, 5, 80, 0.7, 0.1}};
    return r;
}

RunOptions options(const MCMLRun& run, uint64_t packets, unsigned threads) {
    RunOptions o = mcmlRunOptions(run);
    o.packets = packets;
    o.threads = threads;
    o.params.seed = 5;
    return o;
}

double sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

// Exact fate of a normal beam in absorbing, non-scattering layers: every path of Fresnel
// reflections and transmissions at normal incidence, summed until its weight is negligible.
struct BallisticSeries {
    double Rd = 0, Tt = 0;
    std::vector<double> A;
    explicit BallisticSeries(const LayeredModel& m) : A(m.layers.size(), 0.0) {
        const long L = long(m.layers.size());
        auto n = [&](long i) { return i < 0 ? m.nAbove : i >= L ? m.nBelow : m.layers[i].n; };
        auto R = [](double a, double b) { return std::pow((a - b) / (a + b), 2); };
        struct Ray { long layer; long step; double w; };  // step +1: downwards
        std::vector<Ray> rays{{0, 1, 1 - R(n(-1), n(0))}};
        while (!rays.empty()) {
            Ray r = rays.back();
            rays.pop_back();
            if (r.w < 1e-16) continue;
            const Layer& l = m.layers[r.layer];
            double w = r.w * std::exp(-l.mu_a * l.thickness);
            A[r.layer] += r.w - w;
            long next = r.layer + r.step;
            double Rf = R(n(r.layer), n(next));
            rays.push_back({r.layer, -r.step, w * Rf});
            if (next < 0) Rd += w * (1 - Rf);
            else if (next >= L) Tt += w * (1 - Rf);
            else rays.push_back({next, r.step, w * (1 - Rf)});
        }
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(mcml_mode)

BOOST_AUTO_TEST_CASE(layers_become_two_plane_cells) {
    LayeredModel m = layeredFromMcml(smallRun());
    BOOST_CHECK_CLOSE(m.layers[1].thickness, 0.5, 1e-9);  // cm -> mm
    BOOST_CHECK_CLOSE(m.layers[1].mu_s, 5.0, 1e-9);       // 1/cm -> 1/mm
    KernelInput in = packLayered(m);
    BOOST_REQUIRE_EQUAL(in.cells.size(), 4u);
    BOOST_REQUIRE_EQUAL(in.materials.size(), 5u);
    BOOST_CHECK_EQUAL(in.materials[0].n, 1.0f);
    BOOST_CHECK_EQUAL(in.materials[4].n, 1.2f);
    const TetraRecord& c2 = in.cells[2];
    BOOST_CHECK_EQUAL(c2.nz[0], -1.f);
    BOOST_CHECK_CLOSE(c2.C[0], -0.1f, 1e-4);  // top of layer 2 at z = 0.1 mm
    BOOST_CHECK_CLOSE(c2.C[1], 0.6f, 1e-4);
    BOOST_CHECK_EQUAL(c2.adj[0], 1u);
    BOOST_CHECK_EQUAL(c2.adj[1], 3u);
    BOOST_CHECK_EQUAL(in.cells[1].adj[0], kExteriorBit | 0u);
    BOOST_CHECK_EQUAL(in.cells[3].adj[1], kExteriorBit | 4u);
    // the material across each face: the neighbouring layer's, or the ambient medium's
    BOOST_CHECK_EQUAL(c2.adjMaterial[0], 1u);
    BOOST_CHECK_EQUAL(c2.adjMaterial[1], 3u);
    BOOST_CHECK_EQUAL(in.cells[1].adjMaterial[0], 0u);
    BOOST_CHECK_EQUAL(in.cells[3].adjMaterial[1], 4u);
    BOOST_CHECK_EQUAL(in.cells[1].face[0] & ~kFaceSideBit, kLayeredTopFace);
    BOOST_CHECK_EQUAL(in.cells[3].face[1], 4u);
    double r = (1.0 - 1.4) / (1.0 + 1.4);
    BOOST_CHECK_CLOSE(specularReflectance(m), r * r, 1e-9);
    BOOST_CHECK_CLOSE(in.emitters[0].weight, float(1 - r * r), 1e-5);
    BOOST_CHECK_EQUAL(in.emitters[0].tetra, 1u);
}

BOOST_AUTO_TEST_CASE(clear_first_layer_launches_below_it_as_mcml) {
    MCMLRun run = smallRun();
    run.layers[0].mua = run.layers[0].mus = 0;
    LayeredModel m = layeredFromMcml(run);
    KernelInput in = packLayered(m);
    double r1 = std::pow(0.4 / 2.4, 2), r2 = std::pow(0.07 / 2.73, 2);
    BOOST_CHECK_CLOSE(specularReflectance(m), r1 + (1 - r1) * (1 - r1) * r2 / (1 - r1 * r2), 1e-9);
    BOOST_CHECK_EQUAL(in.emitters[0].tetra, 2u);
    BOOST_CHECK_CLOSE(in.emitters[0].pos.z, 0.1f, 1e-4);
}

BOOST_AUTO_TEST_CASE(bad_layers_are_rejected_with_the_layer_named) {
    LayeredModel m = layeredFromMcml(smallRun());
    m.layers[1].thickness = 0;
    BOOST_CHECK_EXCEPTION(packLayered(m), ModelError, [](const ModelError& e) {
        return std::string(e.what()).find("layer 2: thickness") != std::string::npos;
    });
    m = layeredFromMcml(smallRun());
    m.layers[2].g = 1.5;
    BOOST_CHECK_THROW(packLayered(m), ModelError);
    MCMLRun run = smallRun();
    BOOST_CHECK_THROW(runMcml("cpu", LayeredModel{}, run, options(run, 10, 1)), ParameterError);
}

// Same packets through the standard tally scorer and the MCML scorer: per-layer absorption and
// per-surface exit weight agree, the ledger closes, every weight lands in a bin.
BOOST_AUTO_TEST_CASE(mcml_scorer_agrees_with_standard_tallies) {
    MCMLRun run = smallRun();
    KernelInput in = packLayered(layeredFromMcml(run));
    RunOptions o = options(run, 20000, 2);
    McmlTallies t = runMcmlCpu(in, mcmlGrid(run), o);
    RunResult std = runCpu(in, o);
    BOOST_CHECK_SMALL(t.ledger.imbalance() / t.ledger.launched, 1e-12);
    BOOST_CHECK_EQUAL(t.ledger.launched, 20000.0);
    for (uint32_t c = 1; c <= 3; ++c) BOOST_CHECK_CLOSE(t.absorbedCell[c], std.volume[c], 1e-9);
    BOOST_CHECK_CLOSE(sum(t.absorbedRZ), t.ledger.absorbed, 1e-9);
    BOOST_CHECK_CLOSE(sum(t.reflectedRA) + sum(t.transmittedRA), t.ledger.exited, 1e-9);
    BOOST_CHECK_CLOSE(sum(t.reflectedRA), std.surface[kLayeredTopFace], 1e-9);
    BOOST_CHECK_CLOSE(sum(t.transmittedRA), std.surface[4], 1e-9);
    McmlTallies t1 = runMcmlCpu(in, mcmlGrid(run), options(run, 20000, 1));
    BOOST_CHECK_CLOSE(sum(t1.absorbedRZ), sum(t.absorbedRZ), 1e-10);  // any thread count
}

// The MCML kernels run the layered model through SlabModel (bounds computed, two planes, the
// layer's material kept between events); it must be the packed records' geometry and physics
// exactly: the same exit face and distance for any ray, and the same
// tallies and event counts to the bit for the same packets.
struct HostAddForTest {
    static void add(double* p, double v) { *p += v; }
};

// The arrays of a host McmlScorer for grid g (three layers: four cells).
struct McmlArrays {
    std::vector<double> rz, ra, tt, cells;
    explicit McmlArrays(const McmlGrid& g)
        : rz(size_t(g.nr) * g.nz), ra(size_t(g.nr) * g.na), tt(ra.size()), cells(4) {}
    McmlScorer<HostAddForTest> scorer(const McmlGrid& g) {
        return mcmlScorer<HostAddForTest>(g, rz.data(), ra.data(), tt.data(), cells.data());
    }
    HostSlabSink sink(const McmlGrid& g) { return mcmlScorer<HostAdd>(g, rz.data(), ra.data(), tt.data(), cells.data()); }
};

BOOST_AUTO_TEST_CASE(slab_geometry_equals_packed_records) {
    MCMLRun run = smallRun();
    KernelInput in = packLayered(layeredFromMcml(run));
    BOOST_REQUIRE_EQUAL(in.slabs.size(), 4u);
    BOOST_CHECK_CLOSE(in.slabs[2].z0, 0.1f, 1e-4);
    BOOST_CHECK_CLOSE(in.slabs[3].z1, 1.6f, 1e-4);
    for (uint32_t c = 1; c < 3; ++c) BOOST_CHECK_EQUAL(in.slabs[c].z1, in.slabs[c + 1].z0);
    const SlabModel slab = in.slabView();
    BOOST_REQUIRE_EQUAL(slab.layers, 3u);
    const ArrayModel cells = in.view();
    for (uint32_t c = 1; c <= 3; ++c) {
        BOOST_CHECK_EQUAL(cells.cellMaterial(c), slab.cellMaterial(c));
        for (int f = 0; f < 2; ++f) BOOST_CHECK_EQUAL(cells.adjacentMaterial(c, f), slab.adjacentMaterial(c, f));
    }
    PacketRng rng(3, 0);
    for (int k = 0; k < 20000; ++k) {
        uint32_t c = 1 + uint32_t(rng.uniform() * 3.f) % 3u;
        const float z0 = in.slabs[c].z0, z1 = in.slabs[c].z1;
        Vec3 p{rng.uniform() - 0.5f, rng.uniform() - 0.5f, z0 + rng.uniform() * (z1 - z0)};
        Vec3 d = k % 97 == 0 ? Vec3{1.f, 0.f, 0.f} : deflect(Vec3{0.f, 0.f, 1.f}, 2.f * rng.uniform() - 1.f, rng);
        FaceHit a = cellExit(cells, c, p, d), b = cellExit(slab, c, p, d);
        BOOST_REQUIRE_EQUAL(a.face, b.face);
        BOOST_REQUIRE_EQUAL(a.t, b.t);
        if (a.face >= 0) {
            BOOST_REQUIRE_EQUAL(cells.adjacent(c, a.face), slab.adjacent(c, a.face));
            BOOST_REQUIRE_EQUAL(cells.faceId(c, a.face), slab.faceId(c, a.face));
            BOOST_REQUIRE_EQUAL(a.normal.z, b.normal.z);
        }
    }
    const McmlGrid g = mcmlGrid(run);
    McmlArrays A(g), B(g);
    McmlScorer<HostAddForTest> sa = A.scorer(g), sb = B.scorer(g);
    const RunOptions o = options(run, 3000, 1);
    for (uint64_t i = 0; i < 3000; ++i) {
        runPacket(cells, o.params, i, sa);
        runPacket(slab, o.params, i, sb);
    }
    sa.flush();
    sb.flush();
    BOOST_CHECK(A.rz == B.rz);
    BOOST_CHECK(A.ra == B.ra);
    BOOST_CHECK(A.tt == B.tt);
    BOOST_CHECK(A.cells == B.cells);
    BOOST_CHECK_EQUAL(sa.events.boundary, sb.events.boundary);
    BOOST_CHECK_EQUAL(sa.events.tir, sb.events.tir);
    BOOST_CHECK_EQUAL(sa.events.fresnel, sb.events.fresnel);
    BOOST_CHECK_EQUAL(sa.events.refract, sb.events.refract);
    BOOST_CHECK_EQUAL(sa.events.interface, sb.events.interface);
    BOOST_CHECK_EQUAL(sa.events.exit, sb.events.exit);
    BOOST_CHECK_EQUAL(sa.ledger.exited, sb.ledger.exited);
    BOOST_CHECK_GT(sb.events.boundary, 3000u);  // the packets did cross layers
    BOOST_CHECK_GT(sb.events.tir, 0u);          // with total internal reflection,
    BOOST_CHECK_GT(sb.events.fresnel, 0u);      // Fresnel reflection
    BOOST_CHECK_GT(sb.events.refract, 0u);      // and refraction among them
}

// The small run's layers as a SlabModel (the packed slab cells), its grid, and the
// options of the history comparisons: 3000 photons, roulette in many histories (wmin 0.02), and
// maxSteps as given (60 takes the guard).
struct SmallSlab {
    MCMLRun run = smallRun();
    KernelInput in = packLayered(layeredFromMcml(run));
    SlabModel slab = in.slabView();
    McmlGrid g = mcmlGrid(run);
    RunOptions options(uint32_t maxSteps) const {
        RunOptions o = ::options(run, 3000, 1);
        o.params.maxSteps = maxSteps;
        o.params.wmin = 0.02f;
        return o;
    }
};

// The ledgers of two runs of the same histories: every field equal but the absorbed weight,
// which one books per layer visit or per run of deposits, equal to rounding.
namespace {
void checkSameLedgers(const Ledger& a, const Ledger& b) {
    BOOST_CHECK_EQUAL(a.launched, b.launched);
    BOOST_CHECK_EQUAL(a.specular, b.specular);
    BOOST_CHECK_EQUAL(a.exited, b.exited);
    BOOST_CHECK_EQUAL(a.rouletteGained, b.rouletteGained);
    BOOST_CHECK_EQUAL(a.rouletteLost, b.rouletteLost);
    BOOST_CHECK_EQUAL(a.abnormal, b.abnormal);
    BOOST_CHECK_CLOSE(a.absorbed, b.absorbed, 1e-12);
}
}  // namespace

// The GPU's MCML kernel runs the slab photon loop (Kernels/McmlSlabLoop.hpp): the common
// packet loop with McmlScorer written out for layers. Run here on the host against
// runPacket(SlabModel, McmlScorer), photon by photon with the same streams, it must give the
// same histories: every event count and the exit and (r, z) grids to the bit (same additions in
// the same order), the per-layer and total absorption to rounding (it adds a layer's weight up
// per visit instead of per event). With a low maxSteps the abnormal path is taken as well.
BOOST_AUTO_TEST_CASE(slab_photon_loop_gives_the_packet_loops_histories) {
    const SmallSlab c;
    const SlabModel& slab = c.slab;
    const McmlGrid& g = c.g;
    for (uint32_t maxSteps : {100000u, 60u}) {
        McmlArrays A(g), B(g);
        McmlScorer<HostAddForTest> sa = A.scorer(g);
        HostSlabSink sb = B.sink(g);
        const RunOptions o = c.options(maxSteps);
        for (uint64_t i = 0; i < 3000; ++i) {
            runPacket(slab, o.params, i, sa);
            runSlabPhoton(slab, o.params, i, sb);
        }
        sa.flush();
        slabScatterCount(sb.events);
        BOOST_CHECK(A.rz == B.rz);
        BOOST_CHECK(A.ra == B.ra);
        BOOST_CHECK(A.tt == B.tt);
        for (size_t c = 0; c < A.cells.size(); ++c) BOOST_CHECK_CLOSE(A.cells[c] + 1.0, B.cells[c] + 1.0, 1e-12);
        const Events& b = sb.events;
        fmtest::checkSameEvents(sa.events, b);
        checkSameLedgers(sa.ledger, sb.ledger);
        BOOST_CHECK_SMALL(sb.ledger.imbalance(), 1e-9);
        BOOST_CHECK_GT(b.tir, 0u);
        BOOST_CHECK_GT(b.fresnel, 0u);
        if (maxSteps < 100) {
            BOOST_CHECK_GT(b.abnormal, 100u);  // the guard was taken
        } else {
            BOOST_CHECK_GT(b.win, 20u);  // roulette won and lost
            BOOST_CHECK_GT(b.die, 100u);
            BOOST_CHECK_EQUAL(b.abnormal, 0u);
        }
    }
}

// The GPU's plain MCML run books deposits as weight differences (McmlSlabLoop.hpp
// kDepositsAsDifferences, McmlAbsorbDifferenceTally): a layer visit's absorption and a run of
// (r, z) deposits in one bin from the weights where they began and ended, instead of adding each
// interaction's drop. Run here through a host sink that does the same, against the slab loop
// that adds every drop, photon by photon with the same streams: the same histories (every event
// count, the exits to the bit) and the absorption per bin, per layer and in all equal to rounding,
// with roulette won and lost (a win closes both runs) and with the maxSteps guard taken; and
// with the bins at the beam sent to an array of their own (nearRZ, as the GPU's replicas of
// them), which then holds every one of their deposits and the grid none.
namespace {
using DifferenceTallies = TallyPack<uint64_t, McmlAbsorbDifferenceTally<HostAddForTest>, McmlExitTally<HostAddForTest>,
                                    McmlLayerTally<HostAddForTest>>;
struct DifferenceSink : DifferenceTallies {
    static constexpr bool kDepositsAsDifferences = true;
    void interaction(const PacketState& st, float w0) { tally<McmlAbsorbDifferenceTally<HostAddForTest>>().interaction(st, w0); }
    void reweight(const PacketState& st, float w1) { tally<McmlAbsorbDifferenceTally<HostAddForTest>>().reweight(st, w1); }
};
void checkCloseBins(const std::vector<double>& a, const std::vector<double>& b);
}  // namespace

BOOST_AUTO_TEST_CASE(slab_deposits_as_weight_differences_keep_the_tallies) {
    const SmallSlab c;
    const McmlGrid& g = c.g;
    for (const auto& [maxSteps, nearRows] : {std::pair{100000u, 0u}, {60u, 0u}, {100000u, 2u}}) {
        McmlArrays A(g), B(g);
        HostSlabSink sa = A.sink(g);
        DifferenceSink sb;
        sb.absorbedRZ = B.rz.data();
        std::vector<double> near(size_t(nearRows) * g.nz, 0.0);
        sb.nearRZ = near.data();
        sb.nearBins = uint32_t(near.size());
        sb.rzGrid = g;
        sb.reflectedRA = B.ra.data();
        sb.transmittedRA = B.tt.data();
        sb.raGrid = g;
        sb.absorbedCell = B.cells.data();
        const RunOptions o = c.options(maxSteps);
        for (uint64_t i = 0; i < 3000; ++i) {
            runSlabPhoton(c.slab, o.params, i, sa);
            runSlabPhoton(c.slab, o.params, i, sb);
        }
        slabScatterCount(sa.events);
        slabScatterCount(sb.events);
        fmtest::checkSameEvents(sa.events, sb.events);
        if (nearRows) {
            double sent = 0;
            for (size_t i = 0; i < near.size(); ++i) {
                BOOST_CHECK_EQUAL(B.rz[i], 0.0);  // the grid's own copy of these bins got nothing
                B.rz[i] = near[i];
                sent += near[i];
            }
            BOOST_CHECK_GT(sent, 0.0);
        }
        BOOST_CHECK(A.ra == B.ra);
        BOOST_CHECK(A.tt == B.tt);
        checkCloseBins(A.rz, B.rz);
        checkCloseBins(A.cells, B.cells);
        checkSameLedgers(sa.ledger, sb.ledger);
        double rz = 0;
        for (double v : B.rz) rz += v;
        BOOST_CHECK_CLOSE(rz, sb.ledger.absorbed, 1e-10);
        BOOST_CHECK_SMALL(sb.ledger.imbalance(), 1e-9);
        if (maxSteps < 100) {
            BOOST_CHECK_GT(sb.events.abnormal, 100u);  // the guard was taken
        } else {
            BOOST_CHECK_GT(sb.events.win, 20u);  // roulette won and lost
            BOOST_CHECK_GT(sb.events.die, 100u);
        }
    }
}

// The CPU runs the slab loop with many photons in lockstep (Kernels/CPU/McmlLanes.hpp: AVX2
// lanes where the CPU has them). Against runSlabPhoton, photon by photon, it must give the
// same histories: every event count and ledger field equal, the grids equal bin by bin to
// summation order (the lanes interleave the photons' deposits).
namespace {
struct RangeChunks final : PacketChunks {
    uint64_t b, e;
    RangeChunks(uint64_t begin, uint64_t end) : b(begin), e(end) {}
    bool next(uint64_t& begin, uint64_t& end) override {  // chunks of 100
        if (b >= e) return false;
        begin = b;
        end = std::min(e, b + 100);
        b = end;
        return true;
    }
};
void checkCloseBins(const std::vector<double>& a, const std::vector<double>& b) {
    BOOST_REQUIRE_EQUAL(a.size(), b.size());
    size_t bad = 0;
    for (size_t i = 0; i < a.size(); ++i)
        if (std::fabs(a[i] - b[i]) > 1e-12 * std::max(std::fabs(a[i]), std::fabs(b[i]))) ++bad;
    BOOST_CHECK_EQUAL(bad, 0u);
}
}  // namespace

BOOST_AUTO_TEST_CASE(slab_lanes_give_the_slab_loops_histories) {
    BOOST_TEST_MESSAGE("CPU lane loop: " << cpuLaneIsa());
    const SmallSlab c;
    const SlabModel& slab = c.slab;
    const McmlGrid& g = c.g;
    for (uint32_t maxSteps : {100000u, 60u}) {
        McmlArrays A(g), B(g);
        HostSlabSink sa = A.sink(g), sb = B.sink(g);
        const RunOptions o = c.options(maxSteps);
        for (uint64_t i = 0; i < 3000; ++i) runSlabPhoton(slab, o.params, i, sa);
        RangeChunks chunks(0, 3000);
        runSlabLanes(slab, o.params, chunks, sb);
        slabScatterCount(sa.events);
        slabScatterCount(sb.events);
        // The generic loop (no AVX2) too: the same histories.
        McmlArrays C(g);
        HostSlabSink sc = C.sink(g);
        RangeChunks again(0, 3000);
        runSlabLanes(slab, o.params, again, sc, CpuIsa::Generic);
        slabScatterCount(sc.events);
        fmtest::checkSameEvents(sa.events, sc.events);
        checkCloseBins(A.rz, C.rz);
        checkCloseBins(A.rz, B.rz);
        checkCloseBins(A.ra, B.ra);
        checkCloseBins(A.tt, B.tt);
        checkCloseBins(A.cells, B.cells);
        fmtest::checkSameEvents(sa.events, sb.events);
        BOOST_CHECK_EQUAL(sb.events.launch, 3000u);
        BOOST_CHECK_EQUAL(sa.ledger.launched, sb.ledger.launched);
        BOOST_CHECK_EQUAL(sa.ledger.specular, sb.ledger.specular);
        BOOST_CHECK_CLOSE(sa.ledger.exited, sb.ledger.exited, 1e-10);
        BOOST_CHECK_CLOSE(sa.ledger.rouletteGained, sb.ledger.rouletteGained, 1e-10);
        BOOST_CHECK_CLOSE(sa.ledger.rouletteLost, sb.ledger.rouletteLost, 1e-10);
        BOOST_CHECK_CLOSE(sa.ledger.abnormal + 1.0, sb.ledger.abnormal + 1.0, 1e-10);
        BOOST_CHECK_CLOSE(sa.ledger.absorbed, sb.ledger.absorbed, 1e-10);
        BOOST_CHECK_SMALL(sb.ledger.imbalance(), 1e-9);
        BOOST_CHECK_GT(sb.events.tir, 0u);  // crossings of every kind, roulette, the guard
        BOOST_CHECK_GT(sb.events.fresnel, 0u);
        BOOST_CHECK_GT(sb.events.refract, 0u);
        if (maxSteps < 100) {
            BOOST_CHECK_GT(sb.events.abnormal, 100u);  // the guard was taken
        } else {
            BOOST_CHECK_GT(sb.events.win, 20u);  // roulette won and lost
            BOOST_CHECK_GT(sb.events.die, 100u);
        }
    }
}

BOOST_AUTO_TEST_CASE(normalisations_sum_back_to_rat) {
    MCMLRun run = smallRun();
    MCMLResult r = runMcml("cpu", layeredFromMcml(run), run, options(run, 20000, 2));
    const double dz = run.dz, dr = run.dr, da = kPi / (2 * run.na);
    double az = 0, rdr = 0, rda = 0, rdra = 0, ttr = 0, arz = 0;
    for (size_t iz = 0; iz < run.nz; ++iz) az += r.A_z[iz] * dz;
    for (size_t ir = 0; ir < run.nr; ++ir) {
        double area = 2 * kPi * (ir + 0.5) * dr * dr;
        rdr += r.Rd_r[ir] * area;
        ttr += r.Tt_r[ir] * area;
        for (size_t iz = 0; iz < run.nz; ++iz) arz += r.A_rz[ir * run.nz + iz] * area * dz;
        for (size_t ia = 0; ia < run.na; ++ia) {
            double a = (ia + 0.5) * da, omega = 4 * kPi * std::sin(a) * std::sin(da / 2);
            rdra += r.Rd_ra[ir * run.na + ia] * area * omega * std::cos(a);
        }
    }
    for (size_t ia = 0; ia < run.na; ++ia) rda += r.Rd_a[ia] * 2 * kPi * std::sin((ia + 0.5) * da) * da;
    for (double v : {az, arz, sum(r.A_l)}) BOOST_CHECK_CLOSE(v, r.A, 1e-9);
    for (double v : {rdr, rda, rdra}) BOOST_CHECK_CLOSE(v, r.Rd, 1e-9);
    BOOST_CHECK_CLOSE(ttr, r.Tt, 1e-9);
    // Exact up to roulette's zero-mean balance (a few 1e-6 here) and the float launch weight.
    BOOST_CHECK_CLOSE(r.Rsp + r.Rd + r.A + r.Tt, 1.0, 1e-3);
}

// Angle bins as MCML 1.2 defines them (mcmlio.c): da = pi/(2 na), a_j = (j + 0.5) da; Rd_a and
// Tt_a divide the exit weight of bin j by 2 pi sin(a_j) da N, Rd_ra and Tt_ra by
// 2 pi r_i dr cos(a_j) 4 pi sin(a_j) sin(da/2) N (MCML's 4 pi^2 dr^2 (i+0.5) sin(2 a_j) sin(da/2)).
// One bin (MCML's sample default) is where the solid angles differ most: Rd_a = Rd sqrt(2)/pi^2.
BOOST_AUTO_TEST_CASE(angle_bins_as_mcml_defines_them) {
    for (unsigned na : {1u, 30u}) {
        BOOST_TEST_CONTEXT("na " << na) {
            MCMLRun run = smallRun();
            run.na = na;
            KernelInput in = packLayered(layeredFromMcml(run));
            McmlTallies t = runMcmlCpu(in, mcmlGrid(run), options(run, 4000, 2));
            MCMLResult r = mcmlResult(t, run, 0.0);
            const double N = double(run.photons), da = kPi / (2 * na), dr = run.dr;
            for (size_t ia = 0; ia < na; ++ia) {
                const double a = (ia + 0.5) * da;
                double rd = 0, tt = 0;
                for (size_t ir = 0; ir < run.nr; ++ir) {
                    const double w = t.reflectedRA[ir * na + ia];
                    rd += w;
                    tt += t.transmittedRA[ir * na + ia];
                    const double mcmlScale = 4 * kPi * kPi * dr * dr * (ir + 0.5) * std::sin(2 * a) * std::sin(da / 2) * N;
                    BOOST_CHECK_CLOSE(r.Rd_ra[ir * na + ia], w / mcmlScale, 1e-9);
                }
                BOOST_CHECK_CLOSE(r.Rd_a[ia], rd / (2 * kPi * std::sin(a) * da * N), 1e-9);
                BOOST_CHECK_CLOSE(r.Tt_a[ia], tt / (2 * kPi * std::sin(a) * da * N), 1e-9);
            }
            if (na == 1) {
                BOOST_CHECK_CLOSE(r.Rd_a[0], r.Rd * std::sqrt(2.0) / (kPi * kPi), 1e-9);
                BOOST_CHECK_CLOSE(r.Tt_a[0], r.Tt * std::sqrt(2.0) / (kPi * kPi), 1e-9);
            }
            BOOST_CHECK_GT(r.Rd, 0.05);  // enough exits that every check above saw weight
            BOOST_CHECK_GT(r.Tt, 0.01);
        }
    }
}

// Out-of-grid deposits and exits go to the last bin of their axis, as MCML: with a grid much
// shallower and narrower than the light, the last bins hold most of the weight.
BOOST_AUTO_TEST_CASE(out_of_grid_weight_goes_to_last_bins) {
    MCMLRun run = smallRun();
    run.nz = 3;
    run.nr = 2;
    run.dz = run.dr = 0.001;
    KernelInput in = packLayered(layeredFromMcml(run));
    McmlTallies t = runMcmlCpu(in, mcmlGrid(run), options(run, 5000, 2));
    BOOST_CHECK_CLOSE(sum(t.absorbedRZ), t.ledger.absorbed, 1e-9);
    double lastR = 0;
    for (size_t iz = 0; iz < run.nz; ++iz) lastR += t.absorbedRZ[(run.nr - 1) * run.nz + iz];
    BOOST_CHECK_GT(lastR, 0.9 * t.ledger.absorbed);
    MCMLResult r = mcmlResult(t, run, 0.0);
    BOOST_CHECK_CLOSE(r.A_l[2], t.absorbedCell[3] / 5000, 1e-9);  // exact per layer regardless
}

BOOST_AUTO_TEST_CASE(kernel_names_are_checked) {
    MCMLRun run = smallRun();
    KernelInput in = packLayered(layeredFromMcml(run));
    BOOST_CHECK_THROW(runMcmlKernel("gpu", in, mcmlGrid(run), options(run, 10, 1)), ParameterError);
#if !(FM_HAVE_CUDA && defined(FM_HAVE_CUDA_MCML))
    BOOST_CHECK_EXCEPTION(runMcmlKernel("cuda", in, mcmlGrid(run), options(run, 10, 1)), ParameterError,
                          [](const ParameterError& e) {
                              return std::string(e.what()) == "CUDA MCML kernel not available in this build";
                          });
#endif
}

// A model without slab cells (a mesh, or a layered model's records alone) is refused by name,
// by both MCML kernels, before anything runs.
BOOST_AUTO_TEST_CASE(mcml_kernels_refuse_a_model_without_slab_cells) {
    MCMLRun run = smallRun();
    KernelInput in = packLayered(layeredFromMcml(run));
    in.slabs.clear();
    for (const char* kernel : {"cpu", "cuda"})
        BOOST_CHECK_EXCEPTION(runMcmlKernel(kernel, in, mcmlGrid(run), options(run, 10, 1)), ParameterError,
                              [](const ParameterError& e) {
                                  return std::string(e.what()).find("no slab cells") != std::string::npos;
                              });
}

// Fresnel at internal interfaces, at normal incidence, against the exact series: light that
// never scatters reflects off every index step (MCML does this too; CUDAMCML's skin7 reference
// lacks it, see test_mcml_skin7.cpp).
BOOST_AUTO_TEST_CASE(exact_internal_fresnel) {
    MCMLRun run = smallRun();
    run.nBelow = 1.33;
    run.layers = {{1.5, 2, 0, 0, 0.1}, {1.2, 5, 0, 0, 0.1}};  // absorbing, no scattering
    BallisticSeries exact(layeredFromMcml(run));
    fmtest::McmlBatches b = fmtest::runMcmlBatches(run, 100000, 10);
    auto stat = [&](auto f) { return fmtest::batchStat(b, f); };
    fmtest::checkWithinSigma("ballistic Rd", stat([](const MCMLResult& r) { return r.Rd; }), exact.Rd);
    fmtest::checkWithinSigma("ballistic Tt", stat([](const MCMLResult& r) { return r.Tt; }), exact.Tt);
    fmtest::checkWithinSigma("ballistic A_l[1]", stat([](const MCMLResult& r) { return r.A_l[0]; }), exact.A[0]);
    fmtest::checkWithinSigma("ballistic A_l[2]", stat([](const MCMLResult& r) { return r.A_l[1]; }), exact.A[1]);
    const double da = kPi / (2 * run.na);  // all of it leaves along the normal: angle bin 0
    BOOST_CHECK_CLOSE(b.results[0].Rd_a[0] * 2 * kPi * std::sin(da / 2) * da, b.results[0].Rd, 1e-9);
}

// MCML manual Table 6.1: van de Hulst's matched slab.
BOOST_AUTO_TEST_CASE(manual_table_6_1_matched_slab) {
    const MCMLRun run = readMCI(fmtest::mcmlTestData("table6_1_matched_slab.mci")).runs.at(0);
    fmtest::McmlBatches b = fmtest::runMcmlBatches(run, 50000, 10);
    BOOST_TEST_MESSAGE("table 6.1: " << b.photons << " photons in " << b.seconds << " s");
    BOOST_CHECK_SMALL(b.results[0].Rsp, 1e-12);
    fmtest::checkWithinSigma("table 6.1 Rd", fmtest::batchStat(b, [](const MCMLResult& r) { return r.Rd; }), 0.09739);
    fmtest::checkWithinSigma("table 6.1 Tt", fmtest::batchStat(b, [](const MCMLResult& r) { return r.Tt; }), 0.66096);
}

// MCML manual Table 6.2: Giovanelli's semi-infinite medium under a mismatched surface. His
// 0.2600 is the total reflectance, specular (0.04) included: Rd alone comes out near 0.220 here
// and in an independent few-line simulation of the same case.
BOOST_AUTO_TEST_CASE(manual_table_6_2_semi_infinite) {
    const MCMLRun run = readMCI(fmtest::mcmlTestData("table6_2_semi_infinite.mci")).runs.at(0);
    fmtest::McmlBatches b = fmtest::runMcmlBatches(run, 100000, 10);
    BOOST_TEST_MESSAGE("table 6.2: " << b.photons << " photons in " << b.seconds << " s");
    BOOST_CHECK_CLOSE(b.results[0].Rsp, 0.04, 1e-6);
    fmtest::checkWithinSigma("table 6.2 Rsp + Rd",
                             fmtest::batchStat(b, [](const MCMLResult& r) { return r.Rsp + r.Rd; }), 0.2600);
    BOOST_CHECK_SMALL(fmtest::batchStat(b, [](const MCMLResult& r) { return r.Tt; }).mean, 1e-12);
}

// The same medium with a matched surface has an exact answer: the plane albedo of a
// semi-infinite isotropic scatterer, 1 - H(1) sqrt(1 - a) with Chandrasekhar's H function;
// for albedo a = 0.9, H(1) = 1.8500985 (H equation iterated on 64 Gauss points), so 0.4149475.
BOOST_AUTO_TEST_CASE(matched_semi_infinite_equals_chandrasekhar_albedo) {
    MCMLRun run = readMCI(fmtest::mcmlTestData("table6_2_semi_infinite.mci")).runs.at(0);
    run.layers[0].n = 1.0;
    fmtest::McmlBatches b = fmtest::runMcmlBatches(run, 50000, 10);
    fmtest::checkWithinSigma("matched semi-infinite Rd",
                             fmtest::batchStat(b, [](const MCMLResult& r) { return r.Rd; }), 0.4149475);
}

BOOST_AUTO_TEST_SUITE_END()
