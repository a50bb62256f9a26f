// SPDX-License-Identifier: GPL-3.0-or-later
// The lane loop for AVX2 (compiled with -mavx2, chosen at run time: Kernels/CPU/CpuLanes.cpp).
#define FM_LANES_NS lanes_avx2
#include "Kernels/CPU/CpuLanesImpl.hpp"
#include "Kernels/CPU/McmlLanesImpl.hpp"
