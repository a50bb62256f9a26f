// SPDX-License-Identifier: GPL-3.0-or-later
// Several runs in one launch (Kernels/MultiRun.hpp), on the host: the index map from a group's
// packets to runs, the grouping of a batch's runs, and a launch emulated with lanes that take
// packets from one counter across the runs, one event per lane in turn (as GPU threads do):
// every run gets the same packet histories as the run made alone by the CPU kernel.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstring>

#include "Geometry/BatchModel.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/Batch.hpp"
#include "Kernels/Core/TallyScorer.hpp"
#include "Kernels/Dispatch.hpp"
#include "Kernels/MultiRun.hpp"
#include "Tests/Kernels/BatchTestModel.hpp"
#include "Tests/TestUtil.hpp"

using namespace fm;

namespace {

struct PlainAdd {
    static constexpr bool kCache = false;
    static void add(double* p, double v) { *p += v; }
};
using Scorer = TallyScorer<true, true, false, PlainAdd>;

// A run's sums in the emulated launch: what the GPU keeps per run in device memory.
struct RunSums {
    std::vector<double> volume, surface;
    Ledger ledger;
    EventCounts<uint64_t> events;
};

// MultiRunLane's Sinks on the host: a lane leaving a run adds its scorer into the run's sums.
struct HostSinks {
    std::vector<RunSums>* sums;
    void open(uint32_t r, Scorer& sc) const {
        sc.volume = (*sums)[r].volume.data();
        sc.surface = (*sums)[r].surface.data();
    }
    void close(uint32_t r, Scorer& sc) const {
        sc.flush();
        (*sums)[r].ledger.add(sc.ledger);
        (*sums)[r].events.add(sc.events);
        sc.ledger = Ledger{};
        sc.events = EventCounts<uint64_t>{};
    }
};

// A launch of `lanes` lanes over the group's runs: each lane advances its packet by one event
// per turn and takes the next group-wide packet from the shared counter when its packet ends.
std::vector<RunSums> emulateGroup(const KernelInput& mesh, const std::vector<RunVariant>& runs,
                                  const std::vector<MultiRunEntry>& entries, const KernelParams& kp, size_t lanes) {
    std::vector<RunSums> sums(runs.size());
    for (RunSums& s : sums) {
        s.volume.assign(mesh.cells.size(), 0.0);
        s.surface.assign(mesh.faceCount, 0.0);
    }
    const HostSinks sinks{&sums};
    KernelInput in = mesh;
    applyVariant(in, runs[0]);  // the shared materials; each packet's emitters come from its run
    const ArrayModel m = in.view();
    struct Lane {
        MultiRunLane lane;
        Scorer sc;
        PacketState st;
        KeptMaterial km;
        bool live = false, done = false;
    };
    std::vector<Lane> ls(lanes);
    for (Lane& l : ls) sinks.open(0, l.sc);
    const uint64_t count = entries.back().end;
    uint64_t next = 0;
    for (size_t left = lanes; left > 0;) {
        for (Lane& l : ls) {
            if (l.done) continue;
            if (l.live) {
                l.live = advance(m, kp, l.st, l.km, l.sc);
                continue;
            }
            if (next >= count) {
                l.done = true;
                --left;
                continue;
            }
            l.live = l.lane.launch(m, kp, entries.data(), next++, l.st, l.sc, sinks);
            if (l.live) l.km = keptMaterial(m, l.st.pk.tetra);
        }
    }
    for (Lane& l : ls) sinks.close(l.lane.run, l.sc);
    return sums;
}

struct GroupFixture : fmtest::BatchTestModel {
    GroupFixture() : fmtest::BatchTestModel(6) {}
};

}  // namespace

