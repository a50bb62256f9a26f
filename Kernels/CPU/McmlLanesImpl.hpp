// SPDX-License-Identifier: GPL-3.0-or-later
// The MCML lane loop of Kernels/CPU/McmlLanes.hpp, included once per instruction set with
// FM_LANES_NS naming a namespace of its own (after Kernels/CPU/CpuLanesImpl.hpp, whose
// FM_LANE_INLINE and FM_LANES_SCALAR it shares).
#pragma once
#include "Kernels/CPU/McmlLanes.hpp"
#include "Kernels/McmlSlabLoop.hpp"

namespace fm {
namespace FM_LANES_NS {

#if !FM_LANES_SCALAR
constexpr uint32_t kCommonInteraction = 0x100u;  // kind bit: the interaction was above roulette
// kLanes photons per thread (CpuLanesImpl.hpp: four AVX2 registers' worth).

// The photons of the lanes, one array per field (lane l of every array is one photon): its
// packet state, and its layer's bounds and the properties an interaction reads (SlabPhoton).
struct SlabLaneState {
    alignas(32) float px[kLanes], py[kLanes], pz[kLanes];
    alignas(32) float dx[kLanes], dy[kLanes], dz[kLanes];
    alignas(32) float w[kLanes], s[kLanes];
    alignas(32) float zTop[kLanes], zBot[kLanes];
    alignas(32) float mfp[kLanes], hgScale[kLanes], mu_t[kLanes], absorbFraction[kLanes];
    alignas(32) float g[kLanes], hgA[kLanes], hgB[kLanes];
    alignas(32) uint32_t r0[kLanes], r1[kLanes], r2[kLanes], r3[kLanes];
    alignas(32) uint32_t steps[kLanes], hits[kLanes], layer[kLanes];
    alignas(32) double absorbed[kLanes];
    alignas(32) float opl[kLanes];  // the packet clock (PacketState::opl)
    // This iteration's event: kEvent* bits (kCommonInteraction: above roulette), and the weight
    // before and after the drop.
    alignas(32) uint32_t kind[kLanes];
    alignas(32) float w0[kLanes], w1[kLanes];

