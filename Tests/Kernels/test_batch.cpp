// SPDX-License-Identifier: GPL-3.0-or-later
// Batches (Kernels/Batch.hpp): every run of a batch equals the single run with the same seed,
// packets, source and materials; the mesh is packed once; bad runs are named.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <thread>

#include "Geometry/BatchModel.hpp"
#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/Batch.hpp"
#include "Kernels/Dispatch.hpp"
#include "Kernels/TimeGates.hpp"
#include "Tests/Kernels/BatchTestModel.hpp"

using namespace fm;

namespace {
struct BatchFixture : fmtest::BatchTestModel {
    std::vector<SourcePtr> sources;
    BatchFixture() {
        auto p = std::make_shared<PointSource>();
        p->position = {0.1, 0.2, 0.3};
        auto b = std::make_shared<PencilBeamSource>();  // from outside: specular entry depends on n
        b->position = {1, 1, -10};
        b->direction = {0, 0, 1};
        auto l = std::make_shared<LineSource>();
        l->endpoint[0] = {-2, 0, 0};
        l->endpoint[1] = {2, 1, 0};
        sources = {p, b, l};
    }
    BatchOptions options() const {
        BatchOptions o;
        o.threads = 2;
        o.outputs.directed = false;
        return o;
    }
    // The single run batch run (m, s) must reproduce.
    RunResult single(const MaterialSet& ms, size_t s, uint64_t packets, uint64_t seed) const {
        KernelInput in = packModel(mesh, ms, *sources[s]);
        RunOptions o;
        o.packets = packets;
        o.params.seed = seed;
        o.threads = 2;
        o.outputs.directed = false;
        o.batches = 1;  // as a batch's runs: unbatched, so the same summation order
        return runKernel("cpu", in, o);
    }
};

void checkIdentical(const RunResult& a, const RunResult& b) {
    BOOST_REQUIRE_EQUAL(a.volume.size(), b.volume.size());
    BOOST_CHECK(a.volume == b.volume);    // bit for bit: same packets, same thread split
    BOOST_CHECK(a.surface == b.surface);
    BOOST_CHECK_EQUAL(a.ledger.absorbed, b.ledger.absorbed);
    BOOST_CHECK_EQUAL(a.ledger.exited, b.ledger.exited);
    BOOST_CHECK_EQUAL(a.ledger.specular, b.ledger.specular);
    BOOST_CHECK_EQUAL(a.events.absorb, b.events.absorb);
    BOOST_CHECK_EQUAL(a.events.exit, b.events.exit);
    BOOST_CHECK_EQUAL(a.packetsDone, b.packetsDone);
}
}  // namespace

BOOST_FIXTURE_TEST_SUITE(batch, BatchFixture)

BOOST_AUTO_TEST_CASE(three_sources_equal_three_single_runs) {
    BatchModel bm = packBatch(mesh, {mats}, sources, {20000}, 7);
    BOOST_REQUIRE_EQUAL(bm.runs.size(), 3u);
    BOOST_CHECK_EQUAL(bm.mesh.cells.size(), mesh.tetraCount() + 1);
    BOOST_CHECK(bm.mesh.materials.empty() && bm.mesh.emitters.empty());
    std::map<size_t, RunResult> got;
    BatchSummary s = runBatch(bm.mesh, bm.runs, options(), [&](size_t i, RunResult&& r) { got[i] = std::move(r); });
    BOOST_CHECK_EQUAL(s.runs, 3u);
    BOOST_CHECK_EQUAL(s.delivered, 3u);
    BOOST_CHECK(!s.cancelled);
    BOOST_REQUIRE_EQUAL(got.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
        RunResult one = single(mats, i, 20000, 7);
        BOOST_TEST_MESSAGE("run " << i << ": absorbed " << got[i].ledger.absorbed / 20000);
        checkIdentical(got[i], one);
    }
    // The runs really differ (a batch that returned one source three times would pass above
    // only if the single runs were also equal).
    BOOST_CHECK(got[0].volume != got[1].volume);
    BOOST_CHECK(got[1].volume != got[2].volume);
    BOOST_CHECK_GT(got[1].ledger.specular, 0.0);  // the beam enters from outside
    BOOST_CHECK_EQUAL(got[0].ledger.specular, 0.0);
}

