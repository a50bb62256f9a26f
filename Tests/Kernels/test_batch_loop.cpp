// SPDX-License-Identifier: GPL-3.0-or-later
// Planning loops (issue 29): the device-model cache's keying and eviction
// (Kernels/DeviceModelCache.hpp), which devices a command makes visible to CUDA
// (Kernels/DeviceVisibility.hpp), and the batch dispatcher: a slot starts its next run while
// earlier results are being written, and a batch written as results arrive is bit for bit the
// same as its runs made one by one.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>

#include "Geometry/BatchModel.hpp"
#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/Batch.hpp"
#include "Kernels/DeviceModelCache.hpp"
#include "Kernels/DeviceVisibility.hpp"
#include "Kernels/Dispatch.hpp"
#include "Tests/Kernels/BatchTestModel.hpp"

using namespace fm;

namespace {
struct FakeModel {
    int id;
};
DeviceModelKey key(int device, uint64_t hash, unsigned outputs = 1) {
    DeviceModelKey k;
    k.device = device;
    k.hash = hash;
    k.cells = 10;
    k.faces = 20;
    k.outputs = outputs;
    return k;
}
}  // namespace

BOOST_AUTO_TEST_CASE(model_cache_reuses_the_same_mesh_on_the_same_device_only) {
    DeviceModelCache<FakeModel> c;
    BOOST_CHECK(!c.take(key(0, 7)));  // empty: build
    c.built();
    BOOST_CHECK(!c.give(key(0, 7), std::make_unique<FakeModel>(FakeModel{1})));
    BOOST_CHECK(c.mayMatch(key(0, 99)));    // same sizes: the hash decides (it is then computed)
    BOOST_CHECK(!c.mayMatch(key(0, 7, 3)));  // other tallies
    BOOST_CHECK(!c.mayMatch(key(1, 7)));     // nothing kept on device 1
    BOOST_CHECK(!c.take(key(1, 7)));           // another device
    std::unique_ptr<FakeModel> stale;
    BOOST_CHECK(!c.take(key(0, 7, 3), &stale));  // other tallies: not interchangeable, evicted
    BOOST_REQUIRE(stale);
    BOOST_CHECK_EQUAL(stale->id, 1);
    BOOST_CHECK(!c.take(key(0, 7)));  // gone with the eviction
    c.give(key(0, 7), std::make_unique<FakeModel>(FakeModel{2}));
    auto m = c.take(key(0, 7));
    BOOST_REQUIRE(m);
    BOOST_CHECK_EQUAL(m->id, 2);
    BOOST_CHECK(!c.take(key(0, 7)));  // lent out: a second user builds its own
    c.give(key(0, 7), std::move(m));
    // A different mesh given back on the same device replaces (returns) the idle one.
    auto old = c.give(key(0, 8), std::make_unique<FakeModel>(FakeModel{3}));
    BOOST_REQUIRE(old);
    BOOST_CHECK_EQUAL(old->id, 2);
    BOOST_CHECK(!c.take(key(0, 7)));
    BOOST_CHECK_EQUAL(c.builds(), 1u);
    BOOST_CHECK_EQUAL(c.reuses(), 1u);
    BOOST_CHECK(c.drop(1) == nullptr);
}

BOOST_AUTO_TEST_CASE(content_hash_sees_every_byte) {
    std::vector<unsigned char> a(1000);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<unsigned char>(i * 37 + 11);
    for (size_t n : {size_t(0), size_t(5), size_t(8), size_t(33), size_t(999), size_t(1000)}) {
        std::vector<unsigned char> b(a.begin(), a.begin() + n);
        BOOST_CHECK_EQUAL(hashBytes(a.data(), n), hashBytes(b.data(), n));
        for (size_t i = 0; i < n; i += (n / 7) + 1) {  // any one byte changed changes the hash
            b[i] ^= 1;
            BOOST_CHECK_NE(hashBytes(a.data(), n), hashBytes(b.data(), n));
            b[i] ^= 1;
        }
    }
    BOOST_CHECK_NE(hashBytes(a.data(), 16), hashBytes(a.data(), 17));  // the length counts
}

