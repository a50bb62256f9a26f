// SPDX-License-Identifier: GPL-3.0-or-later
// Long runs: counters are 64-bit, packet indices past 2^32 are new random streams, and a hot
// tetra's double tally still takes in the deposits of the last packets of a 1e10-packet run.
#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Kernels/Core/Packet.hpp"
#include "Kernels/Core/TallyScorer.hpp"

using namespace fm;

// Counts and packet indices must not wrap in a 1e10-packet run (2^32 = 4.3e9), and energies are
// double (a float tally stops growing near 2^24 deposits of similar size).
static_assert(std::is_same_v<decltype(RunOptions::packets), uint64_t>);
static_assert(std::is_same_v<decltype(RunOptions::firstPacket), uint64_t>);
static_assert(std::is_same_v<decltype(RunResult::packetsDone), uint64_t>);
static_assert(std::is_same_v<decltype(RunResult::packetsRequested), uint64_t>);
static_assert(std::is_same_v<decltype(Events::launch), uint64_t>);
static_assert(std::is_same_v<decltype(Events::absorb), uint64_t>);
static_assert(std::is_same_v<decltype(Events::boundary), uint64_t>);
static_assert(sizeof(Events) == 12 * sizeof(uint64_t), "every event counter is 64-bit");
static_assert(std::is_same_v<decltype(Ledger::absorbed), double>);
static_assert(std::is_same_v<decltype(RunResult::volume)::value_type, double>);
static_assert(std::is_same_v<decltype(RunResult::surface)::value_type, double>);
static_assert(std::is_same_v<decltype(RunResult::directed)::value_type, double>);

