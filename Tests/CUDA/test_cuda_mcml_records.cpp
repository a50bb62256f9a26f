// SPDX-License-Identifier: GPL-3.0-or-later
// MCML per-photon records on the GPU (Kernels/CUDA/McmlCuda.cu with the detector tally, issue 28
// items 4 and 6): the record weights per surface add up to the same run's Rd and Tt; recording
// changes no GPU history; the records equal the CPU kernel's within statistics (detected weight,
// path and scatter count per layer); a truncated run keeps exactly the first N records of the
// run with room for all; reweighted records equal a fresh GPU run; with time gates, the records'
// TPSF equals the gated Rd; fullmonte-mcml --kernel cuda --records writes them. Skips (with a
// message) when no GPU is present.
#include <boost/test/unit_test.hpp>

#include <cfloat>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "Geometry/Layered.hpp"
#include "Kernels/Detection.hpp"
#include "Kernels/McmlKernel.hpp"
#include "Kernels/McmlRecords.hpp"
#include "Storage/Detected/DetectedFile.hpp"
#include "Storage/MCML/MCMLKernelRun.hpp"
#include "Storage/MCML/MCOReader.hpp"
#include "Tests/Kernels/McmlThreeLayers.hpp"
#include "Tests/TestUtil.hpp"

using namespace fm;
using fmtest::haveGpu;
using fmtest::signalOf;
namespace fs = std::filesystem;

