// SPDX-License-Identifier: GPL-3.0-or-later
// Batches on the GPU (Kernels/Batch.hpp): every device keeps the mesh, runs go to whichever
// device is free, and each run equals a single GPU run of the same source and seed (to the order
// of double atomics). Skips (with a message) when no GPU is present.
#include <boost/test/unit_test.hpp>

#include <map>

#include "Geometry/BatchModel.hpp"
#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/Batch.hpp"
#include "Kernels/Core/CellLayout.hpp"
#include "Kernels/Dispatch.hpp"
#include "Kernels/CUDA/CudaKernel.hpp"
#include "Tests/Kernels/BatchTestModel.hpp"
#include "Tests/TestUtil.hpp"

using namespace fm;
using fmtest::haveGpu;
using fmtest::l1;

BOOST_AUTO_TEST_CASE(cuda_batch_runs_equal_single_gpu_runs) {
    if (!haveGpu()) return;
    const fmtest::BatchTestModel model(8);
    const TetraMesh& mesh = model.mesh;
    const MaterialSet &mats = model.mats, &mats2 = model.mats2;
    std::vector<SourcePtr> sources;
    for (double x : {-2.0, 0.5, 3.0}) {
        auto p = std::make_shared<PointSource>();
        p->position = {x, 0.2, 0.3};
        sources.push_back(p);
    }
    BatchModel bm = packBatch(mesh, {mats, mats2}, sources, {300000}, 5);
    BatchOptions o;
    o.kernel = "cuda";
    o.devices = {-1};  // every GPU of the host
    o.outputs.directed = false;
    std::map<size_t, RunResult> got;
    BatchSummary s = runBatch(bm.mesh, bm.runs, o, [&](size_t i, RunResult&& r) { got[i] = std::move(r); });
    BOOST_TEST_MESSAGE("batch of " << s.runs << " runs on " << s.slots << " GPU(s) in " << s.seconds << " s");
    BOOST_REQUIRE_EQUAL(got.size(), 6u);
    for (size_t m = 0; m < 2; ++m)
        for (size_t k = 0; k < 3; ++k) {
            KernelInput in = packModel(mesh, m ? mats2 : mats, *sources[k]);
            RunOptions ro;
            ro.packets = 300000;
            ro.params.seed = 5;
            ro.outputs.directed = false;
            RunResult one = runKernel("cuda", in, ro);
            const RunResult& b = got[bm.run(m, k)];
            BOOST_CHECK_EQUAL(b.packetsDone, 300000u);
            BOOST_CHECK_EQUAL(b.events.absorb, one.events.absorb);  // same packets, same paths
            BOOST_CHECK_EQUAL(b.events.exit, one.events.exit);
            double d = l1(one.volume, b.volume);
            BOOST_TEST_MESSAGE("run (" << m << ", " << k << "): L1 to the single GPU run " << d);
            BOOST_CHECK_SMALL(d, 1e-9);  // only the order of atomic additions differs
            BOOST_CHECK_SMALL(b.ledger.imbalance() / b.ledger.launched, 1e-9);
        }
}

// A batch takes the cells' layout the single runs take (TuningKnobs::cudaCellLayout; Auto picks
// compact for meshes beyond the L2): with compact asked for, each batch run, one run per launch
// or in groups, follows the same histories as the compact run alone, not the records'.
BOOST_AUTO_TEST_CASE(cuda_batch_runs_take_the_single_runs_cell_layout) {
    if (!haveGpu()) return;
    const fmtest::BatchTestModel model(8);
    std::vector<SourcePtr> sources;
    for (double x : {-2.0, 3.0}) {
        auto p = std::make_shared<PointSource>();
        p->position = {x, 0.2, 0.3};
        sources.push_back(p);
    }
    BatchModel bm = packBatch(model.mesh, {model.mats}, sources, {300000}, 5);
    for (uint32_t perLaunch : {1u, 8u}) {
        BatchOptions o;
        o.kernel = "cuda";
        o.outputs.directed = false;
        o.runsPerLaunch = perLaunch;
        o.tuning.cudaCellLayout = CellLayout::Compact;
        std::map<size_t, RunResult> got;
        runBatch(bm.mesh, bm.runs, o, [&](size_t i, RunResult&& r) { got[i] = std::move(r); });
        BOOST_REQUIRE_EQUAL(got.size(), 2u);
        for (size_t k = 0; k < 2; ++k) {
            const KernelInput in = packModel(model.mesh, model.mats, *sources[k]);
            RunOptions ro;
            ro.packets = 300000;
            ro.params.seed = 5;
            ro.outputs.directed = false;
            const RunResult records = runKernel("cuda", in, ro);
            ro.tuning.cudaCellLayout = CellLayout::Compact;
            const RunResult compact = runKernel("cuda", in, ro);
            const RunResult& b = got[bm.run(0, k)];
            BOOST_TEST_MESSAGE(perLaunch << " run(s) per launch, run " << k << ": absorb events batch "
                                         << b.events.absorb << ", compact alone " << compact.events.absorb
                                         << ", records alone " << records.events.absorb);
            // The two layouts follow different histories (else this test could not tell them apart).
            BOOST_CHECK(records.events.absorb != compact.events.absorb || records.events.exit != compact.events.exit);
            BOOST_CHECK_EQUAL(b.events.absorb, compact.events.absorb);
            BOOST_CHECK_EQUAL(b.events.exit, compact.events.exit);
            BOOST_CHECK_SMALL(l1(compact.volume, b.volume), 1e-9);
        }
    }
}

