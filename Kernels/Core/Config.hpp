// SPDX-License-Identifier: GPL-3.0-or-later
// One host/device macro for the physics shared by the CPU and CUDA kernels.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define FM_UNROLL _Pragma("unroll")
#define FM_HD __host__ __device__ __forceinline__
#define FM_DEVICE_CODE 1
#else
#define FM_UNROLL _Pragma("GCC unroll 4")
// Forced inline on the host as on the device: the CPU kernel is compiled once per instruction
// set (Kernels/CPU/CpuLanes*.cpp), and a physics function left out of line in the AVX2 object
// could be picked by the linker for a generic caller. Forced inlining leaves no such copy, and
// the lane loops vectorise only when every call in them is inlined.
#define FM_HD inline __attribute__((always_inline))
#endif

namespace fm {

// Largest float, used for "no intersection" distances.
constexpr float kInfinity = 3.402823466e+38f;

FM_HD float fm_sqrt(float x) {
#if defined(__CUDA_ARCH__)
    return sqrtf(x);
#else
    return __builtin_sqrtf(x);
#endif
}

// max(x, 0) as a compare: fmaxf's NaN rules keep it a library call on the CPU.
FM_HD float positivePart(float x) { return x > 0.f ? x : 0.f; }

}  // namespace fm
