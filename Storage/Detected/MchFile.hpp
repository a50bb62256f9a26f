// SPDX-License-Identifier: GPL-3.0-or-later
// Detected packets as an MMC/MCX detected-photon file (.mch, "MCXH" version 1): a 64-byte
// little-endian header and one row of float32 columns per record, the columns chosen by the
// header's savedetflag. docs/DETECTORS.md maps FullMonte's record fields to the columns.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "Kernels/KernelInput.hpp"  // DetectedPackets.hpp: the records

namespace fm {

// savedetflag bits (MCX/MMC): which columns a row has, in this order.
enum MchColumns : uint32_t {
    kMchDetector = 1,   // detector id, from 1
    kMchScatters = 2,   // scatter count per medium (written where the records have them)
    kMchPaths = 4,      // partial path length per medium (mm with unitinmm 1)
    kMchMomentum = 8,   // momentum transfer per medium (not written)
    kMchExitPos = 16,   // exit position (3, mm)
    kMchExitDir = 32,   // exit direction (3)
    kMchWeight = 64,    // initial weight w0: the detected weight is w0 exp(-sum mu_a,r L_r)
};
// The columns FullMonte always writes (and kMchScatters where the records have scatter counts).
constexpr uint32_t kMchWritten = kMchDetector | kMchPaths | kMchExitPos | kMchExitDir | kMchWeight;

// A .mch file as read back: its header fields and rows.
struct MchFile {
    uint32_t version = 0, maxmedia = 0, detnum = 0, colcount = 0, totalphoton = 0, detected = 0, savedphoton = 0;
    float unitinmm = 0;
    uint32_t seedbyte = 0;
    float normalizer = 0;
    int32_t respin = 0;
    uint32_t srcnum = 0, savedetflag = 0;
    std::vector<float> data;  // savedphoton rows of colcount floats
    const float* row(size_t k) const { return data.data() + k * colcount; }
};

// Writes the records of dp. Throws ParameterError when the run's packet or detection counts do
// not fit the header's 32-bit fields, or a record's w0 is not a finite float.
void writeMch(const std::string& path, const DetectedPackets& dp);
void writeMch(std::ostream& out, const DetectedPackets& dp);

// Reads a .mch file (any savedetflag, no seeds); throws FormatError naming the file and the
// field or row on anything malformed.
MchFile readMch(const std::string& path);
MchFile readMch(std::istream& in, const std::string& name);

}  // namespace fm
