// SPDX-License-Identifier: GPL-3.0-or-later
// The CPU lane loop (generic) compiled for the toy DepthScorer and PathScorer (Tests/Kernels/DepthTally.hpp).
#define FM_LANES_NS depth_lanes_generic
#define FM_LANES_OWN_SCORERS 1
#define FM_LANES_SCALAR 1
#include "Kernels/CPU/CpuLanesImpl.hpp"
#include "Tests/Kernels/DepthTally.hpp"
