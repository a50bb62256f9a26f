// SPDX-License-Identifier: GPL-3.0-or-later
// Packet traces (TetraTraceKernel's engine, Kernels/CPU/TraceCpu): the path each packet takes is
// geometrically and physically consistent with the mesh, the materials and the tallies of the
// same run, and tracing changes nothing in the physics.
#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <cmath>

#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Kernels/CPU/TraceCpu.hpp"

using namespace fm;

namespace {

// Two regions (a sphere in a box). `n2` is region 2's index: equal to region 1's, packets go
// straight through the interface, so a path bends only where it scatters or hits the boundary.
struct TraceModel {
    TetraMesh mesh = makeBoxMesh({-4, -4, -4}, {4, 4, 4}, 5, 5, 5, [](const Point3& c) {
        return c[0] * c[0] + c[1] * c[1] + c[2] * c[2] < 4 ? 2u : 1u;
    });
    MaterialSet mats;
    PointSource src;
    explicit TraceModel(double n2 = 1.4) {
        mats.exterior(Material(0, 0, 0, 1.0));
        mats.append(Material(0.05, 2, 0.8, 1.4));
        mats.append(Material(0.3, 4, 0.9, n2));
        src.position = {0.3, -0.2, 0.1};
    }
    RunOptions options(uint64_t packets, unsigned threads = 2) const {
        RunOptions o;
        o.packets = packets;
        o.threads = threads;
        o.params.seed = 11;
        o.params.wmin = 0.05f;  // roulette often, so wins and deaths appear in a few packets
        o.outputs.volume = o.outputs.surface = true;
        o.outputs.directed = false;
        return o;
    }
};

Point3 pos(const TraceStep& s) { return {s.pos[0], s.pos[1], s.pos[2]}; }
double distance(const Point3& a, const Point3& b) { return normP(sub(a, b)); }

bool adjacent(const TetraMesh& m, uint32_t a, uint32_t b) {
    if (a == b) return true;
    for (int i = 0; i < 4; ++i)
        if (m.neighbour(a, i) == b) return true;
    return false;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(packet_traces)

BOOST_AUTO_TEST_CASE(one_trace_per_packet_starting_at_the_source) {
    TraceModel M;
    KernelInput in = packModel(M.mesh, M.mats, M.src);
    TracedRunResult r = runCpuTraced(in, M.options(300));
    const TraceSet& T = r.traces;
    BOOST_REQUIRE_EQUAL(T.traceCount(), 300u);
    BOOST_CHECK_EQUAL(T.first.back(), T.steps.size());
    const uint32_t t0 = M.mesh.locate(M.src.position);
    for (size_t i = 0; i < T.traceCount(); ++i) {
        BOOST_REQUIRE_GE(T.length(i), 2u);  // launch and at least the end
        const TraceStep& s = T.step(i, 0);
        BOOST_CHECK_EQUAL(int(s.event), int(kTraceLaunch));
        BOOST_CHECK_SMALL(distance(pos(s), M.src.position), 1e-6);
        BOOST_CHECK_EQUAL(s.tetra, t0);
        BOOST_CHECK_EQUAL(s.w, 1.0f);
        const uint8_t end = T.step(i, T.length(i) - 1).event;
        BOOST_CHECK(end == kTraceExit || end == kTraceRouletteDeath);  // nothing abnormal here
        for (size_t j = 1; j + 1 < T.length(i); ++j) {
            uint8_t e = T.step(i, j).event;
            BOOST_CHECK(e != kTraceLaunch && e != kTraceExit && e != kTraceRouletteDeath && e != kTraceAbnormal);
        }
    }
}

BOOST_AUTO_TEST_CASE(consecutive_points_lie_in_one_tetra_or_across_a_face) {
    TraceModel M;
    KernelInput in = packModel(M.mesh, M.mats, M.src);
    TracedRunResult r = runCpuTraced(in, M.options(200));
    const TraceSet& T = r.traces;
    size_t crossings = 0, interactions = 0;
    for (size_t i = 0; i < T.traceCount(); ++i)
        for (size_t j = 1; j < T.length(i); ++j) {
            const TraceStep &a = T.step(i, j - 1), &b = T.step(i, j);
            // The segment a-b runs inside a's tetra (convex: both ends in its closure).
            BOOST_REQUIRE_MESSAGE(M.mesh.contains(a.tetra, pos(b), 1e-5),
                                  "trace " << i << " step " << j << " leaves tetra " << a.tetra);
            BOOST_REQUIRE(adjacent(M.mesh, a.tetra, b.tetra));
            BOOST_CHECK_EQUAL(b.material, M.mesh.region(b.tetra));
            if (b.event == kTraceCross) {
                ++crossings;
                BOOST_CHECK_NE(a.tetra, b.tetra);
                BOOST_CHECK(M.mesh.contains(b.tetra, pos(b), 1e-5));  // on the shared face
            } else {
                BOOST_CHECK_EQUAL(a.tetra, b.tetra);  // interactions, reflections, exit: same tetra
            }
            if (b.event == kTraceScatter) ++interactions;
            // Lengths: the step is the segment, path and time of flight accumulate it.
            const double len = distance(pos(a), pos(b));
            BOOST_CHECK_SMALL(b.step - len, 1e-4);
            BOOST_CHECK_CLOSE(double(b.path), a.path + len, 1e-3);
            const double n = M.mats.material(a.material).n;
            BOOST_CHECK_SMALL(b.time - (a.time + len * n / kLightSpeedMmPerNs), 1e-5 + 1e-5 * b.time);
        }
    BOOST_TEST_MESSAGE(crossings << " crossings, " << interactions << " interactions");
    BOOST_CHECK_GT(crossings, 1000u);
    BOOST_CHECK_GT(interactions, 1000u);
}

BOOST_AUTO_TEST_CASE(paths_are_straight_between_interactions_when_n_matches) {
    TraceModel M(1.4);  // both regions n = 1.4: the sphere's surface does not bend paths
    KernelInput in = packModel(M.mesh, M.mats, M.src);
    TracedRunResult r = runCpuTraced(in, M.options(200));
    const TraceSet& T = r.traces;
    size_t checked = 0;
    for (size_t i = 0; i < T.traceCount(); ++i)
        for (size_t j = 1; j + 1 < T.length(i); ++j) {
            if (T.step(i, j).event != kTraceCross) continue;
            Point3 u = sub(pos(T.step(i, j)), pos(T.step(i, j - 1)));
            Point3 v = sub(pos(T.step(i, j + 1)), pos(T.step(i, j)));
            double lu = normP(u), lv = normP(v);
            if (lu < 1e-3 || lv < 1e-3) continue;  // float positions: direction too short to measure
            BOOST_CHECK_SMALL(normP(crossP(u, v)) / (lu * lv), 2e-3);
            BOOST_CHECK_GT(dotP(u, v), 0.0);
            ++checked;
        }
    BOOST_CHECK_GT(checked, 500u);
}

BOOST_AUTO_TEST_CASE(refraction_bends_paths_where_n_changes) {
    TraceModel M(1.0);  // region 2 at n = 1.0: paths into the sphere bend (or reflect)
    KernelInput in = packModel(M.mesh, M.mats, M.src);
    TracedRunResult r = runCpuTraced(in, M.options(200));
    const TraceSet& T = r.traces;
    size_t bent = 0, reflections = 0;
    for (size_t i = 0; i < T.traceCount(); ++i)
        for (size_t j = 1; j + 1 < T.length(i); ++j) {
            const TraceStep &a = T.step(i, j - 1), &b = T.step(i, j), &c = T.step(i, j + 1);
            if (b.event == kTraceReflect) ++reflections;
            if (b.event != kTraceCross || a.material == c.material) continue;
            Point3 u = sub(pos(b), pos(a)), v = sub(pos(c), pos(b));
            if (normP(u) > 1e-3 && normP(v) > 1e-3 && normP(crossP(u, v)) / (normP(u) * normP(v)) > 1e-2) ++bent;
        }
    BOOST_CHECK_GT(bent, 10u);
    BOOST_CHECK_GT(reflections, 10u);
}

BOOST_AUTO_TEST_CASE(weights_drop_by_the_albedo_and_rise_only_at_roulette) {
    TraceModel M;
    KernelInput in = packModel(M.mesh, M.mats, M.src);
    RunOptions opt = M.options(300);
    opt.params.wmin = 0.5f;  // roulette after ~30 interactions: wins and deaths in every run
    TracedRunResult r = runCpuTraced(in, opt);
    const TraceSet& T = r.traces;
    size_t wins = 0, deaths = 0;
    for (size_t i = 0; i < T.traceCount(); ++i)
        for (size_t j = 1; j < T.length(i); ++j) {
            const TraceStep &a = T.step(i, j - 1), &b = T.step(i, j);
            const Material& mat = M.mats.material(a.material);
            const double kept = 1 - mat.mu_a / (mat.mu_a + mat.mu_s);
            switch (b.event) {
                case kTraceScatter:
                    BOOST_CHECK_CLOSE(double(b.w), a.w * kept, 1e-4);
                    BOOST_CHECK_GE(b.w, opt.params.wmin);
                    break;
                case kTraceRouletteWin:
                    ++wins;
                    BOOST_CHECK_CLOSE(double(b.w), a.w * kept / opt.params.prwin, 1e-4);
                    BOOST_CHECK_GT(b.w, a.w);
                    break;
                case kTraceRouletteDeath:
                    ++deaths;
                    BOOST_CHECK_LT(a.w * kept, opt.params.wmin);
                    BOOST_CHECK_EQUAL(b.w, 0.0f);
                    break;
                default:  // crossing, reflection, exit: weight unchanged
                    BOOST_CHECK_EQUAL(b.w, a.w);
            }
        }
    BOOST_TEST_MESSAGE(wins << " roulette wins, " << deaths << " deaths");
    BOOST_CHECK_GT(wins, 5u);
    BOOST_CHECK_GT(deaths, 50u);
}

BOOST_AUTO_TEST_CASE(traces_agree_with_the_ledger_and_the_untraced_run) {
    TraceModel M;
    KernelInput in = packModel(M.mesh, M.mats, M.src);
    RunOptions opt = M.options(2000);
    TracedRunResult tr = runCpuTraced(in, opt);
    const TraceSet& T = tr.traces;
    // Exit weights of the traces are the exited weight of the ledger; ends are the event counts.
    double exitW = 0;
    uint64_t exits = 0, deaths = 0, scatters = 0;
    for (size_t i = 0; i < T.traceCount(); ++i) {
        const TraceStep& e = T.step(i, T.length(i) - 1);
        if (e.event == kTraceExit) exitW += e.w, ++exits;
        if (e.event == kTraceRouletteDeath) ++deaths;
        for (size_t j = 0; j < T.length(i); ++j)
            if (T.step(i, j).event == kTraceScatter || T.step(i, j).event == kTraceRouletteWin) ++scatters;
    }
    BOOST_CHECK_CLOSE(exitW, tr.run.ledger.exited, 1e-6);
    BOOST_CHECK_EQUAL(exits, tr.run.events.exit);
    BOOST_CHECK_EQUAL(deaths, tr.run.events.die);
    BOOST_CHECK_EQUAL(scatters, tr.run.events.scatter);
    BOOST_CHECK_SMALL(tr.run.ledger.imbalance(), 1e-9);
    // Same packets and streams as the ordinary kernel: identical tallies.
    RunResult plain = runCpu(in, opt);
    BOOST_REQUIRE_EQUAL(plain.volume.size(), tr.run.volume.size());
    for (size_t t = 0; t < plain.volume.size(); ++t)
        BOOST_REQUIRE_SMALL(plain.volume[t] - tr.run.volume[t], 1e-12 * (1 + plain.volume[t]));
    for (size_t f = 0; f < plain.surface.size(); ++f)
        BOOST_REQUIRE_SMALL(plain.surface[f] - tr.run.surface[f], 1e-12 * (1 + plain.surface[f]));
    BOOST_CHECK_EQUAL(plain.events.boundary, tr.run.events.boundary);
}

BOOST_AUTO_TEST_CASE(same_traces_at_any_thread_count) {
    TraceModel M;
    KernelInput in = packModel(M.mesh, M.mats, M.src);
    TracedRunResult a = runCpuTraced(in, M.options(100, 1)), b = runCpuTraced(in, M.options(100, 3));
    BOOST_REQUIRE_EQUAL(a.traces.steps.size(), b.traces.steps.size());
    BOOST_REQUIRE(a.traces.first == b.traces.first);
    for (size_t k = 0; k < a.traces.steps.size(); ++k) {
        BOOST_REQUIRE_EQUAL(a.traces.steps[k].pos[0], b.traces.steps[k].pos[0]);
        BOOST_REQUIRE_EQUAL(a.traces.steps[k].w, b.traces.steps[k].w);
        BOOST_REQUIRE_EQUAL(a.traces.steps[k].tetra, b.traces.steps[k].tetra);
    }
}

BOOST_AUTO_TEST_CASE(too_many_points_is_an_error_not_an_allocation) {
    TraceModel M;
    KernelInput in = packModel(M.mesh, M.mats, M.src);
    BOOST_CHECK_THROW(runCpuTraced(in, M.options(1000), 500), ParameterError);
}

BOOST_AUTO_TEST_SUITE_END()
