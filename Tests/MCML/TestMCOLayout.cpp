// SPDX-License-Identifier: GPL-3.0-or-later
// writeMCO's layout against MCML 1.2's (mcmlio.c), as the programs that read .mco files see it:
// - MCML's conv finds the first data line (format), then the line starting with "InParm", skips
//   one data line (output name) and reads the run block one data line at a time; then it seeks
//   each section by the keyword that starts a data line (RAT, A_l, ...) and reads 1-D arrays a
//   data line per value, Tt_a and the 2-D arrays as a free stream of numbers (fscanf).
// - read_file_mco.m (MATLAB/Octave) skips exactly 13 lines, reads the photon count, grid and
//   layers by counting lines, seeks "RAT", then alternates "read all numbers" (fscanf %g, which
//   stops at the first non-number) with a fixed number of whole-line skips.
// Both are re-implemented here from those descriptions and must read back what was written.

#include "MCMLTestHelpers.hpp"

#include "Storage/MCML/MCOReader.hpp"
#include "Storage/MCML/MCOWriter.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace {

MCMLResult sampleResult(unsigned nz, unsigned nr, unsigned na)
{
    MCMLResult r;
    r.run.outName = "sample.mco";
    r.run.photons = 5000;
    r.run.dz = 0.01;
    r.run.dr = 0.02;
    r.run.nz = nz;
    r.run.nr = nr;
    r.run.na = na;
    r.run.nAbove = 1.0;
    r.run.nBelow = 1.2;
    r.run.layers = {{1.37, 1, 100, 0.9, 0.1}, {1.37, 1, 10, 0, 0.1}, {1.37, 2, 10, 0.7, 0.2}};
    r.userTime = 12.5;
    r.Rsp = 0.0243729;
    r.Rd = 0.237859;
    r.A = 0.641547;
    r.Tt = 0.0962202;
    r.A_l = {0.25, 0.125, 0.0625};
    auto fill = [](std::vector<double>& v, std::size_t n, double scale) {
        v.resize(n);
        for (std::size_t i = 0; i < n; ++i)
            v[i] = scale * (1.0 + 0.37 * double(i));
    };
    fill(r.A_z, nz, 1.5);
    fill(r.Rd_r, nr, 2.5);
    fill(r.Rd_a, na, 0.3);
    fill(r.Tt_r, nr, 0.04);
    fill(r.Tt_a, na, 0.005);
    fill(r.A_rz, std::size_t(nr) * nz, 12.0);
    fill(r.Rd_ra, std::size_t(nr) * na, 7.0);
    fill(r.Tt_ra, std::size_t(nr) * na, 0.07);
    return r;
}

// ---- conv's way of reading ---------------------------------------------------------------------

class ConvStyleReader
{
public:
    explicit ConvStyleReader(const std::string& text) : in_(text) {}

    // Next line whose first non-blank character is neither '#' nor the line end.
    std::string dataLine()
    {
        std::string l;
        while (std::getline(in_, l))
        {
            const std::size_t first = l.find_first_not_of(" \t");
            if (first != std::string::npos && l[first] != '#')
                return l;
        }
        BOOST_FAIL("conv: incomplete data");
        return l;
    }
    void seekKey(const char* key)
    {
        while (dataLine().rfind(key, 0) != 0) {}
    }
    double firstNumber() { return std::strtod(dataLine().c_str(), nullptr); }
    std::vector<double> numbersOnLine()
    {
        std::istringstream l(dataLine());
        std::vector<double> v;
        for (double x; l >> x;)
            v.push_back(x);
        return v;
    }
    double streamNumber()
    {
        double x = std::nan("");
        in_ >> x;
        return x;
    }

private:
    std::istringstream in_;
};

struct ConvRead
{
    char format = 0;
    long photons = 0;
    std::vector<double> grid, layersRead;  // dz dr nz nr na; n above, layers' 5 numbers, n below
    std::vector<double> rat, A_l, A_z, Rd_r, Rd_a, Tt_r, Tt_a, A_rz, Rd_ra, Tt_ra;
};

