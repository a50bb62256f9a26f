// SPDX-License-Identifier: GPL-3.0-or-later
#include "Storage/MCML/MCOReader.hpp"

#include "Storage/MCML/MCMLRunBlock.hpp"
#include "Storage/MCML/MCMLTextScanner.hpp"
#include "Storage/InputFile.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <stdexcept>

using namespace MCMLDetail;

namespace {

void expectKeyword(TextScanner& s, std::initializer_list<std::string_view> names,
                   const std::string& what)
{
    const Tokens& t = s.requireLine(what);
    const bool known = std::find(names.begin(), names.end(), t[0]) != names.end();
    if (!known)
        s.fail("expected " + what + ", found " + quoteToken(t[0]));
    if (t.size() != 1)
        s.fail("expected " + what + " alone on its line, found " + quoteToken(t[1]) + " after it");
}

void readSection(TextScanner& s, const char* name, std::size_t n, std::vector<double>& out)
{
    expectKeyword(s, {name}, std::string("section '") + name + "'");
    s.readValues(n, name, out);
}

// "# User time: 67.333 sec" (CUDAMCML) or "# User time:    67.33 sec = ... hr." (MCML 1.2).
// It is only a comment, so an unreadable one is ignored rather than rejected.
void readUserTime(std::string_view comment, double& seconds)
{
    constexpr std::string_view key = "User time:";
    const std::size_t at = comment.find(key);
    if (at == std::string_view::npos)
        return;
    comment.remove_prefix(at + key.size());
    const std::size_t begin = comment.find_first_not_of(" \t");
    if (begin == std::string_view::npos)
        return;
    comment.remove_prefix(begin);
    const std::string_view number = comment.substr(0, comment.find_first_of(" \t\r"));
    double v = 0.0;
    if (parseDouble(number, v) && std::isfinite(v) && v >= 0.0)
        seconds = v;
}

void readResults(TextScanner& s, MCMLResult& r)
{
    const MCMLRun& run = r.run;
    const std::size_t nz = run.nz, nr = run.nr, na = run.na;

    std::vector<double> rat;
    readSection(s, "RAT", 4, rat);
    r.Rsp = rat[0];
    r.Rd = rat[1];
    r.A = rat[2];
    r.Tt = rat[3];

    readSection(s, "A_l", run.layers.size(), r.A_l);
    readSection(s, "A_z", nz, r.A_z);
    readSection(s, "Rd_r", nr, r.Rd_r);
    readSection(s, "Rd_a", na, r.Rd_a);
    readSection(s, "Tt_r", nr, r.Tt_r);
    readSection(s, "Tt_a", na, r.Tt_a);
    readSection(s, "A_rz", nr * nz, r.A_rz);
    readSection(s, "Rd_ra", nr * na, r.Rd_ra);
    readSection(s, "Tt_ra", nr * na, r.Tt_ra);
}

}  // namespace

MCMLResult readMCO(std::istream& in, const std::string& name)
{
    TextScanner s(in, name);
    MCMLResult r;
    bool timeSeen = false;
    s.setCommentHook([&](std::string_view comment, unsigned) {
        if (!timeSeen && comment.find("User time:") != std::string_view::npos)
        {
            readUserTime(comment, r.userTime);
            timeSeen = true;
        }
    });

    const Tokens& first = s.requireLine("format version 'A1' (ASCII .mco)");
    const std::string_view format = first[0];
    if (format.substr(0, 5) == "mcmlo")
        s.fail("this is an MCML 2.0 output (format " + quoteToken(format) +
               "); FullMonte reads MCML 1.x .mco files (format 'A1')");
    if (format != "A1")
        s.fail("expected format version 'A1' (ASCII .mco), found " + quoteToken(format));
    if (first.size() != 1)
        s.fail("expected format version 'A1' alone on its line, found " + quoteToken(first[1]) +
               " after it");
    expectKeyword(s, {"InParm", "InParam"}, "section 'InParm'");
    r.run = parseRunBlock(s);
    readResults(s, r);
    s.requireEnd("after the last section 'Tt_ra'");
    return r;
}

MCMLResult readMCO(const std::string& path)
{
    fm::refuseDirectory(path);
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error(path + ": cannot open for reading: " + std::strerror(errno));
    return readMCO(in, path);
}
