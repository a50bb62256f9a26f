// SPDX-License-Identifier: GPL-3.0-or-later
#include "Storage/Detected/MchFile.hpp"

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "Common/Errors.hpp"
#include "Storage/AtomicFile.hpp"

namespace fm {
namespace {

constexpr uint32_t kMchVersion = 1;
constexpr size_t kMchHeaderBytes = 64;

void putU32(std::string& b, uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(char((v >> (8 * i)) & 0xff));
}
void putF32(std::string& b, float f) {
    uint32_t v;
    std::memcpy(&v, &f, 4);
    putU32(b, v);
}
uint32_t getU32(const unsigned char* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24; }
float getF32(const unsigned char* p) {
    const uint32_t v = getU32(p);
    float f;
    std::memcpy(&f, &v, 4);
    return f;
}

uint32_t header32(uint64_t v, const char* what) {
    if (v > std::numeric_limits<uint32_t>::max())
        throw ParameterError(std::string(".mch: ") + what + " " + std::to_string(v) +
                             " does not fit the header's 32-bit field (at most 4294967295)");
    return uint32_t(v);
}

// Columns of one row for `media` media and the flags of kMchWritten-style savedetflag.
uint32_t columnCount(uint32_t flag, uint32_t media) {
    return ((flag & kMchDetector) ? 1 : 0) + ((flag & kMchScatters) ? media : 0) + ((flag & kMchPaths) ? media : 0) +
           ((flag & kMchMomentum) ? media : 0) + ((flag & kMchExitPos) ? 3 : 0) + ((flag & kMchExitDir) ? 3 : 0) +
           ((flag & kMchWeight) ? 1 : 0);
}

}  // namespace

// The columns written for dp: kMchWritten, and the scatter counts per medium where the records
// have them.
uint32_t mchFlags(const DetectedPackets& dp) { return kMchWritten | (dp.scatterCounts.empty() ? 0u : kMchScatters); }

void writeMch(std::ostream& out, const DetectedPackets& dp) {
    const uint32_t flags = mchFlags(dp), media = dp.regions, cols = columnCount(flags, media);
    std::string b;
    b.append("MCXH", 4);
    putU32(b, kMchVersion);
    putU32(b, media);
    putU32(b, header32(dp.detectors.size(), "detectors"));
    putU32(b, cols);
    putU32(b, header32(dp.packets, "packets"));
    putU32(b, header32(dp.detected, "detections"));
    putU32(b, header32(dp.records.size(), "records"));
    putF32(b, 1.0f);  // unitinmm: path lengths in mm
    putU32(b, 0);     // seedbyte: no seeds (a packet's stream is the run's seed and its index)
    putF32(b, 0.0f);  // normalizer: none (no fluence in this file)
    putU32(b, 1);     // respin
    putU32(b, 1);     // srcnum
    putU32(b, flags);
    putU32(b, 0);
    putU32(b, 0);
    out.write(b.data(), std::streamsize(b.size()));
    std::string row;
    for (size_t k = 0; k < dp.records.size(); ++k) {
        const DetectedRecord& r = dp.records[k];
        row.clear();
        putF32(row, float(r.detector + 1));
        if (flags & kMchScatters)
            for (uint32_t m = 0; m < media; ++m) putF32(row, float(dp.scatterCount(k)[m]));
        double muaL = 0;
        for (uint32_t m = 0; m < media; ++m) {
            putF32(row, dp.path(k)[m]);
            muaL += dp.mua[m] * double(dp.path(k)[m]);
        }
        for (int i = 0; i < 3; ++i) putF32(row, r.pos[i]);
        for (int i = 0; i < 3; ++i) putF32(row, r.dir[i]);
        // w0 such that MCX/MMC's detected weight w0 exp(-sum mu_a L) is the record's exit weight.
        const double w0 = double(r.weight) * std::exp(muaL);
        if (!(w0 <= std::numeric_limits<float>::max()))
            throw ParameterError(".mch: record " + std::to_string(k) + " (packet " + std::to_string(r.index) +
                                 "): its initial weight w0 = w exp(sum mu_a L) is not a finite float");
        putF32(row, float(w0));
        out.write(row.data(), std::streamsize(row.size()));
    }
}

void writeMch(const std::string& path, const DetectedPackets& dp) {
    AtomicFile f(path);
    writeMch(f.out, dp);
    f.commit();
}

MchFile readMch(std::istream& in, const std::string& name) {
    unsigned char h[kMchHeaderBytes];
    if (!in.read(reinterpret_cast<char*>(h), kMchHeaderBytes))
        throw FormatError(name + ": shorter than the 64-byte .mch header");
    if (std::memcmp(h, "MCXH", 4) != 0) throw FormatError(name + ": not a .mch file (magic is not MCXH)");
    MchFile f;
    f.version = getU32(h + 4);
    f.maxmedia = getU32(h + 8);
    f.detnum = getU32(h + 12);
    f.colcount = getU32(h + 16);
    f.totalphoton = getU32(h + 20);
    f.detected = getU32(h + 24);
    f.savedphoton = getU32(h + 28);
    f.unitinmm = getF32(h + 32);
    f.seedbyte = getU32(h + 36);
    f.normalizer = getF32(h + 40);
    f.respin = int32_t(getU32(h + 44));
    f.srcnum = getU32(h + 48);
    f.savedetflag = getU32(h + 52);
    if (f.version != kMchVersion) throw FormatError(name + ": version " + std::to_string(f.version) + ", expected 1");
    if (f.seedbyte != 0) throw FormatError(name + ": seedbyte " + std::to_string(f.seedbyte) + ": seeds are not read");
    if (f.maxmedia > 65535) throw FormatError(name + ": maxmedia " + std::to_string(f.maxmedia) + " is too large");
    if (f.savedetflag != 0 && f.colcount != columnCount(f.savedetflag, f.maxmedia))
        throw FormatError(name + ": colcount " + std::to_string(f.colcount) + " does not match savedetflag " +
                          std::to_string(f.savedetflag) + " with " + std::to_string(f.maxmedia) + " media");
    if (f.colcount == 0 && f.savedphoton > 0) throw FormatError(name + ": colcount 0 with saved photons");
    if (f.savedphoton > f.detected) throw FormatError(name + ": savedphoton exceeds detected");
    const size_t floats = size_t(f.savedphoton) * f.colcount;
    std::string raw(floats * 4, '\0');
    if (floats && !in.read(raw.data(), std::streamsize(raw.size())))
        throw FormatError(name + ": " + std::to_string(f.savedphoton) + " rows announced, the file ends in row " +
                          std::to_string(size_t(in.gcount()) / 4 / f.colcount));
    if (in.peek() != std::char_traits<char>::eof()) throw FormatError(name + ": bytes after the last row");
    f.data.resize(floats);
    for (size_t i = 0; i < floats; ++i) f.data[i] = getF32(reinterpret_cast<const unsigned char*>(raw.data()) + 4 * i);
    return f;
}

MchFile readMch(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw FormatError(path + ": cannot open");
    return readMch(in, path);
}

}  // namespace fm