// The model cache's key for packed cells (cellsKey): with the packer's identity, equal for
// every packing of one mesh with the same boundary flag and directed faces, different for
// another mesh (even a copy of it built again), another flag or other directed faces; without,
// the content hash of every cell.
BOOST_AUTO_TEST_CASE(packed_cells_keep_the_key_of_their_mesh) {
    const fmtest::BatchTestModel model(4), again(4);
    auto p = std::make_shared<PointSource>();
    p->position = {0.1, 0.2, 0.3};
    auto q = std::make_shared<PointSource>();
    q->position = {-1, 2, 0.5};
    auto keyOf = [](const KernelInput& in) {
        return cellsKey(in.cells.data(), in.cells.size(), sizeof(TetraRecord), in.cellsIdentity);
    };
    const KernelInput a = packModel(model.mesh, model.mats, *p), b = packModel(model.mesh, model.mats2, *q);
    BOOST_CHECK_NE(a.cellsIdentity, 0u);
    BOOST_CHECK_EQUAL(a.cellsIdentity, b.cellsIdentity);  // sources and optical properties are not in the cells
    BOOST_CHECK_EQUAL(keyOf(a), keyOf(b));
    BOOST_CHECK(b.cells.size() == a.cells.size() &&  // as the identity says
                std::memcmp(b.cells.data(), a.cells.data(), a.cells.size() * sizeof(TetraRecord)) == 0);
    const KernelInput c = packModel(again.mesh, again.mats, *p);  // the same cells from another mesh object
    BOOST_CHECK(c.cells.size() == a.cells.size() &&
                std::memcmp(c.cells.data(), a.cells.data(), a.cells.size() * sizeof(TetraRecord)) == 0);
    BOOST_CHECK_NE(keyOf(a), keyOf(c));  // not known equal: uploaded again, never mixed up
    MaterialSet matched = model.mats;
    matched.matchedBoundary = !matched.matchedBoundary;
    BOOST_CHECK_NE(keyOf(packModel(model.mesh, matched, *p)), keyOf(a));
    const uint32_t face = model.mesh.boundaryFaces().at(0);
    BOOST_CHECK_NE(keyOf(packModel(model.mesh, model.mats, *p, {face})), keyOf(a));
    BatchModel bm = packBatch(model.mesh, {model.mats}, {p, q}, {100}, 1);
    BOOST_CHECK_EQUAL(bm.mesh.cellsIdentity, a.cellsIdentity);  // a batch's mesh keeps it
    // A cell changed under a kept identity (against its contract) is still caught where the
    // sample looks: the first and the last cells.
    KernelInput d = a;
    d.cells.back().adj[0] ^= 1u;
    BOOST_CHECK_NE(keyOf(d), keyOf(a));
    // Without an identity: every cell counts.
    KernelInput e = a, f = a;
    e.cellsIdentity = f.cellsIdentity = 0;
    BOOST_CHECK_EQUAL(keyOf(e), keyOf(f));
    f.cells[f.cells.size() / 3 + 1].C[2] += 1.f;
    BOOST_CHECK_NE(keyOf(e), keyOf(f));
    BOOST_CHECK_EQUAL(keyOf(e), hashBytes(e.cells.data(), e.cells.size() * sizeof(TetraRecord)));
}

BOOST_AUTO_TEST_CASE(only_the_named_devices_are_made_visible) {
    BOOST_CHECK_EQUAL(*visibleDevicesFor({}, nullptr), "0");  // the default device alone
    BOOST_CHECK_EQUAL(*visibleDevicesFor({2}, nullptr), "2");
    BOOST_CHECK_EQUAL(*visibleDevicesFor({3, 1}, nullptr), "3,1");
    BOOST_CHECK(!visibleDevicesFor({-1}, nullptr));       // every device: nothing to narrow
    BOOST_CHECK(!visibleDevicesFor({1, 1}, nullptr));     // a repeated id: left to the run's checks
    // Ids index the list the user already set (numbers, UUIDs or MIG names alike).
    BOOST_CHECK_EQUAL(*visibleDevicesFor({1}, "4,6"), "6");
    BOOST_CHECK_EQUAL(*visibleDevicesFor({1, 0}, "GPU-aa, GPU-bb"), "GPU-bb,GPU-aa");
    BOOST_CHECK(!visibleDevicesFor({2}, "4,6"));  // not there: CUDA reports the missing device
    BOOST_CHECK(!visibleDevicesFor({0}, ""));     // no device visible: left as the user set it
    BOOST_CHECK(!visibleDevicesFor({0}, "1,,2"));
}

