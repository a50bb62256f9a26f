// SPDX-License-Identifier: GPL-3.0-or-later
// The floor of an MCML interaction on this GPU, measured: the least work one interaction of an
// exact MCML photon must do (step draw and log, move, weight drop, HG deflection and rotation,
// roulette, and, where scored, the A(r,z) deposit), written as lean as it goes, in an infinite
// homogeneous medium (no boundaries, so no crossings and no divergence but roulette's). Its
// interactions per second bound what any kernel doing this physics per interaction can reach;
// 5.9e10 (the interactions of 1e8 seven-layer-skin photons) over that rate bounds skin7's kernel.
// Variants (template): RNG (xoshiro as the engine's PacketRng, or a one-multiply LCG whose
// quality is not acceptable: a bound only), deposit (none, float, the engine's double, or a
// shared-memory tile near the beam), the direction renormalised or not. Not part of the library; issue 8's benchmark of the floor.
// Built with the CUDA kernel (BUILD_DIR/bin/mcml_floor), or by hand: nvcc -std=c++17 -O3
// -arch=sm_90 --use_fast_math -I. bench/mcml_floor.cu -o mcml_floor
// Usage: ./mcml_floor [photons (default 4e6)] [reps (3)]
#include "Kernels/Core/Rng.hpp"
#include "bench/CudaCheck.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

// Skin7's dermis (layer 5) in 1/mm; the grid as the .mci's: 0.02 mm x 500, 0.1 mm x 200.
constexpr float kMuA = 0.07f, kMuS = 20.f, kG = 0.76f;
constexpr float kDz = 0.02f, kDr = 0.1f;
constexpr int kNz = 500, kNr = 200;
constexpr float kWmin = 1e-4f;
constexpr int kBlock = 256, kReplicas = 32;

enum Rng { kXoshiro = 0, kLcg = 1 };
enum Deposit { kNone = 0, kFloat = 1, kDouble = 2, kTile = 3 };
// kTile: the bins near the beam (the first kTz x kTr) in a shared-memory tile per block, added as
// 64-bit fixed point (2^-40: exact and order-free sums), the others as kFloat; the tile goes to
// the global grid once, at the block's end.
constexpr int kTz = 64, kTr = 32;
constexpr float kFix = 1099511627776.f;  // 2^40

struct Lcg {  // 32-bit LCG (Numerical Recipes' constants): one IMAD a draw; a bound, not a choice
    uint32_t s;
    __device__ uint32_t next() { return s = s * 1664525u + 1013904223u; }
};

template <int R>
struct Gen;
template <>
struct Gen<kXoshiro> {
    fm::PacketRng r;
    __device__ Gen(uint64_t seed, uint64_t i) : r(seed, i) {}
    __device__ float u() { return r.uniform(); }
};
template <>
struct Gen<kLcg> {  // the same 24-bit conversion as PacketRng::uniform()
    Lcg r;
    __device__ Gen(uint64_t seed, uint64_t i) : r{uint32_t(seed * 0x9E3779B9u + i * 0x85EBCA6Bu)} {}
    __device__ float u() { return float(int32_t(r.next() >> 8)) * (1.0f / 16777216.0f); }
};

