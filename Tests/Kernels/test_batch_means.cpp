// SPDX-License-Identifier: GPL-3.0-or-later
// Batch-means standard errors of the tallies (Kernels/BatchMeans.hpp): they match the spread of
// the tallies over seeds, scale as 1/sqrt(packets), leave the totals as an unbatched run gives
// them (to rounding), are absent with one batch, and a bad batch count is a parameter error.
#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <vector>

#include "Common/Errors.hpp"
#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/BatchMeans.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Kernels/Dispatch.hpp"
#include "Storage/MCML/MCMLKernelRun.hpp"
#include "Geometry/Layered.hpp"

using namespace fm;

namespace {
struct Model {
    TetraMesh mesh = makeBoxMesh({-5, -5, -5}, {5, 5, 5}, 5, 5, 5, [](const Point3& c) {
        return c[0] * c[0] + c[1] * c[1] + c[2] * c[2] < 9 ? 2u : 1u;
    });
    MaterialSet mats;
    KernelInput in;
    Model() {
        mats.exterior(Material(0, 0, 0, 1.0));
        mats.append(Material(0.1, 3, 0.8, 1.4));
        mats.append(Material(0.3, 6, 0.9, 1.37));
        BallSource B;
        B.centre = {0, 0, 1};
        B.radius = 1.5;
        in = packModel(mesh, mats, B);
    }
};
RunOptions options(uint64_t packets, uint64_t batches, uint64_t seed = 17, unsigned threads = 2) {
    RunOptions o;
    o.packets = packets;
    o.batches = batches;
    o.threads = threads;
    o.params.seed = seed;
    return o;
}
double sq(double x) { return x * x; }
}  // namespace

BOOST_FIXTURE_TEST_SUITE(batch_means, Model)

// Over 20 seeds, the sample variance of a tally s^2 has (n-1) s^2 / sigma^2 ~ chi^2(19); each
// seed's reported variance has 9 degrees of freedom (10 batches), so their mean over the seeds
// has 180, and the ratio r = s^2 / mean(SE^2) is F(19, 180): mean 1.01, variance 0.117. Pooled
// over K tallies, R = mean r has variance 0.117 (1 + (K-1) rho) / K, rho the mean correlation
// of the ratios; for K = 24 tetras chosen far apart (rho < 0.1) and the absorbed-energy ledger,
// sd(R) < 0.11, so sqrt(R) within 20% of 1 (R in [0.64, 1.44]) fails with probability < 1e-3.
// Each tally alone must also lie within the F(19, 180) 0.9999 bounds, [0.25, 2.6].
BOOST_AUTO_TEST_CASE(spread_over_seeds_matches_the_reported_error) {
    const int seeds = 20;
    const uint64_t packets = 20000;
    std::vector<RunResult> runs;
    for (int s = 0; s < seeds; ++s) runs.push_back(runCpu(in, options(packets, 10, 1000 + s)));
    // Tallies: the absorbed energy, and the tetras every 1/24th of the way down the energy-sorted
    // list of those with at least 1% of the top tetra's energy (spread over the model).
    std::vector<size_t> order;
    for (size_t t = 1; t < runs[0].volume.size(); ++t)
        if (runs[0].volume[t] > 0.01 * *std::max_element(runs[0].volume.begin(), runs[0].volume.end()))
            order.push_back(t);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return runs[0].volume[a] > runs[0].volume[b]; });
    BOOST_REQUIRE_GE(order.size(), 48u);
    std::vector<std::function<double(const RunResult&, bool)>> tallies;
    tallies.push_back([](const RunResult& r, bool se) { return se ? r.standardError.ledger.absorbed : r.ledger.absorbed; });
    for (size_t k = 0; k < 24; ++k) {
        const size_t t = order[k * order.size() / 24];
        tallies.push_back([t](const RunResult& r, bool se) { return se ? r.standardError.volume[t] : r.volume[t]; });
    }
    double R = 0;
    for (auto& f : tallies) {
        double m = 0, v = 0, se2 = 0;
        for (auto& r : runs) {
            BOOST_REQUIRE(r.standardError.available());
            BOOST_REQUIRE_EQUAL(r.standardError.batches, 10u);
            m += f(r, false) / seeds;
            se2 += sq(f(r, true)) / seeds;
        }
        for (auto& r : runs) v += sq(f(r, false) - m) / (seeds - 1);
        const double ratio = v / se2;
        BOOST_CHECK_MESSAGE(ratio > 0.25 && ratio < 2.6, "spread^2 / SE^2 = " << ratio);
        R += ratio / double(tallies.size());
    }
    BOOST_TEST_MESSAGE("pooled spread / standard error = " << std::sqrt(R));
    BOOST_CHECK_GT(std::sqrt(R), 0.8);
    BOOST_CHECK_LT(std::sqrt(R), 1.2);
    // Every batch launches exactly its packets: no spread in the launched weight.
    BOOST_CHECK_SMALL(runs[0].standardError.ledger.launched, 1e-9 * packets);
}

