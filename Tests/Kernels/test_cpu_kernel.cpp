// SPDX-License-Identifier: GPL-3.0-or-later
// CPU kernel: ledger closure, thread-count independence, cancel, guards.
#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <cstdlib>
#include <thread>

#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Geometry/Queries.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Kernels/CPU/CpuLanes.hpp"
#include "Kernels/Dispatch.hpp"
#include "Kernels/PacketSource.hpp"
#include "Kernels/Tuning.hpp"

using namespace fm;

namespace {
struct Model {
    TetraMesh mesh = makeBoxMesh({-5, -5, -5}, {5, 5, 5}, 6, 6, 6, [](const Point3& c) {
        return c[0] * c[0] + c[1] * c[1] + c[2] * c[2] < 9 ? 2u : (c[2] > 2 ? 3u : 1u);
    });
    MaterialSet mats;
    Model() {
        mats.exterior(Material(0, 0, 0, 1.0));
        mats.append(Material(0.05, 5, 0.8, 1.4));
        mats.append(Material(0.5, 20, 0.9, 1.37));
        mats.append(Material(0.0, 2, 0.0, 1.33));  // mu_a = 0: fluence undefined there
    }
};
RunOptions options(uint64_t packets, unsigned threads) {
    RunOptions o;
    o.packets = packets;
    o.threads = threads;
    o.params.seed = 17;
    o.outputs.directed = false;
    return o;
}
// The scalar packet loop (advance(), as the GPU runs it) over the packets of runCpu(in, o): the
// lane loop's reference. Tallies in the returned arrays, counts and ledger in the scorer.
// Model: the packed arrays (ArrayModel) unless a variant of them is given.
struct ScalarRun {
    HostTallyScorer<true, true, true> sc;
    std::vector<double> volume, surface, directed;
    ScalarRun(const KernelInput& in, const RunOptions& o) : ScalarRun(in, o, in.view()) {}
    template <class Model>
    ScalarRun(const KernelInput& in, const RunOptions& o, const Model& m)
        : volume(in.cells.size(), 0.0), surface(in.faceCount, 0.0), directed(2 * size_t(in.faceCount), 0.0) {
        sc.volume = volume.data();
        sc.surface = surface.data();
        sc.directed = directed.data();
        for (uint64_t i = 0; i < o.packets; ++i) runPacket(m, o.params, i, sc);
        sc.flush();
    }
};
// Same histories in the lane loop and the scalar loop: equal event counts, tallies equal to
// summation rounding (an output the lane run did not keep is skipped).
void checkSameHistories(const RunResult& lanes, const ScalarRun& ref) {
    const auto& e = ref.sc.events;
    BOOST_CHECK_EQUAL(lanes.events.scatter, e.scatter);
    BOOST_CHECK_EQUAL(lanes.events.boundary, e.boundary);
    BOOST_CHECK_EQUAL(lanes.events.interface, e.interface);
    BOOST_CHECK_EQUAL(lanes.events.refract, e.refract);
    BOOST_CHECK_EQUAL(lanes.events.fresnel, e.fresnel);
    BOOST_CHECK_EQUAL(lanes.events.exit, e.exit);
    BOOST_CHECK_EQUAL(lanes.events.die, e.die);
    auto same = [](const std::vector<double>& a, const std::vector<double>& b) {
        if (a.empty()) return;
        BOOST_REQUIRE_EQUAL(a.size(), b.size());
        for (size_t i = 0; i < a.size(); ++i) BOOST_REQUIRE_SMALL(a[i] - b[i], 1e-12 * (1 + std::fabs(b[i])));
    };
    same(lanes.volume, ref.volume);
    same(lanes.surface, ref.surface);
    same(lanes.directed, ref.directed);
    BOOST_CHECK_CLOSE(lanes.ledger.absorbed, ref.sc.ledger.absorbed, 1e-10);
}
void checkLedger(const Ledger& L, uint64_t packets) {
    BOOST_CHECK_EQUAL(L.launched, double(packets));
    BOOST_CHECK_SMALL(L.imbalance() / L.launched, 1e-12);
}
}  // namespace

BOOST_FIXTURE_TEST_SUITE(cpu_kernel, Model)

