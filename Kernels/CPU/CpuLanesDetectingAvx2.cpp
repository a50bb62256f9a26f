// SPDX-License-Identifier: GPL-3.0-or-later
// The AVX2 lane loop for detecting runs (compiled with -mavx2, chosen at run time:
// Kernels/CPU/CpuLanesDetecting.cpp).
#define FM_LANES_NS detecting_lanes_avx2
#define FM_LANES_OWN_SCORERS 1
#include "Kernels/CPU/CpuLanesImpl.hpp"
#include "Kernels/CPU/CpuLanesDetectingInstances.hpp"
