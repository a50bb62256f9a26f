// SPDX-License-Identifier: GPL-3.0-or-later
// Packet indices handed out on request: a kernel given one in RunOptions::packetSource takes its
// packets from it, block by block, instead of running [firstPacket, firstPacket + packets)
// itself. A hybrid run (Kernels/Hybrid.hpp) gives the CPU's workers and the GPUs views of one
// counter, so each side runs what it has time for; every packet keeps its index and random
// stream, so the tallies do not depend on who ran it.
#pragma once
#include <algorithm>
#include <cstdint>

namespace fm {

class PacketSource {
public:
    virtual ~PacketSource() = default;
    // The next block [begin, end) of absolute packet indices for `taker` (a CPU worker's or a
    // GPU's index within its kernel); false when this taker is to stop: none left, or the rest is
    // left to others. A taker asks again only after its previous block is done. Thread-safe.
    virtual bool take(unsigned taker, uint64_t& begin, uint64_t& end) = 0;
    // For a taker that keeps launches queued (a GPU's pipelined launches, Kernels/CUDA): a block
    // for its next launch, at most `most` packets, asked for while earlier launches still run;
    // it reports each launch's end through launchDone. By default the same as take().
    virtual bool takeLaunch(unsigned taker, uint64_t most, uint64_t& begin, uint64_t& end) {
        (void)most;
        return take(taker, begin, end);
    }
    // A launch's `packets` (a block from takeLaunch, oldest first) have completed.
    virtual void launchDone(unsigned taker, uint64_t packets) {
        (void)taker;
        (void)packets;
    }
};

// Guided self-scheduling of `packets` over `takers` GPUs: each chunk is half a taker's share of
// what is left, at least minChunk (early chunks large: few launch tails; the last ones small: the
// GPUs finish together, within one last chunk of each other: 1/256 of a taker's share, or 2^20
// packets, whichever is more), at most maxChunk (one batch of the standard errors). One taker:
// one chunk of maxChunk.
inline uint64_t guidedMinChunk(uint64_t packets, uint64_t maxChunk, uint64_t takers) {
    return std::min(maxChunk, takers <= 1 ? packets : std::max<uint64_t>(1u << 20, packets / (256 * takers)));
}
inline uint64_t guidedChunk(uint64_t left, uint64_t maxChunk, uint64_t minChunk, uint64_t takers) {
    return std::min({left, maxChunk, std::max(minChunk, left / (2 * std::max<uint64_t>(takers, 1)))});
}

}  // namespace fm
