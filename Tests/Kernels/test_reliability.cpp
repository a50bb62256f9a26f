// SPDX-License-Identifier: GPL-3.0-or-later
// Reliability of the CPU kernels (issue 26): a cancel stops a run even while a packet is trapped
// under raised guards; worker threads that cannot start leave the run to those that did; an
// exception in a worker reaches the caller; limits are checked before the work.
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <new>
#include <system_error>
#include <thread>

#include "Geometry/Layered.hpp"
#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Geometry/Queries.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Kernels/CPU/CpuLanes.hpp"
#include "Kernels/CPU/TraceCpu.hpp"
#include "Kernels/Dispatch.hpp"
#include "Storage/MCML/MCMLKernelRun.hpp"
#include "Common/ResourceLimits.hpp"

using namespace fm;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// A box of tissue; `trap`: no absorption and mu_s = 1e4/mm, index matched, so a packet scatters
// ~1e9 times before it leaves (minutes each): with raised guards it is trapped.
struct Box {
    TetraMesh mesh = makeBoxMesh({-5, -5, -5}, {5, 5, 5}, 3, 3, 3, [](const Point3&) { return 1u; });
    MaterialSet mats;
    PointSource src;
    explicit Box(bool trap) {
        mats.exterior(Material(0, 0, 0, 1.0));
        mats.append(trap ? Material(0, 1e4, 0, 1.0) : Material(0.1, 5, 0.8, 1.4));
        src.position = {0.1, 0.2, 0.3};
    }
    KernelInput pack() const { return packModel(mesh, mats, src); }
};

RunOptions options(uint64_t packets, unsigned threads) {
    RunOptions o;
    o.packets = packets;
    o.threads = threads;
    o.params.seed = 5;
    o.outputs.directed = false;
    return o;
}

// Sets *flag after `ms` milliseconds, on its own thread.
struct DelayedCancel {
    std::atomic<bool> flag{false};
    std::thread t;
    explicit DelayedCancel(int ms) : t([this, ms] {
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        flag = true;
    }) {}
    ~DelayedCancel() { t.join(); }
};

// Resets the test hook however a test ends.
struct StartHook {
    explicit StartHook(std::function<void(unsigned)> f) { workerStartHookForTests = std::move(f); }
    ~StartHook() { workerStartHookForTests = nullptr; }
};

MCMLRun slabRun(double n, double mus, unsigned nz, unsigned nr, unsigned na) {
    MCMLRun r;
    r.outName = "t.mco";
    r.photons = 4;
    r.dz = r.dr = 0.01;
    r.nz = nz;
    r.nr = nr;
    r.na = na;
    r.layers.push_back(MCMLLayer{n, 0.0, mus, 0.0, 1.0});  // 1 cm of a clear scatterer
    return r;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(reliability)

BOOST_AUTO_TEST_CASE(cancel_stops_a_packet_trapped_under_raised_guards) {
    Box box(true);
    KernelInput in = box.pack();
    RunOptions o = options(8, 2);
    o.params.maxSteps = o.params.maxHits = 4000000000u;
    DelayedCancel cancel(200);
    o.cancel = &cancel.flag;
    auto t0 = Clock::now();
    RunResult r = runCpu(in, o);
    const double s = secondsSince(t0);
    BOOST_TEST_MESSAGE("trapped run stopped " << s - 0.2 << " s after the cancel");
    BOOST_TEST(s < 1.2);
    BOOST_TEST(r.cancelled);
    BOOST_TEST(r.packetsDone < o.packets);
    // The packets ended by the cancel are booked abnormal: the ledger still closes.
    BOOST_TEST(r.ledger.abnormal > 0);
    BOOST_CHECK_SMALL(r.ledger.imbalance() / r.ledger.launched, 1e-9);
}

BOOST_AUTO_TEST_CASE(cancel_stops_a_trapped_mcml_photon) {
    // n = 100 in air: a photon leaves at a wall hit with probability ~4e-6, and hits a wall every
    // ~1e4 scatterings (mu_s = 1e3/cm over 1 cm): ~1e9 scatterings before it leaves.
    MCMLRun run = slabRun(100, 1e3, 10, 10, 5);
    RunOptions o = mcmlRunOptions(run);
    o.threads = 2;
    o.params.maxSteps = o.params.maxHits = 4000000000u;
    DelayedCancel cancel(200);
    o.cancel = &cancel.flag;
    auto t0 = Clock::now();
    McmlTallies t = runMcmlKernel("cpu", packLayered(layeredFromMcml(run)), mcmlGrid(run), o);
    BOOST_TEST(secondsSince(t0) < 1.2);
    BOOST_TEST(t.cancelled);
    BOOST_TEST(t.ledger.abnormal > 0);
    BOOST_CHECK_SMALL(t.ledger.imbalance() / t.ledger.launched, 1e-9);
}

BOOST_AUTO_TEST_CASE(threads_that_cannot_start_leave_the_run_to_those_that_did) {
    Box box(false);
    KernelInput in = box.pack();
    RunResult three = runCpu(in, options(4000, 3));
    RunResult eight;
    {
        // Threads 5 to 8 fail as under a process limit (EAGAIN).
        StartHook hook([](unsigned w) {
            if (w >= 4) throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again));
        });
        eight = runCpu(in, options(4000, 8));
    }
    // Four started, one of them left again as headroom: all packets run, split over three
    // threads, the same as a three-thread run.
    BOOST_TEST(eight.packetsDone == 4000u);
    BOOST_TEST(!eight.cancelled);
    BOOST_TEST(eight.volume == three.volume);
    BOOST_TEST(eight.ledger.absorbed == three.ledger.absorbed);
}

