// SPDX-License-Identifier: GPL-3.0-or-later
// Detectors on the GPU (issue 28 items 4-6): GPU records against the CPU's within statistics
// (detected weight per detector, mean path and scatter count per region, TPSF), the GPU's
// tallies unchanged by detection, its truncation rule (the CPU's: the lowest indices, up to the
// room), the replay of GPU records and its Jacobian. Skips (with a message) when no GPU is present.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "Geometry/Detectors.hpp"
#include "Geometry/MaterialSet.hpp"
#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/CUDA/CudaKernel.hpp"
#include "Kernels/Core/CellLayout.hpp"
#include "Kernels/Dispatch.hpp"
#include "Storage/Detected/DetectedFile.hpp"
#include "Tests/TestUtil.hpp"

using fmtest::haveGpu;

namespace {

// Two layers (region 1 above z = 3 mm), a pencil beam into the top face at the origin, two disk
// detectors on the top face (as Tests/Kernels/test_detectors.cpp).
struct GpuDetectorModel {
    fm::TetraMesh mesh = fm::makeBoxMesh({-10, -10, 0}, {10, 10, 10}, 8, 8, 5,
                                         [](const fm::Point3& c) { return c[2] < 3 ? 1u : 2u; });
    fm::KernelInput in;
    fm::DetectionSpec spec;
    GpuDetectorModel() {
        fm::MaterialSet m;
        m.exterior(fm::Material(0, 0, 0, 1.0));
        m.append(fm::Material(0.05, 5, 0.8, 1.4));
        m.append(fm::Material(0.02, 10, 0.9, 1.4));
        fm::PencilBeamSource beam;
        beam.position = {0, 0, 0};
        beam.direction = {0, 0, 1};
        in = fm::packModel(mesh, m, beam);
        spec = withMax(1000000);
    }
    fm::DetectionSpec withMax(uint64_t maxRecords) const {
        fm::Detector near, far;
        near.centre = {3, 0, 0};
        near.radius = 1.5;
        far.centre = {0, -6, 0};
        far.radius = 2;
        return fm::compileDetectors(mesh, {near, far}, maxRecords);
    }
    fm::RunOptions options(uint64_t packets, uint64_t seed, const fm::DetectionSpec* s) const {
        fm::RunOptions o;
        o.packets = packets;
        o.params.seed = seed;
        o.detection = s;
        return o;
    }
};

// A sum over packets of per-packet contributions x_i (0 for a packet that contributes none) and
// its variance estimate N var(x) = sum x^2 - (sum x)^2 / N.
struct Sum {
    double s = 0, s2 = 0;
    void add(double x) { s += x, s2 += x * x; }
    double var(uint64_t n) const { return s2 - s * s / double(n); }
};

// |a - b| in combined standard errors of two independent sums over n packets each.
double zOf(const Sum& a, const Sum& b, uint64_t n) { return (a.s - b.s) / std::sqrt(a.var(n) + b.var(n)); }

// Records of one packet and detector are one contribution (one record each).
Sum signal(const fm::DetectedPackets& dp, uint32_t d) {
    Sum s;
    for (const auto& r : dp.records)
        if (r.detector == d) s.add(r.weight);
    return s;
}

// Records whose scatter counts per region do not sum to their scatter count.
size_t countSumsDiffer(const fm::DetectedPackets& dp) {
    size_t bad = 0;
    for (size_t k = 0; k < dp.records.size(); ++k) {
        uint64_t sum = 0;
        for (uint32_t r = 0; r < dp.regions; ++r) sum += dp.scatterCount(k)[r];
        bad += sum != dp.records[k].scatters;
    }
    return bad;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(cuda_detectors, GpuDetectorModel)

// GPU and CPU detections (independent seeds) agree: per detector the detected weight, the
// weighted path per region (sum of w L_r: the per-region Jacobian), the scattering events per
// region (whose sum over regions is each record's scatter count) and the TPSF per gate, each
// within 4 combined standard errors (the TPSF: its chi-square over the gates within 5 sigma of
// its dof). The GPU detecting run's tallies equal a plain GPU run's of the same seed (same
// streams; only the summation order of the atomics differs).
BOOST_AUTO_TEST_CASE(gpu_records_match_cpu) {
    if (!haveGpu()) return;
    const uint64_t n = 400000;
    const fm::RunResult g = fm::runKernel("cuda", in, options(n, 21, &spec));
    const fm::RunResult c = fm::runKernel("cpu", in, options(n, 22, &spec));
    const fm::DetectedPackets &gd = g.detected, &cd = c.detected;
    BOOST_CHECK_EQUAL(gd.kernel, "cuda");
    BOOST_CHECK_EQUAL(cd.kernel, "cpu");
    BOOST_REQUIRE(!gd.truncated());
    BOOST_REQUIRE_GT(gd.records.size(), 1000u);
    BOOST_CHECK_EQUAL(gd.records.size(), gd.detected);
    for (size_t k = 1; k < gd.records.size(); ++k) BOOST_CHECK_LE(gd.records[k - 1].index, gd.records[k].index);
    BOOST_REQUIRE_EQUAL(gd.scatterCounts.size(), gd.records.size() * gd.regions);
    BOOST_CHECK_EQUAL(countSumsDiffer(gd), 0u);
    const fm::TimeGates gates = fm::makeTimeGates(0, 0.4, 0.02, "gates");
    for (uint32_t d = 0; d < 2; ++d) {
        const double zs = zOf(signal(gd, d), signal(cd, d), n);
        BOOST_TEST_MESSAGE("detector " << d << ": GPU " << signal(gd, d).s / n << ", CPU " << signal(cd, d).s / n
                                       << ", z = " << zs);
        BOOST_CHECK_LE(std::fabs(zs), 4.0);
        for (uint32_t r = 0; r < 2; ++r) {
            Sum a, b;
            for (size_t k = 0; k < gd.records.size(); ++k)
                if (gd.records[k].detector == d) a.add(gd.records[k].weight * gd.path(k)[r]);
            for (size_t k = 0; k < cd.records.size(); ++k)
                if (cd.records[k].detector == d) b.add(cd.records[k].weight * cd.path(k)[r]);
            const double z = zOf(a, b, n);
            BOOST_TEST_MESSAGE("  region " << r + 1 << " sum w L: GPU " << a.s / n << ", CPU " << b.s / n << ", z = " << z);
            BOOST_CHECK_LE(std::fabs(z), 4.0);
            BOOST_CHECK_GT(a.s, 0.0);
            Sum ca, cb;  // scattering events in the region
            for (size_t k = 0; k < gd.records.size(); ++k)
                if (gd.records[k].detector == d) ca.add(gd.scatterCount(k)[r]);
            for (size_t k = 0; k < cd.records.size(); ++k)
                if (cd.records[k].detector == d) cb.add(cd.scatterCount(k)[r]);
            const double zc = zOf(ca, cb, n);
            BOOST_TEST_MESSAGE("  region " << r + 1 << " scatters: GPU " << ca.s / n << ", CPU " << cb.s / n
                                            << ", z = " << zc);
            BOOST_CHECK_LE(std::fabs(zc), 4.0);
            BOOST_CHECK_GT(ca.s, 0.0);
        }
        std::vector<Sum> ga(gates.count), ca(gates.count);
        auto bin = [&](const fm::DetectedPackets& dp, std::vector<Sum>& h) {
            for (const auto& r : dp.records)
                if (r.detector == d && r.time >= gates.startNs && r.time < gates.stopNs)
                    h[std::min<size_t>(gates.count - 1, size_t((r.time - gates.startNs) / gates.stepNs))].add(r.weight);
        };
        bin(gd, ga);
        bin(cd, ca);
        double chi2 = 0;
        int dof = 0;
        for (uint32_t b = 0; b < gates.count; ++b)
            if (ga[b].var(n) + ca[b].var(n) > 0) {
                const double z = zOf(ga[b], ca[b], n);
                chi2 += z * z;
                ++dof;
            }
        BOOST_TEST_MESSAGE("  TPSF: chi2 " << chi2 << " over " << dof << " gates");
        BOOST_REQUIRE_GT(dof, 5);
        BOOST_CHECK_LE(chi2, dof + 5 * std::sqrt(2.0 * dof));
    }
    const fm::RunResult plain = fm::runKernel("cuda", in, options(n, 21, nullptr));
    fmtest::checkSameEvents(g.events, plain.events);
    BOOST_CHECK_LT(fmtest::l1(plain.volume, g.volume), 1e-9);
    BOOST_CHECK_LT(fmtest::l1(plain.surface, g.surface), 1e-9);
}

// Detecting runs and replays take the cells' layout of runs without detectors
// (TuningKnobs::cudaCellLayout; Auto: compact beyond the L2). With compact planes forced, against
// the records (independent seeds: the planes differ, so the histories do), the detected weight
// per detector is within 4 combined standard errors and the absorbed fraction within 4 batch-means
// standard errors (of plain runs of the same seeds, whose ledgers the detecting runs' equal). A
// compact detecting run's tallies equal a compact plain run's of its seed; its records name the
// compact layout and their replay reproduces every one; forced to the records' layout
// (FM_CUDA_CELL_LAYOUT=record) the replay is refused, naming both layouts.
BOOST_AUTO_TEST_CASE(gpu_detecting_runs_take_the_compact_layout) {
    if (!haveGpu()) return;
    const uint64_t n = 400000;
    fm::RunOptions rec = options(n, 31, &spec), com = options(n, 32, &spec);
    rec.tuning.cudaCellLayout = fm::CellLayout::Record;
    com.tuning.cudaCellLayout = fm::CellLayout::Compact;
    const fm::RunResult r = fm::runKernel("cuda", in, rec), c = fm::runKernel("cuda", in, com);
    BOOST_REQUIRE_GT(c.detected.records.size(), 1000u);
    fm::RunOptions recPlain = rec, comPlain = com;
    recPlain.detection = comPlain.detection = nullptr;
    recPlain.batches = comPlain.batches = 20;
    const fm::RunResult rp = fm::runKernel("cuda", in, recPlain), cp = fm::runKernel("cuda", in, comPlain);
    fmtest::checkSameEvents(r.events, rp.events);
    fmtest::checkSameEvents(c.events, cp.events);
    BOOST_CHECK_LT(fmtest::l1(cp.volume, c.volume), 1e-9);
    BOOST_CHECK_LT(fmtest::l1(cp.surface, c.surface), 1e-9);
    for (uint32_t d = 0; d < 2; ++d) {
        const Sum a = signal(r.detected, d), b = signal(c.detected, d);
        const double z = zOf(b, a, n);
        BOOST_TEST_MESSAGE("detector " << d << " weight per packet, record / compact: " << a.s / n << " / " << b.s / n
                                       << ", z " << z);
        BOOST_CHECK_GT(a.s, 0.0);
        BOOST_CHECK_LT(std::fabs(z), 4.0);
    }
    BOOST_REQUIRE(rp.standardError.available() && cp.standardError.available());
    const double se = std::hypot(rp.standardError.ledger.absorbed, cp.standardError.ledger.absorbed);
    const double z = (c.ledger.absorbed - r.ledger.absorbed) / se;
    BOOST_TEST_MESSAGE("absorbed fraction, record / compact: " << r.ledger.absorbed / n << " / "
                                                               << c.ledger.absorbed / n << ", z " << z);
    BOOST_CHECK_LT(std::fabs(z), 4.0);
    BOOST_CHECK_EQUAL(r.detected.cells, "record");
    BOOST_CHECK_EQUAL(c.detected.cells, "compact");
    const fm::ReplayResult same = fm::replayKernel("cuda", in, com, spec, c.detected);
    BOOST_CHECK(!same.cancelled);
    BOOST_CHECK_EQUAL(same.mismatched, 0u);
    try {
        fm::replayKernel("cuda", in, rec, spec, c.detected);
        BOOST_ERROR("compact records replayed with the records' layout forced");
    } catch (const fm::ParameterError& e) {
        const std::string m = e.what();
        BOOST_CHECK_NE(m.find("compact cell layout"), std::string::npos);
        BOOST_CHECK_NE(m.find("FM_CUDA_CELL_LAYOUT=record"), std::string::npos);
    }
}

// The .fmd names the layout its records were made in (cells): compact records, written and read
// back, replay under Auto on this small mesh (where Auto reads the records' layout) in the compact
// layout and reproduce every record, with the Jacobian of a replay with compact forced (to
// rounding). The same records labelled with the records' layout (as a file without the cells
// line reads) do not reproduce: the file's label, not the mesh size, chooses the layout.
BOOST_AUTO_TEST_CASE(gpu_replays_follow_the_files_cell_layout) {
    if (!haveGpu()) return;
    BOOST_REQUIRE(fm::cudaCellLayoutFor(fm::CellLayout::Auto, in.cells.size(), 0) == fm::CellLayout::Record);
    fm::RunOptions com = options(400000, 33, &spec), autoLayout = com;
    com.tuning.cudaCellLayout = fm::CellLayout::Compact;
    const fm::RunResult c = fm::runKernel("cuda", in, com);
    BOOST_REQUIRE_GT(c.detected.records.size(), 100u);
    std::stringstream file;
    fm::writeDetected(file, c.detected);
    const fm::DetectedPackets back = fm::readDetected(file, "compact.fmd");
    BOOST_REQUIRE_EQUAL(back.cells, "compact");
    const fm::ReplayResult followed = fm::replayKernel("cuda", in, autoLayout, spec, back);
    const fm::ReplayResult forced = fm::replayKernel("cuda", in, com, spec, back);
    BOOST_CHECK(!followed.cancelled);
    BOOST_CHECK_EQUAL(followed.mismatched, 0u);
    BOOST_CHECK_EQUAL(followed.replayed, forced.replayed);
    double diff = 0, total = 0;  // the same sums, added atomically in another order
    for (size_t d = 0; d < forced.jacobian.size(); ++d)
        for (size_t t = 0; t < forced.jacobian[d].size(); ++t) {
            diff += std::fabs(followed.jacobian[d][t] - forced.jacobian[d][t]);
            total += std::fabs(forced.jacobian[d][t]);
        }
    BOOST_CHECK_GT(total, 0.0);
    BOOST_CHECK_LE(diff, 1e-12 * total);
    fm::DetectedPackets labelledRecord = back;
    labelledRecord.cells = "record";
    const fm::ReplayResult other = fm::replayKernel("cuda", in, autoLayout, spec, labelledRecord);
    BOOST_TEST_MESSAGE("compact records replayed in the records' layout: " << other.mismatched << " of "
                                                                           << other.replayed << " do not reproduce");
    BOOST_CHECK_GT(other.mismatched, 0u);
}

// Records of `a` (the first `count`) that differ from b's in any field, path length or count.
size_t recordsDiffer(const fm::DetectedPackets& a, const fm::DetectedPackets& b, size_t count) {
    size_t differ = 0;
    for (size_t k = 0; k < count; ++k) {
        const fm::DetectedRecord &x = a.records[k], &y = b.records[k];
        differ += x.index != y.index || x.detector != y.detector || x.scatters != y.scatters || x.weight != y.weight ||
                  x.time != y.time || !std::equal(x.pos, x.pos + 3, y.pos) || !std::equal(x.dir, x.dir + 3, y.dir) ||
                  !std::equal(a.path(k), a.path(k) + a.regions, b.path(k)) ||
                  !std::equal(a.scatterCount(k), a.scatterCount(k) + a.regions, b.scatterCount(k));
    }
    return differ;
}

// With room for fewer records than detections, the GPU keeps what the CPU keeps: the first
// `room` records in (index, detector) order of the run with room for all, bit for bit (the
// packets past the main run's lowest lost index run again with their own streams), counted in
// `detected` and flagged as truncated; the tallies stay the main run's. Rooms of about half the
// detections and of fewer than one packet's worth of buffer slots (kMaxDetectors). The records
// ordered on the device and on the host (tuning cudaDeviceRecordOrder) are the same.
BOOST_AUTO_TEST_CASE(gpu_truncation_keeps_lowest_indices) {
    if (!haveGpu()) return;
    const uint64_t n = 400000;
    const fm::DetectionSpec roomy = withMax(n);  // a packet exits once: room for every detection
    const fm::RunResult full = fm::runKernel("cuda", in, options(n, 3, &roomy));
    const fm::DetectedPackets& all = full.detected;
    BOOST_REQUIRE(!all.truncated());
    BOOST_REQUIRE_GT(all.records.size(), 2000u);
    fm::RunOptions onHost = options(n, 3, &roomy);
    onHost.tuning.cudaDeviceRecordOrder = false;
    const fm::RunResult fullHost = fm::runKernel("cuda", in, onHost);
    BOOST_REQUIRE_EQUAL(fullHost.detected.records.size(), all.records.size());
    BOOST_CHECK_EQUAL(recordsDiffer(fullHost.detected, all, all.records.size()), 0u);
    for (const bool deviceOrder : {true, false})
        for (const uint64_t room : {uint64_t(all.records.size() / 2), uint64_t(7)}) {
            const fm::DetectionSpec small = withMax(room);
            fm::RunOptions o = options(n, 3, &small);
            o.tuning.cudaDeviceRecordOrder = deviceOrder;
            const fm::RunResult r = fm::runKernel("cuda", in, o);
            const fm::DetectedPackets& cut = r.detected;
            BOOST_TEST_MESSAGE("room " << room << (deviceOrder ? ", ordered on the device" : ", ordered on the host")
                                       << ": ran " << cut.refilledPackets << " of " << n << " packets again");
            BOOST_CHECK(cut.truncated());
            BOOST_CHECK_EQUAL(cut.detected, all.detected);
            BOOST_CHECK(cut.detectedWeight.empty());
            BOOST_REQUIRE_EQUAL(cut.records.size(), room);
            BOOST_REQUIRE_EQUAL(cut.pathLengths.size(), room * cut.regions);
            BOOST_REQUIRE_EQUAL(cut.scatterCounts.size(), room * cut.regions);
            BOOST_CHECK_EQUAL(recordsDiffer(cut, all, room), 0u);
            fmtest::checkSameEvents(r.events, full.events);
            BOOST_CHECK_EQUAL(r.packetsDone, n);
            BOOST_CHECK_LT(fmtest::l1(full.volume, r.volume), 1e-9);
        }
}

// The GPU replay of GPU records reproduces every packet; its per-tetra Jacobian summed over a
// region equals the records' per-region Jacobian (-sum w L_r); CPU records are refused.
BOOST_AUTO_TEST_CASE(gpu_replay_and_jacobian) {
    if (!haveGpu()) return;
    const fm::RunOptions o = options(200000, 5, &spec);
    const fm::DetectedPackets dp = fm::runKernel("cuda", in, o).detected;
    BOOST_REQUIRE_GT(dp.records.size(), 100u);
    const fm::ReplayResult rr = fm::replayKernel("cuda", in, o, spec, dp);
    BOOST_CHECK_EQUAL(rr.mismatched, 0u);
    BOOST_CHECK(!rr.cancelled);
    const std::vector<double> regional = fm::regionJacobian(dp);
    for (uint32_t d = 0; d < 2; ++d) {
        double perRegion[3] = {0, 0, 0};
        for (uint32_t t = 1; t <= mesh.tetraCount(); ++t) perRegion[mesh.region(t)] += rr.jacobian[d][t];
        for (uint32_t r = 1; r <= 2; ++r) {
            BOOST_TEST_MESSAGE("detector " << d << " region " << r << ": replay " << perRegion[r] << ", records "
                                           << regional[d * 2 + r - 1]);
            BOOST_CHECK_CLOSE(perRegion[r], regional[d * 2 + r - 1], 1e-3);  // float path sums vs double adds
        }
    }
    const fm::DetectedPackets cpu = fm::runKernel("cpu", in, options(2000, 5, &spec)).detected;
    BOOST_CHECK_THROW(fm::replayKernel("cuda", in, o, spec, cpu), fm::ParameterError);
}

// A model of 40 regions with one material's properties has the histories of the one-region
// model (no interface changes the index, so no draw differs): the same records, and each
// record's paths over the 40 regions (kept in the global scratch, above the local array's 31)
// sum to its one-region path, and its scatter counts to its scatter count.
BOOST_AUTO_TEST_CASE(gpu_many_regions_use_the_scratch) {
    if (!haveGpu()) return;
    const uint32_t slabs = 40;
    const fm::TetraMesh sliced = fm::makeBoxMesh({-10, -10, 0}, {10, 10, 10}, 40, 8, 5, [](const fm::Point3& c) {
        return 1u + std::min<uint32_t>(39, uint32_t((c[0] + 10) / 0.5));
    });
    fm::MaterialSet one, many;
    one.exterior(fm::Material(0, 0, 0, 1.0));
    many.exterior(fm::Material(0, 0, 0, 1.0));
    one.append(fm::Material(0.05, 5, 0.8, 1.4));
    for (uint32_t r = 0; r < slabs; ++r) many.append(fm::Material(0.05, 5, 0.8, 1.4));
    fm::PencilBeamSource beam;
    beam.position = {0, 0, 0};
    beam.direction = {0, 0, 1};
    fm::Detector near;
    near.centre = {3, 0, 0};
    near.radius = 1.5;
    const fm::TetraMesh single = fm::makeBoxMesh({-10, -10, 0}, {10, 10, 10}, 40, 8, 5, [](const fm::Point3&) { return 1u; });
    const fm::DetectionSpec sa = fm::compileDetectors(single, {near}, 1000000), sb = fm::compileDetectors(sliced, {near}, 1000000);
    const fm::DetectedPackets a = fm::runKernel("cuda", fm::packModel(single, one, beam), options(50000, 8, &sa)).detected;
    const fm::DetectedPackets b = fm::runKernel("cuda", fm::packModel(sliced, many, beam), options(50000, 8, &sb)).detected;
    BOOST_REQUIRE_EQUAL(b.regions, slabs);
    BOOST_REQUIRE_GT(a.records.size(), 50u);
    BOOST_REQUIRE_EQUAL(a.records.size(), b.records.size());
    size_t bad = 0, spread = 0;
    for (size_t k = 0; k < a.records.size(); ++k) {
        double sum = 0;
        uint32_t nonzero = 0;
        for (uint32_t r = 0; r < slabs; ++r) sum += b.path(k)[r], nonzero += b.path(k)[r] > 0;
        if (a.records[k].index != b.records[k].index || a.records[k].weight != b.records[k].weight ||
            std::fabs(sum - a.path(k)[0]) > 1e-4 * a.path(k)[0])
            ++bad;
        spread += nonzero > 1;
    }
    BOOST_CHECK_EQUAL(bad, 0u);
    BOOST_CHECK_GT(spread, a.records.size() / 2);  // most paths cross several slabs
    BOOST_CHECK_EQUAL(countSumsDiffer(b), 0u);  // the scatter counts kept in the global scratch
}

BOOST_AUTO_TEST_SUITE_END()