namespace {

using fmtest::sum;

// A run of `kernel` keeping up to `keep` records (no records for keep = 0).
McmlTallies recorded(const std::string& kernel, const MCMLRun& run, uint64_t packets, uint64_t seed,
                     uint64_t keep = 10000000) {
    const KernelInput in = packLayered(layeredFromMcml(run));
    RunOptions o = fmtest::recordRunOptions(run, packets, seed);
    const DetectionSpec spec = layeredDetection(in, keep ? keep : 1);
    if (keep) o.detection = &spec;
    return runMcmlKernel(kernel, in, mcmlGrid(run), o);
}

// A per-photon sum of x (0 for a photon without a record): its total and N var(x) = sum x^2 -
// (sum x)^2 / N.
struct PerPhoton {
    double s = 0, s2 = 0;
    void add(double x) { s += x, s2 += x * x; }
    double var(double n) const { return s2 - s * s / n; }
};

// (a/Na - b/Nb) in combined standard errors of the two per-photon means.
double zOf(const PerPhoton& a, double na, const PerPhoton& b, double nb) {
    const double v = a.var(na) / (na * na) + b.var(nb) / (nb * nb);
    return (a.s / na - b.s / nb) / std::sqrt(v + 1e-300);
}

// Per layer, the per-photon sum of x over the records of detector d (what = 0: path in the
// layer, mm; 1: scatter count in it).
std::vector<PerPhoton> perLayer(const DetectedPackets& dp, uint32_t d, int what) {
    std::vector<PerPhoton> v(dp.regions);
    for (size_t k = 0; k < dp.records.size(); ++k) {
        if (dp.records[k].detector != d) continue;
        for (uint32_t l = 0; l < dp.regions; ++l) v[l].add(what == 0 ? dp.path(k)[l] : dp.scatterCount(k)[l]);
    }
    return v;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cuda_mcml_records)

// The top records' weights add up to the GPU run's raw Rd(r, a) total and the bottom ones' to
// Tt(r, a), and the detected weight per detector too (the same floats added in another order:
// to 2 x adds x DBL_EPSILON); every exit is detected; the tallies and event counts equal those of
// the GPU run without records (same histories: event counts exactly, tallies to the order of the
// atomic adds). Each record is on its surface, moving out of it; its scatter counts per layer sum
// to its scatter count and its time of flight is its optical path over the layers / c (to the
// float rounding of one add per move in each: 1e-5 as on the CPU, or 4 ulp per interaction).
BOOST_AUTO_TEST_CASE(gpu_record_weights_are_rd_and_tt_and_change_no_history) {
    if (!haveGpu()) return;
    const MCMLRun run = fmtest::threeMismatchedLayers();
    const McmlTallies r = recorded("cuda", run, 1000000, 9), plain = recorded("cuda", run, 1000000, 9, 0);
    const DetectedPackets& dp = r.records;
    BOOST_REQUIRE_EQUAL(dp.kernel, "cuda");
    BOOST_REQUIRE_EQUAL(dp.model, "layered");
    BOOST_REQUIRE_EQUAL(dp.regions, 3u);
    BOOST_REQUIRE(!dp.truncated());
    BOOST_CHECK_EQUAL(dp.detected, r.events.exit);
    const fmtest::RecordSignal s = signalOf(dp);
    const double Rd = sum(r.reflectedRA), Tt = sum(r.transmittedRA);
    BOOST_REQUIRE_GT(Rd, 1000);
    BOOST_REQUIRE_GT(Tt, 1000);
    const double bound = 2.0 * double(dp.records.size()) * DBL_EPSILON;
    BOOST_CHECK_LE(std::fabs(s.total[0] - Rd), bound * Rd);
    BOOST_CHECK_LE(std::fabs(s.total[1] - Tt), bound * Tt);
    BOOST_REQUIRE_EQUAL(dp.detectedWeight.size(), 2u);
    BOOST_CHECK_LE(std::fabs(dp.detectedWeight[0] - Rd), bound * Rd);
    BOOST_CHECK_LE(std::fabs(dp.detectedWeight[1] - Tt), bound * Tt);
    fmtest::checkSameEvents(r.events, plain.events);
    BOOST_CHECK_SMALL(fmtest::l1(r.reflectedRA, plain.reflectedRA), 1e-9);
    BOOST_CHECK_SMALL(fmtest::l1(r.transmittedRA, plain.transmittedRA), 1e-9);
    BOOST_CHECK_SMALL(fmtest::l1(r.absorbedRZ, plain.absorbedRZ), 1e-9);
    BOOST_CHECK_SMALL(fmtest::l1(r.absorbedCell, plain.absorbedCell), 1e-9);
    const float zTop = float(dp.detectors[0].centre[2]), zBot = float(dp.detectors[1].centre[2]);
    size_t bad = 0, badCounts = 0, badTime = 0;
    for (size_t k = 0; k < dp.records.size(); ++k) {
        const DetectedRecord& rec = dp.records[k];
        const bool top = rec.detector == 0;
        bad += (top ? rec.dir[2] >= 0 : rec.dir[2] <= 0) || std::fabs(rec.pos[2] - (top ? zTop : zBot)) > 1e-4f ||
               (k > 0 && rec.index <= dp.records[k - 1].index);
        uint64_t n = 0;
        double opl = 0;
        for (uint32_t l = 0; l < dp.regions; ++l) n += dp.scatterCount(k)[l], opl += dp.n[l] * dp.path(k)[l];
        badCounts += n != rec.scatters;
        const double t = opl / kLightSpeedMmPerNs;
        badTime += std::fabs(t - rec.time) > std::max(1e-5, 4.0 * (rec.scatters + 2.0) * FLT_EPSILON) * t + 1e-9;
    }
    BOOST_CHECK_EQUAL(bad, 0u);
    BOOST_CHECK_EQUAL(badCounts, 0u);
    BOOST_CHECK_EQUAL(badTime, 0u);
}

// GPU records (1e6 photons) against the CPU's (2e5, the scalar slab loop, the same seed): per
// surface the detected weight, and per surface and layer the path and scatter count per photon,
// within 4 combined standard errors (each photon gives at most one record per surface). The
// two kernels' math functions round differently, so the same photon index need not take the
// same history: how many records the two share exactly is reported, not required.
BOOST_AUTO_TEST_CASE(gpu_records_equal_cpu_within_statistics) {
    if (!haveGpu()) return;
    const MCMLRun run = fmtest::threeMismatchedLayers();
    const double Ng = 1e6, Nc = 2e5;
    const McmlTallies g = recorded("cuda", run, uint64_t(Ng), 5), c = recorded("cpu", run, uint64_t(Nc), 5);
    const DetectedPackets &G = g.records, &C = c.records;
    const fmtest::RecordSignal sg = signalOf(G), sc = signalOf(C);
    for (uint32_t d = 0; d < 2; ++d) {
        const double zw = (sg.total[d] / Ng - sc.total[d] / Nc) /
                          std::sqrt(sg.variance[d] / (Ng * Ng) + sc.variance[d] / (Nc * Nc));
        BOOST_TEST_MESSAGE("detector " << d << " weight per photon: gpu " << sg.total[d] / Ng << ", cpu "
                                       << sc.total[d] / Nc << ", z " << zw);
        BOOST_CHECK_LT(std::fabs(zw), 4.0);
        for (int what = 0; what < 2; ++what) {
            const std::vector<PerPhoton> a = perLayer(G, d, what), b = perLayer(C, d, what);
            for (uint32_t l = 0; l < G.regions; ++l) {
                const double z = zOf(a[l], Ng, b[l], Nc);
                BOOST_TEST_MESSAGE("detector " << d << " layer " << l + 1 << (what ? " scatters" : " path mm")
                                               << " per photon: gpu " << a[l].s / Ng << ", cpu " << b[l].s / Nc
                                               << ", z " << z);
                BOOST_CHECK_LT(std::fabs(z), 4.0);
                BOOST_CHECK_GT(a[l].s, 0);  // every layer is crossed by detected photons
            }
        }
    }
    std::map<std::pair<uint64_t, uint32_t>, size_t> cpuAt;
    for (size_t k = 0; k < C.records.size(); ++k) cpuAt[{C.records[k].index, C.records[k].detector}] = k;
    size_t shared = 0, identical = 0, close = 0, inRange = 0;
    for (size_t k = 0; k < G.records.size(); ++k) {
        const DetectedRecord& x = G.records[k];
        if (x.index >= uint64_t(Nc)) break;
        ++inRange;
        const auto it = cpuAt.find({x.index, x.detector});
        if (it == cpuAt.end()) continue;
        ++shared;
        const DetectedRecord& y = C.records[it->second];
        identical += x.weight == y.weight && x.scatters == y.scatters && x.pos[0] == y.pos[0] && x.dir[2] == y.dir[2];
        close += x.scatters == y.scatters && std::fabs(x.weight - y.weight) <= 1e-4f * y.weight &&
                 std::hypot(x.pos[0] - y.pos[0], x.pos[1] - y.pos[1]) <= 1e-3f;
    }
    BOOST_TEST_MESSAGE("photons 0.." << uint64_t(Nc) << ": GPU records " << inRange << ", CPU " << C.records.size()
                                     << "; same (index, surface) " << shared << ", of them bit-identical " << identical
                                     << ", the same scatters, weight and exit point to 1e-4 " << close);
}

// A GPU run keeping N records keeps exactly the first N (photon index, surface) records of the
// same run with room for all, bit for bit (refilled from the lowest lost photon), for N above
// and below the buffer's minimum of kMaxDetectors slots; it still counts and weighs every
// detection.
BOOST_AUTO_TEST_CASE(gpu_truncation_keeps_the_first_n) {
    if (!haveGpu()) return;
    const MCMLRun run = fmtest::threeMismatchedLayers();
    const McmlTallies all = recorded("cuda", run, 400000, 3);
    const DetectedPackets& A = all.records;
    BOOST_REQUIRE(!A.truncated());
    for (uint64_t keep : {A.records.size() / 2, uint64_t(7)}) {
        BOOST_TEST_CONTEXT("keep " << keep) {
            const McmlTallies part = recorded("cuda", run, 400000, 3, keep);
            const DetectedPackets& B = part.records;
            BOOST_REQUIRE_EQUAL(B.records.size(), keep);
            BOOST_CHECK(B.truncated());
            BOOST_CHECK_EQUAL(B.detected, A.detected);
            BOOST_CHECK_GT(B.refilledPackets, 0u);
            BOOST_CHECK_CLOSE(B.detectedWeight[0], A.detectedWeight[0], 1e-9);
            size_t differ = 0;
            for (size_t k = 0; k < keep; ++k) {
                const DetectedRecord &a = A.records[k], &b = B.records[k];
                differ += a.index != b.index || a.detector != b.detector || a.weight != b.weight || a.time != b.time ||
                          a.pos[0] != b.pos[0] || a.dir[1] != b.dir[1] || a.scatters != b.scatters;
                for (uint32_t l = 0; l < A.regions; ++l)
                    differ += A.path(k)[l] != B.path(k)[l] || A.scatterCount(k)[l] != B.scatterCount(k)[l];
            }
            BOOST_CHECK_EQUAL(differ, 0u);
        }
    }
}

// GPU records reweighted to another mu_a of layer 2 (0.5 -> 1.5 /cm) equal a fresh GPU run at
// that mu_a (another seed) within statistics, per surface; the change itself is resolved.
BOOST_AUTO_TEST_CASE(gpu_reweighted_records_match_a_fresh_run) {
    if (!haveGpu()) return;
    MCMLRun run = fmtest::threeMismatchedLayers();
    const McmlTallies base = recorded("cuda", run, 400000, 9);
    std::vector<double> mua = base.records.mua;
    mua[1] = 0.15;
    run.layers[1].mua = 1.5;
    const McmlTallies fresh = recorded("cuda", run, 400000, 77);
    fmtest::checkReweightedMatchesFresh(base.records, fresh.records, mua);
}

// With time gates (the time-resolved and the record tallies in one kernel) the GPU keeps the same
// photons' records as without (same histories: indices, surfaces and scatter counts equal,
// weights to float rounding), and the records' TPSF per gate equals the run's Rd(r, t) summed
// over r, up to the records whose time rounds across a gate edge.
BOOST_AUTO_TEST_CASE(gpu_gated_records_match_the_gates) {
    if (!haveGpu()) return;
    const MCMLRun run = fmtest::threeMismatchedLayers();
    const KernelInput in = packLayered(layeredFromMcml(run));
    const DetectionSpec spec = layeredDetection(in, 10000000);
    RunOptions o = fmtest::recordRunOptions(run, 200000, 13);
    o.detection = &spec;
    const McmlTallies cw = runMcmlKernel("cuda", in, mcmlGrid(run), o);
    o.gates = makeTimeGates(0, 0.05, 0.005, "gates");
    const McmlTallies g = runMcmlKernel("cuda", in, mcmlGrid(run), o);
    const DetectedPackets &A = cw.records, &B = g.records;
    BOOST_REQUIRE_EQUAL(B.records.size(), A.records.size());
    size_t differ = 0, bitIdentical = 0;
    for (size_t k = 0; k < A.records.size(); ++k) {
        const DetectedRecord &a = A.records[k], &b = B.records[k];
        differ += a.index != b.index || a.detector != b.detector || a.scatters != b.scatters ||
                  std::fabs(a.weight - b.weight) > 1e-5f * a.weight;
        bitIdentical += a.weight == b.weight && a.time == b.time && a.pos[0] == b.pos[0];
    }
    BOOST_TEST_MESSAGE("gated vs CW GPU records: " << bitIdentical << " of " << A.records.size() << " bit-identical");
    BOOST_CHECK_EQUAL(differ, 0u);
    fmtest::checkTpsfMatchesGates(g, run.nr, o.gates);
}

// fullmonte-mcml --kernel cuda --records writes NAME.fmd: GPU records whose top and bottom totals
// are the .mco's Rd and Tt.
BOOST_AUTO_TEST_CASE(command_line_writes_gpu_records) {
    if (!haveGpu()) return;
    const fs::path dir = fs::temp_directory_path() / ("fm_cuda_mcml_records_" + std::to_string(std::random_device{}()));
    fs::create_directories(dir);
    std::ofstream(dir / "a.mci") << "1.0\n1\na.mco A\n30000\n0.01 0.02\n10 10 5\n1\n1.0\n1.37 1 100 0.9 0.1\n1.0\n";
    const std::string cmd = std::string(FM_MCML_EXE) + " " + (dir / "a.mci").string() +
                            " --kernel cuda --quiet --records --max-detected 100000 > " + (dir / "log").string() + " 2>&1";
    BOOST_REQUIRE_EQUAL(std::system(cmd.c_str()), 0);
    const DetectedPackets dp = readDetected((dir / "a.fmd").string());
    BOOST_CHECK_EQUAL(dp.kernel, "cuda");
    BOOST_CHECK_EQUAL(dp.packets, 30000u);
    BOOST_CHECK(!dp.truncated());
    const MCMLResult m = readMCO((dir / "a.mco").string());
    BOOST_CHECK_CLOSE(signalOf(dp).total[0] / 30000.0, m.Rd, 1e-3);  // percent: the .mco prints 6 digits
    BOOST_CHECK_CLOSE(signalOf(dp).total[1] / 30000.0, m.Tt, 1e-3);
    std::error_code ignored;
    fs::remove_all(dir, ignored);
}

BOOST_AUTO_TEST_SUITE_END()
