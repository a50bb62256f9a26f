// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Writer for MCML's ASCII output format (.mco), laid out line for line as MCML 1.2 writes it
// (mcmlio.c: the InParm and RAT headings, comment lines and blank lines in their places; %G for
// RAT and A_l, %12E for 1-D arrays, "%12E " five to a line for 2-D arrays, r outermost), so MCML's
// conv program (which finds sections by keyword), read_file_mco.m (which counts lines) and
// readMCO() all parse it.
//
// The InParm block echoes result.run in the .mci run-block layout; its numbers are written with
// the fewest digits that read back to the same double, so a round trip keeps the run exactly.
// Result values keep only the digits those formats print (6 significant for %G, 7 for %E).
//
// The result is checked first (array sizes against run.nz/nr/na and the layer count, finite
// values, a run readMCI would accept); a bad one throws std::invalid_argument and writes nothing.

#include "Storage/MCML/MCMLTypes.hpp"

#include <ostream>
#include <string>

// Writes path + ".partial", then renames it over path, so a crash or a full disk never leaves a
// truncated file under the real name. An existing device or pipe (/dev/stdout) is written in place.
// I/O failures throw std::runtime_error.
void writeMCO(const std::string& path, const MCMLResult& result);

// Writes to any stream (its formatting state is restored afterwards); does not check the stream.
void writeMCO(std::ostream& out, const MCMLResult& result);
