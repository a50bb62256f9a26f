// SPDX-License-Identifier: GPL-3.0-or-later
// The standard scorer: volume energy per tetra (through a one-entry accumulation cache), surface
// exit energy per face, directed surface energy per face side. Each tally is a compile-time
// switch, so one that is off costs nothing. Acc decides how a value is added (plain add into
// per-thread arrays on the CPU, atomics on the GPU).
#pragma once
#include <string.h>
#include <type_traits>
#include "Kernels/Core/Records.hpp"

namespace fm {

// Whether accumulation policy Acc wants the one-entry volume cache: GPU atomics do (FullMonteCUDA
// Table 2); plain adds into per-thread host arrays do not (the cache's compare is a branch the
// CPU often mispredicts, dearer than the add it saves). Acc::kCache, default true.
template <class A, class = void>
struct AccUsesCache : std::true_type {};
template <class A>
struct AccUsesCache<A, std::void_t<decltype(A::kCache)>> : std::bool_constant<A::kCache> {};

// Whether accumulation policy Acc adds into replicated tallies (Acc::kReplicas, default false):
// the GPU's atomics do, so that the adds into a few hot cells (a pencil beam's entry, a point
// source's cell) do not all serialise on one address in L2.
template <class A, class = void>
struct AccReplicates : std::false_type {};
template <class A>
struct AccReplicates<A, std::void_t<decltype(A::kReplicas)>> : std::bool_constant<A::kReplicas> {};

template <bool kVolume, bool kSurface, bool kDirected, class Acc, class Count = uint64_t>
struct TallyScorer {
    // Whether the loop must look up face ids on crossings (exit or directed tallies).
    static constexpr bool kScoresFaces = kSurface || kDirected;
    double* volume = nullptr;
    double* surface = nullptr;
    double* directed = nullptr;
    Ledger ledger;
    EventCounts<Count> events;
    uint32_t cacheTetra = 0;
    double cacheEnergy = 0;
    // Replicas (AccReplicates<Acc>): the three arrays are the first of replicaMask + 1 replicas,
    // replicaStride doubles apart (the caller allocates them and sums them after the run). Each
    // volume flush and exit adds into the replica picked by a hash of the packet's position bits:
    // any replica gives the same sum, and this choice needs no per-thread pointer in registers
    // (a per-block replica pointer would be spilled, and its reload would stall every flush).
    // Face crossings (directed) likewise, by the position on
    // the face.
    uint32_t replicaMask = 0, replicaStride = 0;

    FM_HD uint32_t replicaOffset(Vec3 p) const {
        if constexpr (AccReplicates<Acc>::value) {
            uint32_t x, y, z;
            memcpy(&x, &p.x, sizeof x);
            memcpy(&y, &p.y, sizeof y);
            memcpy(&z, &p.z, sizeof z);
            return (((x ^ y ^ z) * 0x9E3779B1u >> 16) & replicaMask) * replicaStride;
        } else {
            (void)p;
            return 0;
        }
    }
    FM_HD void absorb(uint32_t tetra, Vec3 p, double dw) {
        if constexpr (kVolume && !AccUsesCache<Acc>::value) {
            Acc::add(volume + (replicaOffset(p) + tetra), dw);
        } else if constexpr (kVolume) {
            if (tetra != cacheTetra) {
                flushInto(replicaOffset(p));
                cacheTetra = tetra;
            }
            cacheEnergy += dw;
        }
    }
    FM_HD void flush() { flushInto(0); }
    FM_HD void flushInto(uint32_t offset) {  // offset: of the replica (replicaOffset)
        if constexpr (kVolume) {
            if (cacheEnergy != 0.0) Acc::add(volume + (offset + cacheTetra), cacheEnergy);
            cacheEnergy = 0.0;
        }
    }
    FM_HD void exit(uint32_t face, Vec3 p, Vec3, double w) {
        if constexpr (kSurface) Acc::add(surface + (replicaOffset(p) + (face & ~kFaceSideBit)), w);
    }
    FM_HD void cross(uint32_t face, Vec3 p, double w) {
        if constexpr (kDirected) Acc::add(directed + (replicaOffset(p) + 2 * (face & ~kFaceSideBit) + (face >> 31)), w);
    }

    // The same scorer (pointers, ledger, counts) with another accumulation policy.
    template <class A>
    FM_HD TallyScorer<kVolume, kSurface, kDirected, A, Count> withAcc() const {
        TallyScorer<kVolume, kSurface, kDirected, A, Count> o;
        o.volume = volume;
        o.surface = surface;
        o.directed = directed;
        o.ledger = ledger;
        o.events = events;
        o.replicaMask = replicaMask;
        o.replicaStride = replicaStride;
        return o;
    }
};

// Call f(std::bool_constant<V>, std::bool_constant<S>, std::bool_constant<D>) for the runtime
// choice of outputs: turns three flags into one of eight compiled scorers.
template <class F>
void dispatchOutputs(bool v, bool s, bool d, F&& f) {
    auto withD = [&](auto V, auto S) {
        if (d) f(V, S, std::true_type{}); else f(V, S, std::false_type{});
    };
    auto withS = [&](auto V) {
        if (s) withD(V, std::true_type{}); else withD(V, std::false_type{});
    };
    if (v) withS(std::true_type{}); else withS(std::false_type{});
}

}  // namespace fm
