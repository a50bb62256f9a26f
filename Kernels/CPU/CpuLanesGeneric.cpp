// SPDX-License-Identifier: GPL-3.0-or-later
// The CPU packet loop for the baseline instruction set: one packet at a time (FM_LANES_SCALAR),
// with the lane loop's compiler flags. Chosen where the CPU lacks AVX2 (Kernels/CPU/CpuLanes.cpp).
#define FM_LANES_NS lanes_generic
#define FM_LANES_SCALAR 1
#include "Kernels/CPU/CpuLanesImpl.hpp"
#include "Kernels/CPU/McmlLanesImpl.hpp"
