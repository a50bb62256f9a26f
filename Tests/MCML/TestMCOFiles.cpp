// SPDX-License-Identifier: GPL-3.0-or-later
// readMCO / writeMCO: the real CUDAMCML reference output, byte layout, round trips, errors.

#include "MCMLTestHelpers.hpp"

#include "Storage/MCML/MCOReader.hpp"
#include "Storage/MCML/MCOWriter.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <numeric>
#include <random>
#include <sstream>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#define FM_TEST_HAVE_FIFO 1
#endif

using namespace MCMLTest;
namespace utf = boost::unit_test;

namespace {

const char* const kReference = "mcml/skin7/sevenlayer_600nm_100M.mco";

std::vector<std::string> readLines(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);)
        lines.push_back(l);
    return lines;
}

std::vector<std::string> splitLines(const std::string& text)
{
    std::istringstream in(text);
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);)
        lines.push_back(l);
    return lines;
}

std::string joinLines(const std::vector<std::string>& lines)
{
    std::string s;
    for (const std::string& l : lines)
        s += l + "\n";
    return s;
}

// Index (0-based) of the first line starting with `prefix`.
std::size_t findLine(const std::vector<std::string>& lines, const std::string& prefix)
{
    for (std::size_t i = 0; i < lines.size(); ++i)
        if (lines[i].rfind(prefix, 0) == 0)
            return i;
    BOOST_FAIL("no line starts with " << prefix);
    return 0;
}

// A value that spans many magnitudes and both signs, as tallies and test data do.
double randomValue(std::mt19937_64& rng)
{
    std::uniform_real_distribution<double> mantissa(1.0, 10.0);
    std::uniform_int_distribution<int> exponent(-15, 8);
    std::uniform_int_distribution<int> kind(0, 19);
    const int k = kind(rng);
    if (k == 0)
        return 0.0;
    const double v = mantissa(rng) * std::pow(10.0, exponent(rng));
    return k == 1 ? -v : v;
}

std::vector<double> randomValues(std::mt19937_64& rng, std::size_t n)
{
    std::vector<double> v(n);
    for (double& x : v)
        x = randomValue(rng);
    return v;
}

MCMLResult randomResult(std::mt19937_64& rng, unsigned nz, unsigned nr, unsigned na, unsigned nl)
{
    std::uniform_real_distribution<double> u(0.0, 1.0);
    MCMLResult r;
    r.run.outName = "random.mco";
    r.run.photons = 123456789012ULL;
    r.run.dz = 1e-3 + u(rng);
    r.run.dr = 1e-3 + u(rng);
    r.run.nz = nz;
    r.run.nr = nr;
    r.run.na = na;
    r.run.nAbove = 1.0;
    r.run.nBelow = 1.0 + u(rng);
    for (unsigned i = 0; i < nl; ++i)
        r.run.layers.push_back({1.0 + u(rng), 10 * u(rng), 1000 * u(rng), 2 * u(rng) - 1, u(rng)});
    r.userTime = 1000 * u(rng);
    r.Rsp = u(rng);
    r.Rd = u(rng);
    r.A = u(rng);
    r.Tt = u(rng) * 1e-7;
    r.A_l = randomValues(rng, nl);
    r.A_z = randomValues(rng, nz);
    r.Rd_r = randomValues(rng, nr);
    r.Rd_a = randomValues(rng, na);
    r.Tt_r = randomValues(rng, nr);
    r.Tt_a = randomValues(rng, na);
    r.A_rz = randomValues(rng, std::size_t(nr) * nz);
    r.Rd_ra = randomValues(rng, std::size_t(nr) * na);
    r.Tt_ra = randomValues(rng, std::size_t(nr) * na);
    return r;
}

// True when `read` is `written` printed with `digits` significant digits and parsed back.
bool samePrinted(double written, double read, int digits)
{
    const double halfLastDigit = 0.5 * std::pow(10.0, 1 - digits);
    return std::fabs(read - written) <= halfLastDigit * std::fabs(written) * (1 + 1e-9);
}