// Planning loops (issue 29): a run on a mesh the device already holds uploads only its sources
// and materials (Kernels/DeviceModelCache.hpp), whether it is the next run of the same input, a
// re-packed copy of it, or a batch over it; another mesh replaces it.
BOOST_AUTO_TEST_CASE(a_second_run_on_the_same_mesh_does_not_upload_it) {
    if (!haveGpu()) return;
    const fmtest::BatchTestModel model(6);
    const TetraMesh& mesh = model.mesh;
    const MaterialSet& mats = model.mats;
    auto p = std::make_shared<PointSource>();
    p->position = {0.5, 0.2, -1};
    auto q = std::make_shared<PointSource>();
    q->position = {-1, 1, 2};
    RunOptions ro;
    ro.packets = 20000;
    ro.outputs.directed = false;
    const KernelInput a = packModel(mesh, mats, *p);
    const CudaModelCacheStats s0 = cudaModelCacheStats();
    const RunResult first = runKernel("cuda", a, ro);
    const CudaModelCacheStats s1 = cudaModelCacheStats();
    BOOST_CHECK_LE(s1.uploads - s0.uploads, 1u);  // 0 if an earlier case left this mesh
    const RunResult again = runKernel("cuda", a, ro);
    const KernelInput b = packModel(mesh, mats, *q);  // the same mesh packed again, another source
    runKernel("cuda", b, ro);
    const CudaModelCacheStats s2 = cudaModelCacheStats();
    BOOST_CHECK_EQUAL(s2.uploads, s1.uploads);
    BOOST_CHECK_EQUAL(s2.reuses, s1.reuses + 2);
    // The reused model starts from zeroed tallies: the same run gives the same tallies.
    BOOST_CHECK_EQUAL(again.events.absorb, first.events.absorb);
    BOOST_CHECK_SMALL(l1(first.volume, again.volume), 1e-9);
    // A batch over the same mesh and tallies on device 0 takes the kept model too.
    BatchModel bm = packBatch(mesh, {mats}, {p, q}, {20000}, 1);
    BatchOptions o;
    o.kernel = "cuda";
    o.outputs.directed = false;
    runBatch(bm.mesh, bm.runs, o, {});
    BOOST_CHECK_EQUAL(cudaModelCacheStats().uploads, s1.uploads);
    // Another mesh replaces it.
    TetraMesh other = makeBoxMesh({-5, -5, -5}, {5, 5, 5}, 5, 5, 5, [](const Point3&) { return 1u; });
    runKernel("cuda", packModel(other, mats, *p), ro);
    BOOST_CHECK_EQUAL(cudaModelCacheStats().uploads, s1.uploads + 1);
    runKernel("cuda", a, ro);
    BOOST_CHECK_EQUAL(cudaModelCacheStats().uploads, s1.uploads + 2);
    cudaReleaseCachedModels();
    runKernel("cuda", a, ro);
    BOOST_CHECK_EQUAL(cudaModelCacheStats().uploads, s1.uploads + 3);
}

