// SPDX-License-Identifier: GPL-3.0-or-later
// Two GPU runs at once on one device with different materials (what two Tcl kernels started with
// startAsync do: each runs runKernel on its own thread): the materials live in the device's
// constant memory, so the second run's upload must not change the first run's materials while
// its kernels run (Kernels/MaterialTableLease.hpp). Each concurrent run must equal the same run
// made alone: the same packets give the same event counts. Also a run beside a batch with other
// materials. Skips (with a message) when no GPU is present.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <future>
#include <thread>

#include "Geometry/BatchModel.hpp"
#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/Batch.hpp"
#include "Kernels/Dispatch.hpp"
#include "Tests/Kernels/BatchTestModel.hpp"
#include "Tests/TestUtil.hpp"

using namespace fm;
using fmtest::haveGpu;
using fmtest::l1;

namespace {

// Several launches per run (one block per SM), so that the second run's start falls between the
// first one's launches.
RunOptions concurrentOptions(uint64_t seed) {
    RunOptions o;
    o.devices = {0};
    o.packets = 20000000;
    o.params.seed = seed;
    o.batches = 1;
    o.outputs.directed = false;
    o.tuning.cudaBlocksPerSm = 1;
    return o;
}

void checkSame(const RunResult& got, const RunResult& alone, const char* what) {
    BOOST_TEST_MESSAGE(what << ": absorbed " << got.ledger.absorbed / got.ledger.launched << " vs alone "
                            << alone.ledger.absorbed / alone.ledger.launched << ", L1 " << l1(alone.volume, got.volume));
    BOOST_CHECK_EQUAL(got.events.absorb, alone.events.absorb);  // same packets, same materials: same paths
    BOOST_CHECK_EQUAL(got.events.exit, alone.events.exit);
    BOOST_CHECK_SMALL(l1(alone.volume, got.volume), 1e-9);
}

}  // namespace

BOOST_AUTO_TEST_CASE(cuda_two_async_runs_keep_their_materials) {
    if (!haveGpu()) return;
    const fmtest::BatchTestModel model(8);
    auto p = std::make_shared<PointSource>();
    p->position = {0.1, 0.2, 0.3};
    const KernelInput a = packModel(model.mesh, model.mats, *p), b = packModel(model.mesh, model.mats2, *p);
    const RunResult aloneA = runKernel("cuda", a, concurrentOptions(3));
    const RunResult aloneB = runKernel("cuda", b, concurrentOptions(4));
    BOOST_TEST_MESSAGE("a run alone: " << aloneA.kernelSeconds << " s kernel");
    // a starts first; b is started while a's launches run, then both finish.
    auto fa = std::async(std::launch::async, [&] { return runKernel("cuda", a, concurrentOptions(3)); });
    std::this_thread::sleep_for(std::chrono::duration<double>(0.3 * aloneA.kernelSeconds + 0.01));
    auto fb = std::async(std::launch::async, [&] { return runKernel("cuda", b, concurrentOptions(4)); });
    const RunResult ra = fa.get(), rb = fb.get();
    checkSame(ra, aloneA, "first run (materials 1)");
    checkSame(rb, aloneB, "second run (materials 2)");
}

BOOST_AUTO_TEST_CASE(cuda_run_beside_a_batch_with_other_materials) {
    if (!haveGpu()) return;
    const fmtest::BatchTestModel model(8);
    auto p = std::make_shared<PointSource>();
    p->position = {0.1, 0.2, 0.3};
    const std::vector<SourcePtr> sources{p, p, p, p};
    BatchModel bm = packBatch(model.mesh, {model.mats}, sources, {3000000}, 7);
    BatchOptions o;
    o.kernel = "cuda";
    o.devices = {0};
    o.slotsPerDevice = 2;
    o.outputs.directed = false;
    std::vector<RunResult> got(bm.runs.size());
    const KernelInput b = packModel(model.mesh, model.mats2, *p);
    const RunResult aloneB = runKernel("cuda", b, concurrentOptions(4));
    auto fb = std::async(std::launch::async, [&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        return runKernel("cuda", b, concurrentOptions(4));
    });
    runBatch(bm.mesh, bm.runs, o, [&](size_t i, RunResult&& r) { got[i] = std::move(r); });
    checkSame(fb.get(), aloneB, "run beside the batch (materials 2)");
    const KernelInput a = packModel(model.mesh, model.mats, *p);
    RunOptions ro;
    ro.packets = 3000000;
    ro.params.seed = 7;
    ro.batches = 1;
    ro.outputs.directed = false;
    ro.devices = {0};
    const RunResult aloneA = runKernel("cuda", a, ro);
    for (size_t i = 0; i < got.size(); ++i) checkSame(got[i], aloneA, "batch run (materials 1)");
}
