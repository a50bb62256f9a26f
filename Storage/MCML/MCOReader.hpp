// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Reader for MCML's ASCII output files (.mco), as written by MCML 1.2, CUDAMCML and writeMCO().
//
// Expected, after comments and blank lines are dropped:
//   A1                              format version (binary 'B1' files are not supported)
//   InParam (or MCML 1.2's InParm)  then the echoed run block, as in a .mci file
//   RAT                             Rsp, Rd, A, Tt
//   A_l A_z Rd_r Rd_a Tt_r Tt_a     headings, each followed by its 1-D values
//   A_rz Rd_ra Tt_ra                headings, each followed by its 2-D values, r outermost,
//                                   any number of values per line
// Array sizes come from the echoed nz, nr, na and layer count. The user time is taken from the
// "# User time: <seconds> sec" comment when present (0 otherwise).
//
// Every problem in the text throws MCMLFormatError ("file:line: ..."); a file that cannot be
// opened throws std::runtime_error.

#include "Storage/MCML/MCMLFormatError.hpp"
#include "Storage/MCML/MCMLTypes.hpp"

#include <istream>
#include <string>

MCMLResult readMCO(const std::string& path);

// name is used in messages.
MCMLResult readMCO(std::istream& in, const std::string& name);
