// Counter-based random streams: Philox4x32-10 (Salmon et al., SC'11), written from the paper.
// Each packet's stream is keyed by (seed, packet index), so a packet draws the same numbers
// whichever thread, GPU or MPI rank runs it: results do not depend on how work is split.
#pragma once
#include "Kernels/Core/Config.hpp"

namespace fm {

struct Philox4x32 {
    uint32_t c[4];
};

FM_HD void mulhilo32(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
#if defined(__CUDA_ARCH__)
    lo = a * b;
    hi = __umulhi(a, b);
#else
    uint64_t p = uint64_t(a) * uint64_t(b);
    lo = uint32_t(p);
    hi = uint32_t(p >> 32);
#endif
}

// Ten rounds of the Philox bijection of a 128-bit counter under a 64-bit key.
FM_HD Philox4x32 philox4x32_10(Philox4x32 ctr, uint32_t k0, uint32_t k1) {
    constexpr uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u;
    constexpr uint32_t W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
FM_UNROLL
    for (int r = 0; r < 10; ++r) {
        uint32_t hi0, lo0, hi1, lo1;
        mulhilo32(M0, ctr.c[0], hi0, lo0);
        mulhilo32(M1, ctr.c[2], hi1, lo1);
        ctr = Philox4x32{{hi1 ^ ctr.c[1] ^ k0, lo1, hi0 ^ ctr.c[3] ^ k1, lo0}};
        k0 += W0;
        k1 += W1;
    }
    return ctr;
}

// The random stream of one packet. Draws come four at a time from one Philox block; the
// buffer is rotated rather than indexed so that it stays in registers on the GPU.
class PacketRng {
public:
    FM_HD PacketRng(uint64_t seed, uint64_t packet)
        : k0_(uint32_t(seed)), k1_(uint32_t(seed >> 32)),
          p0_(uint32_t(packet)), p1_(uint32_t(packet >> 32)) {}

    FM_HD uint32_t next() {
        if (left_ == 0) refill();
        uint32_t r = b0_;
        b0_ = b1_;
        b1_ = b2_;
        b2_ = b3_;
        --left_;
        return r;
    }
    // Uniform in [0, 1), 24-bit resolution.
    FM_HD float uniform() { return float(next() >> 8) * (1.0f / 16777216.0f); }
    // Uniform in (0, 1]: safe for -log(u).
    FM_HD float uniformOpen() { return float((next() >> 8) + 1u) * (1.0f / 16777216.0f); }
    // Uniform in [0, 1) with 53-bit resolution, for selecting among many pieces.
    FM_HD double uniformDouble() {
        uint64_t hi = next() >> 5, lo = next() >> 6;  // 27 + 26 bits
        return double((hi << 26) | lo) * (1.0 / 9007199254740992.0);
    }
    FM_HD uint32_t blocksUsed() const { return block_; }

private:
    FM_HD void refill() {
        Philox4x32 out = philox4x32_10(Philox4x32{{block_, 0u, p0_, p1_}}, k0_, k1_);
        ++block_;
        b0_ = out.c[0];
        b1_ = out.c[1];
        b2_ = out.c[2];
        b3_ = out.c[3];
        left_ = 4;
    }
    uint32_t k0_, k1_, p0_, p1_;
    uint32_t block_ = 0;
    uint32_t b0_ = 0, b1_ = 0, b2_ = 0, b3_ = 0;
    uint32_t left_ = 0;
};

}  // namespace fm
