// SPDX-License-Identifier: GPL-3.0-or-later
#include "Storage/TIMOS/TIMOSMeshParser.hpp"

#include <atomic>
#include <charconv>
#include <cmath>
#include <system_error>

#include "Common/ParallelFor.hpp"

namespace fm {

namespace {

// std::isspace in the C locale, as TextReader splits tokens.
inline bool isSpace(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// TextReader refuses longer tokens.
constexpr size_t kMaxToken = 256;
constexpr uint64_t kMaxCount = 2000000000ull;  // as TIMOS.cpp: indices fit 31 bits
constexpr uint64_t kMaxRegion = 1u << 20;

// Plain decimal digits only (what strtoull reads the same way); false otherwise or beyond max.
inline bool digits(const char* b, const char* e, uint64_t max, uint64_t& v) {
    if (b == e || e - b > 19) return false;
    v = 0;
    for (; b < e; ++b) {
        unsigned d = unsigned(*b) - '0';
        if (d > 9) return false;
        v = v * 10 + d;
    }
    return v <= max;
}

inline bool coordinate(const char* b, const char* e, double& v) {
    auto r = std::from_chars(b, e, v);
    return r.ec == std::errc() && r.ptr == e && std::isfinite(v) && std::fabs(v) <= kMaxCoordinate;
}

// Calls f(b, e) for each token in [p, end); stops early when f returns false.
template <class F>
bool forEachToken(const char* p, const char* end, F&& f) {
    for (;;) {
        while (p < end && isSpace(*p)) ++p;
        if (p == end) return true;
        const char* b = p;
        while (p < end && !isSpace(*p)) ++p;
        if (size_t(p - b) > kMaxToken || !f(b, p)) return false;
    }
}

}  // namespace

bool parseTIMOSMeshFast(const char* begin, const char* end, MeshArrays& out) {
    // The two counts.
    uint64_t head[2];
    int found = 0;
    const char* p = begin;
    while (found < 2) {
        while (p < end && isSpace(*p)) ++p;
        const char* b = p;
        while (p < end && !isSpace(*p)) ++p;
        if (!digits(b, p, kMaxCount, head[found++])) return false;
    }
    const uint64_t np = head[0], nt = head[1];
    if (np < 4 || nt < 1) return false;

    // Chunks of the rest end on whitespace, so no token straddles two.
    const size_t bytes = size_t(end - p);
    const unsigned chunks = chunkCount(bytes, 1 << 20);
    std::vector<const char*> cut(chunks + 1, end);
    cut[0] = p;
    for (unsigned c = 1; c < chunks; ++c) {
        const char* q = std::max(cut[c - 1], p + bytes * c / chunks);
        while (q < end && !isSpace(*q)) ++q;
        cut[c] = q;
    }
    // Pass 1: tokens per chunk, so each chunk knows the index of its first token.
    std::vector<uint64_t> first(chunks + 1, 0);
    parallelChunks(0, chunks, chunks, [&](unsigned, size_t c, size_t) {
        uint64_t n = 0;
        forEachToken(cut[c], cut[c + 1], [&](const char*, const char*) { return ++n, true; });
        first[c + 1] = n;
    });
    for (unsigned c = 0; c < chunks; ++c) first[c + 1] += first[c];
    const uint64_t pointTokens = 3 * np;
    if (first[chunks] != pointTokens + 5 * nt) return false;  // the careful reader says what is missing

    out.points.assign(np + 1, Point3{0, 0, 0});
    out.tetras.assign(nt + 1, TetraPoints{0, 0, 0, 0});
    out.regions.assign(nt + 1, 0);
    // Pass 2: each token converted by its index in the file.
    std::atomic<bool> ok{true};
    parallelChunks(0, chunks, chunks, [&](unsigned, size_t c, size_t) {
        uint64_t k = first[c];
        bool good = forEachToken(cut[c], cut[c + 1], [&](const char* b, const char* e) {
            if ((k & 1023) == 0 && !ok.load(std::memory_order_relaxed)) return false;
            uint64_t g = k++;
            if (g < pointTokens) return coordinate(b, e, out.points[g / 3 + 1][g % 3]);
            g -= pointTokens;
            uint64_t t = g / 5 + 1, field = g % 5, v;
            if (field < 4) {
                if (!digits(b, e, np, v) || v == 0) return false;
                out.tetras[t][field] = uint32_t(v);
                return true;
            }
            if (!digits(b, e, kMaxRegion, v) || v == 0) return false;
            out.regions[t] = uint32_t(v);
            return true;
        });
        if (!good) ok = false;
    });
    return ok;
}

}  // namespace fm
