// SPDX-License-Identifier: GPL-3.0-or-later
// Standard errors on the GPU (Kernels/CUDA/BatchFold.cuh) against the CPU's. Skips (with a
// message) when no GPU is present.
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/BatchMeans.hpp"
#include "Kernels/Dispatch.hpp"
#include "Tests/TestUtil.hpp"

using namespace fm;
using fmtest::haveGpu;
using fmtest::l1;

namespace {
struct Model {
    TetraMesh mesh = makeBoxMesh({-5, -5, -5}, {5, 5, 5}, 8, 8, 8, [](const Point3& c) {
        return c[0] * c[0] + c[1] * c[1] + c[2] * c[2] < 9 ? 2u : 1u;
    });
    MaterialSet mats;
    KernelInput in;
    Model() {
        mats.exterior(Material(0, 0, 0, 1.0));
        mats.append(Material(0.05, 5, 0.8, 1.4));
        mats.append(Material(0.5, 20, 0.9, 1.37));
        PointSource P;
        P.position = {0.1, 0.2, 0.3};
        in = packModel(mesh, mats, P);
    }
    RunOptions options(uint64_t batches, uint64_t seed = 7) const {
        RunOptions o;
        o.packets = 200000;
        o.batches = batches;
        o.params.seed = seed;
        return o;
    }
};
// The energy-weighted relative error of the whole volume tally: sum SE / sum E.
double relative(const RunResult& r) {
    return weightedRelativeError(r.volume, r.standardError.volume, [](size_t) { return true; });
}
}  // namespace

BOOST_FIXTURE_TEST_SUITE(cuda_batch_means, Model)

// Each tetra's error estimate has 19 degrees of freedom (20 batches): about 16% sd alone, but
// the energy-weighted sum over the ~3000 tetras averages them to about 1% (2% if neighbouring
// tetras' estimates are correlated), so the GPU and CPU totals agree within 10% (> 4 sd). The
// absorbed weight's error is one estimate each: the ratio of two independent 19-dof estimates
// lies in [0.5, 2] with probability > 0.998.
BOOST_AUTO_TEST_CASE(gpu_standard_errors_match_the_cpu_ones) {
    if (!haveGpu()) return;
    const RunResult g = runKernel("cuda", in, options(20)), c = runKernel("cpu", in, options(20));
    BOOST_REQUIRE(g.standardError.available());
    BOOST_CHECK_EQUAL(g.standardError.batches, 20u);
    BOOST_REQUIRE_EQUAL(g.standardError.volume.size(), g.volume.size());
    const double rg = relative(g), rc = relative(c);
    BOOST_TEST_MESSAGE("energy-weighted relative error: gpu " << rg << ", cpu " << rc);
    BOOST_CHECK_CLOSE(rg, rc, 10.0);
    const double a = g.standardError.ledger.absorbed / c.standardError.ledger.absorbed;
    BOOST_TEST_MESSAGE("absorbed weight's standard error gpu / cpu " << a);
    BOOST_CHECK(a > 0.5 && a < 2.0);
    BOOST_CHECK_SMALL(g.standardError.ledger.launched, 1e-9 * 200000);
}

// Batching changes only where the GPU's launches end: the totals match an unbatched GPU run far
// closer than a run of another seed does; B = 1 gives no estimate.
BOOST_AUTO_TEST_CASE(gpu_batches_leave_the_totals) {
    if (!haveGpu()) return;
    const RunResult one = runKernel("cuda", in, options(1)), many = runKernel("cuda", in, options(10));
    const RunResult other = runKernel("cuda", in, options(1, 8));
    BOOST_CHECK(!one.standardError.available());
    BOOST_CHECK(one.standardError.volume.empty());
    const double same = l1(one.volume, many.volume), seeds = l1(one.volume, other.volume);
    BOOST_TEST_MESSAGE("L1 batched-unbatched " << same << ", other seed " << seeds);
    BOOST_CHECK_LT(same, 0.2 * seeds);
    BOOST_CHECK_EQUAL(one.events.launch, many.events.launch);
}

BOOST_AUTO_TEST_SUITE_END()