// Four times the packets halve the standard error. The energy-weighted mean relative error
// over the tetras (sum SE / sum E) averages hundreds of estimates of 19 degrees of freedom
// each (20 batches; sd of one about 16%), so its ratio is known to a few percent: 10% is over
// 3 sd even if the tetras' estimates were correlated by 0.3.
BOOST_AUTO_TEST_CASE(error_scales_as_one_over_sqrt_packets) {
    auto relative = [&](uint64_t n) {
        RunResult r = runCpu(in, options(n, 20, 5));
        double se = 0, e = 0;
        for (size_t t = 1; t < r.volume.size(); ++t) {
            se += r.standardError.volume[t];
            e += r.volume[t];
        }
        return se / e;
    };
    const double ratio = relative(10000) / relative(40000);
    BOOST_TEST_MESSAGE("relative error ratio for 4x packets = " << ratio);
    BOOST_CHECK_CLOSE(ratio, 2.0, 10.0);
}

// The batched run books the same packets; only where its lanes drain (at batch ends) does the
// order of the additions into a tally change. For n non-negative terms any summation order
// is within (n - 1) u of the exact sum (u = 2^-53, relative), so the two runs differ by at
// most 2 (n - 1) u times the tally, n at most the deposits of the run plus the thread count.
BOOST_AUTO_TEST_CASE(totals_equal_an_unbatched_run_within_rounding) {
    const RunResult a = runCpu(in, options(20000, 1)), b = runCpu(in, options(20000, 16));
    BOOST_CHECK(!a.standardError.available());
    BOOST_CHECK(b.standardError.available());
    BOOST_CHECK_EQUAL(a.events.absorb, b.events.absorb);
    BOOST_CHECK_EQUAL(a.events.scatter, b.events.scatter);
    BOOST_CHECK_EQUAL(a.events.exit, b.events.exit);
    const double u = std::numeric_limits<double>::epsilon() / 2;
    const double n = double(a.events.absorb + a.events.launch + 2);
    bool differs = false;
    for (size_t t = 0; t < a.volume.size(); ++t) {
        BOOST_REQUIRE_LE(std::fabs(a.volume[t] - b.volume[t]), 2 * n * u * std::max(a.volume[t], b.volume[t]));
        differs = differs || a.volume[t] != b.volume[t];
    }
    for (size_t f = 0; f < a.surface.size(); ++f)
        BOOST_REQUIRE_LE(std::fabs(a.surface[f] - b.surface[f]), 2 * n * u * std::max(a.surface[f], b.surface[f]));
    BOOST_CHECK_LE(std::fabs(a.ledger.absorbed - b.ledger.absorbed), 2 * n * u * a.ledger.absorbed);
    BOOST_TEST_MESSAGE("batched totals " << (differs ? "differ from" : "equal") << " the unbatched ones bit for bit");
    // The same batches again: bit for bit.
    const RunResult c = runCpu(in, options(20000, 16));
    BOOST_CHECK(c.volume == b.volume);
    BOOST_CHECK(c.standardError.volume == b.standardError.volume);
}

