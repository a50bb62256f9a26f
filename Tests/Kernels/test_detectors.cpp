// SPDX-License-Identifier: GPL-3.0-or-later
// Surface detectors: detected-packet records, their reweighting to other mu_a, the detector
// TPSF, the replay of detected packets and the mu_a Jacobian, and bad detector input.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <functional>
#include <map>
#include <numeric>

#include "Common/Errors.hpp"
#include "Geometry/Detectors.hpp"
#include "Geometry/MaterialSet.hpp"
#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/CPU/CpuLanes.hpp"
#include "Kernels/Core/Tally.hpp"
#include "Kernels/Detection.hpp"
#include "Storage/Detected/DetectedFile.hpp"
#include "Storage/Detected/MchFile.hpp"
#include "Tests/TestUtil.hpp"

namespace {

// A 20 x 20 x 10 mm block of two layers (region 1 above z = 3 mm, region 2 below), a pencil
// beam into the top face at the origin, and two disk detectors on the top face.
struct DetectorModel {
    fm::TetraMesh mesh;
    fm::PencilBeamSource beam;
    DetectorModel()
        : mesh(fm::makeBoxMesh({-10, -10, 0}, {10, 10, 10}, 8, 8, 5,
                               [](const fm::Point3& c) { return c[2] < 3 ? 1u : 2u; })) {
        beam.position = {0, 0, 0};
        beam.direction = {0, 0, 1};
    }
    fm::MaterialSet materials(double mua1, double mua2) const {
        fm::MaterialSet m;
        m.exterior(fm::Material(0, 0, 0, 1.0));
        m.append(fm::Material(mua1, 5, 0.8, 1.4));
        m.append(fm::Material(mua2, 10, 0.9, 1.4));
        return m;
    }
    fm::KernelInput input(double mua1, double mua2) const { return fm::packModel(mesh, materials(mua1, mua2), beam); }
    fm::DetectionSpec spec(uint64_t maxRecords = 1000000) const {
        fm::Detector near, far;
        near.centre = {3, 0, 0};
        near.radius = 1.5;
        far.centre = {0, -6, 0};
        far.radius = 2;
        return fm::compileDetectors(mesh, {near, far}, maxRecords);
    }
};

fm::RunOptions options(uint64_t packets, uint64_t seed, const fm::DetectionSpec* spec) {
    fm::RunOptions o;
    o.packets = packets;
    o.params.seed = seed;
    o.threads = 2;
    o.detection = spec;
    return o;
}

// The detected signal of detector d (sum of weights over launched packets) and its variance:
// each packet contributes x_i (its detected weight, 0 if undetected), var(sum) = N var(x)
// estimated as sum x^2 - (sum x)^2 / N.
struct Signal {
    double sum = 0, var = 0;
};
Signal signalOf(const fm::DetectedPackets& dp, uint32_t d, const std::vector<double>& w) {
    Signal s;
    double s2 = 0;
    for (size_t k = 0; k < dp.records.size(); ++k)
        if (dp.records[k].detector == d) {
            s.sum += w[k];
            s2 += w[k] * w[k];
        }
    s.var = s2 - s.sum * s.sum / double(dp.packets);
    return s;
}

std::vector<double> ownWeights(const fm::DetectedPackets& dp) {
    std::vector<double> w;
    for (const auto& r : dp.records) w.push_back(r.weight);
    return w;
}

void checkSameRecord(const fm::DetectedPackets& a, size_t i, const fm::DetectedPackets& b, size_t j) {
    const fm::DetectedRecord &x = a.records[i], &y = b.records[j];
    BOOST_CHECK_EQUAL(x.index, y.index);
    BOOST_CHECK_EQUAL(x.detector, y.detector);
    BOOST_CHECK_EQUAL(x.scatters, y.scatters);
    BOOST_CHECK_EQUAL(x.weight, y.weight);
    BOOST_CHECK_EQUAL(x.time, y.time);
    for (int k = 0; k < 3; ++k) {
        BOOST_CHECK_EQUAL(x.pos[k], y.pos[k]);
        BOOST_CHECK_EQUAL(x.dir[k], y.dir[k]);
    }
    for (uint32_t r = 0; r < a.regions; ++r) BOOST_CHECK_EQUAL(a.path(i)[r], b.path(j)[r]);
    BOOST_REQUIRE_EQUAL(a.scatterCounts.empty(), b.scatterCounts.empty());
    if (!a.scatterCounts.empty())
        for (uint32_t r = 0; r < a.regions; ++r) BOOST_CHECK_EQUAL(a.scatterCount(i)[r], b.scatterCount(j)[r]);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(detectors)

// The detecting run gives a plain run's histories: the same event counts and tallies, and records whose exits lie on the detectors with consistent times and paths.
BOOST_AUTO_TEST_CASE(records_are_consistent_and_tallies_unchanged) {
    DetectorModel model;
    const fm::KernelInput in = model.input(0.05, 0.02);
    const fm::DetectionSpec spec = model.spec();
    fm::RunOptions o = options(4000, 7, &spec);
    o.batches = 1;
    const fm::RunResult det = fm::runKernel("cpu", in, o);
    o.detection = nullptr;
    const fm::RunResult plain = fm::runKernel("cpu", in, o);
    fmtest::checkSameEvents(det.events, plain.events);
    BOOST_CHECK_LT(fmtest::l1(plain.volume, det.volume), 1e-12);
    const fm::DetectedPackets& dp = det.detected;
    BOOST_REQUIRE_GT(dp.records.size(), 20u);
    BOOST_CHECK(!dp.truncated());
    BOOST_CHECK_EQUAL(dp.regions, 2u);
    BOOST_REQUIRE_EQUAL(dp.scatterCounts.size(), dp.records.size() * dp.regions);
    for (size_t k = 0; k < dp.records.size(); ++k) {
        const fm::DetectedRecord& r = dp.records[k];
        const fm::DetectorZone& z = dp.detectors[r.detector];
        const double dx = r.pos[0] - z.centre[0], dy = r.pos[1] - z.centre[1];
        BOOST_CHECK_LE(dx * dx + dy * dy, z.radius2 * (1 + 1e-6));
        BOOST_CHECK_SMALL(double(r.pos[2]), 1e-4);
        BOOST_CHECK_LT(r.dir[2], 0.f);  // leaving through the top face
        double t = 0;
        for (uint32_t i = 0; i < dp.regions; ++i) t += dp.path(k)[i] * dp.n[i] / fm::kLightSpeedMmPerNs;
        BOOST_CHECK_CLOSE(double(r.time), t, 1e-2);  // the clock and the lengths summed in float
        uint64_t scatters = 0;
        for (uint32_t i = 0; i < dp.regions; ++i) {
            scatters += dp.scatterCount(k)[i];
            if (dp.path(k)[i] == 0.f) BOOST_CHECK_EQUAL(dp.scatterCount(k)[i], 0u);  // no interaction without a path
        }
        BOOST_CHECK_EQUAL(scatters, r.scatters);
        if (k) BOOST_CHECK_LE(dp.records[k - 1].index, r.index);
    }
    // The detected weight is part of the exited weight of the ledger.
    const std::vector<double> s = fm::detectedSignal(dp);
    BOOST_CHECK_LE(s[0] + s[1], det.ledger.exited);
}

// Records do not depend on the thread count; maxRecords keeps the lowest indices and says so.
BOOST_AUTO_TEST_CASE(threads_and_truncation) {
    DetectorModel model;
    const fm::KernelInput in = model.input(0.05, 0.02);
    const fm::DetectionSpec spec = model.spec(), small = model.spec(10);
    fm::RunOptions o = options(3000, 3, &spec);
    o.threads = 1;
    const fm::DetectedPackets one = fm::runKernel("cpu", in, o).detected;
    o.threads = 3;
    const fm::DetectedPackets three = fm::runKernel("cpu", in, o).detected;
    BOOST_REQUIRE_EQUAL(one.records.size(), three.records.size());
    for (size_t k = 0; k < one.records.size(); ++k) checkSameRecord(one, k, three, k);
    o.detection = &small;
    const fm::DetectedPackets cut = fm::runKernel("cpu", in, o).detected;
    BOOST_REQUIRE_GT(one.records.size(), 10u);
    BOOST_CHECK_EQUAL(cut.records.size(), 10u);
    BOOST_CHECK_EQUAL(cut.detected, one.records.size());
    BOOST_CHECK(cut.truncated());
    for (size_t k = 0; k < 10; ++k) checkSameRecord(cut, k, one, k);
}

// Replaying a record's packet alone (its index, same seed) gives the same record, bit for bit.
BOOST_AUTO_TEST_CASE(replay_reproduces_records) {
    DetectorModel model;
    const fm::KernelInput in = model.input(0.05, 0.02);
    const fm::DetectionSpec spec = model.spec();
    fm::RunOptions o = options(3000, 11, &spec);
    const fm::DetectedPackets dp = fm::runKernel("cpu", in, o).detected;
    BOOST_REQUIRE_GT(dp.records.size(), 10u);
    o.threads = 1;
    o.packets = 1;
    for (size_t k = 0; k < dp.records.size(); k += dp.records.size() / 10) {
        o.firstPacket = dp.records[k].index;
        const fm::DetectedPackets again = fm::runKernel("cpu", in, o).detected;
        BOOST_REQUIRE_GE(again.records.size(), 1u);
        size_t j = 0;
        while (j + 1 < again.records.size() && again.records[j].detector != dp.records[k].detector) ++j;
        checkSameRecord(dp, k, again, j);
    }
    const fm::ReplayResult rr = fm::replayJacobian(in, o, spec, dp);
    BOOST_CHECK_EQUAL(rr.mismatched, 0u);
}

// The lane loop (AVX2 where this CPU has it) and the one-packet-at-a-time loop give every packet
// the same history, so the same records bit for bit, and the same tallies to summation order.
BOOST_AUTO_TEST_CASE(lane_loop_records_equal_the_one_at_a_time_loop) {
    DetectorModel model;
    const fm::KernelInput in = model.input(0.05, 0.02);
    const fm::DetectionSpec spec = model.spec();
    fm::RunOptions o = options(3000, 5, &spec);
    const fm::RunResult lanes = fm::runKernel("cpu", in, o);
    o.tuning.cpuIsa = fm::CpuIsa::Generic;
    const fm::RunResult one = fm::runKernel("cpu", in, o);
    BOOST_TEST_MESSAGE("lane loop: " << fm::cpuLaneIsa());
    BOOST_REQUIRE_GT(lanes.detected.records.size(), 20u);
    BOOST_REQUIRE_EQUAL(lanes.detected.records.size(), one.detected.records.size());
    for (size_t k = 0; k < one.detected.records.size(); ++k) checkSameRecord(lanes.detected, k, one.detected, k);
    fmtest::checkSameEvents(lanes.events, one.events);
    BOOST_CHECK_LT(fmtest::l1(one.volume, lanes.volume), 1e-12);
}

// Standard errors of a detecting run: its volume and exit errors are the plain run's (same
// histories, same batches), and the detected weight's error by batch means agrees with the
// exact per-packet estimate from the records, sqrt(sum x^2 - (sum x)^2 / N). With B batches of
// n packets the batch-means variance has a relative variance of 2 / (B - 1) + k / (n B), k the
// excess kurtosis of one packet's x (large: most packets detect nothing); the error itself half
// that relative deviation; 4 of those bound the difference.
BOOST_AUTO_TEST_CASE(standard_errors_of_a_detecting_run) {
    DetectorModel model;
    const fm::KernelInput in = model.input(0.05, 0.02);
    const fm::DetectionSpec spec = model.spec();
    fm::RunOptions o = options(40000, 9, &spec);
    o.batches = 100;
    o.outputs.surface = true;
    const fm::RunResult det = fm::runKernel("cpu", in, o);
    o.detection = nullptr;
    const fm::RunResult plain = fm::runKernel("cpu", in, o);
    BOOST_REQUIRE_EQUAL(det.standardError.volume.size(), plain.standardError.volume.size());
    BOOST_REQUIRE_EQUAL(det.standardError.surface.size(), plain.standardError.surface.size());
    BOOST_CHECK_LT(fmtest::l1(plain.standardError.volume, det.standardError.volume), 1e-9);
    BOOST_CHECK_LT(fmtest::l1(plain.standardError.surface, det.standardError.surface), 1e-9);
    const fm::DetectedPackets& dp = det.detected;
    BOOST_REQUIRE(!dp.truncated());
    BOOST_REQUIRE_EQUAL(dp.detectedWeightError.size(), 2u);
    const double N = double(dp.packets), B = 100;
    for (uint32_t d = 0; d < 2; ++d) {
        const Signal s = signalOf(dp, d, ownWeights(dp));
        double x4 = 0;
        for (const fm::DetectedRecord& r : dp.records)
            if (r.detector == d) x4 += std::pow(double(r.weight), 4);
        const double m2 = s.var / N, kurtosis = (x4 / N) / (m2 * m2) - 3;
        const double tolerance = 4 * 0.5 * std::sqrt(2 / (B - 1) + kurtosis / (N / B) / B);
        BOOST_CHECK_CLOSE(dp.detectedWeight[d], s.sum, 1e-6);
        BOOST_TEST_MESSAGE("detector " << d << ": weight " << s.sum << " +- " << dp.detectedWeightError[d]
                                       << " (batches), " << std::sqrt(s.var) << " (per packet)");
        BOOST_CHECK_LT(std::fabs(dp.detectedWeightError[d] / std::sqrt(s.var) - 1), tolerance);
    }
    o.detection = &spec;
    o.batches = 1;
    BOOST_CHECK(fm::runKernel("cpu", in, o).detected.detectedWeightError.empty());
}

// Reweighting the records of a run at mu_a to mu_a' gives the detected signal of a fresh run at
// mu_a' (another seed, so the two estimates are independent) within statistics: the difference
// of the two sums has variance var_reweighted + var_fresh (each N var(x) of its per-packet
// contributions), and |difference| <= 4 sigma fails by chance with probability 6e-5.
BOOST_AUTO_TEST_CASE(reweighting_matches_a_fresh_run) {
    DetectorModel model;
    const fm::DetectionSpec spec = model.spec();
    const uint64_t n = 20000;
    const fm::DetectedPackets base = fm::runKernel("cpu", model.input(0.05, 0.02), options(n, 1, &spec)).detected;
    const std::vector<double> muaNew{0.1, 0.04};
    const fm::DetectedPackets fresh =
        fm::runKernel("cpu", model.input(muaNew[0], muaNew[1]), options(n, 2, &spec)).detected;
    const std::vector<double> w = fm::reweightedWeights(base, muaNew);
    const std::vector<double> s = fm::detectedSignal(base, &w);
    for (uint32_t d = 0; d < 2; ++d) {
        const Signal a = signalOf(base, d, w), b = signalOf(fresh, d, ownWeights(fresh));
        BOOST_CHECK_CLOSE(a.sum, s[d], 1e-9);
        const double z = (a.sum - b.sum) / std::sqrt(a.var + b.var);
        BOOST_TEST_MESSAGE("detector " << d << ": reweighted " << a.sum / n << ", fresh " << b.sum / n << ", z = " << z);
        BOOST_CHECK_LE(std::fabs(z), 4.0);
        // The change is many sigma: the test would see a reweighting that did nothing.
        const Signal c = signalOf(base, d, ownWeights(base));
        BOOST_CHECK_GT(std::fabs(c.sum - b.sum) / std::sqrt(c.var + b.var), 4.0);
    }
    BOOST_CHECK_THROW(fm::reweightedWeights(base, {0.1}), fm::ParameterError);
    BOOST_CHECK_THROW(fm::reweightedWeights(base, {0.1, -1}), fm::ParameterError);
}

// Per packet index, the detected weight (times f(record)) of detector d's records.
std::map<uint64_t, double> perPacket(const fm::DetectedPackets& dp, uint32_t d,
                                     const std::function<double(size_t)>& f) {
    std::map<uint64_t, double> m;
    for (size_t k = 0; k < dp.records.size(); ++k)
        if (dp.records[k].detector == d) m[dp.records[k].index] += dp.records[k].weight * f(k);
    return m;
}

// The replayed Jacobian per tetra sums, over each region's tetras, to the records' per-region
// Jacobian -sum w L_r; and its sum over all tetras equals the finite-difference derivative of
// the detected signal for a uniform change h of mu_a, from fresh runs at mu_a +- h. All three
// runs use one seed, so each packet index gives one independent term x_i = (w+_i - w-_i) / 2h
// - J_i (0 where undetected) of sum(x) = difference - Jacobian, whose variance is N var(x)
// (estimated from the x_i); the central difference adds at most h^2/6 |S'''|, with S'''
// bounded by the records' sum of w L^3 exp(h L) (the signal at mu_a - h).
BOOST_AUTO_TEST_CASE(jacobian_sums_to_finite_difference) {
    DetectorModel model;
    const fm::DetectionSpec spec = model.spec();
    const uint64_t n = 40000, seed = 5;
    const double mua1 = 0.05, mua2 = 0.03, h = 0.005;
    const fm::KernelInput in = model.input(mua1, mua2);
    const fm::RunOptions o = options(n, seed, &spec);
    const fm::DetectedPackets dp = fm::runKernel("cpu", in, o).detected;
    const fm::ReplayResult rr = fm::replayJacobian(in, o, spec, dp);
    BOOST_CHECK_EQUAL(rr.mismatched, 0u);
    const std::vector<double> regional = fm::regionJacobian(dp);
    const fm::DetectedPackets up = fm::runKernel("cpu", model.input(mua1 + h, mua2 + h), options(n, seed, &spec)).detected;
    const fm::DetectedPackets down = fm::runKernel("cpu", model.input(mua1 - h, mua2 - h), options(n, seed, &spec)).detected;
    auto one = [](size_t) { return 1.0; };
    for (uint32_t d = 0; d < 2; ++d) {
        double perRegion[3] = {0, 0, 0};
        for (uint32_t t = 1; t <= model.mesh.tetraCount(); ++t) perRegion[model.mesh.region(t)] += rr.jacobian[d][t];
        for (uint32_t r = 1; r <= 2; ++r) BOOST_CHECK_CLOSE(perRegion[r], regional[d * 2 + r - 1], 1e-4);
        const double total = perRegion[1] + perRegion[2];
        auto length = [&](size_t k) { return double(dp.path(k)[0]) + dp.path(k)[1]; };
        std::map<uint64_t, double> x = perPacket(dp, d, length);  // -J_i
        for (const auto& [i, v] : perPacket(up, d, one)) x[i] += v / (2 * h);
        for (const auto& [i, v] : perPacket(down, d, one)) x[i] -= v / (2 * h);
        double sum = 0, sum2 = 0;
        for (const auto& [i, v] : x) {
            sum += v;
            sum2 += v * v;
        }
        const double sigma = std::sqrt(sum2 - sum * sum / double(n));
        double l3 = 0;
        for (const auto& [i, v] : perPacket(dp, d, [&](size_t k) { return std::pow(length(k), 3) * std::exp(h * length(k)); }))
            l3 += v;
        const double bias = h * h / 6 * l3, fd = total + sum;
        const double z = (std::fabs(sum) - bias) / sigma;
        BOOST_TEST_MESSAGE("detector " << d << ": Jacobian sum " << total / n << ", finite difference " << fd / n
                                        << ", difference +- " << sigma / n << " (truncation <= " << bias / n
                                        << "), z = " << z);
        BOOST_CHECK_LE(z, 4.0);
        // Sharp enough to see a Jacobian off by half (a region's path lengths missing or
        // doubled); the lengths themselves are checked more sharply by the reweighting test,
        // where exp(-delta mu_a L) amplifies an error in L. Histories at mu_a +- h share their
        // draws but drift apart (steps scale with 1/mu_t), which bounds the pairing's gain.
        BOOST_CHECK_LT(4 * sigma + bias, 0.5 * std::fabs(total));
        BOOST_CHECK_LT(total, 0.0);
    }
}

// The TPSF over gates that hold every record sums to the detected signal; gates are checked.
BOOST_AUTO_TEST_CASE(detector_tpsf) {
    DetectorModel model;
    const fm::DetectionSpec spec = model.spec();
    const fm::DetectedPackets dp = fm::runKernel("cpu", model.input(0.05, 0.02), options(3000, 9, &spec)).detected;
    float tmax = 0;
    for (const auto& r : dp.records) tmax = std::max(tmax, r.time);
    const fm::TimeGates gates = fm::makeTimeGates(0, 0.005 * std::ceil((double(tmax) + 0.01) / 0.005), 0.005, "gates");
    const std::vector<double> h = fm::detectorTpsf(dp, 0, gates);
    BOOST_CHECK_EQUAL(h.size(), gates.count);
    BOOST_CHECK_CLOSE(std::accumulate(h.begin(), h.end(), 0.0), fm::detectedSignal(dp)[0], 1e-9);
    BOOST_CHECK_THROW(fm::detectorTpsf(dp, 0, {0, 1, 0}), fm::ParameterError);
    BOOST_CHECK_THROW(fm::detectorTpsf(dp, 0, {1, 0.5, 0.1}), fm::ParameterError);
    BOOST_CHECK_THROW(fm::detectorTpsf(dp, 5, gates), fm::ParameterError);
}

// Bad detector input: each error names the detector and its parameter.
BOOST_AUTO_TEST_CASE(bad_detectors) {
    DetectorModel model;
    auto message = [&](const std::vector<fm::Detector>& ds) -> std::string {
        try {
            fm::compileDetectors(model.mesh, ds);
        } catch (const fm::ParameterError& e) {
            return e.what();
        }
        return "no error";
    };
    fm::Detector away;
    away.centre = {0, 0, -5};
    away.radius = 1;
    BOOST_CHECK_NE(message({away}).find("detector 0 centre/radius"), std::string::npos);
    fm::Detector ok, zero;
    ok.centre = {0, 0, 0};
    ok.radius = 1;
    zero.radius = 0;
    BOOST_CHECK_NE(message({ok, zero}).find("detector 1 radius"), std::string::npos);
    fm::Detector inner;
    for (uint32_t f = 1; f <= model.mesh.faceCount() && inner.faces.empty(); ++f)
        if (model.mesh.face(f).other != 0) inner.faces.push_back(f);
    BOOST_CHECK_NE(message({inner}).find("not on the mesh boundary"), std::string::npos);
    fm::Detector beyond;
    beyond.faces = {uint32_t(model.mesh.faceCount() + 1)};
    BOOST_CHECK_NE(message({beyond}).find("does not exist"), std::string::npos);
    BOOST_CHECK_NE(message(std::vector<fm::Detector>(65, ok)).find("at most 64"), std::string::npos);
    BOOST_CHECK_THROW(fm::parseDetector("1,2,3", "--detector"), fm::ParameterError);
    BOOST_CHECK_THROW(fm::parseDetector("1,2,x,4", "--detector"), fm::ParameterError);
    BOOST_CHECK_THROW(fm::parseDetector("faces:", "--detector"), fm::ParameterError);
    BOOST_CHECK_THROW(fm::parseDetector("faces:1,-2", "--detector"), fm::ParameterError);
    // Detectors with time-gated tallies in one run: refused (the detecting loop keeps no gated
    // tallies, so their outputs would be missing), naming both.
    const fm::DetectionSpec disks = model.spec();
    fm::RunOptions gated = options(100, 1, &disks);
    gated.outputs.gatedSurface = true;
    gated.gates = fm::makeTimeGates(0, 1, 0.1, "gates");
    try {
        fm::runKernel("cpu", model.input(0.05, 0.02), gated);
        BOOST_ERROR("detectors with time gates accepted");
    } catch (const fm::ParameterError& e) {
        BOOST_CHECK_MESSAGE(std::string(e.what()).find("time-gated") != std::string::npos, e.what());
    }
    BOOST_CHECK_EQUAL(fm::parseDetector("1,2,3,4", "--detector").radius, 4.0);
    BOOST_CHECK_EQUAL(fm::parseDetector("faces:7,9", "--detector").faces.size(), 2u);
    // A face set detects every exit through its faces.
    fm::Detector top;
    for (uint32_t f : model.mesh.boundaryFaces()) {
        const fm::MeshFace& F = model.mesh.face(f);
        if (F.normal[2] < -0.5) top.faces.push_back(f);
    }
    const fm::DetectionSpec spec = fm::compileDetectors(model.mesh, {top});
    BOOST_CHECK(std::isinf(spec.detectors[0].radius2));
    // A detecting run on a kernel that cannot detect is refused.
    const fm::RunOptions o = options(100, 1, &spec);
    BOOST_CHECK_THROW(fm::runKernel("hybrid", model.input(0.05, 0.02), o), fm::ParameterError);
}

// The MMC/MCX .mch writer (docs/DETECTORS.md field mapping), read back by our own reader: the
// header's counts and savedetflag, per row the detector from 1, the scatter counts per medium
// (without them: the columns of a record set that has none), the partial paths, the exit
// position and direction, and w0 with w0 exp(-sum mu_a L) the record's exit weight (float
// rounding of the exponent's factor: relative 1e-5). Bad files and counts that do not fit the
// header are errors naming the file or field.
BOOST_AUTO_TEST_CASE(mch_round_trip_and_bad_files) {
    DetectorModel model;
    const fm::DetectionSpec spec = model.spec();
    const fm::DetectedPackets dp = fm::runKernel("cpu", model.input(0.05, 0.02), options(2000, 4, &spec)).detected;
    BOOST_REQUIRE_GT(dp.records.size(), 0u);
    std::ostringstream out;
    fm::writeMch(out, dp);
    const std::string bytes = out.str();
    const uint32_t cols = 1 + 2 * dp.regions + 3 + 3 + 1;
    BOOST_CHECK_EQUAL(bytes.size(), 64 + dp.records.size() * cols * 4);
    std::istringstream in(bytes);
    const fm::MchFile f = fm::readMch(in, "t.mch");
    BOOST_CHECK_EQUAL(f.maxmedia, dp.regions);
    BOOST_CHECK_EQUAL(f.detnum, 2u);
    BOOST_CHECK_EQUAL(f.colcount, cols);
    BOOST_CHECK_EQUAL(f.totalphoton, dp.packets);
    BOOST_CHECK_EQUAL(f.detected, dp.detected);
    BOOST_CHECK_EQUAL(f.savedphoton, dp.records.size());
    BOOST_CHECK_EQUAL(f.unitinmm, 1.0f);
    BOOST_CHECK_EQUAL(f.savedetflag, fm::kMchWritten | fm::kMchScatters);
    const uint32_t R = dp.regions;
    for (size_t k = 0; k < dp.records.size(); ++k) {
        const float* row = f.row(k);
        const fm::DetectedRecord& r = dp.records[k];
        BOOST_CHECK_EQUAL(row[0], float(r.detector + 1));
        double muaL = 0, scatters = 0;
        for (uint32_t m = 0; m < R; ++m) {
            BOOST_CHECK_EQUAL(row[1 + m], float(dp.scatterCount(k)[m]));
            scatters += row[1 + m];
            BOOST_CHECK_EQUAL(row[1 + R + m], dp.path(k)[m]);
            muaL += dp.mua[m] * row[1 + R + m];
        }
        BOOST_CHECK_EQUAL(scatters, double(r.scatters));
        for (int i = 0; i < 3; ++i) {
            BOOST_CHECK_EQUAL(row[1 + 2 * R + i], r.pos[i]);
            BOOST_CHECK_EQUAL(row[4 + 2 * R + i], r.dir[i]);
        }
        BOOST_CHECK_CLOSE(double(row[cols - 1]) * std::exp(-muaL), double(r.weight), 1e-3);
    }
    fm::DetectedPackets noCounts = dp;
    noCounts.scatterCounts.clear();
    std::ostringstream plain;
    fm::writeMch(plain, noCounts);
    std::istringstream plainIn(plain.str());
    const fm::MchFile g = fm::readMch(plainIn, "p.mch");
    BOOST_CHECK_EQUAL(g.savedetflag, fm::kMchWritten);
    BOOST_CHECK_EQUAL(g.colcount, cols - R);
    BOOST_CHECK_EQUAL(g.row(0)[1], dp.path(0)[0]);
    auto error = [](const std::string& text) -> std::string {
        std::istringstream s(text);
        try {
            fm::readMch(s, "bad.mch");
        } catch (const fm::FormatError& e) {
            return e.what();
        }
        return "no error";
    };
    BOOST_CHECK_NE(error(bytes.substr(0, bytes.size() - 3)).find("bad.mch: " + std::to_string(f.savedphoton) + " rows announced"),
                   std::string::npos);
    BOOST_CHECK_NE(error(bytes + "x").find("bad.mch: bytes after the last row"), std::string::npos);
    BOOST_CHECK_NE(error("MCX").find("bad.mch: shorter than the 64-byte"), std::string::npos);
    BOOST_CHECK_NE(error("XXXX" + bytes.substr(4)).find("magic is not MCXH"), std::string::npos);
    std::string wrongCols = bytes;
    wrongCols[16] = char(cols + 1);
    BOOST_CHECK_NE(error(wrongCols).find("colcount " + std::to_string(cols + 1) + " does not match"), std::string::npos);
    fm::DetectedPackets many = dp;
    many.packets = uint64_t(1) << 32;
    std::ostringstream sink;
    try {
        fm::writeMch(sink, many);
        BOOST_ERROR("packets over 2^32 - 1 written to a .mch header");
    } catch (const fm::ParameterError& e) {
        BOOST_CHECK_NE(std::string(e.what()).find(".mch: packets 4294967296 does not fit"), std::string::npos);
    }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(detected_file)

// Written and read back, records are the same bit for bit; damaged files are refused with the
// file and the place.
BOOST_AUTO_TEST_CASE(round_trip_and_bad_files) {
    DetectorModel model;
    const fm::DetectionSpec spec = model.spec();
    const fm::DetectedPackets dp = fm::runKernel("cpu", model.input(0.05, 0.02), options(2000, 4, &spec)).detected;
    BOOST_REQUIRE_GT(dp.records.size(), 0u);
    std::ostringstream out;
    fm::writeDetected(out, dp);
    const std::string bytes = out.str();
    std::istringstream in(bytes);
    const fm::DetectedPackets back = fm::readDetected(in, "t.fmd");
    BOOST_REQUIRE_EQUAL(back.records.size(), dp.records.size());
    for (size_t k = 0; k < dp.records.size(); ++k) checkSameRecord(dp, k, back, k);
    BOOST_CHECK_EQUAL(back.detected, dp.detected);
    BOOST_CHECK_EQUAL(back.seed, dp.seed);
    BOOST_CHECK_EQUAL(back.packets, dp.packets);
    for (uint32_t r = 0; r < dp.regions; ++r) BOOST_CHECK_EQUAL(back.mua[r], dp.mua[r]);
    BOOST_CHECK_EQUAL(back.detectors[1].radius2, dp.detectors[1].radius2);
    BOOST_CHECK_EQUAL(bytes.rfind("fullmonte-detected 2\n", 0), 0u);  // records with scatter counts: version 2
    // A version 1 file (records without scatter counts, as files written before them) reads.
    fm::DetectedPackets v1 = dp;
    v1.scatterCounts.clear();
    std::ostringstream outV1;
    fm::writeDetected(outV1, v1);
    BOOST_CHECK_EQUAL(outV1.str().rfind("fullmonte-detected 1\n", 0), 0u);
    BOOST_CHECK_EQUAL(outV1.str().size() + dp.records.size() * 4 * dp.regions, bytes.size());
    std::istringstream inV1(outV1.str());
    const fm::DetectedPackets backV1 = fm::readDetected(inV1, "v1.fmd");
    BOOST_REQUIRE_EQUAL(backV1.records.size(), dp.records.size());
    BOOST_CHECK(backV1.scatterCounts.empty());
    for (size_t k = 0; k < dp.records.size(); ++k) checkSameRecord(v1, k, backV1, k);

    auto error = [](const std::string& text) -> std::string {
        std::istringstream s(text);
        try {
            fm::readDetected(s, "bad.fmd");
        } catch (const fm::FormatError& e) {
            return e.what();
        }
        return "no error";
    };
    BOOST_CHECK_NE(error(bytes.substr(0, bytes.size() - 3)).find("truncated"), std::string::npos);
    BOOST_CHECK_NE(error(bytes + "x").find("bad.fmd"), std::string::npos);
    BOOST_CHECK_NE(error("hello").find("bad.fmd:1: not a detected-packet file"), std::string::npos);
    std::string wrongBytes = bytes;
    wrongBytes.replace(wrongBytes.find("record_bytes "), 16, "record_bytes 99\n");
    BOOST_CHECK_NE(error(wrongBytes).find("record_bytes must be"), std::string::npos);
    // A record naming a detector the header does not have.
    std::string badDetector = bytes;
    const size_t data = bytes.find("data\n") + 5;
    badDetector[data + 8] = char(9);
    BOOST_CHECK_NE(error(badDetector).find("record 0: detector 9 does not exist"), std::string::npos);
    // Scatter counts that do not sum to the record's scatter count.
    std::string badCounts = bytes;
    const size_t count0 = data + fm::detectedRecordBytes(dp.regions, true) - 4 * dp.regions;
    badCounts[count0] = char(uint8_t(badCounts[count0]) + 1);
    BOOST_CHECK_NE(error(badCounts).find("bad.fmd: record 0: its scatter counts per region sum to"), std::string::npos);
    std::string v3 = bytes;
    v3[std::string("fullmonte-detected ").size()] = '3';
    BOOST_CHECK_NE(error(v3).find("unsupported version 3"), std::string::npos);
    // No packets: every signal would be a division by zero.
    std::string noPackets = bytes;
    const size_t at = noPackets.find("packets ") + 8;
    noPackets.replace(at, noPackets.find_first_of(" \n", at) - at, "0");
    BOOST_CHECK_NE(error(noPackets).find("packets must be >= 1"), std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
