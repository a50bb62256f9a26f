// SPDX-License-Identifier: GPL-3.0-or-later
// Per-photon exit records of the layered model (Kernels/McmlRecords.hpp, issue 28 item 4 "the
// same for MCML"): the record weights per surface add up to the run's Rd and Tt; recording
// changes no history (the CW tallies equal the lanes' run, batches give the same records); the
// lowest photon indices are kept; reweighted to another mu_a of one layer the records equal a
// fresh run within statistics; each record's time of flight is its optical path over the
// layers, and its TPSF equals the run's Rd(r, t) gates; fullmonte-mcml --records writes NAME.fmd
// (and NAME.mch) and refuses bad requests by name.
#include <boost/test/unit_test.hpp>

#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>

#include "Common/Errors.hpp"
#include "Geometry/Layered.hpp"
#include "Kernels/Detection.hpp"
#include "Kernels/McmlKernel.hpp"
#include "Kernels/McmlRecords.hpp"
#include "Storage/Detected/DetectedFile.hpp"
#include "Storage/Detected/MchFile.hpp"
#include "Storage/MCML/MCMLKernelRun.hpp"
#include "Storage/MCML/MCOReader.hpp"
#include "Tests/Kernels/McmlThreeLayers.hpp"

using namespace fm;
namespace fs = std::filesystem;