namespace {
struct LoopFixture : fmtest::BatchTestModel {
    std::vector<SourcePtr> sources;
    void pointSources(size_t n) {
        for (size_t i = 0; i < n; ++i) {
            auto p = std::make_shared<PointSource>();
            p->position = {-4 + 8.0 * double(i) / double(n), 0.1 * double(i % 7) - 0.3, 0.2};
            sources.push_back(p);
        }
    }
};
}  // namespace

BOOST_FIXTURE_TEST_SUITE(batch_loop, LoopFixture)

// 50 runs (25 sources x 2 material sets) handed to a writer thread as they finish, against the
// 50 runs made one at a time: identical tallies, ledgers and events.
BOOST_AUTO_TEST_CASE(fifty_runs_written_as_they_finish_equal_fifty_single_runs) {
    pointSources(25);
    const uint64_t packets = 400, seed = 9;
    BatchModel bm = packBatch(mesh, {mats, mats2}, sources, {packets}, seed);
    BatchOptions o;
    o.threads = 2;
    o.outputs.directed = false;
    std::map<size_t, RunResult> got;
    BatchSummary s = runBatch(bm.mesh, bm.runs, o, [&](size_t i, RunResult&& r) {
        BOOST_CHECK(got.count(i) == 0);  // each run once
        got[i] = std::move(r);
    });
    BOOST_REQUIRE_EQUAL(s.delivered, 50u);
    BOOST_REQUIRE_EQUAL(got.size(), 50u);
    for (size_t m = 0; m < 2; ++m)
        for (size_t k = 0; k < sources.size(); ++k) {
            KernelInput in = packModel(mesh, m ? mats2 : mats, *sources[k]);
            RunOptions ro;
            ro.packets = packets;
            ro.params.seed = seed;
            ro.threads = 2;
            ro.outputs.directed = false;
            const RunResult one = runKernel("cpu", in, ro);
            const RunResult& b = got.at(bm.run(m, k));
            BOOST_CHECK(b.volume == one.volume);  // bit for bit
            BOOST_CHECK(b.surface == one.surface);
            BOOST_CHECK_EQUAL(b.ledger.absorbed, one.ledger.absorbed);
            BOOST_CHECK_EQUAL(b.ledger.exited, one.ledger.exited);
            BOOST_CHECK_EQUAL(b.events.absorb, one.events.absorb);
        }
}

// The results are written (here: a 4 ms stand-in) while the next run already runs: before, each
// run waited for the previous one's writing, so the slot idled the writing time per run.
BOOST_AUTO_TEST_CASE(a_slow_writer_does_not_idle_the_runs) {
    pointSources(16);
    BatchModel bm = packBatch(mesh, {mats}, sources, {3000}, 3);
    BatchOptions o;
    o.threads = 1;
    o.outputs.directed = false;
    const auto write = std::chrono::milliseconds(4);
    double runSeconds = 0;
    BatchSummary s = runBatch(bm.mesh, bm.runs, o, [&](size_t, RunResult&& r) {
        runSeconds += r.seconds;
        std::this_thread::sleep_for(write);
    });
    BOOST_REQUIRE_EQUAL(s.delivered, 16u);
    const double perRun = s.idleSeconds / 16, mean = runSeconds / 16;
    BOOST_TEST_MESSAGE("slot idle " << perRun * 1e3 << " ms per run; a run " << mean * 1e3 << " ms; writing 4 ms");
    // Runs slower than the writer never wait for it; a writer slower than the runs holds them
    // back only by the difference.
    BOOST_CHECK_LT(perRun, std::max(0.0, 0.004 - mean) + 0.0015);
}

