// One host/device macro for the physics shared by the CPU and CUDA kernels.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define FM_UNROLL _Pragma("unroll")
#define FM_HD __host__ __device__ __forceinline__
#define FM_DEVICE_CODE 1
#else
#define FM_UNROLL _Pragma("GCC unroll 4")
#define FM_HD inline
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
