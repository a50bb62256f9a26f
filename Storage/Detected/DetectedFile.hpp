// SPDX-License-Identifier: GPL-3.0-or-later
// Detected-packet files (.fmd): a text header (the run's packets, seed, materials, detectors,
// record count) followed by fixed-size little-endian binary records. The format is described in
// docs/DETECTORS.md. Reads report "file:line" for the header and the record number for the
// records.
#pragma once
#include <iosfwd>
#include <string>

#include "Kernels/KernelInput.hpp"  // DetectedPackets.hpp: the detectors and records

namespace fm {

// Bytes of one record with `regions` path lengths (and scatter counts: a version 2 record).
size_t detectedRecordBytes(uint32_t regions, bool withScatterCounts = false);

void writeDetected(const std::string& path, const DetectedPackets& dp);
void writeDetected(std::ostream& out, const DetectedPackets& dp);

// Throws FormatError naming the file (and line or record) on anything malformed. The result's
// `file` is the path (or name).
DetectedPackets readDetected(const std::string& path);
DetectedPackets readDetected(std::istream& in, const std::string& name);

}  // namespace fm
