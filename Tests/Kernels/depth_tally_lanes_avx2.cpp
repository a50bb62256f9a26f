// SPDX-License-Identifier: GPL-3.0-or-later
// The CPU lane loop (avx2) compiled for the toy DepthScorer and PathScorer (Tests/Kernels/DepthTally.hpp).
#define FM_LANES_NS depth_lanes_avx2
#define FM_LANES_OWN_SCORERS 1
#include "Kernels/CPU/CpuLanesImpl.hpp"
#include "Tests/Kernels/DepthTally.hpp"
