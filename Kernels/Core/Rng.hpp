// SPDX-License-Identifier: GPL-3.0-or-later
// Random streams keyed by (seed, packet index): Philox4x32-10 (Salmon et al., SC'11, written
// from the paper) maps the key to a packet's starting state, so a packet draws the same numbers
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

FM_HD uint32_t rotl32(uint32_t x, int k) { return (x << k) | (x >> (32 - k)); }

// The random stream of one packet: xoshiro128+ (Blackman & Vigna) whose 128-bit state is the
// Philox4x32-10 image of (packet index) under key (seed). Philox makes streams of neighbouring
// packets independent; xoshiro then costs ~10 instructions a draw instead of Philox's ~25, and
// 4 registers of state instead of 10 (the GPU kernel is issue-bound: docs/PERFORMANCE.md).
// The '+' output (s0 + s3) is the one its authors recommend for floating point: only its lowest
// bits are weak (low linear complexity), and every draw here keeps the high ones (uniform():
// the top 24 bits; uniformDouble(): bits 5 and up). It takes one addition where xoshiro128**'s
// output rotl(s1 * 5, 7) * 9 takes two multiplications.
class PacketRng {
public:
    FM_HD PacketRng(uint64_t seed, uint64_t packet) {
        Philox4x32 s = philox4x32_10(Philox4x32{{uint32_t(packet), uint32_t(packet >> 32), 0x6a09e667u, 0xbb67ae85u}},
                                     uint32_t(seed), uint32_t(seed >> 32));
        s0_ = s.c[0];
        s1_ = s.c[1];
        s2_ = s.c[2];
        s3_ = s.c[3] | ((s.c[0] | s.c[1] | s.c[2]) == 0u ? 1u : 0u);  // never the all-zero state
    }

    FM_HD uint32_t next() {
        const uint32_t r = s0_ + s3_;
        uint32_t t = s1_ << 9;
        s2_ ^= s0_;
        s3_ ^= s1_;
        s1_ ^= s2_;
        s0_ ^= s3_;
        s2_ ^= t;
        s3_ = rotl32(s3_, 11);
        return r;
    }
    // Uniform in [0, 1), 24-bit resolution (the high bits, the generator's strongest). The
    // integer fits in 24 bits, so converting it as signed gives the same float and is one
    // instruction in the CPU's vector loops (unsigned conversion is not, before AVX-512).
    FM_HD float uniform() { return float(int32_t(next() >> 8)) * (1.0f / 16777216.0f); }
    // uniform() * k as one product (k / 2^24 is folded at compile time; the same value, since
    // scaling by 2^-24 is exact).
    FM_HD float uniformTimes(float k) { return float(int32_t(next() >> 8)) * (k * (1.0f / 16777216.0f)); }
    // Uniform in (0, 1]: safe for -log(u).
    FM_HD float uniformOpen() { return float(int32_t((next() >> 8) + 1u)) * (1.0f / 16777216.0f); }
    // Uniform in [0, 1) with 53-bit resolution, for selecting among many pieces.
    FM_HD double uniformDouble() {
        uint64_t hi = next() >> 5, lo = next() >> 6;  // 27 + 26 bits
        return double((hi << 26) | lo) * (1.0 / 9007199254740992.0);
    }

    // The raw state, so the CPU kernel can keep the streams of its lanes side by side
    // (Kernels/CPU/CpuLanes.hpp) and hand one back to the scalar code unchanged.
    struct State {
        uint32_t s0, s1, s2, s3;
    };
    FM_HD State state() const { return State{s0_, s1_, s2_, s3_}; }
    FM_HD explicit PacketRng(State s) : s0_(s.s0), s1_(s.s1), s2_(s.s2), s3_(s.s3) {}

private:
    uint32_t s0_, s1_, s2_, s3_;
};

}  // namespace fm
