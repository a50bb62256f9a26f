// SPDX-License-Identifier: GPL-3.0-or-later
// The event vocabulary between the packet loops and the tallies: the packet state every hook
// receives, the hooks a tally may have, and TallyPack, the scorer the loops book into.
//
// API (what a new tally writes; docs/ARCHITECTURE.md "How to add a tally"):
//   A tally is a struct with any of these hooks (absent ones cost nothing; all FM_HD for GPUs):
//     void launch(const PacketState& st);          a packet starts (live: emission succeeded)
//     void move(const PacketState& st, uint32_t material, float dist);
//         after a move of dist mm inside cell st.pk.tetra (st.pk.pos is where it ended; the
//         other fields may already be those after the event). Only when kNeedsMoves.
//     void absorb(const PacketState& st, double dw);  an interaction dropped dw in cell
//         st.pk.tetra at st.pk.pos (st.pk.w, st.pk.dir: after the interaction)
//     void cross(const PacketState& st, uint32_t face);  a crossing of a face the model marks
//         scored (Model::scoredFaces: the directed-surface faces); st.pk.dir after refraction
//     void exit(const PacketState& st, uint32_t face);   the packet leaves the model through
//         face (id | kFaceSideBit); st.pk.dir after refraction, weight st.pk.w
//     void end(const PacketState& st);             a launched packet ended (any reason)
//     void flush();                                 the loop is done with this scorer
//     void visit(const PacketState& st, double w);  (kVisitSums tallies) the packet leaves cell
//         st.pk.tetra (into a neighbour, or ending) with w absorbed there since it entered
//   and any of these traits (default false): kScoresFaces (the loop looks up face ids at
//   crossings: needed for cross and exit), kNeedsMoves (move is called), kNeedsClock
//   (st.opl is kept: optical path length since launch, sum of n * length in mm; time of
//   flight in ns is st.opl / kLightSpeedMmPerNs), kVisitSums (the tally books absorption per
//   cell visit: loops that sum each visit themselves, the MCML slab loops, call its visit and
//   not its absorb; the others call its absorb, so it has both).
//   TallyPack<Count, Ts...> derives from each Ts, folds each hook over them in order, and holds
//   the ledger and event counts (book<&Ledger::f>(sc, v) books into them). Every loop (scalar
//   runPacket, CPU lanes, GPU mesh kernel, traces) calls the pack's hooks on the scorer of the
//   packet: one scorer per packet in flight (a CPU lane, a GPU thread), so launch()/end()
//   bracket one packet at a time per scorer object and per-packet state can live in a tally.
//   A scorer is copied into each CPU lane and each GPU thread, so a tally's members are that
//   copy's own: results go out through pointers (Acc adds, or flush() at the end, which every
//   loop calls on every copy); members hold per-packet state and caches only.
//   TallyScorer<V, S, D, Acc, Count, Extra...> (Core/TallyScorer.hpp) is the standard pack with
//   further tallies appended: register a new tally there.
#pragma once
#include <type_traits>
#include <utility>

#include "Kernels/Core/Emitters.hpp"

