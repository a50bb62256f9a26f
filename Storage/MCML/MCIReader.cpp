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
    input.version = s.finite(s.requireTokens(1, "1 number (file version)")[0], "file version");

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