BOOST_AUTO_TEST_CASE(a_failed_start_leaves_a_quarter_as_headroom) {
    BOOST_TEST(workersAfterFailedStart(8, 8) == 8u);    // all started: all run
    BOOST_TEST(workersAfterFailedStart(8, 1) == 1u);    // the only one runs
    BOOST_TEST(workersAfterFailedStart(8, 0) == 0u);
    BOOST_TEST(workersAfterFailedStart(8, 2) == 1u);
    BOOST_TEST(workersAfterFailedStart(8, 7) == 6u);
    BOOST_TEST(workersAfterFailedStart(4096, 42) == 32u);
}

BOOST_AUTO_TEST_CASE(no_thread_at_all_is_a_clear_error) {
    Box box(false);
    KernelInput in = box.pack();
    StartHook hook([](unsigned) {
        throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again));
    });
    try {
        runCpu(in, options(100, 3));
        BOOST_FAIL("a run without threads did not fail");
    } catch (const Error& e) {
        BOOST_TEST(std::string(e.what()).find("cannot start a worker thread") != std::string::npos);
    }
}

BOOST_AUTO_TEST_CASE(an_exception_in_a_worker_reaches_the_caller) {
    RunOptions o = options(uint64_t(1) << 40, 3);  // far more packets than the test waits for
    std::atomic<int> chunksAfterFailure{0};
    std::atomic<bool> thrown{false};
    auto t0 = Clock::now();
    BOOST_CHECK_THROW(forEachPacketRange(o, 3,
                                         [&](unsigned w, uint64_t, uint64_t) {
                                             if (thrown) ++chunksAfterFailure;
                                             if (w == 1) {
                                                 thrown = true;
                                                 throw std::bad_alloc();
                                             }
                                             std::this_thread::sleep_for(std::chrono::microseconds(100));
                                         }),
                      std::bad_alloc);
    // The other workers stop at their next chunk instead of running 2^40 packets.
    BOOST_TEST(secondsSince(t0) < 2.0);
    BOOST_TEST(chunksAfterFailure.load() <= 4);
}

BOOST_AUTO_TEST_CASE(a_trapped_trace_stops_at_the_point_limit) {
    Box box(true);
    KernelInput in = box.pack();
    RunOptions o = options(2, 1);
    o.params.maxSteps = o.params.maxHits = 4000000000u;
    auto t0 = Clock::now();
    try {
        runCpuTraced(in, o, 100000);
        BOOST_FAIL("a trace of 1e9 points passed a limit of 1e5");
    } catch (const ParameterError& e) {
        BOOST_TEST(std::string(e.what()).find("exceed 100000 points") != std::string::npos);
        BOOST_TEST(std::string(e.what()).find("7.2 MB") != std::string::npos);  // 2 x 36 bytes a point
    }
    BOOST_TEST(secondsSince(t0) < 2.0);
}

BOOST_AUTO_TEST_CASE(mcml_grid_beyond_memory_is_refused_before_allocation) {
    // 1e4 x 1e4 x 1e4 bins: 2.4 GB a copy, 4096 threads: 10 TB, refused with the numbers.
    MCMLRun run = slabRun(1.4, 10, 10000, 10000, 10000);
    RunOptions o = mcmlRunOptions(run);
    o.threads = 4096;
    auto t0 = Clock::now();
    try {
        runMcml("cpu", layeredFromMcml(run), run, o);
        BOOST_FAIL("a 10 TB grid was accepted");
    } catch (const ParameterError& e) {
        const std::string m = e.what();
        BOOST_TEST_MESSAGE(m);
        BOOST_TEST(m.find("nz=10000 nr=10000 na=10000 with 4096 thread(s) needs 9.83 TB of memory") !=
                   std::string::npos);
        BOOST_TEST(m.find("is available") != std::string::npos);
    }
    BOOST_TEST(secondsSince(t0) < 1.0);
    BOOST_TEST(mcoFileBytes(run) > 4e9);  // its .mco: 3e8 values, ~4.2 GB
}

BOOST_AUTO_TEST_CASE(memory_and_disk_beyond_the_machine_are_refused_with_numbers) {
    BOOST_TEST(availableMemoryBytes() > 0u);
    try {
        requireMemory(1e18, "a test run", "ask for less");
        BOOST_FAIL("1e18 bytes of memory were granted");
    } catch (const ParameterError& e) {
        BOOST_TEST(std::string(e.what()).find("a test run needs 1e+06 TB of memory") == 0u);
        BOOST_TEST(std::string(e.what()).find("is available; ask for less") != std::string::npos);
    }
    try {
        requireDiskSpace(1e18, ".");
        BOOST_FAIL("1e18 bytes of disk were granted");
    } catch (const Error& e) {
        BOOST_TEST(std::string(e.what()).find(".: the outputs would take 1e+06 TB, only ") == 0u);
    }
    BOOST_CHECK_NO_THROW(requireDiskSpace(1000, "."));
}

BOOST_AUTO_TEST_CASE(values_along_has_a_sample_limit) {
    Box box(false);
    std::vector<double> v(box.mesh.tetraCount() + 1, 1.0);
    BOOST_CHECK_THROW(valuesAlong(box.mesh, v, {0, 0, 0}, {1, 1, 1}, kMaxLineSamples + 1), ParameterError);
    BOOST_TEST(valuesAlong(box.mesh, v, {0, 0, 0}, {1, 1, 1}, 3).size() == 3u);
}

BOOST_AUTO_TEST_SUITE_END()
