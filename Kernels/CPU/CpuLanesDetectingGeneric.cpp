// SPDX-License-Identifier: GPL-3.0-or-later
// The one-packet-at-a-time loop for detecting runs, with the lane loop's compiler flags
// (chosen where the CPU lacks AVX2: Kernels/CPU/CpuLanesDetecting.cpp).
#define FM_LANES_NS detecting_lanes_generic
#define FM_LANES_OWN_SCORERS 1
#define FM_LANES_SCALAR 1
#include "Kernels/CPU/CpuLanesImpl.hpp"
#include "Kernels/CPU/CpuLanesDetectingInstances.hpp"
