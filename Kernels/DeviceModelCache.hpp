// SPDX-License-Identifier: GPL-3.0-or-later
// Models kept on a device between runs: a run over a mesh that the device already holds (the
// next run of a Tcl loop, a new kernel object or BatchRunner on the same mesh, the next batch)
// takes the uploaded model instead of uploading it again. Host-only and independent of CUDA, so
// the keying and eviction are tested on any machine (Tests/Kernels/test_batch_loop.cpp).
//
// A model is lent to one run at a time (take/give), so two threads never share one; a second
// run on the same device and mesh while the first holds it builds its own. At most one idle
// model per device is kept: memory stays bounded by one mesh (and its tallies) per device, and
// a different mesh on that device replaces it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

namespace fm {

// What makes two uploaded models interchangeable: the device, the packed records' content and
// the tallies they carry.
struct DeviceModelKey {
    int device = 0;
    uint64_t hash = 0;     // of the packed cells (cellsKey)
    size_t cells = 0;      // number of cell records
    uint32_t faces = 0;    // face ids
    unsigned outputs = 0;  // bit mask of the tallies kept (volume 1, surface 2, directed 4)
    bool operator==(const DeviceModelKey& o) const {
        return device == o.device && hash == o.hash && cells == o.cells && faces == o.faces && outputs == o.outputs;
    }
};

// A 64-bit content hash of n bytes: four independent lanes of (state ^ word) * odd constant,
// rotated (so a changed high bit reaches the low bits at the next word), then mixed together;
// memory-bound (several GB/s: small beside the upload it saves). Equal contents give equal
// hashes; the key also holds the sizes.
inline uint64_t hashBytes(const void* data, size_t n) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    constexpr uint64_t kMul = 0x9e3779b97f4a7c15ull;
    auto rotl = [](uint64_t x, int r) { return (x << r) | (x >> (64 - r)); };
    auto word = [&](size_t i) {
        uint64_t w;
        std::memcpy(&w, p + i, 8);
        return w;
    };
    uint64_t a = 0x243f6a8885a308d3ull, b = 0x13198a2e03707344ull, c = 0xa4093822299f31d0ull, d = 0x082efa98ec4e6c89ull;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        a = rotl((a ^ word(i)) * kMul, 31);
        b = rotl((b ^ word(i + 8)) * kMul, 29);
        c = rotl((c ^ word(i + 16)) * kMul, 27);
        d = rotl((d ^ word(i + 24)) * kMul, 25);
    }
    for (; i < n; i += 8) {  // the last 0..31 bytes, zero-padded to whole words
        uint64_t w = 0;
        std::memcpy(&w, p + i, n - i < 8 ? n - i : 8);
        a = rotl((a ^ w) * kMul, 31);
    }
    uint64_t h = uint64_t(n);
    for (uint64_t x : {a, b, c, d}) {  // every lane into every bit of the result
        h = (h ^ x) * 0xff51afd7ed558ccdull;
        h ^= h >> 33;
    }
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
}

// The key of n packed records of `size` bytes each. Without an identity (0): their content
// hash, a pass over all of them (5 MB for 48k tetras, 112 MB for 1M). With the packer's
// identity (KernelInput::cellsIdentity): the identity mixed with a content hash of 64 records
// spread over the array, its first and its last, and the count: a few microseconds. The sample
// is a guard against a caller that changed the records and kept the identity (which the
// identity's contract forbids), not a proof: the identity alone says the contents are equal.
inline uint64_t cellsKey(const void* records, size_t n, size_t size, uint64_t identity) {
    if (identity == 0) return hashBytes(records, n * size);
    const unsigned char* p = static_cast<const unsigned char*>(records);
    constexpr size_t kSamples = 64;
    uint64_t h = hashBytes(&n, sizeof n) ^ (identity * 0xff51afd7ed558ccdull);
    for (size_t k = 0; n > 0 && k <= kSamples; ++k) {
        const size_t i = k == kSamples ? n - 1 : (n * k) / kSamples;
        h = (h ^ hashBytes(p + i * size, size)) * 0x9e3779b97f4a7c15ull;
        h ^= h >> 29;
    }
    return h ? h : 1;
}

template <class Model>
class DeviceModelCache {
public:
    // The idle model for `key`, or nullptr: the caller then builds (uploads) one and counts it
    // with built(). An idle model of another mesh on that device is moved into *stale, for the
    // caller to free (on its device) before building, so that the two never hold device memory
    // at once.
    std::unique_ptr<Model> take(const DeviceModelKey& key, std::unique_ptr<Model>* stale = nullptr) {
        std::lock_guard<std::mutex> g(m_);
        auto it = idle_.find(key.device);
        if (it == idle_.end()) return nullptr;
        std::unique_ptr<Model> out = std::move(it->second.model);
        const bool match = it->second.key == key;
        idle_.erase(it);
        if (!match) {
            if (stale) *stale = std::move(out);
            return nullptr;
        }
        ++reused_;
        return out;
    }
    // Whether the idle model of key.device could be key's (sizes and tallies agree): only then
    // is the content hash needed before the upload.
    bool mayMatch(const DeviceModelKey& key) const {
        std::lock_guard<std::mutex> g(m_);
        auto it = idle_.find(key.device);
        if (it == idle_.end()) return false;
        const DeviceModelKey& k = it->second.key;
        return k.cells == key.cells && k.faces == key.faces && k.outputs == key.outputs;
    }
    void built() {
        std::lock_guard<std::mutex> g(m_);
        ++built_;
    }
    // A model whose run ended cleanly, kept for the next run on its device (replacing, and so
    // freeing, any other idle model there). Returns the model it replaced, for the caller to
    // free where the device is current.
    std::unique_ptr<Model> give(const DeviceModelKey& key, std::unique_ptr<Model> model) {
        std::lock_guard<std::mutex> g(m_);
        Entry& e = idle_[key.device];
        std::unique_ptr<Model> old = std::move(e.model);
        e.key = key;
        e.model = std::move(model);
        return old;
    }
    // Every idle model of `device`, moved out (for the caller to free on that device).
    std::unique_ptr<Model> drop(int device) {
        std::lock_guard<std::mutex> g(m_);
        auto it = idle_.find(device);
        if (it == idle_.end()) return nullptr;
        std::unique_ptr<Model> out = std::move(it->second.model);
        idle_.erase(it);
        return out;
    }
    size_t builds() const {
        std::lock_guard<std::mutex> g(m_);
        return built_;
    }
    size_t reuses() const {
        std::lock_guard<std::mutex> g(m_);
        return reused_;
    }

private:
    struct Entry {
        DeviceModelKey key;
        std::unique_ptr<Model> model;
    };
    mutable std::mutex m_;
    std::map<int, Entry> idle_;
    size_t built_ = 0, reused_ = 0;
};

}  // namespace fm