BOOST_AUTO_TEST_CASE(ledger_closes_and_tallies_match_ledger) {
    PointSource P;
    P.position = {0.1, 0.2, 0.3};
    KernelInput in = packModel(mesh, mats, P);
    RunResult r = runCpu(in, options(20000, 2));
    checkLedger(r.ledger, 20000);
    double vol = 0, surf = 0;
    for (double e : r.volume) vol += e;
    for (double e : r.surface) surf += e;
    BOOST_CHECK_CLOSE(vol, r.ledger.absorbed, 1e-9);
    BOOST_CHECK_CLOSE(surf, r.ledger.exited, 1e-9);
    BOOST_CHECK_EQUAL(r.ledger.abnormal, 0.0);
    BOOST_CHECK_EQUAL(r.events.launch, 20000u);
    BOOST_CHECK_EQUAL(r.events.exit + r.events.die + r.events.abnormal, 20000u);
    BOOST_CHECK_GT(r.events.fresnel + r.events.tir, 0u);
    // mu_a = 0 region: fluence is undefined (NaN), never inf
    auto phi = volumeFluence(mesh, mats, r.volume, 1.0 / 20000);
    for (uint32_t t = 1; t <= mesh.tetraCount(); ++t) {
        if (mesh.region(t) == 3) BOOST_REQUIRE(std::isnan(phi[t]));
        else BOOST_REQUIRE(std::isfinite(phi[t]));
    }
}

BOOST_AUTO_TEST_CASE(same_seed_same_tallies_any_thread_count) {
    BallSource B;
    B.centre = {0, 0, 0};
    B.radius = 2;
    KernelInput in = packModel(mesh, mats, B);
    RunResult a = runCpu(in, options(6000, 1)), b = runCpu(in, options(6000, 2)),
              c = runCpu(in, options(6000, 3));
    BOOST_REQUIRE_EQUAL(a.volume.size(), b.volume.size());
    for (size_t i = 0; i < a.volume.size(); ++i) {
        BOOST_REQUIRE_SMALL(a.volume[i] - b.volume[i], 1e-12 * (1 + std::fabs(a.volume[i])));
        BOOST_REQUIRE_SMALL(a.volume[i] - c.volume[i], 1e-12 * (1 + std::fabs(a.volume[i])));
    }
    BOOST_CHECK_EQUAL(a.events.scatter, b.events.scatter);
    BOOST_CHECK_EQUAL(a.events.scatter, c.events.scatter);
    // and the same thread count is bit-identical
    RunResult d = runCpu(in, options(6000, 2));
    BOOST_CHECK(d.volume == b.volume);
    // another seed differs
    RunOptions o = options(6000, 2);
    o.params.seed = 18;
    BOOST_CHECK(runCpu(in, o).volume != b.volume);
}

// The CPU kernel runs 32 packets in lockstep (CpuLanes.hpp) through the same Core functions as
// the scalar advance() the GPU uses: every packet must have the same history either way, so
// the tallies agree to summation rounding and the event counts exactly. (The lane loop is
// compiled without contraction; a build whose -march has FMA may contract this scalar loop,
// and then histories part where rounding decides, so only closeness can be asked.)
BOOST_AUTO_TEST_CASE(lane_loop_matches_scalar_packet_loop) {
    PointSource P;
    P.position = {0, 0, 0};
    KernelInput in = packModel(mesh, mats, P);
    RunOptions o = options(4000, 1);
    RunResult lanes = runCpu(in, o);
    const ScalarRun ref(in, o);
    BOOST_TEST_MESSAGE("lane loop: " << cpuLaneIsa());
#if defined(__FMA__)
    const std::vector<double>& vol = ref.volume;
    double d = 0, n = 0;
    for (size_t i = 0; i < vol.size(); ++i) d += std::fabs(lanes.volume[i] - vol[i]), n += std::fabs(vol[i]);
    BOOST_CHECK_LT(d / n, 1e-2);
#else
    checkSameHistories(lanes, ref);
#endif
}

