// SPDX-License-Identifier: GPL-3.0-or-later
// The host side of detecting runs: appendInRecordOrder (Kernels/DetectedOrder.hpp) puts a record
// buffer filled in exit order into (packet index, detector) order, keeps the packets below a
// bound and at most `keep` records, appending after records already held, exactly as sorting by
// the definition and copying record by record does, on one thread and on many.
#include <boost/test/unit_test.hpp>

#include <cstring>

#include "Common/Errors.hpp"
#include "Kernels/DetectedOrder.hpp"
#include "bench/SyntheticRecords.hpp"

namespace fm {
namespace {

bool sameBytes(const void* a, const void* b, size_t n) { return n == 0 || std::memcmp(a, b, n) == 0; }

void requireSame(const DetectedPackets& got, const DetectedPackets& want) {
    BOOST_REQUIRE_EQUAL(got.records.size(), want.records.size());
    BOOST_REQUIRE_EQUAL(got.pathLengths.size(), want.pathLengths.size());
    BOOST_REQUIRE_EQUAL(got.scatterCounts.size(), want.scatterCounts.size());
    BOOST_CHECK(sameBytes(got.records.data(), want.records.data(), got.records.size() * sizeof(DetectedRecord)));
    BOOST_CHECK(sameBytes(got.pathLengths.data(), want.pathLengths.data(), got.pathLengths.size() * sizeof(float)));
    BOOST_CHECK(sameBytes(got.scatterCounts.data(), want.scatterCounts.data(),
                          got.scatterCounts.size() * sizeof(uint32_t)));
}

RecordBufferView viewOf(const SyntheticRecordBuffer& b) {
    return RecordBufferView{b.records.data(), b.paths.data(), b.scatterCounts.data(), b.records.size(), b.regions};
}

// A run's records from two buffers (a main run below `lost`, then a refill from there), by
// appendInRecordOrder and by the one-by-one definition.
void compareTwoBuffers(const SyntheticRecordBuffer& a, const SyntheticRecordBuffer& b, uint64_t lost, uint64_t keep,
                       unsigned threads) {
    DetectedPackets got, want;
    appendInRecordOrder(viewOf(a), lost, keep, RecordArrays{got.records, got.pathLengths, got.scatterCounts}, threads);
    appendInRecordOrderOneByOne(a, lost, keep, want);
    requireSame(got, want);
    appendInRecordOrder(viewOf(b), ~uint64_t(0), keep, RecordArrays{got.records, got.pathLengths, got.scatterCounts},
                        threads);
    appendInRecordOrderOneByOne(b, ~uint64_t(0), keep, want);
    requireSame(got, want);
}

}  // namespace

BOOST_AUTO_TEST_CASE(record_order_equals_the_definition) {
    for (uint32_t regions : {1u, 5u, 21u}) {
        const SyntheticRecordBuffer a = syntheticRecordBuffer(20000, regions, 2, 997, 4, regions);
        const SyntheticRecordBuffer b = syntheticRecordBuffer(5000, regions, 3, 64, 2, regions + 100);
        const uint64_t top = a.records.back().index;
        for (unsigned threads : {1u, 7u}) {  // 7: pieces of unequal size
            BOOST_TEST_CONTEXT("regions " << regions << ", threads " << threads) {
                compareTwoBuffers(a, b, ~uint64_t(0), ~uint64_t(0), threads);  // room for all
                compareTwoBuffers(a, b, top / 2, ~uint64_t(0), threads);       // lost from the middle on
                compareTwoBuffers(a, b, top / 2, 7000, threads);                // room ends in the refill
                compareTwoBuffers(a, b, ~uint64_t(0), 3, threads);              // room for 3
                compareTwoBuffers(a, b, 0, 100, threads);                       // the first packet lost
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(record_order_keeps_nothing_beyond_room_or_without_counts) {
    const SyntheticRecordBuffer a = syntheticRecordBuffer(1000, 4, 2, 50);
    DetectedPackets dp;
    RecordArrays out{dp.records, dp.pathLengths, dp.scatterCounts};
    appendInRecordOrder(viewOf(a), ~uint64_t(0), 10, out);
    BOOST_REQUIRE_EQUAL(dp.records.size(), 10u);
    appendInRecordOrder(viewOf(a), ~uint64_t(0), 10, out);  // full: nothing more
    BOOST_CHECK_EQUAL(dp.records.size(), 10u);
    BOOST_CHECK_EQUAL(dp.pathLengths.size(), 40u);
    // A buffer without scatter counts (records of .fmd version 1) gives none.
    DetectedPackets v1;
    RecordBufferView noCounts = viewOf(a);
    noCounts.scatterCounts = nullptr;
    appendInRecordOrder(noCounts, ~uint64_t(0), 10, RecordArrays{v1.records, v1.pathLengths, v1.scatterCounts});
    BOOST_CHECK_EQUAL(v1.records.size(), 10u);
    BOOST_CHECK(v1.scatterCounts.empty());
    BOOST_CHECK(sameBytes(v1.pathLengths.data(), dp.pathLengths.data(), 40 * sizeof(float)));
    // A packet index beyond what the order key holds is an error, not a wrong order.
    SyntheticRecordBuffer big = a;
    big.records[5].index = uint64_t(1) << 60;
    DetectedPackets none;
    BOOST_CHECK_THROW(appendInRecordOrder(viewOf(big), ~uint64_t(0), 10,
                                          RecordArrays{none.records, none.pathLengths, none.scatterCounts}),
                      Error);
}

}  // namespace fm
