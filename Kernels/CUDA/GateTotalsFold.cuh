// SPDX-License-Identifier: GPL-3.0-or-later
// Batch means of the per-gate totals on the GPU (the CPU folds gateBinTotals of its gated
// tallies after each batch): after each batch one block per bin sums the bin over its elements
// in a fixed order, the bins' totals (a few doubles) come back, and a host BatchFold folds
// them. The packet kernels are untouched. Also the sum over the bins per element (sumGateBins).
// Included by CudaKernel.cu after BatchFold.cuh.
#pragma once
#include <algorithm>
#include <vector>

#include "Kernels/BatchMeans.hpp"

namespace fm {
namespace {
namespace cuda_engine {

constexpr unsigned kGateTotalThreads = 256;

// out[b] = sum of gated[b * stride + i] over i; one block per bin b.
__global__ void gateBinTotalsKernel(const double* gated, size_t stride, double* out) {
    __shared__ double part[kGateTotalThreads];
    const double* bin = gated + size_t(blockIdx.x) * stride;
    double s = 0;
    for (size_t i = threadIdx.x; i < stride; i += blockDim.x) s += bin[i];
    part[threadIdx.x] = s;
    __syncthreads();
    for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) part[threadIdx.x] += part[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = part[0];
}

// into[i] = the sum over the bins of gated[b * n + i], bins in order (a gated run's CW volume
// tally where every tetra is gated: Kernels/GatedTally.hpp cwVolume).
__global__ void sumGateBinsKernel(const double* gated, uint32_t bins, size_t n, double* into) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        double v = 0;
        for (uint32_t b = 0; b < bins; ++b) v += gated[b * n + i];
        into[i] = v;
    }
}
inline void sumGateBins(const double* gated, uint32_t bins, size_t n, double* into, cudaStream_t s) {
    if (!n) return;
    const unsigned blocks = unsigned(std::min<size_t>((n + kGateTotalThreads - 1) / kGateTotalThreads, 4096));
    sumGateBinsKernel<<<blocks, kGateTotalThreads, 0, s>>>(gated, bins, n, into);
    cudaCheck(cudaGetLastError(), "sum the gated bins");
}

// The folds of the gated volume and exit tallies' per-bin totals: `bins` values each, for the
// arrays of volumeCount and exitCount doubles (0: not gated) that lie one after the other.
class DeviceGateTotalsFold {
public:
    DeviceGateTotalsFold(uint32_t bins, size_t volumeCount, size_t exitCount)
        : bins_(bins), nv_(volumeCount), ns_(exitCount), totals_(2 * size_t(bins), "per-gate totals") {
        clear();
    }
    void clear() {
        volume_.reset(nv_ ? bins_ : 0);
        exit_.reset(ns_ ? bins_ : 0);
    }
    // After a batch of `packets` packets (the gated tallies complete on stream s).
    void fold(const DeviceBuffer<double>& gated, uint64_t packets, cudaStream_t s) {
        if (nv_) gateBinTotalsKernel<<<bins_, kGateTotalThreads, 0, s>>>(gated.get(), nv_ / bins_, totals_.get());
        if (ns_) gateBinTotalsKernel<<<bins_, kGateTotalThreads, 0, s>>>(gated.get() + nv_, ns_ / bins_, totals_.get() + bins_);
        cudaCheck(cudaGetLastError(), "per-gate totals");
        const std::vector<double> t = totals_.download(s);
        if (nv_) volume_.fold(t.data(), packets);
        if (ns_) exit_.fold(t.data() + bins_, packets);
    }
    const std::vector<double>& volumeQ() const { return volume_.q(); }
    const std::vector<double>& exitQ() const { return exit_.q(); }

private:
    uint32_t bins_;
    size_t nv_, ns_;
    DeviceBuffer<double> totals_;
    BatchFold volume_, exit_;
};

}  // namespace cuda_engine
}  // namespace
}  // namespace fm