// The AVX2 lane loop and the generic one (RunOptions::tuning.cpuIsa) are compiled without
// contraction from the same Core functions: every packet has the same history in both, so the
// event counts are equal and the tallies equal to summation order. (Where the CPU has no AVX2
// both runs take the generic loop.)
BOOST_AUTO_TEST_CASE(generic_and_avx2_lane_loops_give_the_same_histories) {
    PointSource P;
    P.position = {0, 0, 0};
    KernelInput in = packModel(mesh, mats, P);
    RunOptions o = options(4000, 1);
    const RunResult best = runCpu(in, o);
    o.tuning.cpuIsa = CpuIsa::Generic;
    const RunResult generic = runCpu(in, o);
    BOOST_TEST_MESSAGE("lane loops: " << cpuLaneIsa() << " and " << cpuLaneIsa(CpuIsa::Generic));
    BOOST_CHECK_EQUAL(std::string(cpuLaneIsa(CpuIsa::Generic)), "generic");
    const Events &a = best.events, &b = generic.events;
    for (auto [x, y] : {std::pair{a.launch, b.launch}, {a.absorb, b.absorb}, {a.scatter, b.scatter},
                        {a.boundary, b.boundary}, {a.tir, b.tir}, {a.fresnel, b.fresnel}, {a.refract, b.refract},
                        {a.interface, b.interface}, {a.exit, b.exit}, {a.die, b.die}, {a.win, b.win}})
        BOOST_CHECK_EQUAL(x, y);
    BOOST_REQUIRE_EQUAL(best.volume.size(), generic.volume.size());
    for (size_t i = 0; i < best.volume.size(); ++i)
        BOOST_REQUIRE_SMALL(best.volume[i] - generic.volume[i], 1e-12 * (1 + std::fabs(generic.volume[i])));
    BOOST_CHECK_CLOSE(best.ledger.exited, generic.ledger.exited, 1e-10);
}

// The tuning knobs from the environment (the tools' one reader): defaults where unset, the
// values given, and an error naming the variable for a value it cannot use.
BOOST_AUTO_TEST_CASE(tuning_knobs_from_the_environment) {
    const char* names[] = {"FM_CUDA_BLOCKS_PER_SM", "FM_CUDA_MCML_GROUP_CROSSINGS", "FM_CUDA_MCML_CELL_ROWS",
                           "FM_CUDA_RZ_REPLICAS", "FM_CUDA_RZ_NEAR_COPIES",
                           "FM_CUDA_RZ_NEAR_BINS", "FM_CPU_ISA", "FM_CUDA_GROUP_BLOCKS_PER_SM", "FM_CUDA_DEVICE_RECORD_ORDER"};
    for (const char* n : names) unsetenv(n);
    TuningKnobs t = tuningFromEnvironment();
    BOOST_CHECK_EQUAL(t.cudaBlocksPerSm, 0u);
    BOOST_CHECK(t.mcmlGroupCrossings);
    BOOST_CHECK(t.mcmlCellRows);
    BOOST_CHECK_EQUAL(t.mcmlRzReplicas, 0u);
    BOOST_CHECK_EQUAL(t.mcmlRzNearCopies, 0u);
    BOOST_CHECK_EQUAL(t.mcmlRzNearBins, 0u);
    BOOST_CHECK(t.cpuIsa == CpuIsa::Best);
    BOOST_CHECK_EQUAL(t.cudaGroupBlocksPerSm, 0u);
    BOOST_CHECK(t.cudaDeviceRecordOrder);
    setenv("FM_CUDA_BLOCKS_PER_SM", "3", 1);
    setenv("FM_CUDA_DEVICE_RECORD_ORDER", "0", 1);
    setenv("FM_CUDA_GROUP_BLOCKS_PER_SM", "3", 1);
    setenv("FM_CUDA_MCML_GROUP_CROSSINGS", "0", 1);
    setenv("FM_CUDA_MCML_CELL_ROWS", "0", 1);
    setenv("FM_CUDA_RZ_REPLICAS", "8", 1);
    setenv("FM_CUDA_RZ_NEAR_COPIES", "1", 1);
    setenv("FM_CUDA_RZ_NEAR_BINS", "500", 1);
    setenv("FM_CPU_ISA", "generic", 1);
    t = tuningFromEnvironment();
    BOOST_CHECK_EQUAL(t.cudaBlocksPerSm, 3u);
    BOOST_CHECK(!t.mcmlGroupCrossings);
    BOOST_CHECK(!t.mcmlCellRows);
    BOOST_CHECK_EQUAL(t.mcmlRzReplicas, 8u);
    BOOST_CHECK_EQUAL(t.mcmlRzNearCopies, 1u);
    BOOST_CHECK_EQUAL(t.mcmlRzNearBins, 500u);
    BOOST_CHECK(t.cpuIsa == CpuIsa::Generic);
    BOOST_CHECK_EQUAL(t.cudaGroupBlocksPerSm, 3u);
    BOOST_CHECK(!t.cudaDeviceRecordOrder);
    for (const char* n : names) unsetenv(n);
    auto names_ = [](const char* var) {
        return [var](const ParameterError& e) { return std::string(e.what()).find(var) != std::string::npos; };
    };
    for (auto [var, value] : {std::pair{"FM_CUDA_BLOCKS_PER_SM", "three"}, {"FM_CUDA_BLOCKS_PER_SM", "0"},
                              {"FM_CUDA_MCML_GROUP_CROSSINGS", "off"}, {"FM_CUDA_RZ_REPLICAS", "-2"},
                              {"FM_CUDA_RZ_NEAR_COPIES", "2000"}, {"FM_CUDA_RZ_NEAR_BINS", "0"},
                              {"FM_CPU_ISA", "sse"}, {"FM_CUDA_GROUP_BLOCKS_PER_SM", "2"},
                              {"FM_CUDA_GROUP_BLOCKS_PER_SM", "5"}, {"FM_CUDA_DEVICE_RECORD_ORDER", "host"}}) {
        setenv(var, value, 1);
        BOOST_CHECK_EXCEPTION(tuningFromEnvironment(), ParameterError, names_(var));
        unsetenv(var);
    }
}