// A batch of fewer runs than devices shares each run's packets over all of them (named one by
// one: "every device" brings up only as many as the work is worth, below).
BOOST_AUTO_TEST_CASE(fewer_runs_than_devices_split_each_run) {
    if (!haveGpu()) return;
    const std::vector<int> all = cudaResolveDevices({-1});
    TetraMesh mesh = makeBoxMesh({-5, -5, -5}, {5, 5, 5}, 6, 6, 6, [](const Point3&) { return 1u; });
    MaterialSet mats;
    mats.exterior(Material(0, 0, 0, 1.0));
    mats.append(Material(0.05, 5, 0.8, 1.4));
    auto p = std::make_shared<PointSource>();
    p->position = {0.5, 0.2, -1};
    BatchModel bm = packBatch(mesh, {mats}, {p}, {200000}, 4);
    BatchOptions o;
    o.kernel = "cuda";
    o.devices = all;
    o.outputs.directed = false;
    RunResult got;
    BatchSummary s = runBatch(bm.mesh, bm.runs, o, [&](size_t, RunResult&& r) { got = std::move(r); });
    BOOST_TEST_MESSAGE(all.size() << " GPU(s): batch of one run " << (s.splitRuns ? "split over them" : "on one"));
    BOOST_CHECK_EQUAL(s.splitRuns, all.size() > 1);
    RunOptions ro;
    ro.packets = 200000;
    ro.params.seed = 4;
    ro.outputs.directed = false;
    const RunResult one = runKernel("cuda", packModel(mesh, mats, *p), ro);
    BOOST_CHECK_EQUAL(got.packetsDone, 200000u);
    BOOST_CHECK_EQUAL(got.events.absorb, one.events.absorb);  // same packets however split
    BOOST_CHECK_SMALL(l1(one.volume, got.volume), 1e-9);
}

// Two runs in flight per device (BatchOptions::slotsPerDevice = 2), allowed when every run has
// the same materials: each run still equals its single run; with two material sets the batch
// keeps one run per device. Runs that change materials between them on one device (A, B, A)
// get each set's own results (materials are sent only when they change).
BOOST_AUTO_TEST_CASE(two_runs_per_device_equal_single_runs) {
    if (!haveGpu()) return;
    const fmtest::BatchTestModel model(6);
    const TetraMesh& mesh = model.mesh;
    const MaterialSet &mats = model.mats, &mats2 = model.mats2;
    std::vector<SourcePtr> sources;
    for (int i = 0; i < 6; ++i) {
        auto p = std::make_shared<PointSource>();
        p->position = {-3.0 + i, 0.2 * i, 0.5};
        sources.push_back(p);
    }
    BatchModel bm = packBatch(mesh, {mats}, sources, {100000}, 2);
    BatchOptions o;
    o.kernel = "cuda";
    o.slotsPerDevice = 2;
    o.outputs.directed = false;
    std::map<size_t, RunResult> got;
    BatchSummary s = runBatch(bm.mesh, bm.runs, o, [&](size_t i, RunResult&& r) { got[i] = std::move(r); });
    BOOST_CHECK_EQUAL(s.slotsPerDevice, 2u);
    BOOST_REQUIRE_EQUAL(got.size(), 6u);
    RunOptions ro;
    ro.packets = 100000;
    ro.params.seed = 2;
    ro.outputs.directed = false;
    for (size_t k = 0; k < sources.size(); ++k) {
        const RunResult one = runKernel("cuda", packModel(mesh, mats, *sources[k]), ro);
        BOOST_CHECK_EQUAL(got[k].events.absorb, one.events.absorb);
        BOOST_CHECK_SMALL(l1(one.volume, got[k].volume), 1e-9);
    }
    BatchModel sweep = packBatch(mesh, {mats, mats2}, sources, {100000}, 2);
    BOOST_CHECK_EQUAL(runBatch(sweep.mesh, sweep.runs, o, {}).slotsPerDevice, 1u);
    // A, B, A on one device, the mesh kept: the third run equals the first.
    const KernelInput a = packModel(mesh, mats, *sources[0]), b = packModel(mesh, mats2, *sources[0]);
    const RunResult ra = runKernel("cuda", a, ro), rb = runKernel("cuda", b, ro), ra2 = runKernel("cuda", a, ro);
    BOOST_CHECK_EQUAL(ra.events.absorb, ra2.events.absorb);
    BOOST_CHECK_SMALL(l1(ra.volume, ra2.volume), 1e-9);
    BOOST_CHECK_NE(ra.events.absorb, rb.events.absorb);  // other materials, other histories
}

