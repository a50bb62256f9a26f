// SPDX-License-Identifier: GPL-3.0-or-later
#include "Storage/VTK/VTKLegacyCheck.hpp"

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "Common/Errors.hpp"

namespace fm {
namespace vtkio {

namespace {

[[noreturn]] void bad(const std::string& file, const std::string& why) { throw FormatError(file + ": " + why); }

std::string lower(std::string s) {
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

struct Header {
    int major = 0;
    bool binary = false;
};

Header readHeader(std::istream& in, const std::string& file) {
    std::string version, title, mode;
    std::getline(in, version);
    std::getline(in, title);
    std::getline(in, mode);
    Header h;
    size_t p = version.find("Version");
    if (p == std::string::npos) bad(file, "line 1: expected '# vtk DataFile Version x.y'");
    h.major = std::atoi(version.c_str() + p + 7);
    std::istringstream ms(mode);
    std::string m;
    ms >> m;
    m = lower(m);
    if (m != "ascii" && m != "binary") bad(file, "line 3: expected ASCII or BINARY, found '" + mode.substr(0, 40) + "'");
    h.binary = m == "binary";
    return h;
}

// Reads lines up to "CELLS n size"; false when the file has none (VTK then reports no cells).
bool findCells(std::istream& in, const std::string& file, long long& n, long long& size) {
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        std::string kw;
        ls >> kw;
        if (lower(kw) != "cells") continue;
        if (!(ls >> n >> size) || n < 0 || size < n)
            bad(file, "malformed CELLS line '" + line.substr(0, 60) + "'");
        return true;
    }
    return false;
}

// Walks n cells of [npts, id...] over `size` values; `next` yields the values in file order.
template <class Next>
void walkCells(const std::string& file, long long n, long long size, Next next) {
    long long used = 0;
    for (long long c = 0; c < n; ++c) {
        long long npts = 0;
        if (!next(npts)) bad(file, "CELLS: cell " + std::to_string(c) + " is missing (file truncated?)");
        if (npts < 0 || used + 1 + npts > size)
            bad(file, "CELLS: cell " + std::to_string(c) + " has " + std::to_string(npts) +
                          " points, past the declared size " + std::to_string(size));
        for (long long k = 0; k < npts; ++k) {
            long long id = 0;
            if (!next(id)) bad(file, "CELLS: cell " + std::to_string(c) + " is incomplete (file truncated?)");
        }
        used += 1 + npts;
    }
    if (used != size)
        bad(file, "CELLS declares " + std::to_string(size) + " values but its " + std::to_string(n) + " cells hold " +
                      std::to_string(used));
}

void checkCellTypesLine(const std::string& file, const std::string& line, long long n) {
    std::istringstream ls(line);
    std::string kw;
    long long m = -1;
    ls >> kw >> m;
    if (lower(kw) != "cell_types") bad(file, "expected CELL_TYPES after CELLS, found '" + line.substr(0, 40) + "'");
    if (m != n) bad(file, "CELL_TYPES has " + std::to_string(m) + " entries for " + std::to_string(n) + " cells");
}

void checkAscii(std::istream& in, const std::string& file, long long n, long long size) {
    walkCells(file, n, size, [&](long long& v) { return bool(in >> v); });
    std::string kw, count;
    in >> kw >> count;
    checkCellTypesLine(file, kw + " " + count, n);
}

void checkBinary(std::istream& in, const std::string& file, long long n, long long size, long long fileSize) {
    long long at = in.tellg();
    if (at < 0 || fileSize - at < 4 * size) bad(file, "CELLS: binary data truncated");
    std::vector<unsigned char> raw(size_t(4 * size));
    in.read(reinterpret_cast<char*>(raw.data()), std::streamsize(raw.size()));
    size_t i = 0;
    walkCells(file, n, size, [&](long long& v) {
        if (i + 4 > raw.size()) return false;
        const unsigned char* b = &raw[i];  // legacy binary is big-endian
        v = int32_t(uint32_t(b[0]) << 24 | uint32_t(b[1]) << 16 | uint32_t(b[2]) << 8 | uint32_t(b[3]));
        i += 4;
        return true;
    });
    std::string line;
    while (std::getline(in, line) && line.find_first_not_of(" \t\r") == std::string::npos) {}
    checkCellTypesLine(file, line, n);
    at = in.tellg();
    if (at < 0 || fileSize - at < 4 * n) bad(file, "CELL_TYPES: binary data truncated");
}

}  // namespace

void checkLegacyCells(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) bad(file, "cannot open for reading");
    in.seekg(0, std::ios::end);
    long long fileSize = in.tellg();
    in.seekg(0);
    Header h = readHeader(in, file);
    if (h.major >= 5) return;
    long long n = 0, size = 0;
    if (!findCells(in, file, n, size)) return;
    if (h.binary) checkBinary(in, file, n, size, fileSize);
    else checkAscii(in, file, n, size);
}

}  // namespace vtkio
}  // namespace fm
