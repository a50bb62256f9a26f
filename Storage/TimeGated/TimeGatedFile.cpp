// SPDX-License-Identifier: GPL-3.0-or-later
#include "Storage/TimeGated/TimeGatedFile.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "Common/Errors.hpp"
#include "Common/ParallelFor.hpp"
#include "Storage/AtomicFile.hpp"

namespace fm {
namespace {

constexpr char kMagic[8] = {'F', 'M', 'T', 'G', 'A', 'T', 'E', 'D'};
constexpr uint32_t kVersion = 1, kByteOrder = 0x01020304;
constexpr uint64_t kHeaderBytes = 128;

// The header, as laid out on disk (docs/TIME_DOMAIN.md).
struct Header {
    char magic[8];
    uint32_t version, byteOrder, quantity, gates, bins, hasStderr;
    uint64_t elements;
    double startNs, stopNs, stepNs;
    char units[32];
    uint64_t dataOffset;
    char reserved[24];
};
static_assert(sizeof(Header) == kHeaderBytes, "the .fmtg header is 128 bytes");

// A whole number held in a double, in decimal (a size from the header may be beyond 2^64).
std::string wholeText(double x) {
    char buf[400];
    std::snprintf(buf, sizeof buf, "%.0f", x);
    return buf;
}

}  // namespace

std::vector<double> gatedValues(const TimeGates& g, const std::vector<double>& perIndex, double scale,
                                const std::vector<double>& divisor) {
    const size_t stride = perIndex.size() / g.bins(), n = stride ? stride - 1 : 0;
    if (stride * g.bins() != perIndex.size() || (!divisor.empty() && divisor.size() != stride))
        throw Error("gated values: " + std::to_string(perIndex.size()) + " values are not " + std::to_string(g.bins()) +
                    " bins of the " + std::to_string(divisor.size()) + " divisors' elements");
    std::vector<double> out(size_t(g.bins()) * n);
    parallelFor(0, g.bins(), [&](unsigned, size_t lo, size_t hi) {  // bin by bin, each on one thread
        for (size_t b = lo; b < hi; ++b)
            for (size_t i = 0; i < n; ++i) {
                const double v = perIndex[b * stride + i + 1] * scale;
                out[b * n + i] = divisor.empty() ? v : divisor[i + 1] != 0 ? v / divisor[i + 1] : NAN;
            }
    }, 1);
    return out;
}

GatedElementList readGatedElementList(const std::string& path, bool faces) {
    std::ifstream in(path);
    if (!in) throw FormatError(path + ": cannot open");
    return readGatedElementList(in, path, faces);
}

GatedElementList readGatedElementList(std::istream& in, const std::string& path, bool faces) {
    GatedElementList l;
    std::string line;
    for (size_t n = 1; std::getline(in, line); ++n) {
        if (line.empty() || line[0] == '#') continue;
        const char* p = line.c_str();
        uint32_t v[4] = {0, 0, 0, 0};
        const int want = faces ? 4 : 1;
        for (int k = 0; k < want; ++k) {
            while (*p == ' ' || *p == '\t') ++p;
            char* end = nullptr;
            const unsigned long long x = std::strtoull(p, &end, 10);
            if (end == p || *p == '-' || x == 0 || x > 0xffffffffull)
                throw FormatError(path + ":" + std::to_string(n) + ": '" + line + "' is not " +
                                  (faces ? "a face id and its three point ids (whole numbers >= 1)" : "a tetra id (a whole number >= 1)"));
            v[k] = uint32_t(x);
            p = end;
        }
        while (*p == ' ' || *p == '\t' || *p == '\r') ++p;
        if (*p) throw FormatError(path + ":" + std::to_string(n) + ": '" + line + "' has more than " +
                                  (faces ? "a face id and its three point ids" : "a tetra id"));
        l.ids.push_back(v[0]);
        l.lines.push_back(n);
        if (faces) l.points.push_back({v[1], v[2], v[3]});
    }
    if (in.bad()) throw FormatError(path + ": read failed");
    return l;
}

std::string gatedElementListName(GatedQuantity q) {
    if (q == GatedQuantity::exitFluenceListed) return "surface_exit_gated_faces.txt";
    if (q == GatedQuantity::volumeFluence) return "fluence_gated_tetras.txt";
    return "";
}

void writeTimeGated(const std::string& path, const TimeGatedArray& a) {
    const size_t n = size_t(a.gates.bins()) * a.elements;
    if (!a.gates.on() || a.values.size() != n || !(a.stderrs.empty() || a.stderrs.size() == n))
        throw Error(path + ": time-gated array of " + std::to_string(a.values.size()) + " values does not match " +
                    std::to_string(a.gates.bins()) + " bins x " + std::to_string(a.elements) + " elements");
    if (a.units.size() > 31) throw Error(path + ": units '" + a.units + "' longer than 31 characters");
    Header h{};
    std::memcpy(h.magic, kMagic, 8);
    h.version = kVersion;
    h.byteOrder = kByteOrder;
    h.quantity = uint32_t(a.quantity);
    h.gates = a.gates.count;
    h.bins = a.gates.bins();
    h.hasStderr = a.stderrs.empty() ? 0 : 1;
    h.elements = a.elements;
    h.startNs = a.gates.startNs;
    h.stopNs = a.gates.stopNs;
    h.stepNs = a.gates.stepNs;
    std::memcpy(h.units, a.units.data(), a.units.size());
    h.dataOffset = kHeaderBytes;
    AtomicFile f(path);
    f.out.write(reinterpret_cast<const char*>(&h), sizeof h);
    f.out.write(reinterpret_cast<const char*>(a.values.data()), std::streamsize(8 * n));
    if (h.hasStderr) f.out.write(reinterpret_cast<const char*>(a.stderrs.data()), std::streamsize(8 * n));
    f.commit();
}

TimeGatedArray readTimeGated(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw FormatError(path + ": cannot open");
    return readTimeGated(in, path);
}

TimeGatedArray readTimeGated(std::istream& in, const std::string& path) {
    in.seekg(0, std::ios::end);
    const std::streamoff end = in.tellg();
    if (end < 0) throw FormatError(path + ": cannot find the file's size (not a seekable file)");
    const uint64_t size = uint64_t(end);
    in.seekg(0);
    Header h{};
    if (size < kHeaderBytes || !in.read(reinterpret_cast<char*>(&h), sizeof h))
        throw FormatError(path + ": " + std::to_string(size) + " bytes, shorter than the 128-byte .fmtg header");
    if (std::memcmp(h.magic, kMagic, 8) != 0) throw FormatError(path + ": not a time-gated tally file (magic is not FMTGATED)");
    if (h.byteOrder != kByteOrder)
        throw FormatError(path + ": byte-order mark " + std::to_string(h.byteOrder) + ", expected 0x01020304 (a little-endian file)");
    if (h.version != kVersion) throw FormatError(path + ": version " + std::to_string(h.version) + ", this reader knows 1");
    if (h.quantity < 1 || h.quantity > 3) throw FormatError(path + ": quantity " + std::to_string(h.quantity) + " is not 1, 2 or 3");
    if (h.hasStderr > 1) throw FormatError(path + ": standard-error flag " + std::to_string(h.hasStderr) + " is not 0 or 1");
    if (h.dataOffset != kHeaderBytes) throw FormatError(path + ": data offset " + std::to_string(h.dataOffset) + ", expected 128");
    TimeGatedArray a;
    try {
        a.gates = makeTimeGates(h.startNs, h.stopNs, h.stepNs, path + ": header gates");
    } catch (const ParameterError& e) {
        throw FormatError(e.what());
    }
    if (h.gates != a.gates.count || h.bins != a.gates.bins())
        throw FormatError(path + ": " + std::to_string(h.gates) + " gates and " + std::to_string(h.bins) +
                          " bins do not match start/stop/step (" + std::to_string(a.gates.count) + " gates)");
    const double want = double(kHeaderBytes) + 8.0 * double(h.bins) * double(h.elements) * (1 + h.hasStderr);
    if (double(size) != want)
        throw FormatError(path + ": " + std::to_string(size) + " bytes, expected " + wholeText(want) +
                          " for " + std::to_string(h.bins) + " bins x " + std::to_string(h.elements) + " elements");
    a.quantity = GatedQuantity(h.quantity);
    a.elements = h.elements;
    const size_t unitsLength = strnlen(h.units, sizeof h.units);
    if (unitsLength == sizeof h.units)
        throw FormatError(path + ": units field has no terminating NUL (at most 31 characters)");
    a.units.assign(h.units, unitsLength);
    const size_t n = size_t(h.bins) * h.elements;
    a.values.resize(n);
    in.read(reinterpret_cast<char*>(a.values.data()), std::streamsize(8 * n));
    if (h.hasStderr) {
        a.stderrs.resize(n);
        in.read(reinterpret_cast<char*>(a.stderrs.data()), std::streamsize(8 * n));
    }
    if (!in) throw FormatError(path + ": read failed");
    return a;
}

}  // namespace fm
