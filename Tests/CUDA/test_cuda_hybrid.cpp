// SPDX-License-Identifier: GPL-3.0-or-later
// The hybrid kernel on a real GPU (Kernels/Hybrid.hpp): the CPU forced to join a short run gives
// the same tallies as the CPU and GPU kernels alone (same streams: float rounding only), every
// packet once, both sides' standard errors pooled. Skips (with a message) when no GPU is present.
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Kernels/CUDA/CudaKernel.hpp"
#include "Kernels/Dispatch.hpp"
#include "Kernels/Hybrid.hpp"
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
    RunOptions options(uint64_t packets, uint64_t batches) const {
        RunOptions o;
        o.packets = packets;
        o.batches = batches;
        o.params.seed = 5;
        o.threads = 4;
        return o;
    }
};
}  // namespace

BOOST_FIXTURE_TEST_SUITE(cuda_hybrid, Model)

// The CPU joins from the start (no fixed-cost rule, small first GPU chunks).
BOOST_AUTO_TEST_CASE(cpu_and_gpu_share_a_run_with_the_same_tallies) {
    if (!haveGpu()) return;
    const uint64_t n = 2000000;
    HybridSides s;
    s.gpu = runCuda;
    s.gpuTakers = 1;
    s.cpu = runCpu;
    s.cpuThreads = 4;
    HybridPolicy p;
    p.cpuWorthFactor = 0;
    p.gpuFirstChunk = 1u << 16;
    const RunResult h = runHybridWith(in, options(n, 10), s, p);
    const RunResult g = runKernel("cuda", in, options(n, 10)), c = runKernel("cpu", in, options(n, 10));
    BOOST_TEST_MESSAGE("CPU ran " << h.cpuPackets << " of " << n << " (" << h.kernel << ", " << h.seconds << " s)");
    BOOST_CHECK_GT(h.cpuPackets, 0u);
    BOOST_CHECK_EQUAL(h.packetsDone, n);
    BOOST_CHECK_EQUAL(h.events.launch, n);
    BOOST_CHECK_LT(l1(h.volume, c.volume), 1e-3);  // the GPU's own distance to the CPU is float rounding
    BOOST_CHECK_LT(l1(h.volume, g.volume), 1e-3);
    BOOST_CHECK_CLOSE(h.ledger.absorbed, c.ledger.absorbed, 1e-2);
    BOOST_REQUIRE(h.standardError.available());
    const double ratio = h.standardError.ledger.absorbed / g.standardError.ledger.absorbed;
    BOOST_TEST_MESSAGE("absorbed SE hybrid/gpu " << ratio);
    BOOST_CHECK(ratio > 0.28 && ratio < 3.6);  // >= 9 dof each: exp(+-4 sd) of the log ratio
}

// Through runKernel with the defaults: a short run leaves the CPU out (its fixed cost would not
// pay), a result equal to the GPU's.
BOOST_AUTO_TEST_CASE(hybrid_kernel_by_name) {
    if (!haveGpu()) return;
    const RunResult h = runKernel("hybrid", in, options(200000, 1)), c = runKernel("cpu", in, options(200000, 1));
    BOOST_TEST_MESSAGE(h.kernel << ": CPU ran " << h.cpuPackets);
    BOOST_CHECK_EQUAL(h.events.launch, 200000u);
    BOOST_CHECK_LT(l1(h.volume, c.volume), 1e-3);
}

BOOST_AUTO_TEST_SUITE_END()