template <int R, int D, bool kRenorm>
__global__ void __launch_bounds__(kBlock)
floorKernel(uint64_t photons, unsigned long long* next, double* rz, unsigned long long* counts, double* sums) {
    __shared__ unsigned long long tile[D == kTile ? kTz * kTr : 1];
    if (D == kTile) {
        for (int k = threadIdx.x; k < kTz * kTr; k += blockDim.x) tile[k] = 0ull;
        __syncthreads();
    }
    const float muT = kMuA + kMuS, albedo = kMuS / muT, invMuT = 1.f / muT;
    double* grid = rz + size_t(blockIdx.x % kReplicas) * kNz * kNr;
    unsigned long long n = 0, flushes = 0;
    double total = 0.0, where = 0.0;  // where: the photons' last positions, so no variant drops the transport
    for (;;) {
        const uint64_t i = atomicAdd(next, 1ull);
        if (i >= photons) break;
        Gen<R> g(1, i);
        float x = 0.f, y = 0.f, z = 0.f, ux = 0.f, uy = 0.f, uz = 1.f, w = 1.f;
        uint32_t bin = 0;
        double sum = 0.0;
        total += 1.0;
        for (;;) {
            const float s = -__logf(1.f - g.u()) * invMuT;  // (0, 1] under the log
            x += s * ux;
            y += s * uy;
            z += s * uz;
            const float w1 = w * albedo;
            if (D != kNone) {
                const float r = sqrtf(x * x + y * y);
                const uint32_t ir = min(uint32_t(r * (1.f / kDr)), uint32_t(kNr - 1));
                const uint32_t iz = min(uint32_t(fabsf(z) * (1.f / kDz)), uint32_t(kNz - 1));
                const uint32_t b = iz * kNr + ir;
                if (D == kTile && iz < uint32_t(kTz) && ir < uint32_t(kTr)) {
                    atomicAdd(tile + iz * kTr + ir, (unsigned long long)__float2ll_rn((w - w1) * kFix));
                } else {
                    const double dw = D == kDouble ? double(w) - double(w1) : double(w - w1);
                    if (b != bin) {
                        if (sum != 0.0) {
                            atomicAdd(grid + bin, sum);
                            ++flushes;
                        }
                        bin = b;
                        sum = 0.0;
                    }
                    sum += dw;
                }
            }
            w = w1;
            ++n;
            if (w < kWmin) {  // the ledger per photon: launched 1, plus what roulette gives, minus what it takes
                if (g.u() < 0.1f) {
                    total += 9.0 * double(w);
                    w *= 10.f;
                } else {
                    total -= double(w);
                    where += double(x) + double(y) + double(z);
                    break;
                }
            }
            // Henyey-Greenstein and MCML's rotation.
            const float t = (1.f - kG * kG) / (1.f - kG + 2.f * kG * g.u());
            const float ct = fminf(1.f, fmaxf(-1.f, (1.f + kG * kG - t * t) * (1.f / (2.f * kG))));
            const float st = sqrtf(fmaxf(0.f, 1.f - ct * ct));
            float sp, cp;
            __sincosf(6.2831853f * g.u(), &sp, &cp);
            float nx, ny, nz;
            if (fabsf(uz) > 0.99999f) {
                nx = st * cp;
                ny = st * sp;
                nz = copysignf(ct, uz);
            } else {
                const float q = rsqrtf(1.f - uz * uz), tq = st * q;
                nx = tq * (ux * uz * cp - uy * sp) + ux * ct;
                ny = tq * (uy * uz * cp + ux * sp) + uy * ct;
                nz = -st * cp * (1.f - uz * uz) * q + uz * ct;
            }
            if (kRenorm) {
                const float k = rsqrtf(nx * nx + ny * ny + nz * nz);
                nx *= k;
                ny *= k;
                nz *= k;
            }
            ux = nx;
            uy = ny;
            uz = nz;
        }
        if (D != kNone && sum != 0.0) {
            atomicAdd(grid + bin, sum);
            ++flushes;
        }
    }
    atomicAdd(counts, n);
    atomicAdd(counts + 1, flushes);
    atomicAdd(sums, total);
    atomicAdd(sums + 1, where);
    if (D == kTile) {
        __syncthreads();
        for (int k = threadIdx.x; k < kTz * kTr; k += blockDim.x)
            if (tile[k]) atomicAdd(grid + (k / kTr) * kNr + k % kTr, double(tile[k]) * (1.0 / double(kFix)));
    }
}

struct Result {
    double seconds, interactions, flushes, absorbed, grid;
    int blocksPerSm;
};