// A CPU run ends when its last worker does: the calling thread used to poll every 20 ms, so
// every run took at least ~20 ms and a batch of short runs idled that long per run.
BOOST_AUTO_TEST_CASE(short_cpu_runs_do_not_wait_for_a_poll) {
    pointSources(30);
    BatchModel bm = packBatch(mesh, {mats}, sources, {1}, 3);  // one packet per run
    BatchOptions o;
    o.threads = 2;
    o.outputs.directed = false;
    BatchSummary s = runBatch(bm.mesh, bm.runs, o, {});
    BOOST_REQUIRE_EQUAL(s.delivered, 30u);
    BOOST_TEST_MESSAGE("30 one-packet runs in " << s.seconds << " s");
    BOOST_CHECK_LT(s.seconds, 0.3);  // a 20 ms poll per run: >= 0.6 s
}

BOOST_AUTO_TEST_CASE(cancel_drops_queued_runs) {
    pointSources(12);
    BatchModel bm = packBatch(mesh, {mats}, sources, {2000}, 3);
    BatchOptions o;
    o.threads = 1;
    o.outputs.directed = false;
    std::atomic<bool> stop{false};
    o.cancel = &stop;
    size_t complete = 0, delivered = 0;
    BatchSummary s = runBatch(bm.mesh, bm.runs, o, [&](size_t, RunResult&& r) {
        ++delivered;
        complete += r.cancelled ? 0 : 1;
        stop = true;  // after the first result
    });
    BOOST_CHECK(s.cancelled);
    BOOST_CHECK_GE(complete, 1u);
    BOOST_CHECK_LT(delivered, 12u);  // the queued and unclaimed runs never ran
}

BOOST_AUTO_TEST_SUITE_END()

