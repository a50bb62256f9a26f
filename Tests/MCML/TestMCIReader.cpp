// SPDX-License-Identifier: GPL-3.0-or-later
// readMCI on the real example inputs and on small well-formed variants of the format.

#include "MCMLTestHelpers.hpp"

#include "Storage/MCML/MCIReader.hpp"

#include <boost/test/unit_test.hpp>

#include <sstream>

using namespace MCMLTest;
namespace utf = boost::unit_test;

namespace {

const char* const kSkin7 = "mcml/skin7/7layerskin_600nm.mci";
const char* const kFourLayer = "timos/fourlayer/mcml_fourlayer.mci";

void checkLayer(const MCMLLayer& l, double n, double mua, double mus, double g, double d)
{
    BOOST_TEST(l.n == n);
    BOOST_TEST(l.mua == mua);
    BOOST_TEST(l.mus == mus);
    BOOST_TEST(l.g == g);
    BOOST_TEST(l.d == d);
}

MCMLInput readText(const std::string& text)
{
    std::istringstream in(text);
    return readMCI(in, "inline.mci");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(MCIReader)

BOOST_AUTO_TEST_CASE(skin7_three_runs_seven_layers, *utf::precondition(NeedsSharedFile{kSkin7}))
{
    const std::string path = sharedDataFile(kSkin7);
    const MCMLInput in = readMCI(path);
    BOOST_TEST(in.path == path);
    BOOST_TEST(in.version == 1.0);
    BOOST_TEST_REQUIRE(in.runs.size() == 3u);

    const char* const names[] = {"sevenlayer_600nm_100K.mco", "sevenlayer_600nm_1M.mco",
                                 "sevenlayer_600nm_10M.mco"};
    const std::uint64_t photons[] = {100000, 1000000, 10000000};
    for (std::size_t i = 0; i < 3; ++i)
    {
        const MCMLRun& r = in.runs[i];
        BOOST_TEST_CONTEXT("run " << i + 1)
        {
            BOOST_TEST(r.outName == names[i]);
            BOOST_TEST(r.outFormat == 'A');
            BOOST_TEST(r.photons == photons[i]);
            BOOST_TEST(r.dz == 0.002);
            BOOST_TEST(r.dr == 0.01);
            BOOST_TEST(r.nz == 500u);
            BOOST_TEST(r.nr == 200u);
            BOOST_TEST(r.na == 30u);
            BOOST_TEST(r.nAbove == 1.0);
            BOOST_TEST(r.nBelow == 1.0);
            BOOST_TEST(r.wth == 1e-4);
            BOOST_TEST(r.chance == 0.1);
            BOOST_TEST_REQUIRE(r.layers.size() == 7u);
            checkLayer(r.layers[0], 1.53, 0.2, 1000, 0.9, 0.002);
            checkLayer(r.layers[1], 1.34, 0.15, 400, 0.85, 0.008);
            checkLayer(r.layers[2], 1.4, 0.7, 300, 0.8, 0.01);
            checkLayer(r.layers[3], 1.39, 1, 350, 0.9, 0.008);
            checkLayer(r.layers[4], 1.4, 0.7, 200, 0.76, 0.162);
            checkLayer(r.layers[5], 1.39, 1, 350, 0.95, 0.02);
            checkLayer(r.layers[6], 1.44, 0.3, 150, 0.8, 0.59);
        }
    }
}

BOOST_AUTO_TEST_CASE(fourlayer, *utf::precondition(NeedsSharedFile{kFourLayer}))
{
    const MCMLInput in = readMCI(sharedDataFile(kFourLayer));
    BOOST_TEST_REQUIRE(in.runs.size() == 1u);
    const MCMLRun& r = in.runs[0];
    BOOST_TEST(r.outName == "mcml_fourlayer.mco");
    BOOST_TEST(r.photons == 100000000u);
    BOOST_TEST(r.dz == 0.01);
    BOOST_TEST(r.dr == 0.02);
    BOOST_TEST(r.nz == 400u);
    BOOST_TEST(r.nr == 500u);
    BOOST_TEST(r.na == 1u);
    BOOST_TEST_REQUIRE(r.layers.size() == 4u);
    checkLayer(r.layers[0], 1.3, 0.05, 10, 0.9, 1.0);
    checkLayer(r.layers[1], 1.5, 0.10, 30, 0.95, 1.0);
    checkLayer(r.layers[2], 1.3, 0.05, 10, 0.9, 1.0);
    checkLayer(r.layers[3], 1.5, 0.10, 30, 0.95, 1.0);
}

BOOST_AUTO_TEST_CASE(format_variants_accepted)
{
    // CRLF line endings, a comment-only line between items, the "photons time" form, a lower-case
    // format letter, '+' signs, exponents, g at the limits, no newline after the last line.
    const std::string text = "1.0\r\n1\r\n# a comment\r\nout.mco a\r\n5000 1:30\r\n"
                             "2E-3 +0.01\r\n1 1 1\r\n2\r\n1\r\n"
                             "1.4 0 1e2 1 0.1\r\n1.33 0.5 0 -1 2.5e-1\r\n1.0";
    const MCMLInput in = readText(text);
    BOOST_TEST_REQUIRE(in.runs.size() == 1u);
    const MCMLRun& r = in.runs[0];
    BOOST_TEST(r.outFormat == 'A');
    BOOST_TEST(r.photons == 5000u);
    BOOST_TEST(r.dz == 0.002);
    BOOST_TEST(r.dr == 0.01);
    BOOST_TEST((r.nz == 1u && r.nr == 1u && r.na == 1u));
    BOOST_TEST_REQUIRE(r.layers.size() == 2u);
    checkLayer(r.layers[0], 1.4, 0, 100, 1, 0.1);
    checkLayer(r.layers[1], 1.33, 0.5, 0, -1, 0.25);
}

BOOST_AUTO_TEST_CASE(binary_format_letter_kept)
{
    const MCMLInput in = readText("1\n1\nx.mco B\n10\n1 1\n1 1 1\n1\n1\n1 1 1 0 1\n1\n");
    BOOST_TEST(in.runs.at(0).outFormat == 'B');
}

BOOST_AUTO_TEST_CASE(missing_file_is_runtime_error)
{
    BOOST_CHECK_THROW(readMCI(std::string("/nonexistent/dir/none.mci")), std::runtime_error);
}

BOOST_AUTO_TEST_SUITE_END()