// Regions with the same refractive index (a crossing between them is plain but changes the
// material: interface counts) and a directed-tally face (scored: never a plain crossing): the
// lane loop's plainCrossingBits path against the scalar crossFace.
BOOST_AUTO_TEST_CASE(lane_loop_matches_scalar_with_index_matched_regions_and_scored_faces) {
    MaterialSet same;
    same.exterior(Material(0, 0, 0, 1.0));
    same.append(Material(0.05, 5, 0.8, 1.4));
    same.append(Material(0.5, 20, 0.9, 1.4));
    same.append(Material(0.1, 2, 0.0, 1.33));
    std::vector<uint32_t> scored;
    for (uint32_t t = 1; t <= mesh.tetraCount(); t += 7) scored.push_back(mesh.tetraFace(t, 1) & 0x7fffffff);
    PointSource P;
    P.position = {0, 0, 0};
    KernelInput in = packModel(mesh, same, P, scored);
    const std::vector<uint8_t> bits = plainCrossingBits(in);
    size_t materialChanges = 0;
    for (uint8_t b : bits) materialChanges += (b >> 4) != 0;
    BOOST_CHECK_GT(materialChanges, 0u);
    RunOptions o = options(3000, 1);
    o.outputs.directed = true;
    RunResult lanes = runCpu(in, o);
    const ScalarRun ref(in, o);
    BOOST_CHECK_GT(ref.sc.events.interface, 0u);
#if defined(__FMA__)
    BOOST_CHECK_CLOSE(lanes.ledger.absorbed, ref.sc.ledger.absorbed, 1.0);
#else
    checkSameHistories(lanes, ref);
#endif
}

BOOST_AUTO_TEST_CASE(outputs_switch_independently) {
    PointSource P;
    P.position = {0, 0, 0};
    KernelInput in = packModel(mesh, mats, P, {mesh.tetraFace(1, 0) & 0x7fffffff});
    RunOptions o = options(3000, 2);
    o.outputs = {false, true, true};
    RunResult r = runCpu(in, o);
    BOOST_CHECK(r.volume.empty());
    BOOST_CHECK_EQUAL(r.surface.size(), in.faceCount);
    BOOST_CHECK_EQUAL(r.directed.size(), 2 * size_t(in.faceCount));
    RunResult full = runCpu(in, options(3000, 2));
    BOOST_CHECK_EQUAL(r.ledger.absorbed, full.ledger.absorbed);  // same physics either way
}

BOOST_AUTO_TEST_CASE(cancel_stops_early_with_consistent_ledger) {
    PointSource P;
    P.position = {0, 0, 0};
    KernelInput in = packModel(mesh, mats, P);
    std::atomic<bool> cancel{false};
    RunOptions o = options(5000000, 2);
    o.cancel = &cancel;
    std::thread stopper([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        cancel = true;
    });
    auto t0 = std::chrono::steady_clock::now();
    RunResult r = runCpu(in, o);
    stopper.join();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    BOOST_CHECK(r.cancelled);
    BOOST_CHECK_LT(r.packetsDone, o.packets);
    BOOST_CHECK_LT(s, 1.5);
    // The packets in flight when the cancel is seen (at most a lane loop's 32 per thread) are
    // ended there, booked abnormal: launched but not done. The ledger closes.
    BOOST_CHECK_GE(r.ledger.launched, double(r.packetsDone));
    BOOST_CHECK_LE(r.ledger.launched, double(r.packetsDone + 32 * 2));
    BOOST_CHECK_SMALL(r.ledger.imbalance() / r.ledger.launched, 1e-12);
}