    SlabPhoton get(const SlabModel& m, int l) const {
        SlabPhoton p;
        p.st = PacketState{Packet{Vec3{px[l], py[l], pz[l]}, Vec3{dx[l], dy[l], dz[l]}, layer[l], w[l]},
                           PacketRng(PacketRng::State{r0[l], r1[l], r2[l], r3[l]}), s[l], steps[l], hits[l],
                           opl[l]};
        p.setMaterial(m.material(layer[l]));
        p.zTop = zTop[l];
        p.zBot = zBot[l];
        p.absorbed = absorbed[l];
        return p;
    }
    void put(int l, const SlabPhoton& p) {
        const Packet& pk = p.st.pk;
        px[l] = pk.pos.x; py[l] = pk.pos.y; pz[l] = pk.pos.z;
        dx[l] = pk.dir.x; dy[l] = pk.dir.y; dz[l] = pk.dir.z;
        w[l] = pk.w; s[l] = p.st.s;
        zTop[l] = p.zTop; zBot[l] = p.zBot;
        mfp[l] = p.M.mfp; hgScale[l] = p.M.hgScale; mu_t[l] = p.M.mu_t;
        absorbFraction[l] = p.M.absorbFraction;
        g[l] = p.M.g; hgA[l] = p.M.hgA; hgB[l] = p.M.hgB;
        const PacketRng::State r = p.st.rng.state();
        r0[l] = r.s0; r1[l] = r.s1; r2[l] = r.s2; r3[l] = r.s3;
        steps[l] = p.st.steps; hits[l] = p.st.hits; layer[l] = pk.tetra;
        absorbed[l] = p.absorbed;
        opl[l] = p.st.opl;
    }
};

// slabStep's first half for lane l: the step (drawn when none is left: slabStep draws it after
// the interaction instead, the same draw in the same order), the distance to the layer's face,
// then the move to the interaction site (kEventInteract) or onto the face (kEventHop), or
// neither (kEventStuck). Term for term slabStep's arithmetic.
FM_LANE_INLINE void moveSlabLane(const KernelParams& kp, SlabLaneState& L, int l) {
    PacketRng rng(PacketRng::State{L.r0[l], L.r1[l], L.r2[l], L.r3[l]});
    float s = L.s[l];
    if (s < 0.f) s = drawStep(rng);
    const Vec3 pos{L.px[l], L.py[l], L.pz[l]}, dir{L.dx[l], L.dy[l], L.dz[l]};
    const float tz = positivePart(dir.z > 0.f ? L.zBot[l] - pos.z : pos.z - L.zTop[l]) / fabsf(dir.z);
    const float t = tz < kInfinity ? tz : kInfinity;
    const float mu_t = L.mu_t[l];
    const float dist = s * L.mfp[l];
    uint32_t hits = L.hits[l], kind;
    float step;
    if (dist < t) {
        step = dist;
        s = -1.f;
        hits = 0;
        kind = kEventInteract;
    } else if (t < kInfinity && ++hits < kp.maxHits) {
        step = t;
        s = positivePart(s - t * mu_t);
        kind = kEventHop;
    } else {
        step = 0.f;
        kind = kEventStuck;
    }
    const Vec3 moved = pos + step * dir;
    L.px[l] = kind == kEventStuck ? pos.x : moved.x;
    L.py[l] = kind == kEventStuck ? pos.y : moved.y;
    L.pz[l] = kind == kEventStuck ? pos.z : moved.z;
    L.s[l] = s;
    L.hits[l] = hits;
    L.kind[l] = kind;
    const PacketRng::State r = rng.state();
    L.r0[l] = r.s0; L.r1[l] = r.s1; L.r2[l] = r.s2; L.r3[l] = r.s3;
}

// The common interaction of lane l (interactAboveRoulette: drop and spin), where the move
// ended at one and the weight stays at or above the roulette threshold; otherwise the lane's
// state is left as it is (the rest go through slabInteractBelowRoulette, per photon).
FM_LANE_INLINE void interactSlabLane(const KernelParams& kp, SlabLaneState& L, int l) {
    MaterialRecord M{};  // what an interaction reads
    M.mfp = L.mfp[l]; M.hgScale = L.hgScale[l]; M.mu_t = L.mu_t[l]; M.absorbFraction = L.absorbFraction[l];
    M.g = L.g[l]; M.hgA = L.hgA[l]; M.hgB = L.hgB[l];
    Packet pk{Vec3{0.f, 0.f, 0.f}, Vec3{L.dx[l], L.dy[l], L.dz[l]}, 0u, L.w[l]};
    PacketRng rng(PacketRng::State{L.r0[l], L.r1[l], L.r2[l], L.r3[l]});
    float w0, w1;
    const bool above = interactAboveRoulette(kp, M, pk, rng, w0, w1);  // computed in every lane,
    const bool common = above && L.kind[l] == kEventInteract;           // kept in those it applies to
    L.w0[l] = w0;
    L.w1[l] = w1;
    if (common) {
        L.dx[l] = pk.dir.x; L.dy[l] = pk.dir.y; L.dz[l] = pk.dir.z;
        L.w[l] = pk.w;
        const PacketRng::State r = rng.state();
        L.r0[l] = r.s0; L.r1[l] = r.s1; L.r2[l] = r.s2; L.r3[l] = r.s3;
        L.kind[l] = kEventInteract | kCommonInteraction;
    }
}

// Bit l set where lane l's event kind has all of `bits` and nothing else of `bits | none`.
FM_LANE_INLINE unsigned slabKindMask(const SlabLaneState& L, uint32_t bits, uint32_t none = 0u) {
#if defined(__AVX2__)
    unsigned m = 0;
    for (int c = 0; c < kLanes; c += 8) {
        const __m256i k = _mm256_and_si256(_mm256_load_si256(reinterpret_cast<const __m256i*>(L.kind + c)),
                                           _mm256_set1_epi32(int(bits | none)));
        const __m256i eq = _mm256_cmpeq_epi32(k, _mm256_set1_epi32(int(bits)));
        m |= unsigned(_mm256_movemask_ps(_mm256_castsi256_ps(eq))) << c;
    }
    return m;
#else
    unsigned m = 0;
    for (int l = 0; l < kLanes; ++l) m |= ((L.kind[l] & (bits | none)) == bits ? 1u : 0u) << l;
    return m;
#endif
}

struct SlabLaneRun {
    // The vector phase keeps no packet clock and calls no move hook (moveSlabLane).
    static_assert(!NeedsClock<HostSlabSink>::value && !NeedsMoves<HostSlabSink>::value,
                  "the MCML lane loop keeps no clock and has no move hook");
    SlabLaneRun(const SlabModel& model, const KernelParams& params, PacketChunks& source, HostSlabSink& sink)
        : m(model), kp(params), packets(source), sk(sink) {}

    const SlabModel& m;
    const KernelParams& kp;
    PacketCursor packets;  // the worker's chunks, a photon at a time
    HostSlabSink& sk;
    SlabLaneState L{};
    unsigned liveMask = 0;

    // Start the next photon in lane l (from this chunk, else the next); false when none is left.
    bool launch(int l) {
        for (uint64_t i; packets.next(i);) {
            SlabPhoton p;
            if (startSlabPhoton(m, kp, i, p, sk)) {
                L.put(l, p);
                return true;
            }
        }
        return false;
    }
    void finish(int l) {
        if (!launch(l)) liveMask &= ~(1u << l);
    }