// B = 1: no estimate at all (not zeros); the default (0) is kDefaultBatches, at most one per packet.
BOOST_AUTO_TEST_CASE(one_batch_gives_no_error_and_the_default_batches) {
    const RunResult one = runKernel("cpu", in, options(2000, 1));
    BOOST_CHECK(!one.standardError.available());
    BOOST_CHECK_EQUAL(one.standardError.batches, 0u);
    BOOST_CHECK(one.standardError.volume.empty());
    const RunResult def = runKernel("cpu", in, options(2000, 0));
    BOOST_CHECK_EQUAL(def.standardError.batches, kDefaultBatches);
    BOOST_CHECK_EQUAL(def.standardError.volume.size(), def.volume.size());
    // More threads than batches: one batch per thread.
    BOOST_CHECK_EQUAL(runKernel("cpu", in, options(2000, 2, 3, 4)).standardError.batches, 4u);
    RunOptions tiny = options(3, 0);
    BOOST_CHECK_EQUAL(effectiveBatches(tiny), 3u);
    // The GPU's default: batches only where each holds kGpuPacketsPerDefaultBatch packets.
    RunOptions gpu = options(kDefaultBatches * kGpuPacketsPerDefaultBatch - 1, 0);
    BOOST_CHECK_EQUAL(effectiveBatches(gpu, true), 1u);
    gpu.packets += 1;
    BOOST_CHECK_EQUAL(effectiveBatches(gpu, true), kDefaultBatches);
    gpu.batches = 4;  // asked for: always honoured
    BOOST_CHECK_EQUAL(effectiveBatches(gpu, true), 4u);
    tiny.batches = 3;
    BOOST_CHECK_EQUAL(effectiveBatches(tiny, true), 3u);
}

// BatchFold: q is the sum over batches of the squared increments over the batch's packets,
// whether the previous tally is kept between folds or a fold is the last (it then keeps none);
// a fold after the one marked final is a logic error, never a read of a freed copy.
BOOST_AUTO_TEST_CASE(batch_fold_increments_and_the_final_fold) {
    const std::vector<std::vector<double>> tallies = {{1, 2, 0}, {4, 2, 1}, {4, 7, 3}};
    const uint64_t packets[] = {10, 20, 40};
    std::vector<double> want(3, 0.0), prev(3, 0.0);
    for (size_t b = 0; b < 3; ++b)
        for (size_t i = 0; i < 3; ++i) {
            const double x = tallies[b][i] - prev[i];
            want[i] += x * x / double(packets[b]);
            prev[i] = tallies[b][i];
        }
    for (bool lastFinal : {false, true}) {
        BatchFold f;
        f.reset(3);
        for (size_t b = 0; b < 3; ++b) f.fold(tallies[b].data(), packets[b], lastFinal && b == 2);
        for (size_t i = 0; i < 3; ++i) BOOST_TEST(f.q()[i] == want[i], boost::test_tools::tolerance(1e-15));
        if (lastFinal) BOOST_CHECK_THROW(f.fold(tallies[2].data(), 1), std::logic_error);
    }
    BatchFold one;  // a worker's only batch: first and final
    one.reset(3);
    one.fold(tallies[0].data(), 10, true);
    for (size_t i = 0; i < 3; ++i) BOOST_TEST(one.q()[i] == tallies[0][i] * tallies[0][i] / 10.0, boost::test_tools::tolerance(1e-15));
    one.reset(3);  // a reset starts over
    one.fold(tallies[1].data(), 20);
    BOOST_TEST(one.q()[0] == 16.0 / 20.0, boost::test_tools::tolerance(1e-15));
}

BOOST_AUTO_TEST_CASE(bad_batch_counts_are_parameter_errors) {
    BOOST_CHECK_THROW(runKernel("cpu", in, options(100, 101)), ParameterError);
    BOOST_CHECK_THROW(validateBatches(0, 100), ParameterError);
    for (const char* bad : {"0", "2.5", "-3", "ten", "", "1e3", "99999999999999999999999"})
        BOOST_CHECK_THROW(parseBatches(bad), ParameterError);
    BOOST_CHECK_EQUAL(parseBatches("12"), 12u);
    try {
        runKernel("cpu", in, options(100, 101));
    } catch (const ParameterError& e) {
        BOOST_CHECK(std::string(e.what()).find("batches") != std::string::npos);
    }
}

