// The standard scorer: volume energy per tetra (through a one-entry accumulation cache), surface
// exit energy per face, directed surface energy per face side. Each tally is a compile-time
// switch, so one that is off costs nothing. Acc decides how a value is added (plain add into
// per-thread arrays on the CPU, atomics on the GPU).
#pragma once
#include <type_traits>
#include "Kernels/Core/Records.hpp"

namespace fm {

// Whether accumulation policy Acc wants the one-entry volume cache: GPU atomics do (FullMonteCUDA
// Table 2); plain adds into per-thread host arrays do not (the cache's compare is a branch the
// CPU mispredicts ~30% of the time, dearer than the add it saves). Acc::kCache, default true.
template <class A, class = void>
struct AccUsesCache : std::true_type {};
template <class A>
struct AccUsesCache<A, std::void_t<decltype(A::kCache)>> : std::bool_constant<A::kCache> {};

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

    FM_HD void absorb(uint32_t tetra, Vec3, double dw) {
        if constexpr (kVolume && !AccUsesCache<Acc>::value) {
            Acc::add(volume + tetra, dw);
        } else if constexpr (kVolume) {
            if (tetra != cacheTetra) {
                flush();
                cacheTetra = tetra;
            }
            cacheEnergy += dw;
        }
    }
    FM_HD void flush() {
        if constexpr (kVolume) {
            if (cacheEnergy != 0.0) Acc::add(volume + cacheTetra, cacheEnergy);
            cacheEnergy = 0.0;
        }
    }
    FM_HD void exit(uint32_t face, Vec3, Vec3, double w) {
        if constexpr (kSurface) Acc::add(surface + (face & ~kFaceSideBit), w);
    }
    FM_HD void cross(uint32_t face, double w) {
        if constexpr (kDirected) Acc::add(directed + 2 * (face & ~kFaceSideBit) + (face >> 31), w);
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
