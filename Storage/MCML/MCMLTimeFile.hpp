// SPDX-License-Identifier: GPL-3.0-or-later
// MCML's time-resolved output (docs/TIME_DOMAIN.md "MCML"): fullmonte-mcml --time-gates writes
// NAME_time.txt beside each NAME.mco, holding per time bin the total Rd, Tt and A, and Rd(r, t),
// Tt(r, t) and A(z, t), each integrated over its bin and normalised per launched photon as the
// .mco's grids are (per cm^2 of annulus, per cm of depth).
#pragma once
#include <ostream>

#include "Kernels/McmlKernel.hpp"
#include "Storage/MCML/MCMLTypes.hpp"

namespace fm {

// Writes t's time-resolved tallies (t.gates on) for `run`'s grid. Throws Error where t has none.
void writeMcmlTimeResolved(std::ostream& o, const McmlTallies& t, const MCMLRun& run);

}  // namespace fm