ConvRead readAsConv(const std::string& text)
{
    ConvStyleReader c(text);
    ConvRead out;
    out.format = c.dataLine()[0];
    c.seekKey("InParm");
    c.dataLine();  // output file name and format
    out.photons = long(c.firstNumber());
    out.grid = c.numbersOnLine();
    for (double v : c.numbersOnLine())
        out.grid.push_back(v);
    const int layers = int(c.firstNumber());
    for (int i = 0; i < layers + 2; ++i)
        for (double v : c.numbersOnLine())
            out.layersRead.push_back(v);
    const std::size_t nz = std::size_t(out.grid.at(2)), nr = std::size_t(out.grid.at(3)),
                      na = std::size_t(out.grid.at(4));
    auto lines = [&](const char* key, std::size_t n, std::vector<double>& v) {
        c.seekKey(key);
        for (std::size_t i = 0; i < n; ++i)
            v.push_back(c.firstNumber());
    };
    auto stream = [&](const char* key, std::size_t n, std::vector<double>& v) {
        c.seekKey(key);
        for (std::size_t i = 0; i < n; ++i)
            v.push_back(c.streamNumber());
    };
    lines("RAT", 4, out.rat);
    lines("A_l", std::size_t(layers), out.A_l);
    lines("A_z", nz, out.A_z);
    lines("Rd_r", nr, out.Rd_r);
    lines("Rd_a", na, out.Rd_a);
    lines("Tt_r", nr, out.Tt_r);
    stream("Tt_a", na, out.Tt_a);
    stream("A_rz", nr * nz, out.A_rz);
    stream("Rd_ra", nr * na, out.Rd_ra);
    stream("Tt_ra", nr * na, out.Tt_ra);
    return out;
}

// ---- read_file_mco.m's way of reading ----------------------------------------------------------

class MatlabStyleReader
{
public:
    explicit MatlabStyleReader(const std::string& text) : in_(text) {}
    std::string fgetl()
    {
        std::string l;
        std::getline(in_, l);
        return l;
    }
    // fscanf(fid, '%g'): every number up to the first thing that is not one.
    std::vector<double> fscanf()
    {
        std::vector<double> v;
        for (;;)
        {
            in_ >> std::ws;
            const int c = in_.peek();
            if (c == EOF || !(std::isdigit(c) || c == '-' || c == '+' || c == '.'))
                return v;
            double x = 0;
            if (!(in_ >> x))
                BOOST_FAIL("matlab: bad number");
            v.push_back(x);
        }
    }

private:
    std::istringstream in_;
};

struct MatlabRead
{
    std::vector<double> photons, stepSize, stepNum, layers, layer;
    std::vector<double> spec, diff, abs, trans, A_l, A_z, Rd_r, Rd_a, Tt_r, Tt_a, A_rz, Rd_ra, Tt_ra;
};

MatlabRead readAsMatlab(const std::string& text)
{
    MatlabStyleReader m(text);
    MatlabRead out;
    for (int i = 0; i < 13; ++i)
        m.fgetl();
    out.photons = m.fscanf();
    m.fgetl();
    out.stepSize = m.fscanf();
    m.fgetl();
    out.stepNum = m.fscanf();
    m.fgetl();
    m.fgetl();
    out.layers = m.fscanf();
    m.fgetl();
    m.fgetl();
    m.fgetl();
    for (int i = 0; i < int(out.layers.at(0)); ++i)
    {
        for (double v : m.fscanf())
            out.layer.push_back(v);
        m.fgetl();
    }
    for (std::string l = m.fgetl(); l.rfind("RAT", 0) != 0; l = m.fgetl()) {}
    std::vector<double>* rat[] = {&out.spec, &out.diff, &out.abs, &out.trans};
    for (std::vector<double>* v : rat)
    {
        *v = m.fscanf();
        m.fgetl();
    }
    m.fgetl();
    m.fgetl();  // the first of read_file_mco.m's three skips was the rest of the Tt line
    std::vector<double>* columns[] = {&out.A_l, &out.A_z, &out.Rd_r, &out.Rd_a, &out.Tt_r, &out.Tt_a};
    for (std::vector<double>* v : columns)
    {
        *v = m.fscanf();
        if (v != &out.Tt_a)
            m.fgetl();
    }
    std::vector<double>* grids[] = {&out.A_rz, &out.Rd_ra, &out.Tt_ra};
    for (std::vector<double>* v : grids)
    {
        for (int i = 0; i < 6; ++i)
            m.fgetl();
        *v = m.fscanf();
    }
    return out;
}

