// SPDX-License-Identifier: GPL-3.0-or-later
// The host side of a detecting GPU run without the GPU: a record buffer as the device leaves it
// (bench/SyntheticRecords.hpp) put into (packet index, detector) order by appendInRecordOrder
// (Kernels/DetectedOrder.hpp), against the one-by-one definition (index sort, per-record
// copies); both results compared byte for byte.
// Usage: detected_order_bench [records=2367420] [regions=5] [window=65536] [rounds=3]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "Kernels/DetectedOrder.hpp"
#include "SyntheticRecords.hpp"

using namespace fm;

namespace {

double secondsOf(const std::chrono::steady_clock::time_point& t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool same(const DetectedPackets& a, const DetectedPackets& b) {
    return a.records.size() == b.records.size() && a.pathLengths == b.pathLengths &&
           a.scatterCounts == b.scatterCounts &&
           std::memcmp(a.records.data(), b.records.data(), a.records.size() * sizeof(DetectedRecord)) == 0;
}

}  // namespace

int main(int argc, char** argv) {
    const size_t n = argc > 1 ? size_t(std::atof(argv[1])) : 2367420;
    const uint32_t regions = argc > 2 ? uint32_t(std::atoi(argv[2])) : 5;
    const size_t window = argc > 3 ? size_t(std::atof(argv[3])) : 65536;
    const int rounds = argc > 4 ? std::atoi(argv[4]) : 3;
    const SyntheticRecordBuffer b = syntheticRecordBuffer(n, regions, 2, window);
    const RecordBufferView view{b.records.data(), b.paths.data(), b.scatterCounts.data(), b.records.size(), regions};
    std::printf("records %zu, regions %u, shuffle window %zu, host threads %u\n", b.records.size(), regions, window,
                std::thread::hardware_concurrency());
    bool ok = true;
    for (int round = 0; round < rounds; ++round) {
        DetectedPackets one, ordered;
        auto t0 = std::chrono::steady_clock::now();
        appendInRecordOrderOneByOne(b, ~uint64_t(0), ~uint64_t(0), one);
        const double tOne = secondsOf(t0);
        t0 = std::chrono::steady_clock::now();
        appendInRecordOrder(view, ~uint64_t(0), ~uint64_t(0),
                            RecordArrays{ordered.records, ordered.pathLengths, ordered.scatterCounts});
        const double tOrdered = secondsOf(t0);
        ok = ok && same(one, ordered);
        std::printf("round %d: one by one %.4f s (%.4f us/record), appendInRecordOrder %.4f s (%.4f us/record), "
                    "%.1fx, same records: %s\n",
                    round + 1, tOne, 1e6 * tOne / double(n), tOrdered, 1e6 * tOrdered / double(n), tOne / tOrdered,
                    same(one, ordered) ? "yes" : "NO");
    }
    return ok ? 0 : 1;
}