BOOST_AUTO_TEST_CASE(material_sweep_runs_equal_single_runs) {
    BatchModel bm = packBatch(mesh, {mats, mats2}, sources, {5000, 6000, 7000}, 3);
    BOOST_REQUIRE_EQUAL(bm.runs.size(), 6u);
    BOOST_CHECK_EQUAL(bm.run(1, 2), 5u);
    std::map<size_t, RunResult> got;
    runBatch(bm.mesh, bm.runs, options(), [&](size_t i, RunResult&& r) { got[i] = std::move(r); });
    for (size_t m = 0; m < 2; ++m)
        for (size_t s = 0; s < 3; ++s) {
            uint64_t n = 5000 + 1000 * s;
            RunResult one = single(m ? mats2 : mats, s, n, 3);
            checkIdentical(got[bm.run(m, s)], one);
            BOOST_CHECK_EQUAL(got[bm.run(m, s)].packetsDone, n);
        }
    // Specular reflection of the beam follows each set's n: different between the sets.
    BOOST_CHECK_NE(got[bm.run(0, 1)].ledger.specular, got[bm.run(1, 1)].ledger.specular);
}

BOOST_AUTO_TEST_CASE(errors_name_the_run_source_or_material_set) {
    MaterialSet bad = mats;
    bad.set(2, Material(0.5, 20, 1.5, 1.37));  // |g| >= 1
    try {
        packBatch(mesh, {mats, bad}, sources, {100}, 1, {}, {"good.opt", "bad.opt"});
        BOOST_ERROR("bad material set accepted");
    } catch (const ModelError& e) {
        BOOST_CHECK_MESSAGE(std::string(e.what()).find("material set 1 (bad.opt)") != std::string::npos, e.what());
    }
    auto outside = std::make_shared<PointSource>();
    outside->position = {50, 0, 0};
    try {
        packBatch(mesh, {mats}, {sources[0], outside}, {100}, 1, {"a.source", "far.source"});
        BOOST_ERROR("source outside the mesh accepted");
    } catch (const ModelError& e) {
        BOOST_CHECK_MESSAGE(std::string(e.what()).find("source 1 (far.source)") != std::string::npos, e.what());
    }
    BatchModel bm = packBatch(mesh, {mats}, sources, {100}, 1);
    bm.runs[2].packets = 0;
    try {
        runBatch(bm.mesh, bm.runs, options(), {});
        BOOST_ERROR("zero packets accepted");
    } catch (const ParameterError& e) {
        BOOST_CHECK_MESSAGE(std::string(e.what()).find("batch run 2") != std::string::npos, e.what());
    }
    BatchOptions o = options();
    o.kernel = "gpu";
    bm.runs[2].packets = 10;
    BOOST_CHECK_THROW(runBatch(bm.mesh, bm.runs, o, {}), ParameterError);
    // Gated outputs without gates: refused before any run, naming what is missing.
    BatchOptions gated = options();
    gated.outputs.gatedVolume = true;
    try {
        runBatch(bm.mesh, bm.runs, gated, {});
        BOOST_ERROR("time-gated batch without gates accepted");
    } catch (const ParameterError& e) {
        BOOST_CHECK_MESSAGE(std::string(e.what()).find("time gates") != std::string::npos, e.what());
    }
}

