// SPDX-License-Identifier: GPL-3.0-or-later
// The hybrid kernel on a real GPU (Kernels/Hybrid.hpp): the CPU forced to join a short run gives
// the same tallies as the CPU and GPU kernels alone (same streams: float rounding only), every
// packet once, both sides' standard errors pooled. Skips (with a message) when no GPU is present.
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "Geometry/ModelPacker.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Kernels/CUDA/CudaKernel.hpp"
#include "Kernels/Dispatch.hpp"
#include "Kernels/Hybrid.hpp"
#include "Tests/Kernels/BatchTestModel.hpp"
#include "Tests/Kernels/PacketRecorder.hpp"
#include "Tests/TestUtil.hpp"

using namespace fm;
using fmtest::haveGpu;
using fmtest::l1;

namespace {
struct Model : fmtest::BatchTestModel {
    KernelInput in;
    Model() : BatchTestModel(8) {
        PointSource P;
        P.position = {0.1, 0.2, 0.3};
        in = packModel(mesh, mats, P);
    }
    RunOptions options(uint64_t packets, uint64_t batches) const {
        RunOptions o;
        o.packets = packets;
        o.batches = batches;
        o.params.seed = 5;
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
    p.gpuChunk = 1u << 16;
    // 40 batches: GPU chunks of at most n / 40, so the GPU side's run lasts long enough for the
    // CPU's threads to start and take blocks.
    const RunResult h = runHybridWith(in, options(n, 40), s, p);
    const RunResult g = runKernel("cuda", in, options(n, 40)), c = runKernel("cpu", in, options(n, 40));
    BOOST_TEST_MESSAGE("CPU ran " << h.cpuPackets << " of " << n << " (" << h.kernel << ", " << h.seconds << " s)");
    BOOST_CHECK_GT(h.cpuPackets, 0u);
    BOOST_CHECK_EQUAL(h.packetsDone, n);
    BOOST_CHECK_EQUAL(h.events.launch, n);
    BOOST_CHECK_LT(l1(h.volume, c.volume), 1e-3);  // the GPU's own distance to the CPU is float rounding
    BOOST_CHECK_LT(l1(h.volume, g.volume), 1e-3);
    BOOST_CHECK_CLOSE(h.ledger.absorbed, c.ledger.absorbed, 1e-2);
    BOOST_REQUIRE(h.standardError.available());
    // Two independent estimates with d1, d2 degrees of freedom: log ratio sd ~ sqrt(1/(2 d1) + 1/(2 d2)).
    const double ratio = h.standardError.ledger.absorbed / g.standardError.ledger.absorbed;
    const double d1 = double(h.standardError.batches - 1), d2 = double(g.standardError.batches - 1);
    BOOST_TEST_MESSAGE("absorbed SE hybrid/gpu " << ratio << " (" << d1 + 1 << " and " << d2 + 1 << " batches)");
    BOOST_CHECK_LT(std::fabs(std::log(ratio)), 4 * std::sqrt(1 / (2 * d1) + 1 / (2 * d2)));
}

// Without standard errors the GPU takes a block for each launch as it queues it (two deep, no
// drain between blocks): the union of the packets each side ran is 0..N-1 exactly once, the counts
// per side add up, and the tallies equal the GPU's alone (same streams: float rounding only).
BOOST_AUTO_TEST_CASE(queued_gpu_launches_and_cpu_blocks_run_every_packet_once) {
    if (!haveGpu()) return;
    const uint64_t n = 4000000;
    fmtest::PacketBlocks blocks;
    unsigned launchTakes = 0;
    HybridSides s;
    s.gpu = fmtest::recordedSide(blocks, true, runCuda, &launchTakes);
    s.gpuTakers = 1;
    s.cpu = fmtest::recordedSide(blocks, false, runCpu);
    s.cpuThreads = 4;
    HybridPolicy p;
    p.cpuWorthFactor = 0;
    p.gpuChunk = 1u << 16;  // small launches: the run lasts long enough for the CPU to join
    const RunResult h = runHybridWith(in, options(n, 1), s, p);
    const RunResult g = runKernel("cuda", in, options(n, 1));
    const auto [gpu, cpu] = blocks.checkTiling(0, n);
    BOOST_TEST_MESSAGE("queued launches: GPU ran " << gpu << ", CPU ran " << cpu << " of " << n << " ("
                                                   << launchTakes << " launch takes, " << h.seconds << " s)");
    BOOST_CHECK_GT(launchTakes, 2u);
    BOOST_CHECK_GT(cpu, 0u);
    BOOST_CHECK_EQUAL(cpu, h.cpuPackets);
    BOOST_CHECK_EQUAL(gpu + cpu, n);
    BOOST_CHECK_EQUAL(h.packetsDone, n);
    BOOST_CHECK_EQUAL(h.events.launch, n);
    BOOST_CHECK_LT(l1(h.volume, g.volume), 1e-3);
    BOOST_CHECK_CLOSE(h.ledger.absorbed, g.ledger.absorbed, 1e-2);  // percent
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