// Every device requested for a short batch: one device only (its work is worth less than another
// device's start-up, Kernels/DeviceVisibility.hpp devicesWorthUsing); the runs are still right.
BOOST_AUTO_TEST_CASE(short_batch_on_every_device_uses_one) {
    if (!haveGpu()) return;
    const fmtest::BatchTestModel model(6);
    auto p = std::make_shared<PointSource>();
    p->position = {0.5, 0.2, -1};
    BatchModel bm = packBatch(model.mesh, {model.mats}, {p, p, p, p}, {100000}, 4);
    BatchOptions o;
    o.kernel = "cuda";
    o.devices = {-1};
    o.outputs.directed = false;
    std::map<size_t, RunResult> got;
    BatchSummary s = runBatch(bm.mesh, bm.runs, o, [&](size_t i, RunResult&& r) { got[i] = std::move(r); });
    BOOST_TEST_MESSAGE(cudaResolveDevices({-1}).size() << " GPU(s) present: a 4 x 1e5 batch used " << s.slots);
    BOOST_CHECK_EQUAL(s.slots, 1u);
    BOOST_REQUIRE_EQUAL(got.size(), 4u);
    for (auto& [i, r] : got) BOOST_CHECK_EQUAL(r.packetsDone, 100000u);
}

// A time-gated batch on the GPU: each run's gated tallies equal the single gated GPU run's (to
// the order of double atomics), sum over the bins to its CW tallies, and the runs go one per
// launch (groups switch the standard tallies only).
BOOST_AUTO_TEST_CASE(cuda_gated_batch_runs_equal_single_gated_runs) {
    if (!haveGpu()) return;
    const fmtest::BatchTestModel model(6);
    const TetraMesh& mesh = model.mesh;
    std::vector<SourcePtr> sources;
    for (double x : {-2.0, 1.5}) {
        auto p = std::make_shared<PointSource>();
        p->position = {x, 0.2, 0.3};
        sources.push_back(p);
    }
    BatchModel bm = packBatch(mesh, {model.mats, model.mats2}, sources, {200000}, 9);
    BatchOptions o;
    o.kernel = "cuda";
    o.outputs.directed = false;
    o.outputs.gatedVolume = o.outputs.gatedSurface = true;
    o.gates = makeTimeGates(0, 0.2, 0.02, "test");
    std::map<size_t, RunResult> got;
    BatchSummary s = runBatch(bm.mesh, bm.runs, o, [&](size_t i, RunResult&& r) { got[i] = std::move(r); });
    BOOST_CHECK_EQUAL(s.runsPerLaunch, 1u);
    BOOST_REQUIRE_EQUAL(got.size(), 4u);
    const size_t cells = mesh.tetraCount() + 1;
    for (size_t m = 0; m < 2; ++m)
        for (size_t k = 0; k < 2; ++k) {
            KernelInput in = packModel(mesh, m ? model.mats2 : model.mats, *sources[k]);
            const RunResult one = runKernel("cuda", in, singleRunOptions(o, bm.runs[bm.run(m, k)]));
            const RunResult& b = got[bm.run(m, k)];
            BOOST_CHECK_EQUAL(b.events.absorb, one.events.absorb);  // same packets, same paths
            BOOST_REQUIRE(b.gates.on());
            BOOST_REQUIRE_EQUAL(b.gatedVolume.size(), size_t(b.gates.bins()) * cells);
            BOOST_REQUIRE_EQUAL(b.gatedSurface.size(), one.gatedSurface.size());
            BOOST_CHECK(b.surface.empty() == one.surface.empty());
            const double dv = l1(one.gatedVolume, b.gatedVolume), ds = l1(one.gatedSurface, b.gatedSurface);
            BOOST_TEST_MESSAGE("gated run (" << m << ", " << k << "): L1 to the single run " << dv << " (volume), " << ds
                                             << " (exit)");
            BOOST_CHECK_SMALL(dv, 1e-9);
            BOOST_CHECK_SMALL(ds, 1e-9);
            std::vector<double> summed(cells, 0.0);
            for (uint32_t g = 0; g < b.gates.bins(); ++g)
                for (size_t t = 0; t < cells; ++t) summed[t] += b.gatedVolume[g * cells + t];
            BOOST_CHECK_SMALL(l1(b.volume, summed), 1e-9);
        }
}
