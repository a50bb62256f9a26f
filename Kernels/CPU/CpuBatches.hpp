// SPDX-License-Identifier: GPL-3.0-or-later
// A CPU worker's range run as contiguous packet batches (Kernels/BatchMeans.hpp): the lane
// loop drains its lanes at each batch end, so a batch's tallies hold exactly its packets.
#pragma once
#include <algorithm>
#include <cstdint>
#include <utility>

#include "Kernels/BatchMeans.hpp"
#include "Kernels/CPU/CpuLanes.hpp"

namespace fm {

// A worker's chunks up to `limit` (a batch boundary): the lane loop drains its lanes there, so
// a batch's tallies hold exactly its packets. What is left of a chunk that straddles the
// boundary is handed out after setLimit() moves it on.
struct BatchChunks final : PacketChunks {
    PacketChunks& inner;
    uint64_t limit = 0, b = 0, e = 0;  // [b, e): the rest of the inner chunk
    explicit BatchChunks(PacketChunks& c) : inner(c) {}
    bool next(uint64_t& begin, uint64_t& end) override {
        if (b == e && !inner.next(b, e)) return false;
        if (b >= limit) return false;
        begin = b;
        end = std::min(e, limit);
        b = end;
        return true;
    }
    bool stopping() const override { return inner.stopping(); }
    void abandon(uint64_t n) override { inner.abandon(n); }
};

// Runs a worker's range [b, e) as `k` contiguous batches through run(chunks), folding after
// each: fold(packets, last), `last` for the range's last batch.
template <class Run, class Fold>
void runWorkerBatches(PacketChunks& chunks, uint64_t b, uint64_t e, uint64_t k, Run run, Fold fold) {
    BatchChunks bc(chunks);
    for (uint64_t j = 0; j < k && !chunks.stopping(); ++j) {
        const uint64_t from = b + uint64_t((unsigned __int128)(e - b) * j / k);
        bc.limit = b + uint64_t((unsigned __int128)(e - b) * (j + 1) / k);
        run(static_cast<PacketChunks&>(bc));
        fold(bc.limit - from, j + 1 == k);
    }
    chunks.abandon(bc.e - bc.b);  // a cancel left the rest of a chunk unstarted: not done
}

// One worker's batch folds (Kernels/BatchMeans.hpp): its tallies and ledger after each of its
// batches.
struct WorkerFolds {
    BatchFold volume, surface, directed, ledger;
    // Time-resolved runs: the gated tallies and their per-bin totals (gateBinTotals).
    BatchFold gatedVolume, gatedSurface, gatedVolumeTotals, gatedSurfaceTotals;
    uint64_t batches = 0;
    // The q sums, moved out (the folds are spent): no second copy of a worker's large arrays.
    BatchSums take() {
        BatchSums s;
        s.volume = std::move(volume.q());
        s.surface = std::move(surface.q());
        s.directed = std::move(directed.q());
        s.ledger = std::move(ledger.q());
        s.batches = batches;
        s.gatedVolume = std::move(gatedVolume.q());
        s.gatedSurface = std::move(gatedSurface.q());
        s.gatedVolumeTotals = std::move(gatedVolumeTotals.q());
        s.gatedSurfaceTotals = std::move(gatedSurfaceTotals.q());
        return s;
    }
};

}  // namespace fm
