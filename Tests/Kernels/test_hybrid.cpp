// SPDX-License-Identifier: GPL-3.0-or-later
// One run on two kernels at once (Kernels/Hybrid.hpp), with a second CPU kernel standing in for
// the GPU: every packet is run once (the event counts and the ledger equal a plain CPU run's), the
// tallies equal it to summation order, the standard errors are those of the whole run, a side
// that is not worth its fixed cost takes nothing, and failures, cancels and bad parameters end
// the run with an error instead of a hang.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <deque>
#include <stdexcept>
#include <vector>

#include "Common/Errors.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Kernels/Dispatch.hpp"
#include "Kernels/Hybrid.hpp"
#include "Kernels/MPI/MpiRun.hpp"
#include "Kernels/PacketSource.hpp"
#include "Tests/Kernels/BatchTestModel.hpp"
#include "Tests/Kernels/PacketRecorder.hpp"

using namespace fm;

namespace {

struct Model : fmtest::BatchTestModel {
    KernelInput in;
    Model() {
        PointSource p;
        p.position = {0.1, 0.2, 0.3};
        in = packModel(mesh, mats, p);
    }
};

RunOptions options(uint64_t packets, uint64_t batches) {
    RunOptions o;
    o.packets = packets;
    o.batches = batches;
    o.params.seed = 11;
    o.firstPacket = 1000;  // the split must keep the run's own packet indices
    return o;
}

// A CPU kernel of `threads` threads as either side.
HybridSideRunner cpuSide(unsigned threads) {
    return [threads](const KernelInput& in, const RunOptions& o) {
        RunOptions p = o;
        p.threads = threads;
        return runCpu(in, p);
    };
}

HybridSides twoCpus(unsigned gpuThreads = 1, unsigned cpuThreads = 1) {
    HybridSides s;
    s.gpu = cpuSide(gpuThreads);
    s.gpuTakers = gpuThreads;
    s.cpu = cpuSide(cpuThreads);
    s.cpuThreads = cpuThreads;
    return s;
}

// Small first chunks and no fixed cost: the second side joins at once even in a short run.
HybridPolicy eager(uint64_t packets) {
    HybridPolicy p;
    p.gpuChunk = packets / 40;
    p.cpuFirstBlock = 256;
    p.cpuWorthFactor = 0;
    p.cpuMinBlockSeconds = 1e-4;
    return p;
}

// Element by element within `rel` of the larger value, plus a floor of `rel` times the total.
void checkSameTally(const std::vector<double>& a, const std::vector<double>& b, double total, double rel) {
    BOOST_REQUIRE_EQUAL(a.size(), b.size());
    size_t bad = 0;
    for (size_t i = 0; i < a.size(); ++i)
        if (std::fabs(a[i] - b[i]) > rel * (std::max(std::fabs(a[i]), std::fabs(b[i])) + total)) ++bad;
    BOOST_CHECK_EQUAL(bad, 0u);
}

void checkSameRun(const RunResult& h, const RunResult& c, uint64_t packets) {
    BOOST_CHECK_EQUAL(h.packetsDone, packets);
    BOOST_CHECK(!h.cancelled);
    // Integer counts: a packet run twice or not at all changes them.
    BOOST_CHECK_EQUAL(h.events.launch, packets);
    BOOST_CHECK_EQUAL(h.events.launch, c.events.launch);
    BOOST_CHECK_EQUAL(h.events.absorb, c.events.absorb);
    BOOST_CHECK_EQUAL(h.events.scatter, c.events.scatter);
    BOOST_CHECK_EQUAL(h.events.boundary, c.events.boundary);
    BOOST_CHECK_EQUAL(h.events.exit, c.events.exit);
    BOOST_CHECK_EQUAL(h.events.die, c.events.die);
    BOOST_CHECK_EQUAL(h.events.win, c.events.win);
    BOOST_CHECK_EQUAL(h.events.abnormal, c.events.abnormal);
    // Sums of ~1e5 terms in another order: within 1e-12 relative.
    const double w = double(packets);
    BOOST_CHECK_CLOSE(h.ledger.launched, c.ledger.launched, 1e-10);
    BOOST_CHECK_CLOSE(h.ledger.absorbed, c.ledger.absorbed, 1e-10);
    BOOST_CHECK_CLOSE(h.ledger.exited, c.ledger.exited, 1e-10);
    BOOST_CHECK_SMALL(h.ledger.rouletteGained - c.ledger.rouletteGained, 1e-12 * w);
    BOOST_CHECK_SMALL(h.ledger.rouletteLost - c.ledger.rouletteLost, 1e-12 * w);
    checkSameTally(h.volume, c.volume, 0, 1e-12);
    checkSameTally(h.surface, c.surface, 0, 1e-12);
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(hybrid, Model)

BOOST_AUTO_TEST_CASE(split_over_two_kernels_equals_one_cpu_run) {
    const uint64_t n = 60000;
    const RunOptions o = options(n, 1);
    const RunResult c = runCpu(in, o);
    for (unsigned gpuThreads : {1u, 2u}) {  // one "GPU", and two taking from the same counter
        const RunResult h = runHybridWith(in, o, twoCpus(gpuThreads, 1), eager(n));
        BOOST_TEST_MESSAGE("stand-in GPU takers " << gpuThreads << ": CPU side ran " << h.cpuPackets << " of " << n
                                                  << " (" << h.kernel << ")");
        BOOST_CHECK_GT(h.cpuPackets, 0u);
        BOOST_CHECK_LT(h.cpuPackets, n);
        checkSameRun(h, c, n);
        BOOST_CHECK(!h.standardError.available());
    }
}

// With batches each GPU chunk and each CPU block is one batch or more; the pooled estimate
// equals the plain run's in distribution. Each absorbed-weight error rests on >= 10 batches: the
// ratio of two independent estimates with d1, d2 degrees of freedom has a log sd of about
// sqrt(1/(2 d1) + 1/(2 d2)) <= 0.32, so it lies within exp(+-4 sd) = [0.28, 3.6].
BOOST_AUTO_TEST_CASE(standard_errors_cover_both_sides) {
    const uint64_t n = 60000;
    const RunOptions o = options(n, 10);
    const RunResult c = runCpu(in, o);
    const RunResult h = runHybridWith(in, o, twoCpus(), eager(n));
    checkSameRun(h, c, n);
    BOOST_CHECK_GT(h.cpuPackets, 0u);
    BOOST_REQUIRE(h.standardError.available());
    BOOST_CHECK_GE(h.standardError.batches, 10u);
    BOOST_REQUIRE_EQUAL(h.standardError.volume.size(), h.volume.size());
    const double d1 = double(h.standardError.batches - 1), d2 = double(c.standardError.batches - 1);
    const double bound = 4 * std::sqrt(1 / (2 * d1) + 1 / (2 * d2));
    const double ratio = h.standardError.ledger.absorbed / c.standardError.ledger.absorbed;
    BOOST_TEST_MESSAGE("absorbed SE hybrid/cpu " << ratio << " (" << h.standardError.batches << " and "
                                                  << c.standardError.batches << " batches)");
    BOOST_CHECK_LT(std::fabs(std::log(ratio)), bound);
    BOOST_CHECK_SMALL(h.standardError.ledger.launched, 1e-9 * double(n));  // every packet launches weight 1
}

// Where the GPUs' predicted rest does not pay for the CPU's fixed cost, the CPU takes nothing and
// the run is the GPU side's alone.
BOOST_AUTO_TEST_CASE(cpu_takes_none_when_not_worth_its_cost) {
    const uint64_t n = 20000;
    const RunOptions o = options(n, 1);
    HybridPolicy p = eager(n);
    p.cpuStartSeconds = 1e3;
    p.cpuWorthFactor = 4;
    const RunResult h = runHybridWith(in, o, twoCpus(), p);
    BOOST_CHECK_EQUAL(h.cpuPackets, 0u);
    checkSameRun(h, runCpu(in, o), n);
}

// The blocks each side was handed: they tile the run's packet range exactly once, and the last
// one is the GPU side's: a CPU block is at most half the run's predicted rest, so the CPU never
// takes what is left and never ends the run after the GPUs.
BOOST_AUTO_TEST_CASE(blocks_tile_the_run_and_the_gpu_side_ends_it) {
    const uint64_t n = 40000;
    fmtest::PacketBlocks blocks;
    HybridSides s = twoCpus();
    s.gpu = fmtest::recordedSide(blocks, true, cpuSide(1));
    s.cpu = fmtest::recordedSide(blocks, false, cpuSide(1));
    const RunOptions o = options(n, 1);
    const RunResult h = runHybridWith(in, o, s, eager(n));
    checkSameRun(h, runCpu(in, o), n);
    const auto [gpu, cpu] = blocks.checkTiling(o.firstPacket, n);
    BOOST_CHECK(blocks.blocks.back().gpu);
    BOOST_CHECK_EQUAL(cpu, h.cpuPackets);
    BOOST_CHECK_EQUAL(gpu + cpu, n);
    BOOST_TEST_MESSAGE(blocks.blocks.size() << " blocks, " << cpu << " packets on the CPU side");
}

// A stand-in GPU that keeps two launches queued, as the CUDA kernel does (Kernels/CUDA/
// CudaEngine.cuh, runBatches): it takes the block of its next launch (takeLaunch) before running
// the current one, and reports each launch's end (launchDone).
RunResult queuedLaunches(const KernelInput& in, const RunOptions& o) {
    RunResult sum;
    std::deque<std::pair<uint64_t, uint64_t>> queued;
    bool more = true;
    auto fill = [&] {
        for (uint64_t b = 0, e = 0; more && queued.size() < 2;) {
            if (o.packetSource->takeLaunch(0, 4096, b, e)) queued.emplace_back(b, e);
            else more = false;
        }
    };
    for (fill(); !queued.empty(); fill()) {
        RunOptions p = o;
        p.packetSource = nullptr;
        p.progress = nullptr;
        p.firstPacket = queued.front().first;
        p.packets = queued.front().second - queued.front().first;
        p.batches = 1;
        p.threads = 1;
        accumulateResult(sum, runCpu(in, p));
        o.packetSource->launchDone(0, p.packets);
        queued.pop_front();
    }
    sum.packetsRequested = sum.packetsDone;
    return sum;
}

// The GPU side's queued launches and the CPU's blocks: the union of the packets each side ran is
// the run's range exactly once, the per-side counts add up to the run, and the result equals a
// plain run's.
BOOST_AUTO_TEST_CASE(queued_launches_and_cpu_blocks_run_every_packet_once) {
    const uint64_t n = 60000;
    fmtest::PacketBlocks blocks;
    unsigned launchTakes = 0;
    HybridSides s = twoCpus();
    s.gpu = fmtest::recordedSide(blocks, true, queuedLaunches, &launchTakes);
    s.cpu = fmtest::recordedSide(blocks, false, runCpu);
    const RunOptions o = options(n, 1);
    const RunResult h = runHybridWith(in, o, s, eager(n));
    checkSameRun(h, runCpu(in, o), n);
    const auto [gpu, cpu] = blocks.checkTiling(o.firstPacket, n);
    BOOST_TEST_MESSAGE("queued launches: GPU side ran " << gpu << ", CPU side ran " << cpu << " of " << n << " in "
                                                        << blocks.blocks.size() << " blocks");
    BOOST_CHECK_GT(launchTakes, 2u);
    BOOST_CHECK_GT(cpu, 0u);
    BOOST_CHECK_GT(gpu, 0u);
    BOOST_CHECK_EQUAL(cpu, h.cpuPackets);
    BOOST_CHECK_EQUAL(gpu + cpu, n);
    BOOST_CHECK(blocks.blocks.back().gpu);
}

BOOST_AUTO_TEST_CASE(a_failing_side_fails_the_run) {
    const RunOptions o = options(20000, 1);
    for (bool gpuFails : {true, false}) {
        HybridSides s = twoCpus();
        HybridSideRunner failing = [](const KernelInput&, const RunOptions&) -> RunResult {
            throw Error("side failed on purpose");
        };
        (gpuFails ? s.gpu : s.cpu) = failing;
        BOOST_CHECK_EXCEPTION(runHybridWith(in, o, s, eager(20000)), Error, [](const Error& e) {
            return std::string(e.what()).find("side failed on purpose") != std::string::npos;
        });
    }
}

BOOST_AUTO_TEST_CASE(cancel_ends_both_sides) {
    std::atomic<bool> stop{false};
    RunOptions o = options(2000000, 10);
    o.cancel = &stop;
    o.progress = [&](uint64_t done, uint64_t) {
        if (done > 0) stop = true;
    };
    const RunResult h = runHybridWith(in, o, twoCpus(), eager(20000));
    BOOST_CHECK(h.cancelled);
    BOOST_CHECK_LT(h.packetsDone, o.packets);
    // Packets in flight at the cancel are launched and booked abnormal, not done: the ledger
    // still closes.
    BOOST_CHECK_GE(h.events.launch, h.packetsDone);
    BOOST_CHECK_SMALL(h.ledger.imbalance() / h.ledger.launched, 1e-9);
    BOOST_CHECK(!h.standardError.available());
}

BOOST_AUTO_TEST_CASE(bad_parameters_are_refused) {
    RunOptions o = options(1000, 1);
    HybridSides s = twoCpus();
    s.cpuThreads = 0;
    BOOST_CHECK_THROW(runHybridWith(in, o, s), ParameterError);
    s = twoCpus();
    s.gpu = nullptr;
    BOOST_CHECK_THROW(runHybridWith(in, o, s), ParameterError);
    o.packets = 0;
    BOOST_CHECK_THROW(runHybridWith(in, o, twoCpus()), ParameterError);
    o = options(1000, 2000);  // more batches than packets
    BOOST_CHECK_THROW(runHybridWith(in, o, twoCpus()), ParameterError);
    BOOST_CHECK_THROW(runKernel("hybird", in, options(1000, 1)), ParameterError);
    BOOST_CHECK_EQUAL(hybridCpuThreads(3, 1), 3u);
    BOOST_CHECK_GE(hybridCpuThreads(0, 4096), 1u);
}

// Without a GPU the hybrid kernel says so, naming itself (on the GPU machine it runs instead:
// Tests/CUDA/test_cuda_hybrid.cpp).
BOOST_AUTO_TEST_CASE(without_a_gpu_the_kernel_says_so) {
    if (cudaAvailable()) return;
    BOOST_CHECK_EXCEPTION(runKernel("hybrid", in, options(1000, 1)), Error, [](const Error& e) {
        BOOST_TEST_MESSAGE(e.what());
        return std::string(e.what()).find("kernel hybrid") != std::string::npos;
    });
}

BOOST_AUTO_TEST_SUITE_END()
