// SPDX-License-Identifier: GPL-3.0-or-later
// The L2's throughput for fire-and-forget global atomic adds (`red.global.add`) on this GPU,
// measured: every thread of a full-occupancy grid adds into hashed bins of an array, and the
// kernel's adds per second are printed per pattern. It bounds any kernel whose tallies are such
// adds (the MCML kernel's A(r, z) sends: adds per photon over this rate), and tells whether a
// kernel that sends near it is held by the L2's atomic units or by where its adds land.
// Patterns: the whole array uniformly, by footprint from 64 KB (every add hits the L2) to beyond
// the L2 (adds that miss go to DRAM); double, float and 32/64-bit integers; and the MCML kernel's
// layout (a block adds into its replica, blockIdx % R, of a B-bin grid: skin7's 1e5 bins in 32
// replicas, its bins at the beam, 4,000 in 256). Values are 1, so every sum is exact and checked.
// Not part of the library. Built with the CUDA kernel (BUILD_DIR/bin/l2_atomics), or by hand:
// nvcc -std=c++17 -O3 -arch=sm_90 -I. bench/l2_atomics.cu -o l2_atomics
// Usage: ./l2_atomics [adds per thread (default 2048)] [reps (3)]
#include "bench/CudaCheck.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {


constexpr int kBlock = 256;

// A 32-bit mix of (thread, add): a few integer instructions, so the adds, not the index, are
// what the kernel waits on.
__device__ __forceinline__ uint32_t mix(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

// red.global.add, as the engine sends its tallies (DeviceAtomicAdd, Kernels/CUDA/CudaSupport.cuh).
__device__ __forceinline__ void red(double* p, double v) {
    asm volatile("red.global.add.f64 [%0], %1;" ::"l"(__cvta_generic_to_global(p)), "d"(v) : "memory");
}
__device__ __forceinline__ void red(float* p, float v) {
    asm volatile("red.global.add.f32 [%0], %1;" ::"l"(__cvta_generic_to_global(p)), "f"(v) : "memory");
}
__device__ __forceinline__ void red(unsigned* p, unsigned v) {
    asm volatile("red.global.add.u32 [%0], %1;" ::"l"(__cvta_generic_to_global(p)), "r"(v) : "memory");
}
__device__ __forceinline__ void red(unsigned long long* p, unsigned long long v) {
    asm volatile("red.global.add.u64 [%0], %1;" ::"l"(__cvta_generic_to_global(p)), "l"(v) : "memory");
}

// Thread t's add i goes to replica (blockIdx % copies) bin mix(t, i) % bins.
template <class T>
__global__ void __launch_bounds__(kBlock) addKernel(T* a, uint32_t bins, uint32_t copies, int adds) {
    const uint32_t t = blockIdx.x * kBlock + threadIdx.x;
    T* replica = a + size_t(blockIdx.x % copies) * bins;
    for (int i = 0; i < adds; ++i) red(replica + mix(t * 0x9e3779b9u + uint32_t(i)) % bins, T(1));
}

template <class T>
const char* typeName();
template <>
const char* typeName<double>() { return "f64"; }
template <>
const char* typeName<float>() { return "f32"; }
template <>
const char* typeName<unsigned>() { return "u32"; }
template <>
const char* typeName<unsigned long long>() { return "u64"; }

// Best of reps: adds per second; the array's sum is checked against the adds made.
template <class T>
double measure(const char* what, uint32_t bins, uint32_t copies, int adds, int reps, unsigned blocks) {
    T* a = nullptr;
    const size_t n = size_t(bins) * copies;
    CHECK(cudaMalloc(&a, n * sizeof(T)));
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    double best = 1e30;
    for (int r = 0; r < reps + 1; ++r) {  // the first launch warms up (not timed)
        CHECK(cudaMemset(a, 0, n * sizeof(T)));
        CHECK(cudaEventRecord(e0));
        addKernel<T><<<blocks, kBlock>>>(a, bins, copies, adds);
        CHECK(cudaEventRecord(e1));
        CHECK(cudaEventSynchronize(e1));
        CHECK(cudaGetLastError());
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, e0, e1));
        if (r > 0) best = std::min(best, double(ms) * 1e-3);
    }
    std::vector<T> h(n);
    CHECK(cudaMemcpy(h.data(), a, n * sizeof(T), cudaMemcpyDeviceToHost));
    double sum = 0;
    for (T v : h) sum += double(v);
    const double total = double(blocks) * kBlock * adds;
    const double rate = total / best;
    const bool ok = std::string(typeName<T>()) == "f32" || sum == total;  // f32 sums round beyond 2^24
    std::printf("%-34s %-4s %8u bins x %4u copies (%8.2f MB): %.3e adds in %.4f s = %.3e adds/s%s\n", what,
                typeName<T>(), bins, copies, double(n * sizeof(T)) / 1e6, total, best, rate,
                ok ? "" : "  SUM WRONG");
    CHECK(cudaFree(a));
    CHECK(cudaEventDestroy(e0));
    CHECK(cudaEventDestroy(e1));
    if (!ok) std::exit(2);
    return rate;
}

}  // namespace

int main(int argc, char** argv) {
    const int adds = argc > 1 ? std::atoi(argv[1]) : 2048;
    const int reps = argc > 2 ? std::atoi(argv[2]) : 3;
    if (adds < 1 || reps < 1) {
        std::fprintf(stderr, "usage: l2_atomics [adds per thread >= 1] [reps >= 1]\n");
        return 2;
    }
    int dev = 0, sms = 0, l2 = 0, perSm = 0;
    cudaDeviceProp p{};
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaGetDeviceProperties(&p, dev));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, addKernel<double>, kBlock, 0));
    const unsigned blocks = unsigned(sms * perSm);
    std::printf("%s: %d SMs, L2 %.1f MB, %d blocks of %d per SM, %d adds per thread, best of %d\n", p.name, sms,
                l2 / 1e6, perSm, kBlock, adds, reps);
    // Uniform over the array, by footprint (doubles).
    for (uint32_t kb : {64u, 1024u, 4096u, 16384u, 32768u, 65536u, 262144u})
        measure<double>("uniform, by footprint", kb * 128u, 1, adds, reps, blocks);
    // By type, 4 MB.
    measure<float>("uniform, by type (4 MB)", 1u << 20, 1, adds, reps, blocks);
    measure<unsigned>("uniform, by type (4 MB)", 1u << 20, 1, adds, reps, blocks);
    measure<unsigned long long>("uniform, by type (4 MB)", 1u << 19, 1, adds, reps, blocks);
    // The MCML kernel's layout: per-block replicas.
    measure<double>("per-block replicas (skin7's grid)", 100000u, 32, adds, reps, blocks);
    measure<double>("per-block replicas (skin7's grid)", 100000u, 64, adds, reps, blocks);
    measure<double>("per-block replicas (beam bins)", 4000u, 256, adds, reps, blocks);
    measure<double>("per-block replicas (beam bins)", 4000u, 32, adds, reps, blocks);
    // Hot spots: few bins that every block shares.
    for (uint32_t bins : {64u, 1024u, 16384u}) measure<double>("shared hot bins", bins, 1, adds, reps, blocks);
    return 0;
}
