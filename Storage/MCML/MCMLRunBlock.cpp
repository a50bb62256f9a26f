// SPDX-License-Identifier: GPL-3.0-or-later
#include "Storage/MCML/MCMLRunBlock.hpp"

#include <cctype>
#include <cmath>
#include <string>

namespace MCMLDetail {

namespace {

std::string itemsText(std::size_t n)
{
    return std::to_string(n) + (n == 1 ? " item" : " items");
}

double positive(const TextScanner& s, std::string_view tok, const std::string& what)
{
    const double v = s.finite(tok, what);
    if (!(v > 0.0))
        s.fail(what + " must be > 0, found " + quoteToken(tok));
    return v;
}

double nonNegative(const TextScanner& s, std::string_view tok, const std::string& what)
{
    const double v = s.finite(tok, what);
    if (v < 0.0)
        s.fail(what + " must be >= 0, found " + quoteToken(tok));
    return v;
}

// A count in [1, max].
std::uint64_t boundedCount(const TextScanner& s, std::string_view tok, const std::string& what,
                           std::uint64_t max)
{
    const std::uint64_t v = s.count(tok, what);
    if (v < 1 || v > max)
        s.fail(what + " must be in [1, " + std::to_string(max) + "], found " + quoteToken(tok));
    return v;
}

void parseOutput(TextScanner& s, MCMLRun& run)
{
    const std::string what = "output file name and format (A or B)";
    const Tokens& t = s.requireLine(what);
    if (t.size() != 2)
        s.fail("expected " + what + ", found " + itemsText(t.size()));
    const std::string_view format = t[1];
    const char f = format.size() == 1 ? static_cast<char>(std::toupper(format[0])) : '?';
    if (f != 'A' && f != 'B')
        s.fail("expected output format 'A' (ASCII) or 'B' (binary), found " + quoteToken(format));
    run.outName = std::string(t[0]);
    run.outFormat = f;
}

void parsePhotons(TextScanner& s, MCMLRun& run)
{
    // Some MCML versions allow "<photons> <time limit>" here. A photon count is all a simulation
    // set up from this file uses, so a second item is accepted and ignored.
    const Tokens& t = s.requireLine("number of photons");
    if (t.size() > 2)
        s.fail("expected number of photons (optionally followed by a time limit), found " +
               itemsText(t.size()));
    run.photons = s.count(t[0], "number of photons");
    if (run.photons == 0)
        s.fail("number of photons must be at least 1, found '0'");
}

// A bin size in cm: > 0 and within [kMinSpacing, kMaxSpacing], so that its inverse in mm is a
// finite single-precision number (the kernels' bin lookup) and a ring's area (dr^2) stays a
// normal double (the .mco normalisation); smaller or larger bins would fail only after the run.
constexpr double kMinSpacing = 1e-30, kMaxSpacing = 1e30;
double gridSpacing(const TextScanner& s, std::string_view tok, const std::string& what)
{
    const double v = positive(s, tok, what);
    if (v < kMinSpacing || v > kMaxSpacing)
        s.fail(what + " must be in [1e-30, 1e30] cm, found " + quoteToken(tok));
    return v;
}

void parseGrid(TextScanner& s, MCMLRun& run)
{
    const Tokens& spacing = s.requireTokens(2, "2 numbers (dz dr)");
    run.dz = gridSpacing(s, spacing[0], "dz");
    run.dr = gridSpacing(s, spacing[1], "dr");

    const Tokens& bins = s.requireTokens(3, "3 integers (nz nr na)");
    const std::uint64_t nz = boundedCount(s, bins[0], "nz", kMaxBins);
    const std::uint64_t nr = boundedCount(s, bins[1], "nr", kMaxBins);
    const std::uint64_t na = boundedCount(s, bins[2], "na", kMaxBins);
    // Each factor is at most 1e8, so the products cannot overflow 64 bits.
    if (nr * nz > kMaxBins || nr * na > kMaxBins)
        s.fail("grid too large: nr*nz = " + std::to_string(nr * nz) + ", nr*na = " +
               std::to_string(nr * na) + ", limit " + std::to_string(kMaxBins) + " bins each");
    run.nz = static_cast<unsigned>(nz);
    run.nr = static_cast<unsigned>(nr);
    run.na = static_cast<unsigned>(na);
}

double refractiveIndex(TextScanner& s, const std::string& what)
{
    const Tokens& t = s.requireTokens(1, "1 number (" + what + ")");
    return positive(s, t[0], what);
}

MCMLLayer parseLayer(TextScanner& s, std::size_t index)
{
    const std::string of = " of layer " + std::to_string(index);
    const Tokens& t =
        s.requireTokens(5, "5 numbers (n mua mus g d) for layer " + std::to_string(index));
    MCMLLayer layer;
    layer.n = positive(s, t[0], "n" + of);
    layer.mua = nonNegative(s, t[1], "mua" + of);
    layer.mus = nonNegative(s, t[2], "mus" + of);
    layer.g = s.finite(t[3], "g" + of);
    if (std::fabs(layer.g) > 1.0)
        s.fail("g" + of + " must be in [-1, 1], found " + quoteToken(t[3]));
    layer.d = positive(s, t[4], "d" + of);
    return layer;
}

void parseLayers(TextScanner& s, MCMLRun& run)
{
    const Tokens& t = s.requireTokens(1, "1 integer (number of layers)");
    const std::uint64_t count = boundedCount(s, t[0], "number of layers", kMaxLayers);
    run.nAbove = refractiveIndex(s, "n for medium above");
    run.layers.clear();
    run.layers.reserve(count);
    for (std::size_t i = 1; i <= count; ++i)
        run.layers.push_back(parseLayer(s, i));
    run.nBelow = refractiveIndex(s, "n for medium below");
}

}  // namespace

MCMLRun parseRunBlock(TextScanner& scanner)
{
    MCMLRun run;
    parseOutput(scanner, run);
    parsePhotons(scanner, run);
    parseGrid(scanner, run);
    parseLayers(scanner, run);
    return run;
}

}  // namespace MCMLDetail
