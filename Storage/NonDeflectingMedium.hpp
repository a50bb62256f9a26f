// SPDX-License-Identifier: GPL-3.0-or-later
// g = 1 in the file formats whose programs take it (TIM-OS, MMC).
#pragma once
#include "Geometry/MaterialSet.hpp"

namespace fm {

// Henyey-Greenstein with g = 1 never turns a packet, so such a medium is the same as one without
// scattering, which is how it is kept (mu_s = g = 0; the kernels need |g| < 1). Absorption along
// the straight path, and so every tally, is the same in expectation. Other media are unchanged.
inline Material nonDeflectingAsClear(Material m) {
    if (m.g == 1) m.mu_s = m.g = 0;
    return m;
}

}  // namespace fm
