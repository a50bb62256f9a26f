// SPDX-License-Identifier: GPL-3.0-or-later
#include "Storage/Detected/DetectedFile.hpp"

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "Common/Errors.hpp"
#include "Storage/AtomicFile.hpp"
#include "Storage/InputFile.hpp"
#include "Storage/TextReader.hpp"

namespace fm {
namespace {

constexpr const char* kMagic = "fullmonte-detected";
// Version 2 records carry scatter counts per region after the path lengths; version 1 files
// (and records without counts) are read and written as before.
constexpr uint64_t kVersionPaths = 1, kVersionScatterCounts = 2;
constexpr size_t kFixedBytes = 8 + 4 + 4 + 4 + 4 + 12 + 12;  // index .. dir
constexpr uint64_t kMaxRegions = 65535;

void putU32(std::string& b, uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(char((v >> (8 * i)) & 0xff));
}
void putU64(std::string& b, uint64_t v) {
    for (int i = 0; i < 8; ++i) b.push_back(char((v >> (8 * i)) & 0xff));
}
void putF32(std::string& b, float f) {
    uint32_t v;
    std::memcpy(&v, &f, 4);
    putU32(b, v);
}
uint32_t getU32(const unsigned char* p) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}
uint64_t getU64(const unsigned char* p) { return uint64_t(getU32(p)) | (uint64_t(getU32(p + 4)) << 32); }
float getF32(const unsigned char* p) {
    const uint32_t v = getU32(p);
    float f;
    std::memcpy(&f, &v, 4);
    return f;
}

bool hasScatterCounts(const DetectedPackets& dp) { return !dp.scatterCounts.empty(); }

void writeHeader(std::ostream& o, const DetectedPackets& dp) {
    o.precision(17);
    o << kMagic << ' ' << (hasScatterCounts(dp) ? kVersionScatterCounts : kVersionPaths) << '\n'
      << "packets " << dp.packets << '\n'
      << "seed " << dp.seed << '\n'
      << "kernel " << dp.kernel << '\n';
    if (dp.cells != "record") o << "cells " << dp.cells << '\n';  // absent: the records' planes
    if (dp.model != "mesh") o << "model " << dp.model << '\n';  // absent: a mesh
    o << "regions " << dp.regions << '\n';
    for (uint32_t r = 0; r < dp.regions; ++r)
        o << "material " << (r + 1) << ' ' << dp.mua[r] << ' ' << dp.mus[r] << ' ' << dp.g[r] << ' ' << dp.n[r] << '\n';
    o << "detectors " << dp.detectors.size() << '\n';
    for (size_t d = 0; d < dp.detectors.size(); ++d) {
        const DetectorZone& z = dp.detectors[d];
        o << "detector " << d << ' ';
        if (std::isinf(z.radius2)) o << "faces\n";
        else o << "disk " << z.centre[0] << ' ' << z.centre[1] << ' ' << z.centre[2] << ' ' << std::sqrt(z.radius2) << '\n';
    }
    o << "detected " << dp.detected << '\n'
      << "records " << dp.records.size() << '\n'
      << "record_bytes " << detectedRecordBytes(dp.regions, hasScatterCounts(dp)) << '\n'
      << "data\n";
}

void writeRecords(std::ostream& o, const DetectedPackets& dp) {
    std::string b;
    for (size_t k = 0; k < dp.records.size(); ++k) {
        const DetectedRecord& r = dp.records[k];
        putU64(b, r.index);
        putU32(b, r.detector);
        putU32(b, r.scatters);
        putF32(b, r.weight);
        putF32(b, r.time);
        for (float v : r.pos) putF32(b, v);
        for (float v : r.dir) putF32(b, v);
        for (uint32_t i = 0; i < dp.regions; ++i) putF32(b, dp.path(k)[i]);
        if (hasScatterCounts(dp))
            for (uint32_t i = 0; i < dp.regions; ++i) putU32(b, dp.scatterCount(k)[i]);
        if (b.size() >= (1u << 16)) {
            o.write(b.data(), std::streamsize(b.size()));
            b.clear();
        }
    }
    o.write(b.data(), std::streamsize(b.size()));
}

void expectKey(TextReader& t, const std::string& key) {
    const std::string k = t.need("'" + key + "'");
    if (k != key) t.fail("expected '" + key + "', found '" + k + "'");
}

double nonNegative(TextReader& t, const std::string& what) {
    const double v = t.number(what);
    if (v < 0) t.fail(what + " must be >= 0, found " + std::to_string(v));
    return v;
}

void readMaterials(TextReader& t, DetectedPackets& dp) {
    for (uint32_t r = 0; r < dp.regions; ++r) {
        expectKey(t, "material");
        if (t.count("material number", kMaxRegions) != r + 1) t.fail("materials must be numbered 1.." + std::to_string(dp.regions) + " in order");
        dp.mua.push_back(nonNegative(t, "mu_a"));
        dp.mus.push_back(nonNegative(t, "mu_s"));
        dp.g.push_back(t.bounded("g", 1));
        const double n = t.number("n");
        if (!(n > 0)) t.fail("n must be > 0");
        dp.n.push_back(n);
    }
}

void readDetectors(TextReader& t, DetectedPackets& dp) {
    const uint64_t count = t.count("detector count", kMaxDetectors);
    for (uint64_t d = 0; d < count; ++d) {
        expectKey(t, "detector");
        if (t.count("detector number", kMaxDetectors) != d) t.fail("detectors must be numbered from 0 in order");
        const std::string kind = t.need("disk or faces");
        DetectorZone z;
        if (kind == "faces") {
            z.radius2 = std::numeric_limits<double>::infinity();
        } else if (kind == "disk") {
            for (double& c : z.centre) c = t.bounded("centre coordinate", 1e15);
            const double r = t.bounded("radius", 1e15);
            if (!(r > 0)) t.fail("radius must be > 0");
            z.radius2 = r * r;
        } else {
            t.fail("expected 'disk' or 'faces', found '" + kind + "'");
        }
        dp.detectors.push_back(z);
    }
}

// The header up to "data" and its newline; returns the record count and sets withCounts (a
// version 2 file).
uint64_t readHeader(TextReader& t, std::istream& in, DetectedPackets& dp, bool& withCounts) {
    const std::string magic = t.token();
    if (magic != kMagic) t.fail("not a detected-packet file (expected '" + std::string(kMagic) + "', found '" + magic.substr(0, 40) + "')");
    const uint64_t version = t.count("version", 1000);
    if (version != kVersionPaths && version != kVersionScatterCounts)
        t.fail("unsupported version " + std::to_string(version) + " (this reader reads versions 1 and 2)");
    withCounts = version == kVersionScatterCounts;
    expectKey(t, "packets");
    dp.packets = t.count("packets", uint64_t(1) << 53);
    if (dp.packets == 0) t.fail("packets must be >= 1 (the packets the run launched: signals are per packet)");
    expectKey(t, "seed");
    dp.seed = t.count("seed", std::numeric_limits<uint64_t>::max());
    std::string key = t.need("'kernel' or 'regions'");
    if (key == "kernel") {  // absent in files written before GPU detection: cpu
        dp.kernel = t.need("the kernel that detected the packets");
        if (dp.kernel != "cpu" && dp.kernel != "cuda") t.fail("kernel must be cpu or cuda, found '" + dp.kernel.substr(0, 40) + "'");
        key = t.need("'regions'");
    }
    if (key == "cells") {  // absent in files written before the compact GPU layout: record
        dp.cells = t.need("the GPU cell layout");
        if (dp.cells != "record" && dp.cells != "compact") t.fail("cells must be record or compact, found '" + dp.cells.substr(0, 40) + "'");
        if (dp.kernel != "cuda") t.fail("cells " + dp.cells + " needs kernel cuda (only the GPU kernel has cell layouts)");
        key = t.need("'regions'");
    }
    if (key == "model") {  // absent for a mesh
        dp.model = t.need("the model");
        if (dp.model != "mesh" && dp.model != "layered") t.fail("model must be mesh or layered, found '" + dp.model.substr(0, 40) + "'");
        key = t.need("'regions'");
    }
    if (key != "regions") t.fail("expected 'regions', found '" + key + "'");
    dp.regions = uint32_t(t.count("regions", kMaxRegions));
    readMaterials(t, dp);
    expectKey(t, "detectors");
    readDetectors(t, dp);
    expectKey(t, "detected");
    dp.detected = t.count("detected", uint64_t(1) << 62);
    expectKey(t, "records");
    const uint64_t records = t.count("records", dp.detected);
    expectKey(t, "record_bytes");
    if (t.count("record_bytes", 1u << 20) != detectedRecordBytes(dp.regions, withCounts))
        t.fail("record_bytes must be " + std::to_string(detectedRecordBytes(dp.regions, withCounts)) + " for " +
               std::to_string(dp.regions) + " regions in version " + std::to_string(version));
    expectKey(t, "data");
    if (in.get() != '\n') t.fail("expected a newline after 'data'");
    return records;
}

// Bytes left in `in` (or max when the stream cannot tell).
uint64_t bytesLeft(std::istream& in) {
    const auto here = in.tellg();
    if (here < 0) return std::numeric_limits<uint64_t>::max();
    in.seekg(0, std::ios::end);
    const auto end = in.tellg();
    in.seekg(here);
    return end >= here ? uint64_t(end - here) : 0;
}

// One record; counts (null: a version 1 record) its scatter counts per region, which must sum
// to its scatter count.
void decodeRecord(const unsigned char* p, const DetectedPackets& dp, DetectedRecord& r, float* paths, uint32_t* counts,
                  const std::string& where) {
    auto bad = [&](const std::string& why) { throw FormatError(where + ": " + why); };
    r.index = getU64(p);
    r.detector = getU32(p + 8);
    r.scatters = getU32(p + 12);
    r.weight = getF32(p + 16);
    r.time = getF32(p + 20);
    for (int i = 0; i < 3; ++i) r.pos[i] = getF32(p + 24 + 4 * i);
    for (int i = 0; i < 3; ++i) r.dir[i] = getF32(p + 36 + 4 * i);
    if (r.detector >= dp.detectors.size()) bad("detector " + std::to_string(r.detector) + " does not exist");
    if (!(r.weight >= 0) || !std::isfinite(r.weight)) bad("weight must be finite and >= 0");
    if (!(r.time >= 0) || !std::isfinite(r.time)) bad("time must be finite and >= 0");
    for (int i = 0; i < 3; ++i)
        if (!std::isfinite(r.pos[i]) || !std::isfinite(r.dir[i])) bad("position and direction must be finite");
    for (uint32_t i = 0; i < dp.regions; ++i) {
        paths[i] = getF32(p + kFixedBytes + 4 * i);
        if (!(paths[i] >= 0) || !std::isfinite(paths[i])) bad("path length of region " + std::to_string(i + 1) + " must be finite and >= 0");
    }
    if (!counts) return;
    uint64_t sum = 0;
    for (uint32_t i = 0; i < dp.regions; ++i) sum += counts[i] = getU32(p + kFixedBytes + 4 * (size_t(dp.regions) + i));
    if (sum != r.scatters)
        bad("its scatter counts per region sum to " + std::to_string(sum) + ", its scatter count is " +
            std::to_string(r.scatters));
}

}  // namespace

