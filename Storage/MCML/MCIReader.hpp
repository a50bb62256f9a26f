// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Reader for MCML 1.2 input files (.mci).
//
// Layout: '#' starts a comment, blank lines are ignored, then
//   <file version>
//   <number of runs>
//   one run block per run (see MCMLRunBlock.hpp; the same block MCML echoes into .mco files).
// The photon line may hold "<photons> <time limit>" as some MCML versions allow; the time limit
// is ignored. Values are checked as MCML needs them (n > 0, mua, mus >= 0, |g| <= 1, d, dz, dr > 0,
// counts >= 1); anything after the last declared run other than comments is an error, because it
// almost always means the run count is wrong.
//
// Every problem in the text throws MCMLFormatError ("file:line: what was expected, what was found");
// a file that cannot be opened throws std::runtime_error.

#include "Storage/MCML/MCMLFormatError.hpp"
#include "Storage/MCML/MCMLTypes.hpp"

#include <istream>
#include <string>

MCMLInput readMCI(const std::string& path);

// name is used in messages and stored as MCMLInput::path.
MCMLInput readMCI(std::istream& in, const std::string& name);