template <int R, int D, bool kRenorm>
Result run(uint64_t photons, int reps, unsigned sms, double* rz, unsigned long long* counters, double* sums) {
    int perSm = 0;  // as many resident blocks as the kernel's registers allow
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, floorKernel<R, D, kRenorm>, kBlock, 0));
    const unsigned blocks = sms * unsigned(perSm);
    std::vector<float> times;
    Result res{};
    for (int k = 0; k < reps + 1; ++k) {  // the first is a warm-up
        CHECK(cudaMemset(rz, 0, sizeof(double) * size_t(kReplicas) * kNz * kNr));
        CHECK(cudaMemset(counters, 0, 3 * sizeof(unsigned long long)));
        CHECK(cudaMemset(sums, 0, 2 * sizeof(double)));
        cudaEvent_t a, b;
        CHECK(cudaEventCreate(&a));
        CHECK(cudaEventCreate(&b));
        CHECK(cudaEventRecord(a));
        floorKernel<R, D, kRenorm><<<blocks, kBlock>>>(photons, counters, rz, counters + 1, sums);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        CHECK(cudaEventDestroy(a));
        CHECK(cudaEventDestroy(b));
        if (k > 0) times.push_back(ms);
        unsigned long long c[3];
        CHECK(cudaMemcpy(c, counters, sizeof c, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(&res.absorbed, sums, sizeof(double), cudaMemcpyDeviceToHost));
        std::vector<double> h(size_t(kReplicas) * kNz * kNr);
        CHECK(cudaMemcpy(h.data(), rz, h.size() * sizeof(double), cudaMemcpyDeviceToHost));
        res.grid = 0;
        for (double v : h) res.grid += v;
        res.interactions = double(c[1]);
        res.flushes = double(c[2]);
    }
    std::sort(times.begin(), times.end());
    res.seconds = times[times.size() / 2] * 1e-3;
    res.blocksPerSm = perSm;
    return res;
}

template <int R, int D, bool kRenorm>
void report(const char* name, uint64_t photons, int reps, unsigned sms, double* rz, unsigned long long* c, double* s) {
    const Result r = run<R, D, kRenorm>(photons, reps, sms, rz, c, s);
    const double rate = r.interactions / r.seconds;
    // Every photon ends at roulette in an infinite medium: absorbed = launched (1 per photon) +
    // what roulette gave - what it took (the kernel's ledger); a scored grid must sum to it.
    std::printf("| %-34s | %d | %.3f | %.3e | %.1f | %.3f | %.3e | %.4f | %.6f |\n", name, r.blocksPerSm, r.seconds,
                r.interactions, r.interactions / double(photons), r.flushes / r.interactions, rate, 5.9e10 / rate,
                D != kNone ? r.grid / r.absorbed : 0.0);
}

}  // namespace

int main(int argc, char** argv) {
    const uint64_t photons = argc > 1 ? uint64_t(std::atof(argv[1])) : 4000000ull;
    const int reps = argc > 2 ? std::atoi(argv[2]) : 3;
    int dev = 0, sms = 0;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, dev));
    double* rz = nullptr;
    unsigned long long* counters = nullptr;
    double* sums = nullptr;
    CHECK(cudaMalloc(&rz, sizeof(double) * size_t(kReplicas) * kNz * kNr));
    CHECK(cudaMalloc(&counters, 3 * sizeof(unsigned long long)));
    CHECK(cudaMalloc(&sums, 2 * sizeof(double)));
    std::printf("%s, %d SMs, blocks of %d; %llu photons, median of %d; mu_a %.2f mu_s %.1f /mm g %.2f, wmin %g\n",
                prop.name, sms, kBlock, (unsigned long long)photons, reps, kMuA, kMuS, kG, kWmin);
    std::printf("| variant | blocks/SM | s | interactions | per photon | global adds / interaction | interactions/s | skin7 5.9e10 at this rate, s | grid / absorbed |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|\n");
    report<kXoshiro, kDouble, true>("xoshiro, double deposit, renorm", photons, reps, unsigned(sms), rz, counters, sums);
    report<kXoshiro, kDouble, false>("xoshiro, double deposit", photons, reps, unsigned(sms), rz, counters, sums);
    report<kXoshiro, kFloat, false>("xoshiro, float deposit", photons, reps, unsigned(sms), rz, counters, sums);
    report<kXoshiro, kTile, false>("xoshiro, tile + float deposit", photons, reps, unsigned(sms), rz, counters, sums);
    report<kXoshiro, kNone, false>("xoshiro, no deposit", photons, reps, unsigned(sms), rz, counters, sums);
    report<kLcg, kFloat, false>("LCG, float deposit", photons, reps, unsigned(sms), rz, counters, sums);
    report<kLcg, kNone, false>("LCG, no deposit", photons, reps, unsigned(sms), rz, counters, sums);
    CHECK(cudaFree(rz));
    CHECK(cudaFree(counters));
    CHECK(cudaFree(sums));
    return 0;
}
