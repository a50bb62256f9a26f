// SPDX-License-Identifier: GPL-3.0-or-later
// The standard tallies (Core/Tally.hpp hooks): volume energy per tetra (through a one-entry
// accumulation cache), surface exit energy per face, directed surface energy per face side, and
// TallyScorer, the pack of those that are on plus any further tallies. Each standard tally is a
// compile-time switch, so one that is off costs nothing. Acc decides how a value is added (plain
// add into per-thread arrays on the CPU, atomics on the GPU).
#pragma once
#include <string.h>
#include <type_traits>
#include "Kernels/Core/Tally.hpp"

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

// Which replica of a replicated tally an add at position p goes to (AccReplicates<Acc>): the
// tallies are the first of mask + 1 replicas, stride doubles apart (the caller allocates them and
// sums them after the run). The replica is picked by a hash of the position bits: any replica
// gives the same sum, and this choice needs no per-thread pointer in registers (a per-block
// replica pointer would be spilled, and its reload would stall every flush).
struct TallyReplicas {
    uint32_t mask = 0, stride = 0;
    // Doubles from the array's start to its first replica: 0, or a run's tallies within a group's
    // arrays (Kernels/CUDA/MultiRunCuda.cu: a 32-bit offset in a register instead of a pointer).
    uint32_t base = 0;

    template <class Acc>
    FM_HD uint32_t offset(Vec3 p) const {
        if constexpr (AccReplicates<Acc>::value) {
            // The position's bits: on the GPU by the intrinsic, which keeps the position in float
            // registers (memcpy there makes the compiler hold it as integers and move it back).
#if defined(__CUDA_ARCH__)
            const uint32_t x = __float_as_uint(p.x), y = __float_as_uint(p.y), z = __float_as_uint(p.z);
#else
            uint32_t x, y, z;
            memcpy(&x, &p.x, sizeof x);
            memcpy(&y, &p.y, sizeof y);
            memcpy(&z, &p.z, sizeof z);
#endif
            return base + (((x ^ y ^ z) * 0x9E3779B1u >> 16) & mask) * stride;
        } else {
            (void)p;
            return 0;
        }
    }
};

// Volume energy per cell, through a one-entry accumulation cache where Acc wants it.
template <class Acc>
struct VolumeTally {
    double* volume = nullptr;
    TallyReplicas volumeReplicas;
    uint32_t cacheTetra = 0;
    double cacheEnergy = 0;

    FM_HD void absorb(const PacketState& st, double dw) {
        const uint32_t tetra = st.pk.tetra;
        if constexpr (!AccUsesCache<Acc>::value) {
            Acc::add(volume + (volumeReplicas.offset<Acc>(st.pk.pos) + tetra), dw);
        } else {
            if (tetra != cacheTetra) {
                flushInto(volumeReplicas.offset<Acc>(st.pk.pos));
                cacheTetra = tetra;
            }
            cacheEnergy += dw;
        }
    }
    FM_HD void flush() { flushInto(volumeReplicas.base); }
    FM_HD void flushInto(uint32_t offset) {  // offset: of the replica (TallyReplicas::offset)
        if (cacheEnergy != 0.0) Acc::add(volume + (offset + cacheTetra), cacheEnergy);
        cacheEnergy = 0.0;
    }
    template <class A>
    FM_HD VolumeTally<A> withAcc() const {
        VolumeTally<A> o;
        o.volume = volume;
        o.volumeReplicas = volumeReplicas;
        return o;
    }
};

// Exit energy per boundary face.
template <class Acc>
struct ExitTally {
    static constexpr bool kScoresFaces = true;
    double* surface = nullptr;
    TallyReplicas surfaceReplicas;

    FM_HD void exit(const PacketState& st, uint32_t face) {
        Acc::add(surface + (surfaceReplicas.offset<Acc>(st.pk.pos) + (face & ~kFaceSideBit)), st.pk.w);
    }
    template <class A>
    FM_HD ExitTally<A> withAcc() const {
        ExitTally<A> o;
        o.surface = surface;
        o.surfaceReplicas = surfaceReplicas;
        return o;
    }
};

// Energy crossing each scored face, per side (2 * face + side).
template <class Acc>
struct DirectedTally {
    static constexpr bool kScoresFaces = true;
    double* directed = nullptr;
    TallyReplicas directedReplicas;

    FM_HD void cross(const PacketState& st, uint32_t face) {
        Acc::add(directed + (directedReplicas.offset<Acc>(st.pk.pos) + 2 * (face & ~kFaceSideBit) + (face >> 31)),
                 st.pk.w);
    }
    template <class A>
    FM_HD DirectedTally<A> withAcc() const {
        DirectedTally<A> o;
        o.directed = directed;
        o.directedReplicas = directedReplicas;
        return o;
    }
};

// The standard pack: the volume, surface (exit) and directed tallies that are on (the others
// are NoTally: nothing), then the tallies Extra (Core/Tally.hpp).
template <bool kVolume, bool kSurface, bool kDirected, class Acc, class Count = uint64_t, class... Extra>
struct TallyScorer
    : TallyPack<Count, std::conditional_t<kVolume, VolumeTally<Acc>, NoTally<0>>,
                std::conditional_t<kSurface, ExitTally<Acc>, NoTally<1>>,
                std::conditional_t<kDirected, DirectedTally<Acc>, NoTally<2>>, Extra...> {
    // The same replicas for every standard tally that is on.
    FM_HD void setReplicas(uint32_t mask, uint32_t stride) {
        const TallyReplicas r{mask, stride};
        if constexpr (kVolume) this->volumeReplicas = r;
        if constexpr (kSurface) this->surfaceReplicas = r;
        if constexpr (kDirected) this->directedReplicas = r;
    }
    // Every standard tally's replicas from `base` doubles past its pointer (TallyReplicas::base).
    FM_HD void setReplicaBase(uint32_t base) {
        if constexpr (kVolume) this->volumeReplicas.base = base;
        if constexpr (kSurface) this->surfaceReplicas.base = base;
        if constexpr (kDirected) this->directedReplicas.base = base;
    }
    // The same scorer (pointers, ledger, counts, extra tallies) with another accumulation policy
    // for the standard tallies.
    template <class A>
    FM_HD TallyScorer<kVolume, kSurface, kDirected, A, Count, Extra...> withAcc() const {
        TallyScorer<kVolume, kSurface, kDirected, A, Count, Extra...> o;
        if constexpr (kVolume) static_cast<VolumeTally<A>&>(o) = static_cast<const VolumeTally<Acc>&>(*this).template withAcc<A>();
        if constexpr (kSurface) static_cast<ExitTally<A>&>(o) = static_cast<const ExitTally<Acc>&>(*this).template withAcc<A>();
        if constexpr (kDirected)
            static_cast<DirectedTally<A>&>(o) = static_cast<const DirectedTally<Acc>&>(*this).template withAcc<A>();
        ((static_cast<Extra&>(o) = static_cast<const Extra&>(*this)), ...);
        o.ledger = this->ledger;
        o.events = this->events;
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
