// SPDX-License-Identifier: GPL-3.0-or-later
// Batch means on the GPU (Kernels/BatchMeans.hpp): after each batch, one small kernel over the
// device tallies adds (tally now - tally at the previous fold)^2 / batch packets into q, per
// element, summing the tallies' replicas in the order downloadFolded does. The packet kernels
// are untouched (no per-event cost); the ledger of each batch is read back on the host.
// Included by CudaKernel.cu after CudaEngine.cuh.
#pragma once
#include <array>

#include "Kernels/BatchMeans.hpp"

namespace fm {
namespace {
namespace cuda_engine {

__global__ void foldBatchKernel(const double* tallies, size_t n, uint32_t copies, double* last, double* q,
                                double invPackets) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        double t = tallies[i];
        for (uint32_t c = 1; c < copies; ++c) t += tallies[c * n + i];
        const double x = t - last[i];
        q[i] += x * x * invPackets;
        last[i] = t;
    }
}

// One device's folds: q and the last folded tallies (stride doubles each) on the device, the
// ledger's on the host. The tallies may come in two slots that batches fill in turn (a fed run,
// CudaEngine.cuh BatchFeed): each slot's successive differences are its batches, so each has
// its own last tallies and ledger, and q sums over both.
class DeviceBatchFold {
public:
    // slots: 1, or 2 for a fed run's tallies.
    explicit DeviceBatchFold(size_t stride, unsigned slots = 1)
        : stride_(stride), last_(slots * stride, "batch folds"), q_(stride, "batch folds") {}
    void clear(cudaStream_t s) {
        last_.zero(s);
        q_.zero(s);
        for (BatchFold& l : ledger_) l.reset(7);
        ledgerQ_.clear();
        batches_ = 0;
    }
    // After a batch of `packets` packets whose tallies (copies replicas of stride doubles at
    // `tallies`, complete on stream s) are slot `slot`'s: fold them on the device. Its ledger
    // (the slot's ledger now) is folded by foldLedger.
    void fold(const double* tallies, uint32_t copies, uint64_t packets, cudaStream_t s, unsigned slot = 0) {
        if (stride_) {
            const unsigned blocks = unsigned(std::min<size_t>((stride_ + 255) / 256, 1024));
            foldBatchKernel<<<blocks, 256, 0, s>>>(tallies, stride_, copies, last_.get() + slot * stride_, q_.get(),
                                                   1.0 / double(packets));
            cudaCheck(cudaGetLastError(), "fold batch");
        }
        ++batches_;
    }
    void foldLedger(const Ledger& ledgerNow, uint64_t packets, unsigned slot = 0) {
        ledger_[slot].fold(ledgerFields(ledgerNow).data(), packets);
    }
    // Elements [from, from + n) of q into `to` (queued on s; synchronise before use).
    void qInto(double* to, size_t from, size_t n, cudaStream_t s) const {
        if (n) cudaCheck(cudaMemcpyAsync(to, q_.get() + from, n * sizeof(double), cudaMemcpyDeviceToHost, s), "download");
    }
    const std::vector<double>& ledgerQ() {
        ledgerQ_ = ledger_[0].q();
        for (size_t i = 0; i < ledgerQ_.size(); ++i) ledgerQ_[i] += ledger_[1].q()[i];
        return ledgerQ_;
    }
    uint64_t batches() const { return batches_; }

private:
    size_t stride_;
    DeviceBuffer<double> last_, q_;
    std::array<BatchFold, 2> ledger_;
    std::vector<double> ledgerQ_;
    uint64_t batches_ = 0;
};

}  // namespace cuda_engine
}  // namespace
}  // namespace fm
