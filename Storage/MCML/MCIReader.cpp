// SPDX-License-Identifier: GPL-3.0-or-later
#include "Storage/MCML/MCIReader.hpp"

#include "Storage/MCML/MCMLRunBlock.hpp"
#include "Storage/MCML/MCMLTextScanner.hpp"
#include "Storage/InputFile.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

using namespace MCMLDetail;

MCMLInput readMCI(std::istream& in, const std::string& name)
{
    TextScanner s(in, name);
    MCMLInput input;
    input.path = name;
    const std::string_view version = s.requireTokens(1, "1 number (file version)")[0];
    if (version.substr(0, 5) == "mcmli")
        s.fail("this is an input of MCML 2.0 or later (file version " + quoteToken(version) +
               "; media by name, time-resolved grids); FullMonte reads MCML 1.x .mci files "
               "(file version 1.0): write the layers as \"n mua mus g d\" lines");
    input.version = s.finite(version, "file version");
    if (!(input.version >= 1.0 && input.version < 2.0))
        s.fail("file version must be 1.x (MCML 1.2's format), found " + quoteToken(version));

    const Tokens& t = s.requireTokens(1, "1 integer (number of runs)");
    const std::uint64_t runs = s.count(t[0], "number of runs");
    if (runs < 1 || runs > kMaxRuns)
        s.fail("number of runs must be in [1, " + std::to_string(kMaxRuns) + "], found " +
               quoteToken(t[0]));

    for (std::uint64_t i = 0; i < runs; ++i)
        input.runs.push_back(parseRunBlock(s));

    s.requireEnd("after the last run (the file declares " + std::to_string(runs) + ")");
    return input;
}

MCMLInput readMCI(const std::string& path)
{
    fm::refuseDirectory(path);
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error(path + ": cannot open for reading: " + std::strerror(errno));
    return readMCI(in, path);
}
