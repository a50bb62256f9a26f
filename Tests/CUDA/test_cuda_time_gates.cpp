// SPDX-License-Identifier: GPL-3.0-or-later
// Time-resolved tallies on the GPU (issue 28 items 3 and 6) against the CPU's: the bins sum to
// the GPU's CW tallies, gating leaves the CW tallies (same histories), and the per-gate totals
// and their standard errors equal the CPU's within statistics. Skips (with a message) when no GPU is present.
#include <boost/test/unit_test.hpp>

#include <cfloat>
#include <cmath>
#include <map>
#include <memory>
#include <string>

#include "Geometry/BatchModel.hpp"
#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/Batch.hpp"
#include "Kernels/BatchMeans.hpp"
#include "Kernels/Dispatch.hpp"
#include "Tests/TestUtil.hpp"

using namespace fm;
using fmtest::haveGpu;

namespace {
struct Model {
    TetraMesh mesh = makeBoxMesh({-5, -5, -5}, {5, 5, 5}, 8, 8, 8, [](const Point3& c) {
        return c[0] * c[0] + c[1] * c[1] + c[2] * c[2] < 9 ? 2u : 1u;
    });
    MaterialSet mats;
    KernelInput in;
    TimeGates gates = makeTimeGates(0.01, 0.21, 0.01, "gates");
    Model() {
        mats.exterior(Material(0, 0, 0, 1.0));
        mats.append(Material(0.05, 5, 0.8, 1.4));
        mats.append(Material(0.5, 20, 0.9, 1.37));
        PointSource P;
        P.position = {0.1, 0.2, 0.3};
        in = packModel(mesh, mats, P);
    }
    RunOptions options(bool gated) const {
        RunOptions o;
        o.packets = 400000;
        o.batches = 20;
        o.params.seed = 11;
        if (gated) {
            o.gates = gates;
            o.outputs.gatedVolume = o.outputs.gatedSurface = true;
        }
        return o;
    }
};

// The L1 distance between part's gated volume tally (over t's tetras) and the all-tetras run's
// at those tetras.
double l1ToAllTetras(const RunResult& all, const RunResult& part, const GatedTetras& t, size_t cells, uint32_t bins) {
    std::vector<double> a, b;
    for (uint32_t bin = 0; bin < bins; ++bin)
        for (size_t k = 1; k < t.cells.size(); ++k) {
            a.push_back(all.gatedVolume[bin * cells + t.cells[k]]);
            b.push_back(part.gatedVolume[bin * t.cells.size() + k]);
        }
    return fmtest::l1(a, b);
}
}  // namespace

BOOST_FIXTURE_TEST_SUITE(cuda_time_gates, Model)

BOOST_AUTO_TEST_CASE(gpu_bins_sum_to_cw_and_gating_changes_no_history) {
    if (!haveGpu()) return;
    const RunResult g = runKernel("cuda", in, options(true)), cw = runKernel("cuda", in, options(false));
    BOOST_REQUIRE_EQUAL(g.gatedVolume.size(), gates.bins() * g.volume.size());
    BOOST_REQUIRE(g.gates.faces);
    const std::vector<uint32_t>& faces = g.gates.faces->faces;  // the exit faces, element 0 a dummy
    BOOST_REQUIRE_EQUAL(g.gatedSurface.size(), gates.bins() * faces.size());
    fmtest::checkSameEvents(g.events, cw.events);
    const double l1 = fmtest::l1(cw.volume, g.volume);
    BOOST_TEST_MESSAGE("L1 of the CW volume tally, gated - not gated: " << l1);
    BOOST_CHECK_LT(l1, 1e-9);  // atomics' summation order only
    const double bound = 2.0 * double(g.events.absorb + g.events.exit) * DBL_EPSILON;
    size_t bad = 0;
    for (size_t i = 0; i < g.volume.size(); ++i) {
        double s = 0;
        for (uint32_t b = 0; b < gates.bins(); ++b) s += g.gatedVolume[b * g.volume.size() + i];
        if (std::fabs(s - g.volume[i]) > bound * g.volume[i]) ++bad;
    }
    for (size_t k = 0; k < faces.size(); ++k) {
        double s = 0;
        for (uint32_t b = 0; b < gates.bins(); ++b) s += g.gatedSurface[b * faces.size() + k];
        if (std::fabs(s - g.surface[faces[k]]) > bound * g.surface[faces[k]]) ++bad;
    }
    for (size_t f = 1; f < g.surface.size(); ++f)  // no exit through any other face
        if (g.gates.faces->slot[f] < 0 && g.surface[f] != 0) ++bad;
    BOOST_CHECK_EQUAL(bad, 0u);
}

