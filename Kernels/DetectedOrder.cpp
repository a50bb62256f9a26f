// SPDX-License-Identifier: GPL-3.0-or-later
#include "Kernels/DetectedOrder.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <thread>
#include <utility>

#include "Common/Errors.hpp"
#include "Common/ParallelFor.hpp"

namespace fm {
namespace {

// A record's place in the order: key = packet index x 64 + detector (kMaxDetectors = 64), and
// its buffer slot. Keys never tie (a packet has one record per detector).
struct OrderKey {
    uint64_t key;
    uint64_t slot;
};
static_assert(kMaxDetectors <= 64, "OrderKey holds the detector in 6 bits");
constexpr uint64_t kMaxIndex = (uint64_t(1) << 58) - 1;  // packet indices the key holds

// Chunks of a loop over n records: one per thread, none under 1024 records.
unsigned chunksFor(size_t n, unsigned threads) { return chunkCount(n, 1024, threads); }

// The keys of the records below `below`, in buffer order.
std::vector<OrderKey> keysBelow(const RecordBufferView& in, uint64_t below, unsigned threads) {
    const unsigned chunks = chunksFor(in.n, threads);
    std::vector<size_t> start(chunks + 1, 0), tooLarge(chunks, 0);
    parallelChunks(0, in.n, chunks, [&](unsigned c, size_t lo, size_t hi) {
        for (size_t k = lo; k < hi; ++k) {
            const uint64_t index = in.records[k].index;
            start[c + 1] += index < below;
            tooLarge[c] += index < below && index > kMaxIndex;
        }
    });
    for (unsigned c = 0; c < chunks; ++c) {
        if (tooLarge[c]) throw Error("detected records: a packet index beyond 2^58 - 1");
        start[c + 1] += start[c];
    }
    std::vector<OrderKey> keys(start[chunks]);
    parallelChunks(0, in.n, chunks, [&](unsigned c, size_t lo, size_t hi) {
        size_t at = start[c];
        for (size_t k = lo; k < hi; ++k) {
            const DetectedRecord& r = in.records[k];
            if (r.index < below) keys[at++] = OrderKey{r.index << 6 | r.detector, k};
        }
    });
    return keys;
}

// Least-significant-digit radix sort by key, kDigitBits a pass, over the bits the largest key
// has (3 passes up to 2^27 packets); a pass whose digit is the same for every key is skipped.
constexpr int kDigitBits = 11;
void radixSort(std::vector<OrderKey>& keys) {
    constexpr uint64_t mask = (uint64_t(1) << kDigitBits) - 1;
    uint64_t top = 0;
    for (const OrderKey& k : keys) top |= k.key;
    std::vector<OrderKey> other(keys.size());
    for (int shift = 0; shift < 64 && (top >> shift); shift += kDigitBits) {
        std::array<size_t, mask + 1> count{};
        for (const OrderKey& k : keys) ++count[(k.key >> shift) & mask];
        if (std::find(count.begin(), count.end(), keys.size()) != count.end()) continue;
        size_t at = 0;
        for (size_t& c : count) at += std::exchange(c, at);
        for (const OrderKey& k : keys) other[count[(k.key >> shift) & mask]++] = k;
        keys.swap(other);
    }
}

}  // namespace

void appendInRecordOrder(const RecordBufferView& in, uint64_t below, uint64_t keep, RecordArrays out,
                         unsigned threads) {
    const size_t have = out.records.size();
    if (have >= keep || in.n == 0) return;
    if (!threads) threads = std::max(1u, std::min(std::thread::hardware_concurrency(), 16u));
    std::vector<OrderKey> keys = keysBelow(in, below, threads);
    radixSort(keys);
    const size_t m = size_t(std::min<uint64_t>(keys.size(), keep - have)), R = in.regions;
    const bool counts = in.scatterCounts != nullptr;
    out.records.resize(have + m);
    out.paths.resize((have + m) * R);
    if (counts) out.scatterCounts.resize((have + m) * R);
    DetectedRecord* rec = out.records.data() + have;
    float* path = out.paths.data() + have * R;
    uint32_t* count = counts ? out.scatterCounts.data() + have * R : nullptr;
    parallelChunks(0, m, chunksFor(m, threads), [&](unsigned, size_t lo, size_t hi) {
        for (size_t j = lo; j < hi; ++j) {
            const size_t k = size_t(keys[j].slot);
            rec[j] = in.records[k];
            if (R) std::memcpy(path + j * R, in.paths + k * R, R * sizeof(float));
            if (R && counts) std::memcpy(count + j * R, in.scatterCounts + k * R, R * sizeof(uint32_t));
        }
    });
}

}  // namespace fm
