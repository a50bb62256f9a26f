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
#include "Kernels/Dispatch.hpp"
#include "Tests/TestUtil.hpp"

using namespace fm;
using fmtest::haveGpu;
using fmtest::l1;

BOOST_AUTO_TEST_CASE(cuda_batch_runs_equal_single_gpu_runs) {
    if (!haveGpu()) return;
    TetraMesh mesh = makeBoxMesh({-5, -5, -5}, {5, 5, 5}, 8, 8, 8, [](const Point3& c) {
        return c[0] * c[0] + c[1] * c[1] + c[2] * c[2] < 9 ? 2u : 1u;
    });
    MaterialSet mats, mats2;
    mats.exterior(Material(0, 0, 0, 1.0));
    mats.append(Material(0.05, 5, 0.8, 1.4));
    mats.append(Material(0.5, 20, 0.9, 1.37));
    mats2.exterior(Material(0, 0, 0, 1.0));
    mats2.append(Material(0.1, 8, 0.7, 1.33));
    mats2.append(Material(0.3, 10, 0.9, 1.5));
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
