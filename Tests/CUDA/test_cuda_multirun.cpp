// SPDX-License-Identifier: GPL-3.0-or-later
// Several runs in one GPU launch (Kernels/CUDA/CudaMultiRun.hpp) and batches that use them
// (BatchOptions::runsPerLaunch): every run equals the same run made alone on the GPU (the same
// packet histories: equal event counts; tallies to the order of double atomics). Skips (with a
// message) when no GPU is present.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <cmath>
#include <utility>
#include <map>

#include "Geometry/BatchModel.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/Batch.hpp"
#include "Kernels/CUDA/CudaMultiRun.hpp"
#include "Kernels/Dispatch.hpp"
#include "Tests/Kernels/BatchTestModel.hpp"
#include "Tests/TestUtil.hpp"

using namespace fm;
using fmtest::haveGpu;
using fmtest::l1;

namespace {

void checkSameHistories(const RunResult& got, const RunResult& one) {
    BOOST_CHECK_EQUAL(got.packetsDone, one.packetsDone);
    BOOST_CHECK_EQUAL(got.events.launch, one.events.launch);
    BOOST_CHECK_EQUAL(got.events.absorb, one.events.absorb);  // same packets, same paths
    BOOST_CHECK_EQUAL(got.events.boundary, one.events.boundary);
    BOOST_CHECK_EQUAL(got.events.exit, one.events.exit);
    // Only the order of atomic additions differs; a tally that is all zero (a one-packet run whose
    // packet never exits) must be all zero in both.
    for (const auto& [a, b] : {std::pair(&one.volume, &got.volume), std::pair(&one.surface, &got.surface)}) {
        double sa = 0, sb = 0;
        for (size_t i = 0; i < a->size() && i < b->size(); ++i) sa += std::fabs((*a)[i]), sb += std::fabs((*b)[i]);
        BOOST_CHECK_EQUAL(a->size(), b->size());
        if (sa == 0) BOOST_CHECK_EQUAL(sb, 0.0);
        else BOOST_CHECK_SMALL(l1(*a, *b), 1e-9);
    }
    BOOST_CHECK_CLOSE(got.ledger.absorbed, one.ledger.absorbed, 1e-7);
    BOOST_CHECK_SMALL(got.ledger.imbalance() / got.ledger.launched, 1e-9);
}

}  // namespace

BOOST_AUTO_TEST_CASE(group_launch_runs_equal_single_gpu_runs) {
    if (!haveGpu()) return;
    const fmtest::BatchTestModel model(8);
    const std::vector<SourcePtr> sources = fmtest::mixedSources();
    BatchModel bm = packBatch(model.mesh, {model.mats}, sources, {1}, 1);
    OutputSelection outs;
    outs.directed = false;
    CudaRunGroupOnDevice group(0, bm.mesh, outs, 8);
    BOOST_REQUIRE_GE(group.maxRuns(), sources.size());
    const uint64_t packets[5] = {200000, 150000, 1, 300000, 100000}, seeds[5] = {1, 2, 3, 4, 99};
    std::vector<const RunVariant*> v;
    std::vector<RunOptions> opts;
    for (size_t r = 0; r < sources.size(); ++r) {
        v.push_back(&bm.runs[r].model);
        RunOptions o;
        o.packets = packets[r];
        o.params.seed = seeds[r];
        o.firstPacket = r == 4 ? 12345 : 0;
        o.outputs = outs;
        o.batches = 1;
        opts.push_back(o);
    }
    // The second group reuses the device buffers and runs the kernel compiled for 4 blocks per SM
    // (TuningKnobs::cudaGroupBlocksPerSm; the first, the default 3).
    for (int round = 0; round < 2; ++round) {
        for (RunOptions& o : opts) o.tuning.cudaGroupBlocksPerSm = round ? 4 : 0;
        const std::vector<RunResult> got = group.run(v, opts);
        BOOST_REQUIRE_EQUAL(got.size(), sources.size());
        for (size_t r = 0; r < sources.size(); ++r) {
            BOOST_TEST_CONTEXT("round " << round << ", run " << r) {
                const RunResult one = runKernel("cuda", packModel(model.mesh, model.mats, *sources[r]), opts[r]);
                checkSameHistories(got[r], one);
            }
        }
    }
    // Groups share one material table: runs with other materials are refused, not mixed.
    BatchModel sweep = packBatch(model.mesh, {model.mats, model.mats2}, {sources[0]}, {1000}, 1);
    RunOptions o;
    o.packets = 1000;
    o.outputs = outs;
    BOOST_CHECK_THROW(group.run({&sweep.runs[0].model, &sweep.runs[1].model}, {o, o}), Error);
    // A cancel seen before the launch: no packets, every run cancelled.
    std::atomic<bool> stop{true};
    o.cancel = &stop;
    const std::vector<RunResult> cancelled = group.run({&sweep.runs[0].model}, {o});
    BOOST_CHECK(cancelled[0].cancelled);
    BOOST_CHECK_EQUAL(cancelled[0].packetsDone, 0u);
}