namespace fm {

constexpr double kLightSpeedMmPerNs = 299.792458;

struct Packet {
    Vec3 pos, dir;
    uint32_t tetra;
    float w;
};

// A live packet between events: its state and random stream.
struct PacketState {
    Packet pk;
    PacketRng rng{0, 0};
    // Mean free paths left of the step: drawn at launch and, in the mesh loop and the MCML slab
    // step, after each interaction the packet survives; the CPU's MCML lanes leave -1 after an
    // interaction and draw at the next move.
    float s = -1.f;
    uint32_t steps = 0;  // interactions so far
    uint32_t hits = 0;   // faces crossed in the current step
    // The packet clock: optical path length since launch (mm, sum of n * length), advanced by
    // the move of each geometry model when the scorer says kNeedsClock, else left at 0.
    float opl = 0.f;
};

// A hook that is absent: detected at compile time, so that calling it costs nothing.
#define FM_TALLY_HOOK(Trait, call)                                                            \
    template <class T, class = void>                                                          \
    struct Trait : std::false_type {};                                                        \
    template <class T>                                                                        \
    struct Trait<T, std::void_t<decltype(std::declval<T&>().call)>> : std::true_type {};
FM_TALLY_HOOK(HasLaunchHook, launch(std::declval<const PacketState&>()))
FM_TALLY_HOOK(HasMoveHook, move(std::declval<const PacketState&>(), 0u, 0.f))
FM_TALLY_HOOK(HasAbsorbHook, absorb(std::declval<const PacketState&>(), 0.0))
FM_TALLY_HOOK(HasCrossHook, cross(std::declval<const PacketState&>(), 0u))
FM_TALLY_HOOK(HasExitHook, exit(std::declval<const PacketState&>(), 0u))
FM_TALLY_HOOK(HasEndHook, end(std::declval<const PacketState&>()))
FM_TALLY_HOOK(HasFlushHook, flush())
FM_TALLY_HOOK(HasVisitHook, visit(std::declval<const PacketState&>(), 0.0))
FM_TALLY_HOOK(HasAbsorbStepHook, absorbStep(std::declval<const PacketState&>(), 0.0))
#undef FM_TALLY_HOOK

// A tally's traits (static constexpr bool members), false where absent.
#define FM_TALLY_TRAIT(Trait, member)                                                         \
    template <class T, class = void>                                                          \
    struct Trait : std::false_type {};                                                        \
    template <class T>                                                                        \
    struct Trait<T, std::void_t<decltype(T::member)>> : std::bool_constant<T::member> {};
FM_TALLY_TRAIT(ScoresFaces, kScoresFaces)
FM_TALLY_TRAIT(NeedsMoves, kNeedsMoves)
FM_TALLY_TRAIT(NeedsClock, kNeedsClock)
FM_TALLY_TRAIT(VisitSums, kVisitSums)
#undef FM_TALLY_TRAIT

// Each hook of tally or scorer t, if it has it.
template <class T>
FM_HD void onLaunch(T& t, const PacketState& st) {
    if constexpr (HasLaunchHook<T>::value) t.launch(st);
}
template <class T>
FM_HD void onMove(T& t, const PacketState& st, uint32_t material, float dist) {
    if constexpr (HasMoveHook<T>::value && NeedsMoves<T>::value) t.move(st, material, dist);
}
template <class T>
FM_HD void onAbsorb(T& t, const PacketState& st, double dw) {
    if constexpr (HasAbsorbHook<T>::value) t.absorb(st, dw);
}
template <class T>
FM_HD void onCross(T& t, const PacketState& st, uint32_t face) {
    if constexpr (HasCrossHook<T>::value) t.cross(st, face);
}
template <class T>
FM_HD void onExit(T& t, const PacketState& st, uint32_t face) {
    if constexpr (HasExitHook<T>::value) t.exit(st, face);
}
template <class T>
FM_HD void onEnd(T& t, const PacketState& st) {
    if constexpr (HasEndHook<T>::value) t.end(st);
}
template <class T>
FM_HD void onFlush(T& t) {
    if constexpr (HasFlushHook<T>::value) t.flush();
}
// For loops that sum absorption per cell visit: absorb for the tallies that do not (absorbStep),
// visit for those that do (kVisitSums).
template <class T>
FM_HD void onAbsorbStep(T& t, const PacketState& st, double dw) {
    if constexpr (VisitSums<T>::value) return;
    else if constexpr (HasAbsorbStepHook<T>::value) t.absorbStep(st, dw);
    else onAbsorb(t, st, dw);
}
template <class T>
FM_HD void onVisit(T& t, const PacketState& st, double w) {
    if constexpr (HasVisitHook<T>::value) t.visit(st, w);
}

// A tally with no hooks: what a switched-off tally of a pack is (I tells them apart, so that a
// pack may hold several).
template <int I>
struct NoTally {};

// A hookless tally that keeps the packet clock (traces read st.opl).
struct PacketClock {
    static constexpr bool kNeedsClock = true;
};

// The scorer the loops book into: the tallies Ts (each a base, in order: a hook runs over them
// first to last), the ledger and the event counts (Count: 32-bit per GPU thread, else 64).
template <class Count, class... Ts>
struct TallyPack : Ts... {
    static constexpr bool kScoresFaces = (false || ... || ScoresFaces<Ts>::value);
    static constexpr bool kNeedsMoves = (false || ... || NeedsMoves<Ts>::value);
    static constexpr bool kNeedsClock = (false || ... || NeedsClock<Ts>::value);
    // The pack itself takes every absorb (it hands each tally what it asks for): this hides a
    // member's kVisitSums, which the pack would otherwise inherit.
    static constexpr bool kVisitSums = false;
    Ledger ledger;
    EventCounts<Count> events;

    template <class T>
    FM_HD T& tally() { return static_cast<T&>(*this); }
    template <class T>
    FM_HD const T& tally() const { return static_cast<const T&>(*this); }

    FM_HD void launch(const PacketState& st) { (onLaunch(static_cast<Ts&>(*this), st), ...); }
    FM_HD void move(const PacketState& st, uint32_t material, float dist) {
        (onMove(static_cast<Ts&>(*this), st, material, dist), ...);
    }
    FM_HD void absorb(const PacketState& st, double dw) { (onAbsorb(static_cast<Ts&>(*this), st, dw), ...); }
    FM_HD void cross(const PacketState& st, uint32_t face) { (onCross(static_cast<Ts&>(*this), st, face), ...); }
    FM_HD void exit(const PacketState& st, uint32_t face) { (onExit(static_cast<Ts&>(*this), st, face), ...); }
    FM_HD void end(const PacketState& st) { (onEnd(static_cast<Ts&>(*this), st), ...); }
    FM_HD void flush() { (onFlush(static_cast<Ts&>(*this)), ...); }
    FM_HD void absorbStep(const PacketState& st, double dw) { (onAbsorbStep(static_cast<Ts&>(*this), st, dw), ...); }
    FM_HD void visit(const PacketState& st, double w) { (onVisit(static_cast<Ts&>(*this), st, w), ...); }
};

}  // namespace fm