// Every kind of gating keeps the CW tallies and their standard errors of the ungated run (same
// histories; atomics' order only): all tetras gated (the CW volume is the sum of the bins, made
// before each batch's fold), the exit tally only, and the tetras of one region (the CW volume
// through the gated tally's cache).
BOOST_AUTO_TEST_CASE(gpu_every_gating_keeps_the_cw_tallies_and_errors) {
    if (!haveGpu()) return;
    RunOptions o = options(false);
    o.packets = 200000;
    const RunResult cw = runKernel("cuda", in, o);
    BOOST_REQUIRE(cw.standardError.available());
    for (const char* kind : {"all tetras", "exit only", "region 2"}) {
        RunOptions g = options(true);
        g.packets = o.packets;
        if (std::string(kind) == "exit only") g.outputs.gatedVolume = false;
        if (std::string(kind) == "region 2") g.gates.tetras = gatedTetras(in, {2}, "regions");
        const RunResult r = runKernel("cuda", in, g);
        fmtest::checkSameEvents(r.events, cw.events);
        BOOST_REQUIRE(r.standardError.available());
        const double dv = fmtest::l1(cw.volume, r.volume), ds = fmtest::l1(cw.surface, r.surface),
                     ev = fmtest::l1(cw.standardError.volume, r.standardError.volume);
        BOOST_TEST_MESSAGE(kind << ": CW volume L1 " << dv << ", surface " << ds << ", volume standard errors " << ev);
        BOOST_CHECK_LT(dv, 1e-9);
        BOOST_CHECK_LT(ds, 1e-9);
        // A batch's error is a difference of squares, which magnifies the atomics' order in the
        // tallies (1e-16 of them) by the tally's squared mean over its variance: far below 1e-6.
        BOOST_CHECK_LT(ev, 1e-6);
        BOOST_CHECK_EQUAL(r.gatedVolume.empty(), std::string(kind) == "exit only");
    }
}

// Per gate, the absorbed and exited totals of the GPU and the CPU within 4 combined standard
// errors (each side's own per-gate total error). The GPU's per-gate total errors estimate the
// same standard deviation as the CPU's: where the CPU's is under 10% of its total (enough
// packets for the batch means to be near normal), the log of their ratio is within 4 of its
// standard deviations, sqrt(1 / (2 (Bg - 1)) + 1 / (2 (Bc - 1))) for Bg and Bc batches. The
// GPU's per-element errors exist.
BOOST_AUTO_TEST_CASE(gpu_gates_equal_cpu_gates) {
    if (!haveGpu()) return;
    const RunResult g = runKernel("cuda", in, options(true)), c = runKernel("cpu", in, options(true));
    BOOST_REQUIRE(g.standardError.available() && c.standardError.available());
    BOOST_CHECK_EQUAL(g.standardError.gatedVolume.size(), g.gatedVolume.size());
    BOOST_CHECK_EQUAL(g.standardError.gatedSurface.size(), g.gatedSurface.size());
    const double Bg = double(g.standardError.batches), Bc = double(c.standardError.batches);
    const double logRatioSd = std::sqrt(1 / (2 * (Bg - 1)) + 1 / (2 * (Bc - 1)));
    auto check = [&](const std::vector<double>& gv, const std::vector<double>& cv, const std::vector<double>& gs,
                     const std::vector<double>& cs, const char* what) {
        const std::vector<double> gt = gateBinTotals(gates, gv), ct = gateBinTotals(gates, cv);
        BOOST_REQUIRE_EQUAL(cs.size(), gates.bins());
        BOOST_REQUIRE_EQUAL(gs.size(), gates.bins());
        size_t compared = 0;
        for (uint32_t b = 0; b < gates.bins(); ++b) {
            const double se = std::hypot(gs[b], cs[b]);
            BOOST_TEST_MESSAGE(what << " bin " << b << ": gpu " << gt[b] << " +- " << gs[b] << ", cpu " << ct[b]
                                    << " +- " << cs[b]);
            BOOST_CHECK_MESSAGE(std::fabs(gt[b] - ct[b]) <= 4 * se + 1e-12 * ct[b],
                                what << " bin " << b << ": gpu " << gt[b] << " cpu " << ct[b] << " se " << se);
            if (!(cs[b] < 0.1 * ct[b])) continue;
            ++compared;
            BOOST_CHECK_MESSAGE(std::fabs(std::log(gs[b] / cs[b])) <= 4 * logRatioSd,
                                what << " bin " << b << ": gpu standard error " << gs[b] << ", cpu " << cs[b]);
        }
        BOOST_CHECK_GT(compared, gates.count / 2);
    };
    check(g.gatedVolume, c.gatedVolume, g.standardError.gatedVolumeTotals, c.standardError.gatedVolumeTotals,
          "absorbed");
    check(g.gatedSurface, c.gatedSurface, g.standardError.gatedSurfaceTotals, c.standardError.gatedSurfaceTotals,
          "exited");
}