    // The deposits of the common interactions (mask `in`) of all lanes at once: the absorb of
    // McmlAbsorbTally (the (r, z) grid) with bins and weights in vector registers, then one add
    // per lane (a lane not in `in` adds 0.0 to its bin, which changes nothing: no branch on the
    // random mask); McmlLayerTally books per visit (kVisitSums). The layer's absorbed weight is added up
    // per lane (SlabPhoton::absorbed).
    // Returns the lanes of `in` whose photon is now over maxSteps.
    unsigned deposit(unsigned in) {
        alignas(32) double dw[kLanes];
        alignas(32) uint32_t bin[kLanes];
        alignas(32) uint32_t over[kLanes];
        const McmlGrid grid = sk.rzGrid;
        const uint32_t maxSteps = kp.maxSteps;
#pragma omp simd
        for (int l = 0; l < kLanes; ++l) {
            bin[l] = grid.rzBin(Vec3{L.px[l], L.py[l], L.pz[l]});
            const double d = double(L.w0[l]) - double(L.w1[l]);
            const uint32_t i = (in >> l) & 1u;
            dw[l] = i ? d : 0.0;
            L.absorbed[l] += dw[l];
            L.steps[l] += i;
            over[l] = (i && L.steps[l] >= maxSteps) ? 1u : 0u;
        }
        unsigned o = 0;
        for (int l = 0; l < kLanes; ++l) {
            sk.absorbedRZ[bin[l]] += dw[l];
            o |= over[l] << l;
        }
        return o;
    }

    // A cancelled run: the photons in flight end here, booked abnormal.
    void abandonLanes() {
        packets.abandon(uint64_t(__builtin_popcount(liveMask)));
        for (unsigned b = liveMask; b; b &= b - 1) {
            SlabPhoton p = L.get(m, __builtin_ctz(b));
            endSlabAbnormal(p, sk);
        }
        liveMask = 0;
    }

    void run() {
        for (int l = 0; l < kLanes; ++l)
            if (launch(l)) liveMask |= 1u << l;
        for (uint32_t tick = 1; liveMask; ++tick) {
            if (tick % kStopCheckEvents == 0 && packets.stopping()) {
                abandonLanes();
                break;
            }
            const KernelParams k = kp;
#pragma omp simd
            for (int l = 0; l < kLanes; ++l) moveSlabLane(k, L, l);
#pragma omp simd
            for (int l = 0; l < kLanes; ++l) interactSlabLane(k, L, l);
            const unsigned live = liveMask;
            const unsigned common = slabKindMask(L, kEventInteract | kCommonInteraction) & live;
            // The rare events, per photon: over maxSteps after a common interaction, below the
            // roulette threshold, a face reached, stuck.
            for (unsigned b = deposit(common); b; b &= b - 1) {
                const int l = __builtin_ctz(b);
                SlabPhoton p = L.get(m, l);
                endSlabAbnormal(p, sk);
                finish(l);
            }
            for (unsigned b = slabKindMask(L, kEventInteract, kCommonInteraction) & live; b; b &= b - 1) {
                const int l = __builtin_ctz(b);
                SlabPhoton p = L.get(m, l);
                if (slabInteractBelowRoulette(kp, p, sk) == kSlabLive) L.put(l, p);
                else finish(l);
            }
            const unsigned hops = slabKindMask(L, kEventHop) & live;
            sk.events.boundary += uint64_t(__builtin_popcount(hops));
            for (unsigned b = hops; b; b &= b - 1) {
                const int l = __builtin_ctz(b);
                SlabPhoton p = L.get(m, l);
                if (crossSlab(m, p, sk)) L.put(l, p);
                else finish(l);
            }
            for (unsigned b = slabKindMask(L, kEventStuck) & live; b; b &= b - 1) {
                const int l = __builtin_ctz(b);
                SlabPhoton p = L.get(m, l);
                endSlabAbnormal(p, sk);
                finish(l);
            }
        }
    }
};
#endif

void runSlabLanes(const SlabModel& m, const KernelParams& kp, PacketChunks& chunks,
                  HostSlabSink& sk) {
#if FM_LANES_SCALAR
    // One photon at a time (as the mesh loop without AVX2): the same histories.
    SlabPhoton p;
    runOneByOne(
        chunks, [&](uint64_t i) { return startSlabPhoton(m, kp, i, p, sk); },
        [&] { return slabEvent(m, kp, p, sk); }, [&] { endSlabAbnormal(p, sk); });
#else
    SlabLaneRun r(m, kp, chunks, sk);
    r.run();
#endif
}

}  // namespace FM_LANES_NS
}  // namespace fm
