// SPDX-License-Identifier: GPL-3.0-or-later
// A loop of single GPU runs over one mesh with the packed cells kept (Geometry/PackedModelCache:
// one input updated in place with each run's materials and source): each run equals the same run
// packed afresh (same packets: equal event counts, tallies to the order of double atomics), and
// the mesh goes to the GPU once. Skips (with a message) when no GPU is present.
#include <boost/test/unit_test.hpp>

#include "Geometry/ModelPacker.hpp"
#include "Geometry/PackedModelCache.hpp"
#include "Kernels/CUDA/CudaKernel.hpp"
#include "Kernels/Dispatch.hpp"
#include "Tests/Kernels/BatchTestModel.hpp"
#include "Tests/TestUtil.hpp"

using namespace fm;
using fmtest::haveGpu;
using fmtest::l1;

BOOST_AUTO_TEST_CASE(cuda_loop_with_kept_cells_equals_fresh_packs) {
    if (!haveGpu()) return;
    const fmtest::BatchTestModel model(8);
    RunOptions ro;
    ro.packets = 50000;
    ro.params.seed = 11;
    ro.outputs.directed = false;
    PackedModelCache cache;
    const KernelInput* previous = nullptr;
    size_t inPlace = 0, uploads = 0;
    for (int k = 0; k < 4; ++k) {
        const MaterialSet& mats = k % 2 ? model.mats2 : model.mats;
        PointSource p;
        p.position = {k - 1.5, 0.2, 0.5 * k - 1};
        const CudaModelCacheStats before = cudaModelCacheStats();
        std::shared_ptr<const KernelInput> kept = cache.pack(model.mesh, mats, p);
        const RunResult a = runKernel("cuda", *kept, ro);
        uploads += cudaModelCacheStats().uploads - before.uploads;
        if (kept.get() == previous) ++inPlace;
        previous = kept.get();
        kept.reset();
        const RunResult b = runKernel("cuda", packModel(model.mesh, mats, p), ro);
        fmtest::checkSameEvents(a.events, b.events);
        BOOST_CHECK_SMALL(l1(b.volume, a.volume), 1e-9);
        BOOST_CHECK_SMALL(l1(b.surface, a.surface), 1e-9);
    }
    BOOST_CHECK_EQUAL(cache.cellPacks(), 1u);
    BOOST_CHECK_EQUAL(inPlace, 3u);     // runs 1-3 took the same input, updated in place
    BOOST_CHECK_LE(uploads, 1u);        // the mesh went to the GPU once (0: an earlier case left it)
}