// How many devices a piece of work is worth (a batch never slower on N GPUs than on one): short
// work one, long work more, an explicit list as given; CUDA_VISIBLE_DEVICES narrowed to the first
// ones only for "every device".
BOOST_AUTO_TEST_CASE(devices_chosen_by_work) {
    BOOST_TEST(gpuSecondsPerPacket(48000) == 1.0e-8, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(gpuSecondsPerPacket(9600) < gpuSecondsPerPacket(48000));
    BOOST_TEST(gpuSecondsPerPacket(996468) < gpuSecondsPerPacket(2456256));
    BOOST_TEST(gpuSecondsPerPacket(5000000) > gpuSecondsPerPacket(2456256));
    BOOST_TEST(devicesWorthUsing(10 * 1e6, 48000) == 1u);     // the 10-run batch: 0.1 s of work
    BOOST_TEST(devicesWorthUsing(1e3, 48000) == 1u);          // a tiny run
    BOOST_TEST(devicesWorthUsing(300 * 1e6, 48000) >= 2u);    // 3 s of work
    BOOST_TEST(devicesWorthUsing(1e9, 996468) >= 4u);         // the 1e9 clinical run
    // W / N + c (N - 1) at the chosen N is no worse than at N +- 1.
    for (double packets : {1e6, 3e7, 1e8, 3e8, 1e9, 1e10}) {
        const size_t n = devicesWorthUsing(packets, 48000);
        const double w = packets * gpuSecondsPerPacket(48000);
        auto cost = [&](double k) { return w / k + kExtraDeviceSeconds * (k - 1); };
        BOOST_TEST(cost(double(n)) <= cost(double(n + 1)) + 1e-12);
        if (n > 1) BOOST_TEST(cost(double(n)) <= cost(double(n - 1)) + 1e-12);
    }
    BOOST_TEST(devicesForWork({-1}, 4, 1e7, 48000) == 1u);
    BOOST_TEST(devicesForWork({-1}, 4, 1e11, 48000) == 4u);   // capped at the devices present
    BOOST_TEST(devicesForWork({0, 1, 2, 3}, 4, 1e7, 48000) == 4u);  // a list is used as given
    BOOST_TEST(devicesForWork({-1}, 4, 0, 48000) == 4u);      // unknown work: every device

    const char* was = std::getenv("CUDA_VISIBLE_DEVICES");
    const std::string saved = was ? was : "";
    setenv("CUDA_VISIBLE_DEVICES", "3,5,7", 1);
    BOOST_TEST(restrictDevicesForWork({0, 1}, 1e7, 48000) == 0u);  // a list: untouched
    BOOST_TEST(std::string(std::getenv("CUDA_VISIBLE_DEVICES")) == "3,5,7");
    BOOST_TEST(restrictDevicesForWork({-1}, 1e11, 48000) == 0u);  // long work: all three stay
    BOOST_TEST(std::string(std::getenv("CUDA_VISIBLE_DEVICES")) == "3,5,7");
    setenv("FM_DEVICES_BY_WORK", "0", 1);
    BOOST_TEST(restrictDevicesForWork({-1}, 1e7, 48000) == 0u);  // turned off
    unsetenv("FM_DEVICES_BY_WORK");
    BOOST_TEST(restrictDevicesForWork({-1}, 1e7, 48000) == 1u);  // short work: the first device
    BOOST_TEST(std::string(std::getenv("CUDA_VISIBLE_DEVICES")) == "3");
    BOOST_TEST(visibleDevicesNote().find("CUDA_VISIBLE_DEVICES=3") != std::string::npos);
    if (was) setenv("CUDA_VISIBLE_DEVICES", saved.c_str(), 1);
    else unsetenv("CUDA_VISIBLE_DEVICES");
}

// The ranks of one host under mpirun share its GPUs: one each where there are enough, a share of
// an explicit list or of `all`, round robin where ranks outnumber devices; one rank per host (or
// an unknown device count with no list) keeps what it asked for.
BOOST_AUTO_TEST_CASE(devices_shared_by_the_ranks_of_a_host) {
    using V = std::vector<int>;
    // No --devices: rank r takes device r of the 4 present.
    for (int r = 0; r < 4; ++r) BOOST_TEST(devicesOfLocalRank({}, r, 4, 4) == V{r});
    BOOST_TEST(devicesOfLocalRank({}, 1, 2, 4) == V{1});  // 2 ranks on 4 GPUs: one each, as a lone process
    // --devices all: each rank every localSize-th device.
    BOOST_TEST(devicesOfLocalRank({-1}, 0, 2, 4) == (V{0, 2}));
    BOOST_TEST(devicesOfLocalRank({-1}, 1, 2, 4) == (V{1, 3}));
    BOOST_TEST(devicesOfLocalRank({-1}, 2, 4, 4) == V{2});
    // An explicit list is the pool.
    BOOST_TEST(devicesOfLocalRank({5, 6, 7}, 0, 2, 8) == (V{5, 7}));
    BOOST_TEST(devicesOfLocalRank({5, 6, 7}, 1, 2, 8) == V{6});
    // More ranks than devices: round robin, never an empty list.
    for (int r = 0; r < 6; ++r) {
        BOOST_TEST(devicesOfLocalRank({}, r, 6, 4) == V{r % 4});
        BOOST_TEST(devicesOfLocalRank({-1}, r, 6, 4) == V{r % 4});
        BOOST_TEST(devicesOfLocalRank({2, 3}, r, 6, 4) == V{2 + r % 2});
    }
    // One rank on the host, a bad local rank, or no device count for an implicit pool: as asked.
    BOOST_TEST(devicesOfLocalRank({1, 2}, 0, 1, 4) == (V{1, 2}));
    BOOST_TEST(devicesOfLocalRank({}, 0, 1, 4) == V{});
    BOOST_TEST(devicesOfLocalRank({-1}, 3, 2, 4) == V{-1});
    BOOST_TEST(devicesOfLocalRank({}, 1, 2, 0) == V{});
    BOOST_TEST(devicesOfLocalRank({-1}, 1, 2, 0) == V{-1});

    const char* was = std::getenv("CUDA_VISIBLE_DEVICES");
    const std::string saved = was ? was : "";
    setenv("CUDA_VISIBLE_DEVICES", "3,5,7", 1);
    BOOST_TEST(visibleDeviceCount() == 3u);
    setenv("CUDA_VISIBLE_DEVICES", "", 1);
    BOOST_TEST(visibleDeviceCount() == 0u);
    setenv("CUDA_VISIBLE_DEVICES", "1,,2", 1);
    BOOST_TEST(visibleDeviceCount() == 0u);
    if (was) setenv("CUDA_VISIBLE_DEVICES", saved.c_str(), 1);
    else unsetenv("CUDA_VISIBLE_DEVICES");
}
