// SPDX-License-Identifier: GPL-3.0-or-later
// Putting an unordered buffer of detected-packet records (a GPU run's record buffer, filled in
// the order packets left the mesh, or a CPU worker's) into the records' order: by packet index,
// then detector. A radix sort moves 16-byte keys, then each record is copied once, straight into
// its place in the output, on the host's threads.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "Kernels/DetectedPackets.hpp"

namespace fm {

// n records in any order; record k's path lengths and scatter counts per region at
// paths[k * regions ..) and scatterCounts[k * regions ..).
struct RecordBufferView {
    const DetectedRecord* records = nullptr;
    const float* paths = nullptr;
    const uint32_t* scatterCounts = nullptr;
    size_t n = 0;
    uint32_t regions = 0;
};

// Where ordered records go: appended to the three arrays (scatterCounts per region as paths).
struct RecordArrays {
    std::vector<DetectedRecord>& records;
    std::vector<float>& paths;
    std::vector<uint32_t>& scatterCounts;
};

// Appends to `out` the buffered records of the packets below `below`, lowest (packet index,
// detector) first, until out.records holds `keep` records; scatter counts only where the buffer
// has them (in.scatterCounts not null). Keys and copies on up to `threads` threads (0: the
// hardware's, at most 16; 1: the calling thread alone, as a worker of a run does). A packet has
// at most one record per detector, so the order is total and the result does not depend on the
// thread count. Throws Error for a packet index of 2^58 or more (the key's limit).
void appendInRecordOrder(const RecordBufferView& in, uint64_t below, uint64_t keep, RecordArrays out,
                         unsigned threads = 0);

}  // namespace fm