namespace {

struct PlainAdd {
    static void add(double* p, double v) { *p += v; }
};
// The host scorer counts events in 64 bits unless told otherwise.
static_assert(std::is_same_v<decltype(TallyScorer<true, true, true, PlainAdd>::events), Events>);
static_assert(std::is_same_v<decltype(TallyScorer<true, true, true, PlainAdd>::cacheEnergy), double>);

// The CPU kernel's accumulation (a plain double +=, as HostAdd in CpuKernel.cpp) with a long
// double shadow of every slot, which serves as the higher-precision reference.
struct ShadowedAdd {
    static inline const double* base = nullptr;
    static inline std::vector<long double>* shadow = nullptr;
    static inline uint64_t addsToHot = 0;
    static inline uint32_t hot = 0;
    static void add(double* p, double v) {
        *p += v;
        (*shadow)[size_t(p - base)] += v;
        if (p - base == hot) ++addsToHot;
    }
};

// The same accumulation in single precision, to show what the test guards against.
struct FloatAdd {
    static inline const double* base = nullptr;
    static inline std::vector<float>* tally = nullptr;
    static void add(double* p, double v) { (*tally)[size_t(p - base)] += float(v); }
};

struct HotModel {
    TetraMesh mesh = makeBoxMesh({-5, -5, -5}, {5, 5, 5}, 5, 5, 5, [](const Point3&) { return 1u; });
    MaterialSet mats;
    KernelInput in;
    HotModel() {
        mats.exterior(Material(0, 0, 0, 1.0));
        mats.append(Material(0.5, 5, 0.9, 1.4));
        PointSource p;
        p.position = {0.1, 0.2, 0.3};
        in = packModel(mesh, mats, p);
    }
    // Runs packets [0, n) on one thread through the shared packet loop into `volume`.
    template <class Acc>
    void runInto(std::vector<double>& volume, uint64_t n) const {
        TallyScorer<true, false, false, Acc> sc;
        sc.volume = volume.data();
        const ArrayModel m = in.view();
        KernelParams kp;
        for (uint64_t i = 0; i < n; ++i) runPacket(m, kp, i, sc);
        sc.flush();
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(long_runs)

BOOST_AUTO_TEST_CASE(event_counts_widen_without_wrapping) {
    EventCounts<uint32_t> gpuThread;  // the GPU counts per thread in 32 bits, then widens
    gpuThread.absorb = 0xFFFFFFFFu;
    Events total;
    for (int i = 0; i < 4; ++i) total.add(gpuThread);
    BOOST_CHECK_EQUAL(total.absorb, 4 * uint64_t(0xFFFFFFFFu));
    Ledger L;
    L.launched = 1e10;
    L.launched += 1.0;  // whole packet counts stay exact in double up to 2^53
    BOOST_CHECK_EQUAL(L.launched, 10000000001.0);
}

// Packets 2^32 + i must not replay packets i: a 1e10-packet run would otherwise repeat its
// first 4.3e9 packets.
BOOST_FIXTURE_TEST_CASE(packet_indices_past_2_32_are_new_streams, HotModel) {
    RunOptions o;
    o.packets = 2000;
    o.threads = 2;
    RunResult low = runCpu(in, o);
    o.firstPacket = uint64_t(1) << 32;
    RunResult high = runCpu(in, o);
    o.firstPacket = uint64_t(1e10) - o.packets;  // the last packets of a 1e10 run
    RunResult last = runCpu(in, o);
    BOOST_CHECK(low.volume != high.volume);
    BOOST_CHECK(high.volume != last.volume);
    for (const RunResult* r : {&low, &high, &last}) {
        BOOST_CHECK_EQUAL(r->events.launch, 2000u);
        BOOST_CHECK_SMALL(r->ledger.imbalance() / r->ledger.launched, 1e-12);
    }
}

// The tally of the hottest tetra after 1e10 packets holds ~1e10 times a packet's deposit there.
// The last N packets of such a run are simulated for real into a tally preloaded with the
// first 1e10 - N packets' energy (the accumulator's state at that point), through the kernel's
// scorer and accumulation, with a long double shadow as reference. Their deposits must all
// arrive: the increment must match the reference to 1e-6 relative (single precision would
// lose all of it, which the test also shows), and the whole tally to 1e-12.
BOOST_FIXTURE_TEST_CASE(hot_tetra_keeps_precision_at_1e10_packets, HotModel) {
    const uint64_t n = 100000;
    const double total = 1e10;
    // The real multi-threaded kernel first, in 10 batches: the hot tetra, its energy per packet
    // and the statistical error its tally would have after 1e10 packets.
    const int batches = 10;
    std::vector<RunResult> pilots;
    for (int b = 0; b < batches; ++b) {
        RunOptions o;
        o.packets = n / batches;
        o.firstPacket = b * o.packets;
        o.threads = 2;
        pilots.push_back(runCpu(in, o));
    }
    const auto& v0 = pilots[0].volume;
    const uint32_t hot = uint32_t(std::max_element(v0.begin(), v0.end()) - v0.begin());
    double sum = 0, sum2 = 0;
    for (const RunResult& r : pilots) {
        sum += r.volume[hot];
        sum2 += r.volume[hot] * r.volume[hot];
    }
    const double perPacket = sum / double(n);
    const double batchSd = std::sqrt((sum2 - sum * sum / batches) / (batches - 1));
    const double statError = batchSd / (sum / batches) * std::sqrt(double(n / batches) / total);
    BOOST_TEST_MESSAGE("hot tetra " << hot << ": " << perPacket << " of each packet's weight; "
                                    << "relative standard error of its tally after 1e10 packets " << statError);
    const double preload = perPacket * (total - double(n));

    std::vector<double> tally(in.cells.size(), 0.0);
    std::vector<long double> shadow(in.cells.size(), 0.0L);
    tally[hot] = preload;
    shadow[hot] = preload;
    ShadowedAdd::base = tally.data();
    ShadowedAdd::shadow = &shadow;
    ShadowedAdd::hot = hot;
    ShadowedAdd::addsToHot = 0;
    runInto<ShadowedAdd>(tally, n);

    const long double increment = shadow[hot] - (long double)preload;
    const double incrementError = double(std::fabs((long double)(tally[hot] - preload) - increment) / increment);
    const double totalError = double(std::fabs((long double)tally[hot] - shadow[hot]) / shadow[hot]);
    // Each add rounds by at most half an ulp of the tally: the bound for these adds.
    const double bound = ShadowedAdd::addsToHot * 0.5 * std::ldexp(1.0, std::ilogb(tally[hot]) - 52);
    BOOST_TEST_MESSAGE("tally " << tally[hot] << " after " << total << " packets; last " << n << " packets: "
                                << ShadowedAdd::addsToHot << " adds, increment error " << incrementError
                                << " (bound " << bound / double(increment) << "), whole tally error " << totalError);
    BOOST_CHECK_LT(incrementError, 1e-6);
    BOOST_CHECK_LE(double(std::fabs((long double)tally[hot] - shadow[hot])), bound);
    BOOST_CHECK_LT(totalError, 1e-9);
    // Over the whole run every add is bounded by the final tally's half-ulp: the worst case, far
    // below the Monte Carlo error the run has anyway.
    const double runBound = double(ShadowedAdd::addsToHot) / double(n) * total * std::ldexp(1.0, -53);
    BOOST_TEST_MESSAGE("worst-case rounding of the whole 1e10-packet tally " << runBound
                                                                            << " relative (statistical error " << statError << ")");
    BOOST_CHECK_LT(runBound, 0.25 * statError);
    // Same packets from zero: the multi-threaded kernel agrees with this single-thread path.
    BOOST_CHECK_CLOSE(sum, double(increment), 1e-10);

    // In single precision the tally (~1e9) has an ulp of 64 and most deposits vanish.
    std::vector<float> ftally(in.cells.size(), 0.f);
    ftally[hot] = float(preload);
    FloatAdd::base = tally.data();
    FloatAdd::tally = &ftally;
    runInto<FloatAdd>(tally, n);
    const double floatError = std::fabs((double(ftally[hot]) - double(float(preload))) / double(increment) - 1.0);
    BOOST_TEST_MESSAGE("the same in single precision: increment error " << floatError);
    BOOST_CHECK_GT(floatError, 0.1);
}

BOOST_AUTO_TEST_SUITE_END()
