// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Internal: the run block shared by .mci files and the InParm section of .mco files.
//
//   <output file> <A|B>
//   <photons> [<time limit>]
//   <dz> <dr>
//   <nz> <nr> <na>
//   <number of layers>
//   <n above>
//   <n> <mua> <mus> <g> <d>      one line per layer
//   <n below>

#include "Storage/MCML/MCMLTextScanner.hpp"
#include "Storage/MCML/MCMLTypes.hpp"

#include <cstdint>

namespace MCMLDetail {

// Caps on counts read from files. Far above any real MCML run; they exist so that a corrupt
// count fails with a message instead of an attempt to allocate terabytes.
constexpr std::uint64_t kMaxRuns = 100000;
constexpr std::uint64_t kMaxLayers = 10000;
constexpr std::uint64_t kMaxBins = 100000000;  // per grid axis, and per 2-D array (nr*nz, nr*na)

MCMLRun parseRunBlock(TextScanner& scanner);

}  // namespace MCMLDetail