// Independent parts (a split run, MPI ranks): variances add.
BOOST_AUTO_TEST_CASE(independent_parts_add_variances) {
    TallyErrors a, b;
    a.batches = 10;
    a.volume = {3.0};
    b.batches = 10;
    b.volume = {4.0};
    TallyErrors s;
    addIndependentErrors(s, a, true);
    addIndependentErrors(s, b, false);
    BOOST_CHECK_EQUAL(s.batches, 20u);
    BOOST_CHECK_CLOSE(s.volume[0], 5.0, 1e-12);
    addIndependentErrors(s, TallyErrors{}, false);
    BOOST_CHECK(!s.available());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(batch_means_mcml)

// MCML: every output's standard error from batched runs. Over 20 seeds the spread of Rd, A, Tt,
// two Rd_r rings and an A_rz bin matches the reported error, pooled as above. These 6 tallies
// share their photons (Rd, A and Tt correlate by up to about 0.5, so their ratios r by 0.25):
// var(R) <= 0.117 (1 + 5 * 0.25) / 6, sd(R) <= 0.21, and sqrt(R) within 35% of 1 (R in
// [0.42, 1.82], 2.8 sd) fails with probability < 0.3%; each tally also within the F(19, 180)
// 0.9999 bounds. The error of the analytic Rsp is 0; B = 1 gives none.
namespace {
MCMLRun slabRun() {
    MCMLRun r;
    r.outName = "slab.mco";
    r.photons = 4000;
    r.dz = 0.01;
    r.dr = 0.01;
    r.nz = 20;
    r.nr = 20;
    r.na = 3;
    r.nAbove = 1.0;
    r.nBelow = 1.0;
    r.layers = {{1.37, 1, 100, 0.9, 0.1}};
    return r;
}
}  // namespace

BOOST_AUTO_TEST_CASE(mcml_errors_match_the_spread_over_seeds) {
    const MCMLRun run = slabRun();
    const LayeredModel model = layeredFromMcml(run);
    std::vector<MCMLResult> res;
    for (int s = 0; s < 20; ++s) {
        RunOptions o = mcmlRunOptions(run);
        o.threads = 2;
        o.params.seed = 300 + s;
        o.batches = 10;
        res.push_back(runMcml("cpu", model, run, o));
        BOOST_REQUIRE(res.back().standardError);
        BOOST_REQUIRE_EQUAL(res.back().batches, 10u);
    }
    using Pick = std::function<double(const MCMLResult&)>;
    const std::vector<Pick> tallies = {[](const MCMLResult& r) { return r.Rd; },
                                       [](const MCMLResult& r) { return r.A; },
                                       [](const MCMLResult& r) { return r.Tt; },
                                       [](const MCMLResult& r) { return r.Rd_r[1]; },
                                       [](const MCMLResult& r) { return r.Rd_r[4]; },
                                       [](const MCMLResult& r) { return r.A_rz[0]; }};
    double R = 0;
    for (const Pick& f : tallies) {
        double m = 0, v = 0, se2 = 0;
        for (auto& r : res) {
            m += f(r) / 20;
            se2 += sq(f(*r.standardError)) / 20;
        }
        for (auto& r : res) v += sq(f(r) - m) / 19;
        BOOST_CHECK_MESSAGE(v / se2 > 0.25 && v / se2 < 2.6, "spread^2 / SE^2 = " << v / se2);
        R += v / se2 / double(tallies.size());
    }
    BOOST_TEST_MESSAGE("MCML pooled spread / standard error = " << std::sqrt(R));
    BOOST_CHECK(std::sqrt(R) > 0.65 && std::sqrt(R) < 1.35);
    BOOST_CHECK_EQUAL(res[0].standardError->Rsp, 0.0);
    RunOptions one = mcmlRunOptions(run);
    one.batches = 1;
    BOOST_CHECK(!runMcml("cpu", model, run, one).standardError);
    one.batches = run.photons + 1;
    BOOST_CHECK_THROW(runMcml("cpu", model, run, one), ParameterError);
}

BOOST_AUTO_TEST_SUITE_END()