size_t detectedRecordBytes(uint32_t regions, bool withScatterCounts) {
    return kFixedBytes + (withScatterCounts ? 8 : 4) * size_t(regions);
}

void writeDetected(std::ostream& out, const DetectedPackets& dp) {
    if (dp.mua.size() != dp.regions || dp.mus.size() != dp.regions || dp.g.size() != dp.regions ||
        dp.n.size() != dp.regions || dp.pathLengths.size() != dp.records.size() * dp.regions ||
        (hasScatterCounts(dp) && dp.scatterCounts.size() != dp.records.size() * dp.regions))
        throw Error("detected packets: inconsistent sizes (regions " + std::to_string(dp.regions) + ")");
    if (dp.cells != "record" && (dp.cells != "compact" || dp.kernel != "cuda"))
        throw Error("detected packets: cells '" + dp.cells + "' (record, or compact for kernel cuda)");
    writeHeader(out, dp);
    writeRecords(out, dp);
}

void writeDetected(const std::string& path, const DetectedPackets& dp) {
    AtomicFile f(path);
    writeDetected(f.out, dp);
    f.commit();
}

DetectedPackets readDetected(std::istream& in, const std::string& name) {
    TextReader t(in, name);
    DetectedPackets dp;
    dp.file = name;
    bool withCounts = false;
    const uint64_t records = readHeader(t, in, dp, withCounts);
    const size_t rb = detectedRecordBytes(dp.regions, withCounts);
    const uint64_t left = bytesLeft(in);
    if (left != std::numeric_limits<uint64_t>::max() && left != records * rb)
        throw FormatError(name + ": the header announces " + std::to_string(records) + " records of " + std::to_string(rb) +
                          " bytes, the file holds " + std::to_string(left) + " bytes of records" +
                          (left < records * rb ? " (truncated?)" : ""));
    if (left != std::numeric_limits<uint64_t>::max()) {
        dp.records.reserve(records);
        dp.pathLengths.reserve(records * dp.regions);
        if (withCounts) dp.scatterCounts.reserve(records * dp.regions);
    }
    std::vector<unsigned char> buf(rb);
    for (uint64_t k = 0; k < records; ++k) {
        const std::string where = name + ": record " + std::to_string(k);
        if (!in.read(reinterpret_cast<char*>(buf.data()), std::streamsize(rb)))
            throw FormatError(where + ": the file ends early");
        DetectedRecord r;
        std::vector<float> paths(dp.regions);
        std::vector<uint32_t> counts(withCounts ? dp.regions : 0);
        decodeRecord(buf.data(), dp, r, paths.data(), withCounts ? counts.data() : nullptr, where);
        dp.records.push_back(r);
        dp.pathLengths.insert(dp.pathLengths.end(), paths.begin(), paths.end());
        dp.scatterCounts.insert(dp.scatterCounts.end(), counts.begin(), counts.end());
    }
    if (in.peek() != EOF) throw FormatError(name + ": extra data after record " + std::to_string(records));
    return dp;
}

DetectedPackets readDetected(const std::string& path) {
    refuseDirectory(path);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw FormatError(path + ": cannot open file");
    return readDetected(in, path);
}

}  // namespace fm