namespace {

MCMLRun threeLayers() { return fmtest::threeMismatchedLayers(); }

RunOptions options(const MCMLRun& run, uint64_t packets, uint64_t seed = 9) {
    return fmtest::recordRunOptions(run, packets, seed);
}

using fmtest::sum;

using fmtest::signalOf;
using Signal = fmtest::RecordSignal;

struct RecordedRun {
    McmlTallies t;
    DetectionSpec spec;
};

RecordedRun recordedRun(const MCMLRun& run, RunOptions o, uint64_t keep = 1000000, double radius = 0) {
    const KernelInput in = packLayered(layeredFromMcml(run));
    RecordedRun r;
    r.spec = layeredDetection(in, keep, radius);
    o.detection = &r.spec;
    r.t = runMcmlKernel("cpu", in, mcmlGrid(run), o);
    return r;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(mcml_records)

// The top records' weights add up to the raw Rd(r, a) total and the bottom ones' to Tt(r, a):
// the same floats, added in another order (to 2 x adds x DBL_EPSILON). The CW tallies equal
// those of a run without records (the lanes) to summation order: the same histories.
BOOST_AUTO_TEST_CASE(record_weights_are_rd_and_tt_and_change_no_history) {
    const MCMLRun run = threeLayers();
    const RecordedRun r = recordedRun(run, options(run, 20000));
    const McmlTallies plain = runMcmlKernel("cpu", packLayered(layeredFromMcml(run)), mcmlGrid(run), options(run, 20000));
    const DetectedPackets& dp = r.t.records;
    BOOST_REQUIRE_EQUAL(dp.model, "layered");
    BOOST_REQUIRE_EQUAL(dp.regions, 3u);
    BOOST_REQUIRE_EQUAL(dp.detectors.size(), 2u);
    BOOST_REQUIRE(!dp.truncated());
    BOOST_REQUIRE_EQUAL(dp.packets, 20000u);
    BOOST_CHECK_CLOSE(dp.mua[1], 0.05, 1e-4);  // layer 2: 0.5 /cm
    const Signal s = signalOf(dp);
    const double Rd = sum(r.t.reflectedRA), Tt = sum(r.t.transmittedRA);
    BOOST_REQUIRE_GT(Rd, 100);
    BOOST_REQUIRE_GT(Tt, 100);
    const double bound = 2.0 * double(dp.records.size()) * DBL_EPSILON;
    BOOST_CHECK_LE(std::fabs(s.total[0] - Rd), bound * Rd);
    BOOST_CHECK_LE(std::fabs(s.total[1] - Tt), bound * Tt);
    BOOST_CHECK_LE(std::fabs(dp.detectedWeight[0] - Rd), bound * Rd);
    BOOST_CHECK_EQUAL(dp.detected, r.t.events.exit);  // every exit is on one of the two surfaces
    BOOST_CHECK_LE(std::fabs(sum(plain.reflectedRA) - Rd), bound * Rd);
    BOOST_CHECK_LE(std::fabs(sum(plain.transmittedRA) - Tt), bound * Tt);
    BOOST_CHECK_EQUAL(plain.events.absorb, r.t.events.absorb);
    const float zTop = float(dp.detectors[0].centre[2]), zBot = float(dp.detectors[1].centre[2]);
    BOOST_CHECK_CLOSE(zBot - zTop, 2.5, 1e-4);  // 0.25 cm of layers
    size_t bad = 0;
    for (size_t k = 0; k < dp.records.size(); ++k) {
        const DetectedRecord& rec = dp.records[k];
        const bool top = rec.detector == 0;
        bad += (top ? rec.dir[2] >= 0 : rec.dir[2] <= 0) || std::fabs(rec.pos[2] - (top ? zTop : zBot)) > 1e-4f ||
               (k > 0 && rec.index <= dp.records[k - 1].index);
    }
    BOOST_CHECK_EQUAL(bad, 0u);
}

// Batches (contiguous photon ranges) give the records of one run; a run keeping 100 records
// keeps its lowest photon indices and still counts and weighs every detection.
BOOST_AUTO_TEST_CASE(batches_and_truncation_keep_the_lowest_indices) {
    const MCMLRun run = threeLayers();
    const RecordedRun whole = recordedRun(run, options(run, 6000));
    const KernelInput in = packLayered(layeredFromMcml(run));
    const DetectionSpec spec = layeredDetection(in, 100);
    RunOptions o = options(run, 6000);
    o.batches = 4;
    o.detection = &spec;
    McmlTallies batched;
    runMcmlBatches("cpu", in, run, 0.0, o, &batched);
    const DetectedPackets &a = whole.t.records, &b = batched.records;
    BOOST_REQUIRE_EQUAL(b.records.size(), 100u);
    BOOST_CHECK(b.truncated());
    BOOST_CHECK_EQUAL(b.detected, a.detected);
    BOOST_CHECK_EQUAL(b.packets, 6000u);
    BOOST_CHECK_CLOSE(b.detectedWeight[1], a.detectedWeight[1], 1e-10);
    BOOST_REQUIRE_EQUAL(b.detectedWeightError.size(), 2u);
    BOOST_CHECK_GT(b.detectedWeightError[0], 0);
    size_t differ = 0;
    for (size_t k = 0; k < 100; ++k)
        differ += a.records[k].index != b.records[k].index || a.records[k].weight != b.records[k].weight ||
                  a.path(k)[1] != b.path(k)[1];
    BOOST_CHECK_EQUAL(differ, 0u);
}

// Records reweighted to another mu_a of layer 2 (0.5 -> 1.5 /cm) equal a fresh run at that mu_a
// (another seed) within statistics, per surface: z from the two totals' variances.
BOOST_AUTO_TEST_CASE(reweighted_records_match_a_fresh_run) {
    MCMLRun run = threeLayers();
    const RecordedRun base = recordedRun(run, options(run, 40000));
    std::vector<double> mua = base.t.records.mua;
    mua[1] = 0.15;
    run.layers[1].mua = 1.5;
    const RecordedRun fresh = recordedRun(run, options(run, 40000, 77));
    fmtest::checkReweightedMatchesFresh(base.t.records, fresh.t.records, mua);
}

// Each record's time of flight is its optical path over the layers, sum n_r L_r, over c; the
// records' TPSF (detectorTpsf) equals the run's Rd(r, t) summed over r gate by gate, up to the
// records whose time rounds across a gate edge.
BOOST_AUTO_TEST_CASE(paths_match_time_of_flight_and_gates) {
    const MCMLRun run = threeLayers();
    RunOptions o = options(run, 10000);
    o.gates = makeTimeGates(0, 0.05, 0.005, "gates");
    const RecordedRun r = recordedRun(run, o);
    const DetectedPackets& dp = r.t.records;
    size_t bad = 0;
    for (size_t k = 0; k < dp.records.size(); ++k) {
        double opl = 0;
        for (uint32_t l = 0; l < dp.regions; ++l) opl += dp.n[l] * dp.path(k)[l];
        bad += std::fabs(opl / kLightSpeedMmPerNs - dp.records[k].time) > 1e-5 * dp.records[k].time + 1e-9;
    }
    BOOST_CHECK_EQUAL(bad, 0u);
    fmtest::checkTpsfMatchesGates(r.t, run.nr, o.gates);
}

// A disk of radius R on each surface records exactly the whole-surface records within R of the
// axis (the same histories).
BOOST_AUTO_TEST_CASE(disk_records_are_the_surface_records_within_the_radius) {
    const MCMLRun run = threeLayers();
    const RecordedRun all = recordedRun(run, options(run, 5000)), disk = recordedRun(run, options(run, 5000), 1000000, 1.0);
    size_t inside = 0;
    for (const DetectedRecord& rec : all.t.records.records) inside += std::hypot(rec.pos[0], rec.pos[1]) <= 1.0;
    BOOST_CHECK_EQUAL(disk.t.records.records.size(), inside);
    BOOST_CHECK_LT(inside, all.t.records.records.size());
    BOOST_CHECK_GT(inside, 0u);
}

// The .fmd of layered records says "model layered" and reads back as such; a model the reader
// does not know is a FormatError naming the file and line.
BOOST_AUTO_TEST_CASE(fmd_header_names_the_layered_model) {
    const MCMLRun run = threeLayers();
    const RecordedRun r = recordedRun(run, options(run, 200));
    std::stringstream file;
    writeDetected(file, r.t.records);
    const std::string text = file.str();
    BOOST_REQUIRE_NE(text.find("\nmodel layered\n"), std::string::npos);
    std::istringstream in(text);
    const DetectedPackets back = readDetected(in, "r.fmd");
    BOOST_CHECK_EQUAL(back.model, "layered");
    BOOST_CHECK_EQUAL(back.records.size(), r.t.records.records.size());
    std::string bad = text;
    bad.replace(bad.find("model layered"), 13, "model slabsss");
    std::istringstream badIn(bad);
    BOOST_CHECK_EXCEPTION(readDetected(badIn, "r.fmd"), FormatError, [](const FormatError& e) {
        return std::string(e.what()).find("r.fmd:5") != std::string::npos &&
               std::string(e.what()).find("model must be mesh or layered") != std::string::npos;
    });
}

// A zero record count, a negative radius and GPU records of more layers than a GPU thread keeps
// paths for are refused by name.
BOOST_AUTO_TEST_CASE(refusals) {
    const MCMLRun run = threeLayers();
    const KernelInput in = packLayered(layeredFromMcml(run));
    auto names = [](const char* what) {
        return [what](const ParameterError& e) { return std::string(e.what()).find(what) != std::string::npos; };
    };
    BOOST_CHECK_EXCEPTION(layeredDetection(in, 0), ParameterError, names("max records"));
    BOOST_CHECK_EXCEPTION(layeredDetection(in, 10, -1), ParameterError, names("radius"));
    BOOST_CHECK_EXCEPTION(layeredDetection(in, 10, NAN), ParameterError, names("radius"));
    const DetectionSpec spec = layeredDetection(in, 10);
    RunOptions o = options(run, 100);
    o.detection = &spec;
    MCMLRun many = run;
    many.layers.assign(31, run.layers[0]);
    const KernelInput manyIn = packLayered(layeredFromMcml(many));
    const DetectionSpec manySpec = layeredDetection(manyIn, 10);
    o.detection = &manySpec;
    BOOST_CHECK_EXCEPTION(runMcmlKernel("cuda", manyIn, mcmlGrid(many), o), ParameterError,
                          names("MCML per-photon records on the GPU: at most 30 layers, the model has 31"));
}

// fullmonte-mcml --records --mch writes NAME.fmd (a layered .fmd whose top records add up to the
// .mco's Rd) and NAME.mch; bad options are refused naming the option, with nothing written.
BOOST_AUTO_TEST_CASE(command_line_writes_records) {
    fs::path dir = fs::temp_directory_path() / ("fm_mcml_records_" + std::to_string(std::random_device{}()));
    fs::create_directories(dir);
    std::ofstream(dir / "a.mci") << "1.0\n1\na.mco A\n3000\n0.01 0.02\n10 10 5\n1\n1.0\n1.37 1 100 0.9 0.1\n1.0\n";
    const std::string exe = FM_MCML_EXE, mci = (dir / "a.mci").string(), log = (dir / "log").string();
    int rc = std::system((exe + " " + mci + " --threads 2 --quiet --records --mch > " + log + " 2>&1").c_str());
    BOOST_REQUIRE_EQUAL(rc, 0);
    const DetectedPackets dp = readDetected((dir / "a.fmd").string());
    BOOST_CHECK_EQUAL(dp.model, "layered");
    BOOST_CHECK_EQUAL(dp.regions, 1u);
    BOOST_CHECK_EQUAL(dp.packets, 3000u);
    const MCMLResult m = readMCO((dir / "a.mco").string());
    BOOST_CHECK_CLOSE(signalOf(dp).total[0] / 3000.0, m.Rd, 1e-3);  // percent: the .mco prints 6 digits
    BOOST_CHECK_CLOSE(signalOf(dp).total[1] / 3000.0, m.Tt, 1e-3);
    const MchFile mch = readMch((dir / "a.mch").string());
    BOOST_CHECK_EQUAL(mch.savedphoton, dp.records.size());
    auto refused = [&](const std::string& args, const std::string& named) {
        fs::remove(dir / "a.fmd");
        const int code = std::system((exe + " " + mci + " " + args + " > " + log + " 2>&1").c_str());
        std::ifstream l(log);
        const std::string msg((std::istreambuf_iterator<char>(l)), std::istreambuf_iterator<char>());
        BOOST_CHECK_MESSAGE(code != 0 && msg.find(named) != std::string::npos && !fs::exists(dir / "a.fmd"),
                            args << ": exit " << code << ", message: " << msg);
    };
    refused("--records --max-detected 0", "--max-detected = 0 is smaller than 1");
    refused("--records --max-detected x", "--max-detected: 'x' is not a whole number");
    refused("--max-detected 10", "--max-detected needs --records");
    refused("--records-radius 1", "--records-radius needs --records");
    refused("--mch", "--mch needs --records");
    refused("--records --records-radius -1", "--records-radius must be a finite number of mm > 0");
    refused("--records --records-radius 1e999", "--records-radius must be a finite number of mm > 0");
    refused("--records --output-dir " + (dir / "a.mci" / "sub").string(),
            (dir / "a.mci" / "sub").string() + ": cannot create the output folder");
    std::error_code ignored;
    fs::remove_all(dir, ignored);
}

BOOST_AUTO_TEST_SUITE_END()