// Per-region gating on the GPU: the gated volume tally over the sphere's tetras equals the
// all-tetras gated tally there (same histories; atomics' order only), and the exit tally is unchanged.
BOOST_AUTO_TEST_CASE(gpu_region_gating_equals_all_tetras_there) {
    if (!haveGpu()) return;
    RunOptions o = options(true);
    o.batches = 1;
    const RunResult all = runKernel("cuda", in, o);
    o.gates.tetras = gatedTetras(in, {2}, "regions");
    const RunResult part = runKernel("cuda", in, o);
    BOOST_REQUIRE_EQUAL(part.gatedVolume.size(), size_t(gates.bins()) * o.gates.tetras->cells.size());
    fmtest::checkSameEvents(part.events, all.events);
    const double dv = l1ToAllTetras(all, part, *o.gates.tetras, in.cells.size(), gates.bins()),
                 ds = fmtest::l1(all.gatedSurface, part.gatedSurface);
    BOOST_TEST_MESSAGE("region gating, L1 to the all-tetras run: " << dv << " (sphere's tetras), " << ds << " (exit)");
    BOOST_CHECK_LT(dv, 1e-9);
    BOOST_CHECK_LT(ds, 1e-9);
}

// The device keeps a per-region map between runs and replaces it when the regions change: a
// loop of single runs on the kept mesh (the sphere, the shell, the sphere again) each gates its
// own regions, and a batch's runs, which share one map, each equal the single run with it.
BOOST_AUTO_TEST_CASE(gpu_region_map_kept_between_runs_and_replaced_when_it_changes) {
    if (!haveGpu()) return;
    RunOptions o = options(true);
    o.batches = 1;
    o.packets = 100000;
    const RunResult all = runKernel("cuda", in, o);
    for (uint32_t region : {2u, 1u, 2u}) {
        o.gates.tetras = gatedTetras(in, {region}, "regions");
        const RunResult part = runKernel("cuda", in, o);
        BOOST_REQUIRE_EQUAL(part.gatedVolume.size(), size_t(gates.bins()) * o.gates.tetras->cells.size());
        fmtest::checkSameEvents(part.events, all.events);
        const double d = l1ToAllTetras(all, part, *o.gates.tetras, in.cells.size(), gates.bins());
        BOOST_TEST_MESSAGE("region " << region << ": L1 to the all-tetras run there " << d);
        BOOST_CHECK_LT(d, 1e-9);
    }
    std::vector<SourcePtr> sources;
    for (double x : {-2.0, 0.5, 3.0}) {
        auto p = std::make_shared<PointSource>();
        p->position = {x, 0.2, 0.3};
        sources.push_back(p);
    }
    const BatchModel bm = packBatch(mesh, {mats}, sources, {50000}, 4);
    BatchOptions bo;
    bo.kernel = "cuda";
    bo.outputs.directed = false;
    bo.outputs.gatedVolume = bo.outputs.gatedSurface = true;
    bo.gates = gates;
    bo.gates.tetras = gatedTetras(bm.mesh, {2}, "regions");
    std::map<size_t, RunResult> got;
    runBatch(bm.mesh, bm.runs, bo, [&](size_t i, RunResult&& r) { got[i] = std::move(r); });
    BOOST_REQUIRE_EQUAL(got.size(), sources.size());
    for (size_t k = 0; k < sources.size(); ++k) {
        const RunResult one = runKernel("cuda", packModel(mesh, mats, *sources[k]), singleRunOptions(bo, bm.runs[k]));
        fmtest::checkSameEvents(got[k].events, one.events);
        const double d = fmtest::l1(got[k].gatedVolume, one.gatedVolume);
        BOOST_TEST_MESSAGE("batch run " << k << ": gated volume L1 to its single run " << d);
        BOOST_REQUIRE_EQUAL(got[k].gatedVolume.size(), one.gatedVolume.size());
        BOOST_CHECK_LT(d, 1e-9);
        BOOST_CHECK_LT(fmtest::l1(got[k].gatedSurface, one.gatedSurface), 1e-9);
    }
}

BOOST_AUTO_TEST_SUITE_END()