void checkPrinted(const char* name, const std::vector<double>& w, const std::vector<double>& r,
                  int digits)
{
    BOOST_TEST_CONTEXT(name)
    {
        BOOST_TEST_REQUIRE(w.size() == r.size());
        for (std::size_t i = 0; i < w.size(); ++i)
            BOOST_CHECK_MESSAGE(samePrinted(w[i], r[i], digits),
                                "[" << i << "] wrote " << std::setprecision(17) << w[i]
                                    << " read " << r[i]);
    }
}

void checkSameRun(const MCMLRun& a, const MCMLRun& b)
{
    BOOST_TEST(a.outName == b.outName);
    BOOST_TEST(a.outFormat == b.outFormat);
    BOOST_TEST(a.photons == b.photons);
    BOOST_TEST((a.dz == b.dz && a.dr == b.dr));
    BOOST_TEST((a.nz == b.nz && a.nr == b.nr && a.na == b.na));
    BOOST_TEST((a.nAbove == b.nAbove && a.nBelow == b.nBelow));
    BOOST_TEST_REQUIRE(a.layers.size() == b.layers.size());
    for (std::size_t i = 0; i < a.layers.size(); ++i)
    {
        const MCMLLayer &x = a.layers[i], &y = b.layers[i];
        BOOST_CHECK_MESSAGE(x.n == y.n && x.mua == y.mua && x.mus == y.mus && x.g == y.g &&
                                x.d == y.d,
                            "layer " << i + 1 << " differs");
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(MCOFiles)

BOOST_AUTO_TEST_CASE(reference_values, *utf::precondition(NeedsSharedFile{kReference}))
{
    const MCMLResult r = readMCO(sharedDataFile(kReference));
    BOOST_TEST(r.userTime == 67.333);
    BOOST_TEST(r.run.outName == "sevenlayer_600nm_100M.mco");
    BOOST_TEST(r.run.photons == 100000000u);
    BOOST_TEST((r.run.nz == 500u && r.run.nr == 200u && r.run.na == 30u));
    BOOST_TEST(r.run.layers.size() == 7u);
    BOOST_TEST(r.run.layers.at(4).g == 0.76);

    BOOST_TEST(r.Rsp == 0.0438845);
    BOOST_TEST(r.Rd == 0.562403);
    BOOST_TEST(r.A == 0.390422);
    BOOST_TEST(r.Tt == 0.00326463);
    BOOST_TEST(r.Rsp + r.Rd + r.A + r.Tt == 1.0, boost::test_tools::tolerance(1e-4));

    BOOST_TEST_REQUIRE(r.A_l.size() == 7u);
    BOOST_TEST(r.A_l[0] == 0.00252829);
    BOOST_TEST(r.A_l[6] == 0.0445402);
    BOOST_TEST(std::accumulate(r.A_l.begin(), r.A_l.end(), 0.0) == r.A,
               boost::test_tools::tolerance(1e-5));

    BOOST_TEST(r.A_z.size() == 500u);
    BOOST_TEST(r.A_z.at(0) == 1.264147);
    BOOST_TEST(r.Rd_r.size() == 200u);
    BOOST_TEST(r.Rd_r.at(0) == 244.0045);
    BOOST_TEST(r.Rd_a.size() == 30u);
    BOOST_TEST(r.Tt_r.size() == 200u);
    BOOST_TEST(r.Tt_a.size() == 30u);
    BOOST_TEST(r.Tt_a.at(0) == 1.149891e-3);

    BOOST_TEST_REQUIRE(r.A_rz.size() == 200u * 500u);
    BOOST_TEST(r.A_rz[0] == 1178.372);  // A[0][0]
    BOOST_TEST(r.A_rz[5] == 2165.177);  // A[0][5]: r is the outer index
    BOOST_TEST(r.Rd_ra.size() == 200u * 30u);
    BOOST_TEST(r.Rd_ra[0] == 84.17816);
    BOOST_TEST(r.Tt_ra.size() == 200u * 30u);
    BOOST_TEST(r.Tt_ra.back() == 1.714120e-7);
}

// The content lines (comments and blank lines dropped) of a file, '#' comments cut off.
std::vector<std::string> contentLines(const std::vector<std::string>& lines)
{
    std::vector<std::string> out;
    for (const std::string& l : lines)
    {
        std::istringstream in(l.substr(0, l.find('#')));
        std::string tokens, t;
        while (in >> t)
            tokens += (tokens.empty() ? "" : " ") + t;
        if (!tokens.empty())
            out.push_back(tokens);
    }
    return out;
}

// Writing what was read gives CUDAMCML's numbers back, content line for content line; the only
// difference is the input-parameter heading, which MCML 1.2 (and so writeMCO) spells InParm.
BOOST_AUTO_TEST_CASE(reference_rewritten_with_same_content,
                     *utf::precondition(NeedsSharedFile{kReference}))
{
    const std::string original = sharedDataFile(kReference);
    ScratchDir dir;
    const std::string copy = dir.file("copy.mco");
    writeMCO(copy, readMCO(original));

    std::vector<std::string> a = contentLines(readLines(original));
    const std::vector<std::string> b = contentLines(readLines(copy));
    BOOST_TEST_REQUIRE(a.size() == b.size());
    BOOST_TEST_REQUIRE(a[1] == "InParam");
    a[1] = "InParm";
    for (std::size_t i = 0; i < a.size(); ++i)
        BOOST_CHECK_MESSAGE(a[i] == b[i], "content line " << i + 1 << ": '" << a[i] << "' vs '" << b[i] << "'");
}

BOOST_AUTO_TEST_CASE(round_trip_random_values)
{
    std::mt19937_64 rng(20240611);
    ScratchDir dir;
    // Sizes whose 2-D products are not multiples of 5 exercise the partial last line.
    const unsigned shapes[][4] = {{7, 6, 3, 3}, {5, 1, 1, 1}, {500, 20, 30, 7}};
    for (const auto& s : shapes)
    {
        BOOST_TEST_CONTEXT("nz " << s[0] << " nr " << s[1] << " na " << s[2])
        {
            const MCMLResult w = randomResult(rng, s[0], s[1], s[2], s[3]);
            const std::string path = dir.file("rt.mco");
            writeMCO(path, w);
            const MCMLResult r = readMCO(path);
            checkSameRun(w.run, r.run);
            BOOST_TEST(std::fabs(r.userTime - w.userTime) <= 5e-4 + 1e-9);
            checkPrinted("RAT", {w.Rsp, w.Rd, w.A, w.Tt}, {r.Rsp, r.Rd, r.A, r.Tt}, 6);
            checkPrinted("A_l", w.A_l, r.A_l, 6);
            checkPrinted("A_z", w.A_z, r.A_z, 7);
            checkPrinted("Rd_r", w.Rd_r, r.Rd_r, 7);
            checkPrinted("Rd_a", w.Rd_a, r.Rd_a, 7);
            checkPrinted("Tt_r", w.Tt_r, r.Tt_r, 7);
            checkPrinted("Tt_a", w.Tt_a, r.Tt_a, 7);
            checkPrinted("A_rz", w.A_rz, r.A_rz, 7);
            checkPrinted("Rd_ra", w.Rd_ra, r.Rd_ra, 7);
            checkPrinted("Tt_ra", w.Tt_ra, r.Tt_ra, 7);
        }
    }
}

BOOST_AUTO_TEST_CASE(write_replaces_file_and_leaves_no_partial)
{
    std::mt19937_64 rng(7);
    ScratchDir dir;
    const std::string path = dir.write("out.mco", "old contents\n");
    MCMLResult w = randomResult(rng, 4, 3, 2, 2);
    w.Rd = 0.25;
    writeMCO(path, w);
    BOOST_TEST(readMCO(path).Rd == 0.25);
    BOOST_TEST(!std::filesystem::exists(path + ".partial"));

    BOOST_CHECK_THROW(writeMCO(dir.file("no/such/dir/x.mco"), w), std::runtime_error);
}

#ifdef FM_TEST_HAVE_FIFO
// Writing to a pipe or device (think /dev/stdout) must write into it, not rename a file over it.
BOOST_AUTO_TEST_CASE(write_to_fifo_writes_in_place)
{
    std::mt19937_64 rng(13);
    const MCMLResult w = randomResult(rng, 2, 2, 1, 1);  // small: fits in the pipe buffer
    std::ostringstream expected;
    writeMCO(expected, w);
    BOOST_TEST_REQUIRE(expected.str().size() < 16384u);

    ScratchDir dir;
    const std::string fifo = dir.file("pipe.mco");
    BOOST_TEST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    // Non-blocking read end first, so the writer's open returns and nothing can hang.
    const int fd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
    BOOST_TEST_REQUIRE(fd >= 0);
    writeMCO(fifo, w);

    std::string got;
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
        got.append(buf, std::size_t(n));
    ::close(fd);
    BOOST_TEST(std::filesystem::is_fifo(fifo));
    BOOST_TEST(!std::filesystem::exists(fifo + ".partial"));
    BOOST_TEST(got == expected.str());
}
#endif

BOOST_AUTO_TEST_CASE(writer_rejects_inconsistent_results)
{
    std::mt19937_64 rng(11);
    ScratchDir dir;
    const std::string path = dir.file("bad.mco");
    const MCMLResult good = randomResult(rng, 4, 3, 2, 2);

    MCMLResult shortAz = good;
    shortAz.A_z.pop_back();
    MCMLResult nanRz = good;
    nanRz.A_rz[3] = std::nan("");
    MCMLResult noLayers = good;
    noLayers.run.layers.clear();
    noLayers.A_l.clear();
    MCMLResult spacedName = good;
    spacedName.run.outName = "two words.mco";

    for (const MCMLResult* bad : {&shortAz, &nanRz, &noLayers, &spacedName})
    {
        BOOST_CHECK_THROW(writeMCO(path, *bad), std::invalid_argument);
        BOOST_TEST(!std::filesystem::exists(path));
        BOOST_TEST(!std::filesystem::exists(path + ".partial"));
    }
}

BOOST_AUTO_TEST_CASE(stream_writer_restores_formatting)
{
    std::mt19937_64 rng(3);
    std::ostringstream out;
    out << std::fixed << std::setprecision(2);
    writeMCO(out, randomResult(rng, 2, 2, 2, 1));
    out.str("");
    out << 1.5;
    BOOST_TEST(out.str() == "1.50");
}

BOOST_AUTO_TEST_CASE(malformed_mco_reports_file_and_line)
{
    std::mt19937_64 rng(5);
    std::ostringstream text;
    writeMCO(text, randomResult(rng, 3, 2, 2, 1));  // A_rz: 6 values, 5 on the first line
    const std::vector<std::string> base = splitLines(text.str());
    const std::size_t rz = findLine(base, "A_rz"), rda = findLine(base, "Rd_a");
    const std::size_t rdr = findLine(base, "Rd_r"), layer = findLine(base, "InParm") + 9;
    const std::size_t lastAz = rdr - 2;  // A_z values end one blank line before Rd_r

    auto with = [&](std::size_t index, const std::string& line) {
        std::vector<std::string> l = base;
        l.at(index) = line;
        return joinLines(l);
    };
    struct Case
    {
        const char* name;
        std::string content;
        std::size_t line;
        const char* fragment;
    };
    const std::vector<Case> cases = {
        {"empty", "", 1, "format version 'A1'"},
        {"binary_header", with(0, "B1 # binary"), 1, "found 'B1'"},
        {"mcml_2_0_output", with(0, "mcmloA2.0 \t# Version number of the file format."), 1,
         "this is an MCML 2.0 output (format 'mcmloA2.0')"},
        {"truncated_in_A_rz",
         joinLines(std::vector<std::string>(base.begin(), base.begin() + rz + 2)), rz + 3,
         "expected 6 values for A_rz, found end of file after 5"},
        {"renamed_section", with(rda, "Rd_x #Rd[0]"), rda + 1, "expected section 'Rd_a', found 'Rd_x'"},
        {"extra_value", with(lastAz, base[lastAz] + " 1.0"), lastAz + 1,
         "expected 3 values for A_z, found one more"},
        {"nan_value", with(rdr + 1, "nan"), rdr + 2, "non-finite value 'nan' in Rd_r"},
        {"bad_layer_g", with(layer, "1.4 1 1 2 1"), layer + 1, "g of layer 1 must be in [-1, 1]"},
        {"trailing", text.str() + "42\n", base.size() + 1, "after the last section 'Tt_ra'"},
    };
    ScratchDir dir;
    for (const Case& c : cases)
    {
        BOOST_TEST_CONTEXT("case " << c.name)
        {
            const std::string path = dir.write(std::string(c.name) + ".mco", c.content);
            checkFormatError([&] { readMCO(path); }, path, unsigned(c.line), c.fragment);
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