// A batch in groups of 4 over two material sets (groups break where the materials change),
// one and two slots per device: every run equals its single GPU run.
BOOST_AUTO_TEST_CASE(batch_in_groups_equals_single_runs) {
    if (!haveGpu()) return;
    const fmtest::BatchTestModel model(8);
    const std::vector<SourcePtr> sources = fmtest::mixedSources();
    BatchModel bm = packBatch(model.mesh, {model.mats, model.mats2}, sources, {100000}, 3);
    std::map<size_t, RunResult> single;
    for (size_t m = 0; m < 2; ++m)
        for (size_t s = 0; s < sources.size(); ++s) {
            RunOptions ro;
            ro.packets = 100000;
            ro.params.seed = 3;
            ro.outputs.directed = false;
            single[bm.run(m, s)] = runKernel("cuda", packModel(model.mesh, m ? model.mats2 : model.mats, *sources[s]), ro);
        }
    for (unsigned slots : {1u, 2u}) {
        BatchOptions o;
        o.kernel = "cuda";
        o.runsPerLaunch = 4;
        o.slotsPerDevice = slots;
        o.outputs.directed = false;
        std::map<size_t, RunResult> got;
        const BatchSummary s = runBatch(bm.mesh, bm.runs, o, [&](size_t i, RunResult&& r) { got[i] = std::move(r); });
        BOOST_TEST_MESSAGE("grouped batch: " << s.runs << " runs, " << s.runsPerLaunch << " per launch, "
                                             << s.slotsPerDevice << " slot(s) per device, " << s.seconds << " s");
        BOOST_CHECK_EQUAL(s.runsPerLaunch, 4u);
        BOOST_CHECK_EQUAL(s.slotsPerDevice, 1u);  // two material sets: one slot per device
        BOOST_REQUIRE_EQUAL(got.size(), bm.runs.size());
        for (auto& [i, r] : got) BOOST_TEST_CONTEXT("slots " << slots << ", run " << i) { checkSameHistories(r, single[i]); }
    }
    // One material set, groups of 8 asked for: two groups in flight per device.
    BatchModel one = packBatch(model.mesh, {model.mats}, sources, {100000}, 3);
    BatchOptions o;
    o.kernel = "cuda";
    o.outputs.directed = false;
    o.runsPerLaunch = 8;
    std::map<size_t, RunResult> got;
    const BatchSummary s = runBatch(one.mesh, one.runs, o, [&](size_t i, RunResult&& r) { got[i] = std::move(r); });
    BOOST_CHECK_EQUAL(s.slotsPerDevice, 2u);
    BOOST_CHECK_EQUAL(s.runsPerLaunch, sources.size());  // at most the batch's runs
    for (auto& [i, r] : got) BOOST_TEST_CONTEXT("groups of 8, run " << i) { checkSameHistories(r, single[i]); }
    // The default (kDefaultRunsPerLaunch), at most the batch's runs.
    o.runsPerLaunch = 0;
    BOOST_CHECK_EQUAL(runBatch(one.mesh, one.runs, o, {}).runsPerLaunch,
                      std::min<size_t>(kDefaultRunsPerLaunch, sources.size()));
}
