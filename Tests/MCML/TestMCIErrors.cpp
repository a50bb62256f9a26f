// SPDX-License-Identifier: GPL-3.0-or-later
// Malformed .mci files: each must throw MCMLFormatError naming the file and the right line,
// never crash, hang or be accepted.

#include "MCMLTestHelpers.hpp"

#include "Storage/MCML/MCIReader.hpp"

#include <boost/test/unit_test.hpp>

#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace MCMLTest;

namespace {

// A valid one-run, two-layer file; line numbers in the comments are what the cases refer to.
const std::vector<std::string> kBaseLines = {
    "# malformed-input test",        // 1
    "1.0\t\t# file version",         // 2
    "1\t\t# number of runs",         // 3
    "out.mco\tA",                    // 4
    "1000",                          // 5
    "0.01\t0.02",                    // 6
    "10\t20\t5",                     // 7
    "2\t\t# number of layers",       // 8
    "1.0\t\t# n above",              // 9
    "1.4\t0.1\t100\t0.9\t0.1",       // 10
    "1.3\t0.2\t50\t0.8\t0.2",        // 11
    "1.0\t\t# n below",              // 12
};

std::string join(const std::vector<std::string>& lines)
{
    std::string s;
    for (const std::string& l : lines)
        s += l + "\n";
    return s;
}

// The base file with line `lineNo` (1-based) replaced.
std::string withLine(unsigned lineNo, const std::string& text)
{
    std::vector<std::string> lines = kBaseLines;
    lines.at(lineNo - 1) = text;
    return join(lines);
}

// The first `count` lines of the base file.
std::string firstLines(unsigned count)
{
    return join(std::vector<std::string>(kBaseLines.begin(), kBaseLines.begin() + count));
}

struct BadInput
{
    const char* name;
    std::string content;
    unsigned line;         // where the error must be reported
    const char* fragment;  // part of the message
};

std::vector<BadInput> badInputs()
{
    using namespace std::string_literals;
    const std::string binary = "\x7f" "ELF\x02\x01\x01\0\0\xff\xfe\x80 \x01\x02"s;
    return {
        {"empty", "", 1, "found end of file"},
        {"comments_only", "# nothing\n\n# here\n", 4, "file version"},
        {"truncated_after_layer_count", firstLines(8), 9, "(n for medium above), found end of file"},
        {"truncated_mid_line_no_newline", "1.0\n1", 2, "output file name"},
        {"layer_with_4_numbers", withLine(11, "1.3 0.2 50 0.8"), 11,
         "expected 5 numbers (n mua mus g d) for layer 2, found 4"},
        {"layer_with_6_numbers", withLine(10, "1.4 0.1 100 0.9 0.1 7"), 10,
         "for layer 1, found 6"},
        {"g_1.5", withLine(10, "1.4 0.1 100 1.5 0.1"), 10, "g of layer 1 must be in [-1, 1]"},
        {"g_minus_1.01", withLine(11, "1.3 0.2 50 -1.01 0.2"), 11, "g of layer 2"},
        {"negative_mua", withLine(11, "1.3 -0.2 50 0.8 0.2"), 11, "mua of layer 2 must be >= 0"},
        {"negative_mus", withLine(10, "1.4 0.1 -1 0.9 0.1"), 10, "mus of layer 1 must be >= 0"},
        {"zero_thickness", withLine(10, "1.4 0.1 100 0.9 0"), 10, "d of layer 1 must be > 0"},
        {"layer_n_0", withLine(10, "0 0.1 100 0.9 0.1"), 10, "n of layer 1 must be > 0"},
        {"n_above_0", withLine(9, "0"), 9, "n for medium above must be > 0"},
        {"n_below_negative", withLine(12, "-1.0"), 12, "n for medium below must be > 0"},
        {"nz_0", withLine(7, "0 20 5"), 7, "nz must be in [1,"},
        {"na_missing", withLine(7, "10 20"), 7, "expected 3 integers (nz nr na), found 2"},
        {"nr_not_integer", withLine(7, "10 2.5 5"), 7, "non-negative integer for nr"},
        {"grid_too_large", withLine(7, "100000 100000 5"), 7, "grid too large"},
        {"dz_0", withLine(6, "0 0.02"), 6, "dz must be > 0"},
        {"dr_inf", withLine(6, "0.01 inf"), 6, "finite number for dr"},
        {"dr_1e-300", withLine(6, "0.01 1e-300"), 6, "dr must be in [1e-30, 1e30] cm, found '1e-300'"},
        {"dz_1e40", withLine(6, "1e40 0.01"), 6, "dz must be in [1e-30, 1e30] cm"},
        {"garbage_binary_file", binary, 1, "file version"},
        {"garbage_binary_line", withLine(6, "\x01\x02 \xff\xfe"), 6, "found '\\x01\\x02'"},
        {"nan_mus", withLine(10, "1.4 0.1 nan 0.9 0.1"), 10, "finite number for mus of layer 1"},
        {"nan_g", withLine(10, "1.4 0.1 100 NaN 0.1"), 10, "finite number for g of layer 1"},
        {"version_word", withLine(2, "one"), 2, "number for file version"},
        {"mcml_2_0_input", withLine(2, "mcmli2.0\t\t\t# file version"), 2,
         "this is an input of MCML 2.0 or later (file version 'mcmli2.0'"},
        {"mcml_3_0_input", withLine(2, "mcmli_3.0\t\t\t# file version"), 2,
         "this is an input of MCML 2.0 or later (file version 'mcmli_3.0'"},
        {"version_2", withLine(2, "2.0"), 2, "file version must be 1.x"},
        {"runs_0", withLine(3, "0"), 3, "number of runs must be in [1,"},
        {"runs_more_than_present", withLine(3, "2"), 13, "found end of file"},
        {"format_C", withLine(4, "out.mco C"), 4, "expected output format 'A' (ASCII) or 'B'"},
        {"format_missing", withLine(4, "out.mco"), 4, "found 1 item"},
        {"photons_0", withLine(5, "0"), 5, "photons must be at least 1"},
        {"photons_negative", withLine(5, "-5"), 5, "non-negative integer for number of photons"},
        {"photons_overflow", withLine(5, "99999999999999999999999"), 5, "(too large)"},
        {"photons_3_items", withLine(5, "1000 1 2"), 5, "found 3 items"},
        {"layers_1e12", withLine(8, "1000000000000"), 8, "number of layers must be in [1, 10000]"},
        {"layers_more_than_present", withLine(8, "3"), 12,
         "expected 5 numbers (n mua mus g d) for layer 3, found 1"},
        {"layers_fewer_than_present", withLine(8, "1"), 11, "(n for medium below), found 5"},
        {"trailing_content", join(kBaseLines) + "extra stuff\n", 13, "unexpected 'extra'"},
    };
}

}  // namespace