BOOST_AUTO_TEST_CASE(group_index_maps_to_runs_and_their_packets) {
    // Runs of 3, 0, 1 and 4 packets, the last one starting at its packet 100.
    std::vector<MultiRunEntry> e(4);
    const uint64_t n[4] = {3, 0, 1, 4}, first[4] = {0, 0, 0, 100};
    uint64_t end = 0;
    for (int r = 0; r < 4; ++r) {
        end += n[r];
        e[r].end = end;
        e[r].firstPacket = first[r];
    }
    const uint32_t runOf[8] = {0, 0, 0, 2, 3, 3, 3, 3};
    const uint64_t packetOf[8] = {0, 1, 2, 0, 100, 101, 102, 103};
    uint32_t r = 0;
    for (uint64_t g = 0; g < 8; ++g) {  // a lane's indices only grow: search forward
        r = multiRunOf(e.data(), r, g);
        BOOST_CHECK_EQUAL(r, runOf[g]);
        BOOST_CHECK_EQUAL(multiRunPacket(e.data(), r, g), packetOf[g]);
        BOOST_CHECK_EQUAL(multiRunOf(e.data(), 0, g), runOf[g]);  // from the first run too
    }
}

BOOST_AUTO_TEST_CASE(groups_hold_consecutive_short_runs_with_one_material_set) {
    MultiRunLimits lim;
    lim.maxRuns = 4;
    lim.maxPacketsPerRun = 100;
    lim.maxPackets = 250;
    std::vector<uint64_t> packets = {50, 50, 50, 50, 50, 50};
    std::vector<int> mats = {0, 0, 0, 0, 0, 0};
    auto size = [&](size_t from) {
        return multiRunGroupSize(packets.size() - from, lim, [&](size_t i) { return packets[from + i]; },
                                 [&](size_t i) { return mats[from + i] == mats[from]; });
    };
    BOOST_CHECK_EQUAL(size(0), 4u);  // maxRuns
    BOOST_CHECK_EQUAL(size(4), 2u);  // what is left
    BOOST_CHECK_EQUAL(size(6), 0u);
    packets = {100, 100, 100, 10, 10, 10};
    BOOST_CHECK_EQUAL(size(0), 2u);  // 300 packets would pass maxPackets
    packets = {50, 50, 101, 50, 50, 50};
    BOOST_CHECK_EQUAL(size(0), 2u);  // a long run ends a group
    BOOST_CHECK_EQUAL(size(2), 1u);  // and goes alone
    packets = {50, 50, 50, 50, 50, 50};
    mats = {0, 0, 1, 1, 1, 1};
    BOOST_CHECK_EQUAL(size(0), 2u);  // another material set starts another group
    BOOST_CHECK_EQUAL(size(2), 4u);
}