// A run whose workers get no packets (a hybrid run's CPU side when the GPUs took every block)
// keeps its tallies' sizes (zeros), gated ones too: the workers allocate their own arrays at
// their first range, and callers add and write these tallies as any others.
BOOST_AUTO_TEST_CASE(workers_without_packets_keep_the_tallies_sizes) {
    PointSource P;
    P.position = {0, 0, 0};
    KernelInput in = packModel(mesh, mats, P);
    struct Nothing : PacketSource {
        bool take(unsigned, uint64_t&, uint64_t&) override { return false; }
    } nothing;
    for (bool gated : {false, true}) {
        RunOptions o = options(100000, 4);
        o.packetSource = &nothing;
        o.outputs.directed = true;
        if (gated) {
            o.gates = makeTimeGates(0, 1, 0.1, "gates");
            o.outputs.gatedVolume = o.outputs.gatedSurface = true;
        }
        const RunResult r = runCpu(in, o);
        BOOST_CHECK_EQUAL(r.packetsDone, 0u);
        BOOST_CHECK_EQUAL(r.volume.size(), in.cells.size());
        BOOST_CHECK_EQUAL(r.surface.size(), size_t(in.faceCount));
        BOOST_CHECK_EQUAL(r.directed.size(), 2 * size_t(in.faceCount));
        if (gated) {
            BOOST_REQUIRE(r.gates.faces);
            BOOST_CHECK_EQUAL(r.gatedVolume.size(), size_t(o.gates.bins()) * in.cells.size());
            BOOST_CHECK_EQUAL(r.gatedSurface.size(), size_t(o.gates.bins()) * r.gates.faces->faces.size());
        }
        BOOST_CHECK_EQUAL(*std::max_element(r.volume.begin(), r.volume.end()), 0.0);
    }
}

// A packet that can never interact (mu_t = 0 everywhere, index-matched) in a closed box with
// total internal reflection on every wall... here: an index step with grazing geometry. The
// guards must end every packet and book it abnormal with the ledger closed.
BOOST_AUTO_TEST_CASE(guards_book_abnormal_and_finish) {
    MaterialSet vac;
    vac.exterior(Material(0, 0, 0, 1.0));
    vac.append(Material(0, 0, 0, 3.0));  // no interactions; TIR traps most directions
    vac.append(Material(0, 0, 0, 3.0));
    vac.append(Material(0, 0, 0, 3.0));
    PointSource P;
    P.position = {0, 0, 0};
    KernelInput in = packModel(mesh, vac, P);
    RunOptions o = options(2000, 2);
    o.params.maxHits = 500;
    RunResult r = runCpu(in, o);
    checkLedger(r.ledger, 2000);
    BOOST_CHECK_GT(r.ledger.abnormal, 0.0);
    BOOST_CHECK_GT(r.events.abnormal, 0u);
    BOOST_CHECK_GT(r.ledger.exited, 0.0);  // those within the escape cone leave
}

BOOST_AUTO_TEST_CASE(bad_parameters_rejected) {
    PointSource P;
    P.position = {0, 0, 0};
    KernelInput in = packModel(mesh, mats, P);
    RunOptions o = options(0, 1);
    BOOST_CHECK_THROW(runKernel("cpu", in, o), ParameterError);
    o = options(10, 1);
    o.params.prwin = 0;
    BOOST_CHECK_THROW(runKernel("cpu", in, o), ParameterError);
    o = options(10, 1);
    BOOST_CHECK_THROW(runKernel("gpu3000", in, o), ParameterError);
    o.packets = uint64_t(1e12) * 1000000;
    BOOST_CHECK_THROW(runKernel("cpu", in, o), ParameterError);
}

