// SPDX-License-Identifier: GPL-3.0-or-later
// A record buffer as a detecting GPU run leaves it, for the host-side tests and benchmark
// (Tests/Kernels/test_detected_order.cpp, bench/detected_order_bench.cpp): records appended in
// the order packets leave the mesh, which is the packet-index order shuffled locally (packets in
// flight at once finish in any order), some packets seen by two detectors.
#pragma once
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "Kernels/DetectedPackets.hpp"

namespace fm {

struct SyntheticRecordBuffer {
    uint32_t regions = 0;
    std::vector<DetectedRecord> records;
    std::vector<float> paths;
    std::vector<uint32_t> scatterCounts;
};

// About `n` records of packets 0, 1, ... (one packet in `every` detected), shuffled within
// windows of `window` records; every record's fields differ, so a misplaced copy shows.
inline SyntheticRecordBuffer syntheticRecordBuffer(size_t n, uint32_t regions, uint32_t detectors, size_t window,
                                                   uint64_t every = 4, uint64_t seed = 1) {
    std::mt19937_64 rng(seed);
    SyntheticRecordBuffer b;
    b.regions = regions;
    for (uint64_t index = 0; b.records.size() < n; index += 1 + rng() % (2 * every - 1)) {
        const uint64_t bits = rng() % 8 == 0 ? 3ull << (rng() % (detectors - 1)) : 1ull << (rng() % detectors);
        for (uint64_t d = 0; d < detectors && b.records.size() < n; ++d) {
            if (!(bits >> d & 1)) continue;
            DetectedRecord r;
            r.index = index;
            r.detector = uint32_t(d);
            r.scatters = uint32_t(rng() % 1000);
            r.weight = float(rng() % 1000000) * 1e-6f;
            r.time = float(b.records.size());
            for (int a = 0; a < 3; ++a) r.pos[a] = float(rng() % 1000), r.dir[a] = float(rng() % 1000);
            b.records.push_back(r);
            for (uint32_t k = 0; k < regions; ++k) {
                b.paths.push_back(float(rng() % 100000) * 1e-3f);
                b.scatterCounts.push_back(uint32_t(rng() % 100));
            }
        }
    }
    // Local shuffle: a permutation applied to records, paths and counts alike.
    std::vector<size_t> order(b.records.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    for (size_t at = 0; at < order.size(); at += window)
        std::shuffle(order.begin() + at, order.begin() + std::min(order.size(), at + window), rng);
    SyntheticRecordBuffer s;
    s.regions = regions;
    s.records.reserve(order.size());
    for (size_t k : order) {
        s.records.push_back(b.records[k]);
        s.paths.insert(s.paths.end(), b.paths.begin() + k * regions, b.paths.begin() + (k + 1) * regions);
        s.scatterCounts.insert(s.scatterCounts.end(), b.scatterCounts.begin() + k * regions,
                               b.scatterCounts.begin() + (k + 1) * regions);
    }
    return s;
}

// The ordering by its definition, one record at a time (an index sort by (packet index,
// detector), then per-record copies): the test's reference and the benchmark's baseline for
// appendInRecordOrder (Kernels/DetectedOrder.hpp), with the same arguments.
inline void appendInRecordOrderOneByOne(const SyntheticRecordBuffer& b, uint64_t below, uint64_t keep,
                                        DetectedPackets& dp) {
    const uint32_t R = b.regions;
    std::vector<size_t> order(b.records.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
        const DetectedRecord &p = b.records[x], &q = b.records[y];
        return p.index != q.index ? p.index < q.index : p.detector < q.detector;
    });
    for (size_t k : order) {
        if (b.records[k].index >= below || dp.records.size() >= keep) break;
        dp.records.push_back(b.records[k]);
        dp.pathLengths.insert(dp.pathLengths.end(), b.paths.begin() + k * R, b.paths.begin() + (k + 1) * R);
        dp.scatterCounts.insert(dp.scatterCounts.end(), b.scatterCounts.begin() + k * R,
                                b.scatterCounts.begin() + (k + 1) * R);
    }
}

}  // namespace fm