// Five runs (point, pencil beam and line sources, different seeds and packet counts, one of a
// single packet) in one emulated launch of 96 lanes give each run the packet histories of the
// CPU kernel's run alone: equal event counts, tallies and ledger equal to rounding.
BOOST_AUTO_TEST_CASE(group_runs_equal_runs_made_alone) {
    const GroupFixture f;
    const std::vector<SourcePtr> sources = fmtest::mixedSources();
    const uint64_t packets[5] = {3000, 2500, 1, 4000, 2000}, seeds[5] = {1, 2, 3, 4, 99};
    BatchModel bm = packBatch(f.mesh, {f.mats}, sources, {1}, 1);
    std::vector<RunVariant> variants;
    std::vector<MultiRunEntry> entries(sources.size());
    std::vector<KernelInput> alone;
    uint64_t end = 0;
    for (size_t r = 0; r < sources.size(); ++r) {
        variants.push_back(bm.runs[r].model);
        alone.push_back(packModel(f.mesh, f.mats, *sources[r]));
        const RunVariant& v = variants.back();
        end += packets[r];
        entries[r].end = end;
        entries[r].firstPacket = r == 4 ? 500 : 0;  // a run's later packets (a split run's part)
        entries[r].seed = seeds[r];
        entries[r].emitters = EmitterView{v.emitters.data(), v.emitterCdf.data(), uint32_t(v.emitters.size()),
                                          v.pieces.data(), v.pieceCdf.data()};
    }
    KernelParams kp;
    const std::vector<RunSums> got = emulateGroup(bm.mesh, variants, entries, kp, 96);
    for (size_t r = 0; r < sources.size(); ++r) {
        RunOptions o;
        o.packets = packets[r];
        o.firstPacket = entries[r].firstPacket;
        o.params.seed = seeds[r];
        o.threads = 1;
        o.batches = 1;
        o.outputs.directed = false;
        o.tuning.cpuIsa = CpuIsa::Generic;
        const RunResult one = runKernel("cpu", alone[r], o);
        BOOST_TEST_CONTEXT("run " << r) {
            BOOST_CHECK_EQUAL(got[r].events.launch, packets[r]);
            BOOST_CHECK_EQUAL(got[r].events.launch, one.events.launch);
            BOOST_CHECK_EQUAL(got[r].events.absorb, one.events.absorb);  // the same histories
            BOOST_CHECK_EQUAL(got[r].events.scatter, one.events.scatter);
            BOOST_CHECK_EQUAL(got[r].events.boundary, one.events.boundary);
            BOOST_CHECK_EQUAL(got[r].events.exit, one.events.exit);
            BOOST_CHECK_EQUAL(got[r].events.win, one.events.win);
            BOOST_CHECK_EQUAL(got[r].events.die, one.events.die);
            BOOST_CHECK_SMALL(fmtest::l1(one.volume, got[r].volume), 1e-12);  // order of the sums only
            BOOST_CHECK_SMALL(fmtest::l1(one.surface, got[r].surface), 1e-12);
            BOOST_CHECK_CLOSE(got[r].ledger.launched, one.ledger.launched, 1e-10);
            BOOST_CHECK_CLOSE(got[r].ledger.absorbed, one.ledger.absorbed, 1e-10);
            BOOST_CHECK_SMALL(got[r].ledger.exited - one.ledger.exited, 1e-9);
        }
    }
}

// Runs of one source differing only by seed and size: each receives exactly its own packets
// (a lane that kept scoring into the run it started in would move packets between runs), and
// each run's ledger closes on its own.
BOOST_AUTO_TEST_CASE(each_run_receives_only_its_packets) {
    const GroupFixture f;
    auto p = std::make_shared<PointSource>();
    p->position = {0.1, 0.2, 0.3};
    BatchModel bm = packBatch(f.mesh, {f.mats}, {p, p, p}, {1}, 1);
    std::vector<RunVariant> variants;
    std::vector<MultiRunEntry> entries(3);
    const uint64_t packets[3] = {700, 1300, 500};
    uint64_t end = 0;
    for (size_t r = 0; r < 3; ++r) {
        variants.push_back(bm.runs[r].model);
        const RunVariant& v = variants.back();
        end += packets[r];
        entries[r].end = end;
        entries[r].seed = 7 + r;
        entries[r].emitters = EmitterView{v.emitters.data(), v.emitterCdf.data(), uint32_t(v.emitters.size()),
                                          v.pieces.data(), v.pieceCdf.data()};
    }
    const std::vector<RunSums> got = emulateGroup(bm.mesh, variants, entries, KernelParams{}, 33);
    for (size_t r = 0; r < 3; ++r) {
        BOOST_CHECK_EQUAL(got[r].events.launch, packets[r]);
        BOOST_CHECK_CLOSE(got[r].ledger.launched, double(packets[r]), 1e-12);
        const double out = got[r].ledger.specular + got[r].ledger.absorbed + got[r].ledger.exited +
                           got[r].ledger.rouletteLost + got[r].ledger.abnormal - got[r].ledger.rouletteGained;
        BOOST_CHECK_CLOSE(out, got[r].ledger.launched, 1e-9);  // each run's ledger closes on its own
    }
}