BOOST_AUTO_TEST_SUITE(MCIErrors)

BOOST_AUTO_TEST_CASE(base_input_is_valid)
{
    ScratchDir dir;
    const MCMLInput in = readMCI(dir.write("base.mci", join(kBaseLines)));
    BOOST_TEST(in.runs.size() == 1u);
    BOOST_TEST(in.runs.at(0).layers.size() == 2u);
}

BOOST_AUTO_TEST_CASE(malformed_inputs_report_file_and_line)
{
    ScratchDir dir;
    for (const BadInput& bad : badInputs())
    {
        BOOST_TEST_CONTEXT("case " << bad.name)
        {
            const std::string path = dir.write(std::string(bad.name) + ".mci", bad.content);
            checkFormatError([&] { readMCI(path); }, path, bad.line, bad.fragment);
        }
    }
}

BOOST_AUTO_TEST_CASE(stream_name_used_in_messages)
{
    std::istringstream in(withLine(10, "1.4 0.1 100 1.5 0.1"));
    checkFormatError([&] { readMCI(in, "skin.mci"); }, "skin.mci", 10, "g of layer 1");
}

// Random byte edits and cuts of a valid file: each must parse or throw MCMLFormatError with a
// "file:line:" message, nothing else (no other exception, crash or hang).
BOOST_AUTO_TEST_CASE(random_corruptions_fail_cleanly)
{
    const std::string base = join(kBaseLines);
    std::mt19937_64 rng(99);
    std::uniform_int_distribution<std::size_t> pos(0, base.size() - 1);
    std::uniform_int_distribution<int> byte(0, 255), edits(1, 4);
    unsigned parsed = 0, rejected = 0;
    for (int trial = 0; trial < 3000; ++trial)
    {
        std::string text = base;
        for (int e = edits(rng); e > 0; --e)
            text[pos(rng)] = static_cast<char>(byte(rng));
        if (trial % 3 == 0)
            text.resize(pos(rng));
        std::istringstream in(text);
        try
        {
            readMCI(in, "fuzz.mci");
            ++parsed;
        }
        catch (const MCMLFormatError& e)
        {
            ++rejected;
            BOOST_TEST(std::string(e.what()).rfind("fuzz.mci:", 0) == 0u);
        }
    }
    BOOST_TEST(rejected > 0u);
    BOOST_TEST_MESSAGE("corruptions: " << parsed << " still valid, " << rejected << " rejected");
}

BOOST_AUTO_TEST_SUITE_END()