// A gated batch: every run's gated tallies equal the single run's with the same seed, bit for
// bit, and still sum over the bins to the run's own CW tallies.
BOOST_AUTO_TEST_CASE(gated_runs_equal_gated_single_runs) {
    BatchModel bm = packBatch(mesh, {mats, mats2}, {sources[0], sources[1]}, {8000}, 5);
    BatchOptions o = options();
    o.outputs.gatedVolume = o.outputs.gatedSurface = true;
    o.gates = makeTimeGates(0, 0.2, 0.02, "test");
    std::map<size_t, RunResult> got;
    BatchSummary s = runBatch(bm.mesh, bm.runs, o, [&](size_t i, RunResult&& r) { got[i] = std::move(r); });
    BOOST_CHECK_EQUAL(s.delivered, 4u);
    for (size_t m = 0; m < 2; ++m)
        for (size_t k = 0; k < 2; ++k) {
            KernelInput in = packModel(mesh, m ? mats2 : mats, *sources[k]);
            const RunResult one = runKernel("cpu", in, singleRunOptions(o, bm.runs[bm.run(m, k)]));
            const RunResult& b = got[bm.run(m, k)];
            checkIdentical(b, one);
            BOOST_REQUIRE(b.gates.on());
            BOOST_CHECK_EQUAL(b.gates.count, 10u);
            BOOST_REQUIRE_EQUAL(b.gatedVolume.size(), size_t(b.gates.bins()) * (mesh.tetraCount() + 1));
            BOOST_CHECK(b.gatedVolume == one.gatedVolume);
            BOOST_CHECK(b.gatedSurface == one.gatedSurface);
            // The bins of a tetra sum to its CW tally (to rounding: a different summation order).
            const size_t cells = mesh.tetraCount() + 1;
            double worst = 0;
            for (size_t t = 1; t < cells; ++t) {
                double sum = 0;
                for (uint32_t g = 0; g < b.gates.bins(); ++g) sum += b.gatedVolume[g * cells + t];
                worst = std::max(worst, std::abs(sum - b.volume[t]) / std::max(b.volume[t], 1e-300));
            }
            BOOST_CHECK_LT(worst, 1e-12);
            // Several gates hold energy (the gates resolve the run in time, not all in one bin).
            size_t filled = 0;
            for (double v : gateBinTotals(b.gates, b.gatedVolume)) filled += v > 0;
            BOOST_CHECK_GE(filled, 3u);
        }
    BOOST_CHECK(got[0].gatedVolume != got[1].gatedVolume);
}

BOOST_AUTO_TEST_CASE(cancel_stops_the_batch) {
    BatchModel bm = packBatch(mesh, {mats}, sources, {2000000}, 1);
    std::atomic<bool> cancel{true};  // already set: runs in flight stop at once, none follow
    BatchOptions o = options();
    o.cancel = &cancel;
    size_t delivered = 0;
    BatchSummary s = runBatch(bm.mesh, bm.runs, o, [&](size_t, RunResult&& r) {
        ++delivered;
        BOOST_CHECK(r.cancelled);
    });
    BOOST_CHECK(s.cancelled);
    BOOST_CHECK_LE(delivered, 1u);
}

// Where a batch's time went: the kernels' intervals split the batch's seconds into set-up, busy,
// gaps and tail; onResult's own time is the delivery time.
BOOST_AUTO_TEST_CASE(time_split_from_kernel_intervals) {
    BatchSummary s;
    s.seconds = 6;
    timeKernels({{4, 5}, {1, 2}, {1.5, 3}, {1.6, 1.8}}, s);
    BOOST_CHECK_CLOSE(s.setupSeconds, 1.0, 1e-9);
    BOOST_CHECK_CLOSE(s.kernelBusySeconds, 3.0, 1e-9);  // [1, 3] and [4, 5]
    BOOST_CHECK_CLOSE(s.kernelGapSeconds, 1.0, 1e-9);   // (3, 4)
    BOOST_CHECK_CLOSE(s.tailSeconds, 1.0, 1e-9);
    BatchSummary none;
    none.seconds = 2;
    timeKernels({}, none);
    BOOST_CHECK_EQUAL(none.setupSeconds, 2.0);
    BOOST_CHECK_EQUAL(none.kernelBusySeconds, 0.0);
}

BOOST_AUTO_TEST_CASE(time_split_of_a_cpu_batch) {
    BatchModel bm = packBatch(mesh, {mats}, sources, {2000}, 7);
    const auto pause = std::chrono::milliseconds(30);
    BatchSummary s = runBatch(bm.mesh, bm.runs, options(), [&](size_t, RunResult&&) { std::this_thread::sleep_for(pause); });
    BOOST_CHECK_EQUAL(s.delivered, 3u);
    BOOST_CHECK_GE(s.deliverSeconds, 3 * 0.03);
    BOOST_CHECK_LE(s.deliverSeconds, s.seconds);
    BOOST_CHECK_GT(s.kernelBusySeconds, 0.0);
    // The CPU runs one run at a time: the parts add up to the batch's seconds.
    BOOST_CHECK_CLOSE(s.setupSeconds + s.kernelBusySeconds + s.kernelGapSeconds + s.tailSeconds, s.seconds, 1e-6);
}

BOOST_AUTO_TEST_SUITE_END()
