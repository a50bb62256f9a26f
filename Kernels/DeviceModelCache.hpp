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
    uint64_t hash = 0;     // content hash of the packed cells (hashBytes)
    size_t cells = 0;      // number of cell records
    uint32_t faces = 0;    // face ids
    unsigned outputs = 0;  // bit mask of the tallies kept (volume 1, surface 2, directed 4)
    bool operator==(const DeviceModelKey& o) const {
        return device == o.device && hash == o.hash && cells == o.cells && faces == o.faces && outputs == o.outputs;
    }
};

// A 64-bit content hash of n bytes, 8 bytes at a time (a few GB/s: small beside the upload it
// saves). Equal contents give equal hashes; different meshes collide with probability ~2^-64,
// and the key also holds the sizes.
inline uint64_t hashBytes(const void* data, size_t n) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    uint64_t h[4] = {0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full, 0x165667b19e3779f9ull, 0x27d4eb2f165667c5ull};
    auto mix = [](uint64_t a, uint64_t w) {
        a ^= w * 0xff51afd7ed558ccdull;
        a = (a << 31) | (a >> 33);
        return a * 0xc4ceb9fe1a85ec53ull;
    };
    size_t i = 0;
    for (; i + 32 <= n; i += 32)  // four independent lanes: the multiplies overlap
        for (int k = 0; k < 4; ++k) {
            uint64_t w;
            std::memcpy(&w, p + i + 8 * k, 8);
            h[k] = mix(h[k], w);
        }
    uint64_t tail = 0;
    std::memcpy(&tail, p + i, n - i < 8 ? n - i : 8);
    for (size_t j = i + 8; j < n; j += 8) {
        uint64_t w = 0;
        std::memcpy(&w, p + j, n - j < 8 ? n - j : 8);
        tail = mix(tail, w);
    }
    uint64_t r = mix(h[0] ^ mix(h[1], h[2]) ^ h[3], tail ^ uint64_t(n));
    return r ^ (r >> 29);
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
