// SPDX-License-Identifier: GPL-3.0-or-later
// Splitting a loop over [begin, end) into contiguous chunks, one per std::thread: the mesh load
// path (parsing, orientation, faces, checks, packing, the GPU's compact planes) and the ordering
// of detected records. Chunk c always covers the same indices for a given thread count, and
// callers merge per-chunk results in chunk order, so results do not depend on scheduling.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace fm {

// Threads the load path uses: the hardware's, at most 64, unless set (tests compare 1 and many).
inline std::atomic<unsigned>& loadThreadsSetting() {
    static std::atomic<unsigned> n{0};
    return n;
}
inline void setLoadThreads(unsigned n) { loadThreadsSetting() = n; }  // 0: the hardware's
inline unsigned loadThreads() {
    unsigned n = loadThreadsSetting();
    if (!n) n = std::thread::hardware_concurrency();
    return std::max(1u, std::min(n, 64u));
}

// Divides every minimum chunk size: tests set it so that small meshes split as large ones do.
inline std::atomic<unsigned>& loadGrainDivisor() {
    static std::atomic<unsigned> d{1};
    return d;
}

// Chunks for n items on `threads` threads: one per thread, and none smaller than minChunk items.
inline unsigned chunkCount(size_t n, size_t minChunk, unsigned threads) {
    size_t c = std::max<size_t>(1, n / std::max<size_t>(1, minChunk));
    return unsigned(std::min<size_t>(c, std::max(1u, threads)));
}

// The same on the load threads, minChunk divided by loadGrainDivisor().
inline unsigned chunkCount(size_t n, size_t minChunk = 16384) {
    return chunkCount(n, minChunk / std::max(1u, loadGrainDivisor().load()), loadThreads());
}

// Calls f(chunk, lo, hi) for `chunks` contiguous pieces of [begin, end), in parallel; the first
// exception a chunk throws (lowest chunk index) is rethrown after all have finished.
template <class F>
void parallelChunks(size_t begin, size_t end, unsigned chunks, F&& f) {
    if (end <= begin) return;
    if (chunks <= 1 || end - begin < 2) {
        f(0u, begin, end);
        return;
    }
    const size_t n = end - begin;
    std::vector<std::exception_ptr> errors(chunks);
    std::vector<std::thread> pool;
    pool.reserve(chunks - 1);
    auto piece = [&](unsigned c) {
        size_t lo = begin + n * c / chunks, hi = begin + n * (c + 1) / chunks;
        try {
            f(c, lo, hi);
        } catch (...) {
            errors[c] = std::current_exception();
        }
    };
    unsigned c = 1;
    try {
        for (; c < chunks; ++c) pool.emplace_back(piece, c);
    } catch (const std::system_error&) {  // no more threads: the rest run here
        for (; c < chunks; ++c) piece(c);
    }
    piece(0);
    for (auto& t : pool) t.join();
    for (auto& e : errors)
        if (e) std::rethrow_exception(e);
}

// The same with the chunk count chosen by chunkCount(end - begin, minChunk).
template <class F>
void parallelFor(size_t begin, size_t end, F&& f, size_t minChunk = 16384) {
    if (end > begin) parallelChunks(begin, end, chunkCount(end - begin, minChunk), f);
}

// std::sort of v on the load threads: chunks sorted, then merged pairwise. The same result as
// std::sort for a total order (no two elements equivalent), which callers guarantee.
template <class T>
void parallelSort(std::vector<T>& v, size_t minChunk = 65536) {
    const unsigned chunks = chunkCount(v.size(), minChunk);
    std::vector<size_t> edge(chunks + 1);
    for (unsigned c = 0; c <= chunks; ++c) edge[c] = v.size() * c / chunks;
    parallelChunks(0, chunks, chunks, [&](unsigned, size_t c, size_t) {
        std::sort(v.begin() + edge[c], v.begin() + edge[c + 1]);
    });
    for (unsigned width = 1; width < chunks; width *= 2) {
        const unsigned merges = (chunks + 2 * width - 1) / (2 * width);
        parallelChunks(0, merges, merges, [&](unsigned, size_t m, size_t) {
            size_t a = edge[2 * width * m], b = edge[std::min<size_t>(chunks, 2 * width * m + width)],
                   e = edge[std::min<size_t>(chunks, 2 * width * (m + 1))];
            std::inplace_merge(v.begin() + a, v.begin() + b, v.begin() + e);
        });
    }
}

// Items grouped by bucket on the load threads (a counting sort), each bucket then sorted by
// operator<: start[b] .. start[b + 1] are bucket b's items. emit(e, put) calls put(bucket, item)
// for each item of element e in [begin, end); it is called twice per element (to count, then
// to place) and must put the same items both times. Within a bucket the order must be a total
// one, so that the result does not depend on the order the threads filled the bucket in.
template <class Item, class Emit>
void parallelBucketSort(size_t buckets, size_t begin, size_t end, Emit&& emit, std::vector<size_t>& start,
                        std::vector<Item>& items, size_t sortMinChunk) {
    std::unique_ptr<std::atomic<uint32_t>[]> count(new std::atomic<uint32_t>[buckets]());
    parallelFor(begin, end, [&](unsigned, size_t lo, size_t hi) {
        for (size_t e = lo; e < hi; ++e)
            emit(e, [&](size_t b, const Item&) { count[b].fetch_add(1, std::memory_order_relaxed); });
    });
    start.assign(buckets + 1, 0);
    for (size_t b = 0; b < buckets; ++b) {
        start[b + 1] = start[b] + count[b].load(std::memory_order_relaxed);
        count[b].store(0, std::memory_order_relaxed);
    }
    items.resize(start.back());
    parallelFor(begin, end, [&](unsigned, size_t lo, size_t hi) {
        for (size_t e = lo; e < hi; ++e)
            emit(e, [&](size_t b, const Item& item) {
                items[start[b] + count[b].fetch_add(1, std::memory_order_relaxed)] = item;
            });
    });
    parallelFor(0, buckets, [&](unsigned, size_t lo, size_t hi) {
        for (size_t b = lo; b < hi; ++b) std::sort(items.begin() + start[b], items.begin() + start[b + 1]);
    }, sortMinChunk);
}

}  // namespace fm