// %12.6E and %G print 7 and 6 significant digits.
void checkClose(const char* name, const std::vector<double>& read, const std::vector<double>& written)
{
    BOOST_TEST_CONTEXT(name)
    {
        BOOST_TEST_REQUIRE(read.size() == written.size());
        for (std::size_t i = 0; i < read.size(); ++i)
            BOOST_TEST(read[i] == written[i], boost::test_tools::tolerance(1e-6));
    }
}

std::string written(const MCMLResult& r)
{
    std::ostringstream o;
    writeMCO(o, r);
    return o.str();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(MCOLayout)

// Lines 1-25 of a 3-layer file as MCML 1.2 prints them (its format strings, our numbers).
BOOST_AUTO_TEST_CASE(header_and_input_parameters_line_by_line)
{
    std::istringstream in(written(sampleResult(4, 3, 1)));
    std::vector<std::string> l;
    for (std::string s; std::getline(in, s);)
        l.push_back(s);
    const std::vector<std::string> expected = {
        "A1 \t# Version number of the file format.",
        "",
        "####",
        "# Data categories include: ",
        "# InParm, RAT, ",
        "# A_l, A_z, Rd_r, Rd_a, Tt_r, Tt_a, ",
        "# A_rz, Rd_ra, Tt_ra ",
        "####",
        "",
        "# User time: 12.500 sec = 0.00 hr.  Simulation time of this run.",
        "",
        "InParm \t\t\t# Input parameters. cm is used.",
        "sample.mco \tA\t\t# output file name, ASCII.",
        "5000 \t\t\t# No. of photons",
        "0.01\t0.02\t\t# dz, dr [cm]",
        "4\t3\t1\t# No. of dz, dr, da.",
        "",
        "3\t\t\t\t\t# Number of layers",
        "#n\tmua\tmus\tg\td\t# One line for each layer",
        "1.0\t\t\t\t\t# n for medium above",
        "1.37\t1\t100\t0.9\t0.1\t# layer 1",
        "1.37\t1\t10\t0\t0.1\t# layer 2",
        "1.37\t2\t10\t0.7\t0.2\t# layer 3",
        "1.2\t\t\t\t\t# n for medium below",
        "",
        "RAT #Reflectance, absorption, transmission. ",
        "0.0243729      \t#Specular reflectance [-]",
    };
    BOOST_TEST_REQUIRE(l.size() > expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i)
        BOOST_CHECK_MESSAGE(l[i] == expected[i], "line " << i + 1 << ": '" << l[i] << "', MCML: '" << expected[i] << "'");
}

// Sections in MCML's order, each a keyword line; 2-D arrays "%12.6E " five to a line over the
// whole array, then one newline (a blank line only when the count is a multiple of 5).
BOOST_AUTO_TEST_CASE(sections_in_mcml_order)
{
    std::istringstream in(written(sampleResult(4, 3, 2)));
    std::vector<std::string> keywords;
    std::vector<std::string> lines;
    for (std::string s; std::getline(in, s);)
    {
        lines.push_back(s);
        const std::size_t end = s.find_first_of(" \t");
        const std::string first = s.substr(0, end);
        if (!first.empty() && first[0] != '#' && !std::isdigit(static_cast<unsigned char>(first[0])) &&
            first[0] != ' ' && first != "sample.mco")
            keywords.push_back(first);
    }
    const std::vector<std::string> expected = {"A1",   "InParm", "RAT",  "A_l",  "A_z",  "Rd_r",
                                               "Rd_a", "Tt_r",   "Tt_a", "A_rz", "Rd_ra", "Tt_ra"};
    BOOST_TEST(keywords == expected, boost::test_tools::per_element());
    // A_rz: 12 values -> lines of 5, 5, 2, no blank line; Rd_ra: 6 -> 5, 1; Tt_ra likewise.
    std::size_t rz = 0;
    while (lines[rz] != "A_rz")
        ++rz;
    BOOST_TEST(lines[rz + 1] == "1.200000E+01 1.644000E+01 2.088000E+01 2.532000E+01 2.976000E+01 ");
    BOOST_TEST(lines[rz + 3].size() == 2 * 13u);
    BOOST_TEST(lines[rz + 4] == "# Rd[r][angle]. [1/(cm2sr)].");
    BOOST_TEST(lines.back() == "1.995000E-01 ");  // Tt_ra's sixth value ends the file
}

BOOST_AUTO_TEST_CASE(read_back_as_conv_reads_it)
{
    for (unsigned na : {1u, 30u})
    {
        BOOST_TEST_CONTEXT("na " << na)
        {
            const MCMLResult w = sampleResult(7, 4, na);
            const ConvRead c = readAsConv(written(w));
            BOOST_TEST(c.format == 'A');
            BOOST_TEST(c.photons == 5000);
            checkClose("grid", c.grid, {0.01, 0.02, 7, 4, double(na)});
            checkClose("layers", c.layersRead,
                       {1.0, 1.37, 1, 100, 0.9, 0.1, 1.37, 1, 10, 0, 0.1, 1.37, 2, 10, 0.7, 0.2, 1.2});
            checkClose("RAT", c.rat, {w.Rsp, w.Rd, w.A, w.Tt});
            checkClose("A_l", c.A_l, w.A_l);
            checkClose("A_z", c.A_z, w.A_z);
            checkClose("Rd_r", c.Rd_r, w.Rd_r);
            checkClose("Rd_a", c.Rd_a, w.Rd_a);
            checkClose("Tt_r", c.Tt_r, w.Tt_r);
            checkClose("Tt_a", c.Tt_a, w.Tt_a);
            checkClose("A_rz", c.A_rz, w.A_rz);
            checkClose("Rd_ra", c.Rd_ra, w.Rd_ra);
            checkClose("Tt_ra", c.Tt_ra, w.Tt_ra);
        }
    }
}

BOOST_AUTO_TEST_CASE(read_back_as_read_file_mco_reads_it)
{
    for (unsigned na : {1u, 30u})
    {
        BOOST_TEST_CONTEXT("na " << na)
        {
            const MCMLResult w = sampleResult(5, 3, na);
            const MatlabRead m = readAsMatlab(written(w));
            checkClose("photons", m.photons, {5000});
            checkClose("step_size", m.stepSize, {0.01, 0.02});
            checkClose("step_num", m.stepNum, {5, 3, double(na)});
            checkClose("layers", m.layers, {3});
            checkClose("layer", m.layer, {1.37, 1, 100, 0.9, 0.1, 1.37, 1, 10, 0, 0.1, 1.37, 2, 10, 0.7, 0.2});
            checkClose("RAT", {m.spec.at(0), m.diff.at(0), m.abs.at(0), m.trans.at(0)}, {w.Rsp, w.Rd, w.A, w.Tt});
            checkClose("A_l", m.A_l, w.A_l);
            checkClose("A_z", m.A_z, w.A_z);
            checkClose("Rd_r", m.Rd_r, w.Rd_r);
            checkClose("Rd_a", m.Rd_a, w.Rd_a);
            checkClose("Tt_r", m.Tt_r, w.Tt_r);
            checkClose("Tt_a", m.Tt_a, w.Tt_a);
            checkClose("A_rz", m.A_rz, w.A_rz);
            checkClose("Rd_ra", m.Rd_ra, w.Rd_ra);
            checkClose("Tt_ra", m.Tt_ra, w.Tt_ra);
        }
    }
}

// readMCO still reads the files written before MCML 1.2's layout (CUDAMCML's: "InParam", two
// blank lines after each 2-D array).
BOOST_AUTO_TEST_CASE(reader_takes_old_layout_too)
{
    const MCMLResult w = sampleResult(3, 2, 2);
    std::string text = written(w);
    text.replace(text.find("InParm \t\t\t# Input parameters. cm is used."),
                 std::strlen("InParm \t\t\t# Input parameters. cm is used."), "InParam\t\t# Input parameters:");
    text.replace(text.find("# Rd[r][angle]"), 0, "\n\n");
    std::istringstream in(text);
    const MCMLResult r = readMCO(in, "old.mco");
    BOOST_TEST(r.run.layers.size() == 3u);
    checkClose("A_rz", r.A_rz, w.A_rz);
    checkClose("Tt_ra", r.Tt_ra, w.Tt_ra);
}

BOOST_AUTO_TEST_SUITE_END()