// The GPU's mesh model keeps a packet's material index between events instead of reading it
// from the cell at each one (Core/Packet.hpp KeptMaterial): the same packets must have the same
// histories to the bit as with the per-event read, through crossings into other materials.
struct KeepIndexModel : ArrayModel {
    static constexpr int kKeepMaterial = 1;
};
struct KeepAllModel : ArrayModel {
    static constexpr int kKeepMaterial = 2;
};
BOOST_AUTO_TEST_CASE(kept_material_gives_the_same_histories) {
    PointSource P;
    P.position = {0.1, 0.2, 0.3};
    KernelInput in = packModel(mesh, mats, P);
    const RunOptions o = options(4000, 1);
    const ScalarRun ref(in, o);  // ArrayModel: the material read at every event
    auto run = [&](const auto& model) {
        const ScalarRun r(in, o, model);
        BOOST_CHECK(r.volume == ref.volume);
        BOOST_CHECK(r.surface == ref.surface);
        BOOST_CHECK(r.directed == ref.directed);
        BOOST_CHECK_EQUAL(r.sc.events.interface, ref.sc.events.interface);
        BOOST_CHECK_EQUAL(r.sc.events.refract, ref.sc.events.refract);
        BOOST_CHECK_EQUAL(r.sc.events.fresnel + r.sc.events.tir, ref.sc.events.fresnel + ref.sc.events.tir);
        BOOST_CHECK_EQUAL(r.sc.ledger.absorbed, ref.sc.ledger.absorbed);
    };
    BOOST_REQUIRE_GT(ref.sc.events.interface, 1000u);  // packets did change material
    run(KeepIndexModel{in.view()});
    run(KeepAllModel{in.view()});
}

// Tallies replicated as the GPU's are (TallyScorer with an Acc that says kReplicas; plain adds
// here): each flush and exit goes to the replica its position's bits pick, the replicas summed
// give the unreplicated tallies to rounding, and the hot cells' adds are spread over them.
struct ReplicatedAdd {
    static constexpr bool kReplicas = true;
    static void add(double* p, double v) { *p += v; }
};
BOOST_AUTO_TEST_CASE(replicated_tallies_sum_to_the_plain_ones) {
    PointSource P;
    P.position = {0.1, 0.2, 0.3};
    std::vector<uint32_t> scored;  // every third tetra's face 1 for the directed tally
    for (uint32_t t = 1; t <= mesh.tetraCount(); t += 3) scored.push_back(mesh.tetraFace(t, 1) & 0x7fffffff);
    KernelInput in = packModel(mesh, mats, P, scored);
    const RunOptions o = options(4000, 1);
    const ScalarRun ref(in, o);
    const size_t nv = in.cells.size(), ns = in.faceCount, stride = nv + 3 * ns;
    constexpr uint32_t kCopies = 8;
    std::vector<double> t(kCopies * stride, 0.0);
    TallyScorer<true, true, true, ReplicatedAdd> sc;
    sc.volume = t.data();
    sc.surface = t.data() + nv;
    sc.directed = t.data() + nv + ns;
    sc.setReplicas(kCopies - 1, uint32_t(stride));
    const ArrayModel m = in.view();
    for (uint64_t i = 0; i < o.packets; ++i) runPacket(m, o.params, i, sc);
    sc.flush();
    BOOST_CHECK_EQUAL(sc.events.absorb, ref.sc.events.absorb);
    auto sum = [&](size_t i) {
        double v = 0;
        for (uint32_t c = 0; c < kCopies; ++c) v += t[c * stride + i];
        return v;
    };
    for (size_t i = 0; i < nv; ++i) BOOST_REQUIRE_SMALL(sum(i) - ref.volume[i], 1e-12 * (1 + ref.volume[i]));
    for (size_t f = 0; f < ns; ++f) BOOST_REQUIRE_SMALL(sum(nv + f) - ref.surface[f], 1e-12 * (1 + ref.surface[f]));
    double directed = 0;
    for (size_t k = 0; k < 2 * ns; ++k) {
        BOOST_REQUIRE_SMALL(sum(nv + ns + k) - ref.directed[k], 1e-12 * (1 + ref.directed[k]));
        directed += ref.directed[k];
    }
    BOOST_CHECK_GT(directed, 0.0);
    // The directed adds, too, went into more than the first replica.
    size_t beyondFirst = 0;
    for (uint32_t c = 1; c < kCopies; ++c)
        for (size_t k = 0; k < 2 * ns; ++k) beyondFirst += t[c * stride + nv + ns + k] > 0.0;
    BOOST_CHECK_GT(beyondFirst, 0u);
    // The source's cell, the hottest, took adds in every replica.
    const size_t hot = size_t(std::max_element(ref.volume.begin(), ref.volume.end()) - ref.volume.begin());
    for (uint32_t c = 0; c < kCopies; ++c) BOOST_CHECK_GT(t[c * stride + hot], 0.0);
    // Without kReplicas (the CPU's adds) the offsets are zero: everything in the first replica.
    const TallyReplicas replicas{kCopies - 1, uint32_t(stride)};
    BOOST_CHECK_EQUAL(replicas.offset<HostAdd>(Vec3{1.2345f, -0.5f, 3.f}), 0u);
}

BOOST_AUTO_TEST_SUITE_END()
