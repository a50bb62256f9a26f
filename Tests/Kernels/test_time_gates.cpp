// SPDX-License-Identifier: GPL-3.0-or-later
// Time gates (Kernels/TimeGates.hpp): the gate specification and its errors, the bin lookup the
// kernels use, the size check; and the analytic time-domain references of the time-resolved
// tests (Tests/Kernels/DiffusionReference.hpp), checked against their CW forms and conservation.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <unistd.h>
#include <streambuf>
#include <string>

#include "Common/Errors.hpp"
#include "Kernels/TimeGates.hpp"
#include "Storage/TimeGated/TimeGatedFile.hpp"
#include "Tests/Kernels/DiffusionReference.hpp"

using namespace fm;
namespace dif = fmtest::diffusion;

namespace {

// Whether f throws a ParameterError whose message contains `part`.
template <class F>
bool throwsNaming(F f, const std::string& part) {
    try {
        f();
    } catch (const ParameterError& e) {
        BOOST_TEST_MESSAGE("error: " << e.what());
        return std::string(e.what()).find(part) != std::string::npos;
    }
    return false;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(time_gates)

BOOST_AUTO_TEST_CASE(gates_from_start_stop_step) {
    TimeGates g = makeTimeGates(0, 5, 0.1, "--time-gates");
    BOOST_TEST(g.count == 50u);
    BOOST_TEST(g.bins() == 52u);
    BOOST_TEST(g.gateStart(10) == 1.0, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(g.gateStop(49) == 5.0);
    TimeGates h = parseTimeGates("0.5, 2.5 ,0.25", "--time-gates");
    BOOST_TEST(h.count == 8u);
    BOOST_TEST(h.startNs == 0.5);
    BOOST_TEST(parseTimeGates("0 1 0.5", "timeGates").count == 2u);
    BOOST_TEST(describeTimeGates(h) == "0.5:2.5:0.25 ns (8 gates)");
    BOOST_TEST(describeTimeGates(TimeGates{}) == "off");
}

// Each bad gate specification names the parameter and what is wrong.
BOOST_AUTO_TEST_CASE(bad_gates_are_refused) {
    BOOST_TEST(throwsNaming([] { makeTimeGates(-1, 5, 0.1, "--time-gates"); }, "--time-gates: start must be >= 0"));
    BOOST_TEST(throwsNaming([] { makeTimeGates(0, 5, 0, "--time-gates"); }, "step must be > 0"));
    BOOST_TEST(throwsNaming([] { makeTimeGates(0, 5, -0.1, "--time-gates"); }, "step must be > 0"));
    BOOST_TEST(throwsNaming([] { makeTimeGates(2, 1, 0.1, "timeGates"); }, "timeGates: stop (1 ns) must be after start"));
    BOOST_TEST(throwsNaming([] { makeTimeGates(1, 1, 0.1, "x"); }, "must be after start"));
    BOOST_TEST(throwsNaming([] { makeTimeGates(0, 1, 0.3, "x"); }, "is not a whole number of gates"));
    BOOST_TEST(throwsNaming([] { makeTimeGates(0, NAN, 0.1, "x"); }, "finite"));
    BOOST_TEST(throwsNaming([] { makeTimeGates(0, INFINITY, 0.1, "x"); }, "finite"));
    BOOST_TEST(throwsNaming([] { makeTimeGates(0, 1e6, 1e-3, "x"); }, "more than the 100000 allowed"));
    BOOST_TEST(throwsNaming([] { parseTimeGates("0,5", "--time-gates"); }, "--time-gates: needs three numbers"));
    BOOST_TEST(throwsNaming([] { parseTimeGates("0,5,0.1,3", "--time-gates"); }, "needs three numbers"));
    BOOST_TEST(throwsNaming([] { parseTimeGates("0,five,0.1", "--time-gates"); }, "'five' is not a number"));
    BOOST_TEST(throwsNaming([] { parseTimeGates("", "--time-gates"); }, "needs three numbers"));
}

// The bin of a clock value: gates by optical path length (c * t), early and late bins outside.
BOOST_AUTO_TEST_CASE(bins_of_the_clock) {
    const TimeGates g = makeTimeGates(0.1, 1.1, 0.1, "x");  // 10 gates
    const GateBins b = gateBins(g);
    auto binAt = [&](double tNs) { return b.bin(float(tNs * kLightMmPerNs)); };
    BOOST_TEST(binAt(0.0) == g.earlyBin());
    BOOST_TEST(binAt(0.0999) == g.earlyBin());
    BOOST_TEST(binAt(0.1001) == 0u);
    BOOST_TEST(binAt(0.25) == 1u);
    BOOST_TEST(binAt(1.0999) == 9u);
    BOOST_TEST(binAt(1.1001) == g.lateBin());
    BOOST_TEST(binAt(1e6) == g.lateBin());
    BOOST_TEST(b.bin(INFINITY) == g.lateBin());
    BOOST_TEST(b.bin(NAN) == g.lateBin());
    // Every gate's middle maps to that gate.
    for (uint32_t k = 0; k < g.count; ++k) BOOST_TEST(binAt(0.5 * (g.gateStart(k) + g.gateStop(k))) == k);
}

// A gated array beyond the limit is refused with its size and the advice given.
BOOST_AUTO_TEST_CASE(gated_size_limit) {
    const TimeGates g = makeTimeGates(0, 10, 0.01, "x");  // 1000 gates
    BOOST_TEST(gatedArrayBytes(g, 1000) == 8.0 * 1002 * 1000);
    BOOST_CHECK_NO_THROW(checkGatedSize(g, 100000, "the gated volume tally", "use fewer gates"));
    BOOST_TEST(throwsNaming([&] { checkGatedSize(g, 2000000, "the gated volume tally over 2000000 tetras", "use fewer gates"); },
                            "the gated volume tally over 2000000 tetras with 1000 gates (+2 bins before and after) needs 16"));
}

// The infinite-medium Green's function: its time integral is the CW Green's function, and the
// photons it describes (its integral over space, / v) decay as exp(-mu_a v t).
BOOST_AUTO_TEST_CASE(infinite_medium_reference) {
    const dif::Medium m{0.02, 1.0, 1.4};
    for (double r : {3.0, 8.0, 15.0}) {
        // The integrand vanishes below ~r^2/(400 D v) and beyond ~40/(mu_a v): split for accuracy.
        const double tPeak = r * r / (6 * m.D() * m.v());
        const double I = dif::simpson([&](double t) { return dif::infiniteFluenceRate(m, r, t); }, 0, tPeak, 20000) +
                         dif::simpson([&](double t) { return dif::infiniteFluenceRate(m, r, t); }, tPeak, 60 / (m.mua * m.v()), 200000);
        BOOST_TEST(I == dif::infiniteFluenceCW(m, r), boost::test_tools::tolerance(1e-6));
    }
    for (double t : {0.05, 0.3, 1.0}) {
        const double spread = std::sqrt(6 * m.D() * m.v() * t);
        const double N = dif::simpson([&](double r) { return 4 * M_PI * r * r * dif::infiniteFluenceRate(m, r, t); }, 0,
                                      12 * spread, 20000);
        BOOST_TEST(N / m.v() == std::exp(-m.mua * m.v() * t), boost::test_tools::tolerance(1e-8));
    }
}

// The semi-infinite TPSF: its time integral is Farrell's CW reflectance of the same dipole,
// for a matched (A = 1) and a mismatched (A = 2.5) boundary.
BOOST_AUTO_TEST_CASE(semi_infinite_reference) {
    const dif::Medium m{0.01, 1.2, 1.0};
    for (double A : {1.0, 2.5})
        for (double rho : {2.0, 10.0, 20.0}) {
            auto R = [&](double t) { return dif::semiInfiniteReflectance(m, rho, t, A); };
            const double tPeak = rho * rho / (6 * m.D() * m.v()) + 1e-3;
            const double I = dif::simpson(R, 0, tPeak, 20000) + dif::simpson(R, tPeak, 60 / (m.mua * m.v()), 200000);
            BOOST_TEST(I == dif::semiInfiniteReflectanceCW(m, rho, A), boost::test_tools::tolerance(1e-6));
        }
}

namespace {

std::string tempPath(const std::string& name) {
    return "/tmp/fm_test_time_gates_" + std::to_string(::getpid()) + "_" + name;
}

// Whether reading `path` throws a FormatError naming the file and containing `part`.
bool readRefused(const std::string& path, const std::string& part) {
    try {
        readTimeGated(path);
    } catch (const FormatError& e) {
        BOOST_TEST_MESSAGE("error: " << e.what());
        const std::string w = e.what();
        return w.find(path) != std::string::npos && w.find(part) != std::string::npos;
    }
    return false;
}

// Overwrites `bytes` at `offset` of a copy of `from`, written to `to`; or truncates it to `size`.
void corrupt(const std::string& from, const std::string& to, size_t offset, const std::string& bytes, long size = -1) {
    std::ifstream in(from, std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    data.replace(offset, bytes.size(), bytes);
    if (size >= 0) data.resize(size_t(size));
    std::ofstream(to, std::ios::binary) << data;
}

}  // namespace

// The .fmtg file: what is written is read back exactly, with and without standard errors.
BOOST_AUTO_TEST_CASE(gated_file_round_trip) {
    TimeGatedArray a;
    a.gates = makeTimeGates(0.25, 1.25, 0.5, "x");
    a.quantity = GatedQuantity::exitFluence;
    a.elements = 3;
    a.units = "J/mm^2";
    for (int i = 0; i < 12; ++i) a.values.push_back(i * 0.1 + 1e-300);
    a.values[5] = NAN;
    const std::string p = tempPath("a.fmtg");
    writeTimeGated(p, a);
    TimeGatedArray b = readTimeGated(p);
    BOOST_TEST(b.gates.count == 2u);
    BOOST_TEST(b.gates.startNs == 0.25);
    BOOST_TEST(b.gates.stepNs == 0.5);
    BOOST_TEST(int(b.quantity) == int(GatedQuantity::exitFluence));
    BOOST_TEST(b.elements == 3u);
    BOOST_TEST(b.units == "J/mm^2");
    BOOST_TEST(b.stderrs.empty());
    BOOST_TEST(std::isnan(b.values[5]));
    for (int i = 0; i < 12; ++i)
        if (i != 5) BOOST_TEST(b.values[i] == a.values[i]);
    BOOST_TEST(b.at(3, 2) == a.values[11]);
    a.stderrs.assign(12, 0.5);
    writeTimeGated(p, a);
    BOOST_TEST(readTimeGated(p).stderrs == a.stderrs);
    a.quantity = GatedQuantity::exitFluenceListed;  // per listed face, as fullmonte-run writes
    writeTimeGated(p, a);
    BOOST_TEST(int(readTimeGated(p).quantity) == 3);
    std::remove(p.c_str());
}

// gatedValues: each bin's elements without the dummy, times the scale, over their divisors (NaN
// where a divisor is 0: fluence undefined where mu_a is 0); counts that do not match refused.
BOOST_AUTO_TEST_CASE(gated_values_scale_and_divide) {
    const TimeGates g = makeTimeGates(0, 1, 0.5, "gates");  // 4 bins
    std::vector<double> perIndex;
    for (int b = 0; b < 4; ++b)
        for (int i = 0; i < 3; ++i) perIndex.push_back(i == 0 ? 1e9 : 10.0 * b + i);  // index 0: the dummy
    const std::vector<double> v = gatedValues(g, perIndex, 2.0, {0.0, 4.0, 0.0});
    BOOST_REQUIRE_EQUAL(v.size(), 8u);
    for (int b = 0; b < 4; ++b) {
        BOOST_TEST(v[b * 2] == (10.0 * b + 1) * 2.0 / 4.0);
        BOOST_TEST(std::isnan(v[b * 2 + 1]));
    }
    BOOST_TEST(gatedValues(g, perIndex, 0.5)[3] == 6.0);  // bin 1, index 2: 12 x 0.5
    BOOST_CHECK_THROW(gatedValues(g, perIndex, 1.0, {0.0, 1.0}), Error);
    perIndex.pop_back();
    BOOST_CHECK_THROW(gatedValues(g, perIndex, 1.0), Error);
}

// The element lists beside gated files: ids (and a face's points), '#' lines skipped; anything
// else on a line is a FormatError naming the file and the line.
BOOST_AUTO_TEST_CASE(gated_element_lists) {
    const std::string p = tempPath("list.txt");
    auto write = [&](const std::string& text) { std::ofstream(p) << text; };
    write("# face p1 p2 p3\n4 1 2 3\n\n9\t2 3 5\r\n");
    GatedElementList l = readGatedElementList(p, true);
    BOOST_TEST(l.ids == (std::vector<uint32_t>{4, 9}), boost::test_tools::per_element());
    BOOST_TEST(l.points[1][2] == 5u);
    BOOST_TEST(l.lines == (std::vector<size_t>{2, 4}), boost::test_tools::per_element());
    write("# tetra ids; regions 2\n7\n12\n");
    BOOST_TEST(readGatedElementList(p, false).ids == (std::vector<uint32_t>{7, 12}), boost::test_tools::per_element());
    auto refused = [&](const std::string& text, bool faces, const std::string& part) {
        write(text);
        try {
            readGatedElementList(p, faces);
        } catch (const FormatError& e) {
            BOOST_TEST_MESSAGE("error: " << e.what());
            return std::string(e.what()).find(p + part) != std::string::npos;
        }
        return false;
    };
    BOOST_TEST(refused("# x\n4 1 2\n", true, ":2: '4 1 2' is not a face id and its three point ids"));
    BOOST_TEST(refused("4 1 2 3 8\n", true, ":1: '4 1 2 3 8' has more than a face id and its three point ids"));
    BOOST_TEST(refused("7\n0\n", false, ":2: '0' is not a tetra id"));
    BOOST_TEST(refused("-3\n", false, ":1: '-3' is not a tetra id"));
    BOOST_TEST(refused("4294967296\n", false, ":1: '4294967296' is not a tetra id"));
    BOOST_TEST(refused("7 8\n", false, ":1: '7 8' has more than a tetra id"));
    std::remove(p.c_str());
    try {
        readGatedElementList(p, false);
        BOOST_ERROR("a missing list read");
    } catch (const FormatError& e) {
        BOOST_TEST(std::string(e.what()).find("cannot open") != std::string::npos);
    }
}

// Each damaged header field, and a wrong size, is a FormatError naming the file and the field.
BOOST_AUTO_TEST_CASE(gated_file_bad_inputs) {
    TimeGatedArray a;
    a.gates = makeTimeGates(0, 1, 0.5, "x");
    a.elements = 2;
    a.values.assign(8, 1.0);
    const std::string p = tempPath("good.fmtg"), q = tempPath("bad.fmtg");
    writeTimeGated(p, a);
    auto u32 = [](uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); };
    auto f64 = [](double v) { return std::string(reinterpret_cast<const char*>(&v), 8); };
    corrupt(p, q, 0, "FMTGATEX");
    BOOST_TEST(readRefused(q, "magic"));
    corrupt(p, q, 8, u32(2));
    BOOST_TEST(readRefused(q, "version 2"));
    corrupt(p, q, 12, u32(0x04030201));
    BOOST_TEST(readRefused(q, "byte-order mark"));
    corrupt(p, q, 16, u32(7));
    BOOST_TEST(readRefused(q, "quantity 7"));
    corrupt(p, q, 16, u32(4));
    BOOST_TEST(readRefused(q, "quantity 4 is not 1, 2 or 3"));
    corrupt(p, q, 20, u32(3));
    BOOST_TEST(readRefused(q, "do not match start/stop/step"));
    corrupt(p, q, 28, u32(2));
    BOOST_TEST(readRefused(q, "standard-error flag 2"));
    corrupt(p, q, 48, f64(-1));
    BOOST_TEST(readRefused(q, "header gates"));
    corrupt(p, q, 0, "", 100);
    BOOST_TEST(readRefused(q, "shorter than the 128-byte"));
    corrupt(p, q, 0, "", 128 + 8 * 7);
    BOOST_TEST(readRefused(q, "expected 192"));
    corrupt(p, q, 28, u32(1));
    BOOST_TEST(readRefused(q, "expected 256"));
    BOOST_TEST(readRefused(tempPath("missing.fmtg"), "cannot open"));
    // 32 unit characters without a terminating NUL (found by the fuzzer: read as 32 characters).
    corrupt(p, q, 64, std::string(32, 'J'));
    BOOST_TEST(readRefused(q, "units field has no terminating NUL"));
    // A header whose size is beyond 2^64 bytes is refused with that size (found by the fuzzer:
    // converting it to an integer for the message was undefined).
    const uint64_t huge = uint64_t(1) << 62;
    corrupt(p, q, 32, std::string(reinterpret_cast<const char*>(&huge), 8));
    char want[64];
    std::snprintf(want, sizeof want, "expected %.0f for", 128.0 + 8.0 * 4 * double(huge));
    BOOST_TEST(readRefused(q, want));
    // A writer given values that do not fit the gates refuses instead of writing them.
    a.values.pop_back();
    BOOST_CHECK_THROW(writeTimeGated(q, a), Error);
    std::remove(p.c_str());
    std::remove(q.c_str());
}

// A stream that cannot tell its size (a pipe) is refused by name, not read with a size of 2^64 - 1.
BOOST_AUTO_TEST_CASE(gated_stream_without_size_refused) {
    struct NoSeek : std::streambuf {};  // seekoff fails: tellg() is -1
    NoSeek buf;
    std::istream in(&buf);
    try {
        readTimeGated(in, "pipe.fmtg");
        BOOST_FAIL("a stream without a size was read");
    } catch (const FormatError& e) {
        BOOST_TEST_MESSAGE("error: " << e.what());
        BOOST_TEST(std::string(e.what()).find("pipe.fmtg: cannot find the file's size") != std::string::npos);
    }
}

BOOST_AUTO_TEST_SUITE_END()
