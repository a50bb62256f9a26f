// SPDX-License-Identifier: GPL-3.0-or-later
// The packet loop: launch, then hop (draw a step, cross faces), drop, roulette, spin until the
// packet exits, dies or trips a guard. Called per packet by the CPU threads and CUDA threads.
//
// Model provides cell(i) -> TetraRecord, material(i) -> MaterialRecord and emitters.
// Scorer: a TallyPack (Core/Tally.hpp) or anything with its hooks (absent ones cost nothing),
// the member `events` and the member `ledger` (or kBooksLedger and bookLedger<field>(v): book()
// below). The event step is written once per geometry model: moveEvent here (tetra meshes; any
// model with its own cellExit) and slabStep for the MCML slab loop (Kernels/McmlSlabLoop.hpp).
#pragma once
#include <type_traits>

#include "Kernels/Core/Tally.hpp"

namespace fm {

// Ledger bookings go through book<&Ledger::field>(sc, v): into sc.ledger, or, for a scorer
// that says kBooksLedger, through its bookLedger<field>(v), which may keep the fields apart (the
// GPU's mesh kernel: absorbed, booked at every interaction, in a register; the others, booked
// per packet at most a few times, by reductions into memory, which frees registers).
template <class Scorer, class = void>
struct BooksLedger : std::false_type {};
template <class Scorer>
struct BooksLedger<Scorer, std::void_t<decltype(Scorer::kBooksLedger)>> : std::bool_constant<Scorer::kBooksLedger> {};

template <double Ledger::*F, class Scorer>
FM_HD void book(Scorer& sc, double v) {
    if constexpr (BooksLedger<Scorer>::value) sc.template bookLedger<F>(v);
    else sc.ledger.*F += v;
}

template <class Scorer>
FM_HD void bookAbnormal(const Packet& pk, Scorer& sc) {
    book<&Ledger::abnormal>(sc, pk.w);
    ++sc.events.abnormal;
}

// A launched packet has ended: the tallies' end hook. Returns false (not live).
template <class Scorer>
FM_HD bool endPacket(const PacketState& st, Scorer& sc) {
    onEnd(sc, st);
    return false;
}

// A launched packet trips a guard (or a cancel ends it): booked abnormal, and ended.
template <class Scorer>
FM_HD bool endAbnormal(const PacketState& st, Scorer& sc) {
    bookAbnormal(st.pk, sc);
    return endPacket(st, sc);
}

// Cross face h of the packet's cell (material index mat, properties M): Fresnel/TIR where the
// index changes, else straight through. Returns true when the packet left the mesh (ended);
// when it moved into the neighbour, *matOut (if given) receives the neighbour's material.
template <class Model, class Scorer>
FM_HD bool crossFace(const Model& m, uint32_t mat, const MaterialRecord& M, const FaceHit& h,
                     PacketState& st, Scorer& sc, uint32_t* matOut = nullptr) {
    Packet& pk = st.pk;
    PacketRng& rng = st.rng;
    const uint32_t adj = m.adjacent(pk.tetra, h.face);
    const bool outside = isExterior(adj);
    const uint32_t nextMat = m.adjacentMaterial(pk.tetra, h.face);
    const float n2 = m.material(nextMat).n;
    if (n2 != M.n) {
        const Vec3 normal = hitNormal(m, pk.tetra, h);
        float cosi = dot(pk.dir, normal), cost;
        float R = fresnelReflectance(M.n, n2, cosi, cost);
        if (R >= 1.f || rng.uniform() < R) {
            pk.dir = reflect(pk.dir, normal, cosi);
            if (R >= 1.f) ++sc.events.tir; else ++sc.events.fresnel;
            return false;
        }
        pk.dir = refract(pk.dir, normal, M.n, n2, cosi, cost);
        ++sc.events.refract;
    }
    if (ScoresFaces<Scorer>::value) {
        const uint32_t face = m.faceId(pk.tetra, h.face);
        if ((m.scoredFaces(pk.tetra) >> h.face) & 1u) onCross(sc, st, face);
        if (outside) onExit(sc, st, face);
    }
    if (outside) {
        book<&Ledger::exited>(sc, pk.w);
        ++sc.events.exit;
        endPacket(st, sc);
        return true;
    }
    if (nextMat != mat) ++sc.events.interface;
    pk.tetra = adj;
    if (matOut) *matOut = nextMat;
    return false;
}

// Whether crossing face f of cell i (refractive index n) into `adj` is plain: into a neighbour
// cell of the same index, and (kCheckScored) not a face the directed tally scores. crossFace
// then only moves the packet to `adj` (and counts an interface where the material changes,
// nextMat != the cell's). The CPU lane loop books plain crossings this way and calls crossFace
// for the others (exits, Fresnel, scored faces): the same outcome, without the packet state
// round trip.
template <bool kCheckScored, class Model>
FM_HD bool plainCrossing(const Model& m, uint32_t i, int f, float n, uint32_t adj, uint32_t& nextMat) {
    if (isExterior(adj)) return false;
    nextMat = m.adjacentMaterial(i, f);  // from the cell left: no load of the neighbour's record
    if (m.material(nextMat).n != n) return false;
    return !(kCheckScored && ((m.scoredFaces(i) >> f) & 1u));
}

// A step's length in mean free paths, -log(u) with u uniform in (0, 1]: the step draw of every
// packet loop (launchPacket, interactions, the MCML slab loop), so each takes the same draw.
FM_HD float drawStep(PacketRng& rng) { return -fm_log(rng.uniformOpen()); }

// A float weight in double, for the ledger and tallies. On the GPU without --use_fast_math's
// flush of subnormals, which costs a multiplication before each conversion: the weights
// converted here are near wmin (1e-5 by default) or above, far from subnormal, and a subnormal
// would only be converted exactly instead of to 0.
FM_HD double widen(float x) {
#if defined(__CUDA_ARCH__)
    double r;
    asm("cvt.f64.f32 %0, %1;" : "=d"(r) : "f"(x));
    return r;
#else
    return double(x);
#endif
}

// Start packet `index`: emission with its own stream, launched weight booked. Returns false
// when emission failed (booked abnormal), so there is nothing to advance.
template <class Model, class Scorer>
FM_HD bool launchPacket(const Model& m, const KernelParams& kp, uint64_t index, PacketState& st,
                        Scorer& sc) {
    st.rng = PacketRng(kp.seed, index);
    LaunchRecord L = emit(m, m.emitters, st.rng);
    st.pk = Packet{L.pos, L.dir, L.tetra, L.weight};
    st.s = -1.f;  // drawn below if the packet is live
    st.steps = 0;
    st.hits = 0;
    st.opl = 0.f;
    ++sc.events.launch;
    book<&Ledger::launched>(sc, 1.0);
    if (L.weight <= 0.f || L.tetra == 0) {  // emission failed: the whole packet is abnormal
        st.pk.w = 1.f;
        bookAbnormal(st.pk, sc);
        return false;
    }
    book<&Ledger::specular>(sc, 1.0 - double(L.weight));
    st.s = drawStep(st.rng);  // the first step: the first draw after the emission's
    onLaunch(sc, st);
    return true;
}

// What one event of a live packet was (bits): a hop to a face, or an interaction (weight drop,
// then roulette below wmin, won or lost, then spin), or a guard that stopped the packet.
constexpr uint32_t kEventHop = 1u, kEventInteract = 2u, kEventWon = 4u, kEventLost = 8u,
                   kEventTooLong = 16u, kEventStuck = 32u;

struct Event {
    FaceHit h;       // the cell's exit face (what a hop crosses)
    float w0, w1;    // weight before and after the drop (interactions)
    uint32_t kind;   // kEvent* bits
    float dist;      // the length moved (to the interaction or the face; 0 for a guard)
};

// The interaction where a step runs out: drop mu_a/mu_t of the weight, Russian roulette below
// wmin (survive with probability prwin at weight w/prwin), Henyey-Greenstein spin. Packet
// state only; the scorer books the outcome (bookEvent), so the CPU can run this for many packets
// at once in vector registers.
// keep = 1 - M.absorbFraction, the fraction of the weight an interaction keeps (a model that
// holds it per cell passes it: interactKeeping; interact derives it).
FM_HD uint32_t interactKeeping(const KernelParams& kp, float keep, const MaterialRecord& M, Packet& pk,
                               PacketRng& rng, float& w0, float& w1) {
    w0 = pk.w;
    w1 = pk.w * keep;
    uint32_t kind = kEventInteract;
    if (w1 < kp.wmin) kind |= (w1 > 0.f && rng.uniform() < kp.prwin) ? kEventWon : kEventLost;
    pk.w = (kind & kEventWon) ? w1 / kp.prwin : w1;
    // The roulette draw is taken only below wmin, the spin's two only when the packet survives:
    // every packet loop takes a packet's draws in this order, so each gives the same history.
    if (!(kind & kEventLost)) pk.dir = deflect<true>(pk.dir, sampleHG(M, rng), rng);
    return kind;
}
FM_HD uint32_t interact(const KernelParams& kp, const MaterialRecord& M, Packet& pk, PacketRng& rng,
                        float& w0, float& w1) {
    return interactKeeping(kp, 1.f - M.absorbFraction, M, pk, rng, w0, w1);
}

// interact() for the common case, the weight left at or above the roulette threshold: the drop
// to w1 and the spin, same arithmetic and draws, without the event-kind flags the rare outcomes
// need (the packet and slab loops take it first: the GPU then issues fewer instructions per
// event). Returns false, with nothing changed,
// when the weight falls below the threshold (or is NaN): interact() then does the event.
FM_HD bool interactAboveRouletteKeeping(const KernelParams& kp, float keep, const MaterialRecord& M, Packet& pk,
                                        PacketRng& rng, float& w0, float& w1) {
    w0 = pk.w;
    w1 = pk.w * keep;
    if (!(w1 >= kp.wmin)) return false;
    pk.w = w1;
    pk.dir = deflect<true>(pk.dir, sampleHG(M, rng), rng);
    return true;
}
FM_HD bool interactAboveRoulette(const KernelParams& kp, const MaterialRecord& M, Packet& pk, PacketRng& rng,
                                 float& w0, float& w1) {
    return interactAboveRouletteKeeping(kp, 1.f - M.absorbFraction, M, pk, rng, w0, w1);
}

// The first half of one event of a live packet in cell material M: find the exit face, then
// move either to where the step runs out (kEventInteract: the interaction is still to be done,
// by interactEvent, which draws the next step) or to the face (kEventHop, the step left
// rescaled by mu_t). The step st.s >= 0 is drawn already: at launch and after each
// interaction the packet survives, in the order a draw here would take it (the GPU then has no
// branch for it per event). The distance is st.s * mfp: with mu_t = 0, mfp is +inf and the
// distance +inf or (s = 0) NaN, never below the face's. State arithmetic only, no scorer: the
// CPU runs it on many packets in lockstep (Kernels/CPU/CpuLanes.hpp), then books each one with
// bookEvent. kClock: advance the packet clock st.opl by n * the length moved (the scorer's
// NeedsClock; the loops pass it).
template <bool kClock = false, class Model>
FM_HD Event moveEvent(const Model& m, const KernelParams& kp, const MaterialRecord& M, PacketState& st) {
    Packet& pk = st.pk;
    Event e;
    e.h = cellExit(m, pk.tetra, pk.pos, pk.dir);
    e.w0 = e.w1 = pk.w;
    // mu_t and mfp read together: on the GPU one 8-byte constant load (MaterialRecord keeps them
    // side by side), kept here by the empty asm; else the compiler sinks the hop's mu_t into a
    // load of its own, which costs more than the register.
    const float mu_t = M.mu_t, mfp = M.mfp;
#if defined(__CUDA_ARCH__)
    asm volatile("" ::"f"(mu_t), "f"(mfp));
#endif
    const float dist = st.s * mfp;
    if (dist < e.h.t) {
        pk.pos = pk.pos + dist * pk.dir;
        st.s = -1.f;
        st.hits = 0;
        e.kind = kEventInteract;
        e.dist = dist;
    } else if (e.h.face >= 0 && ++st.hits < kp.maxHits) {  // else: stuck, or grazing forever
        pk.pos = pk.pos + e.h.t * pk.dir;
        st.s = positivePart(st.s - e.h.t * mu_t);
        e.kind = kEventHop;
        e.dist = e.h.t;
    } else {
        e.kind = kEventStuck;
        e.dist = 0.f;
    }
    if constexpr (kClock) st.opl += e.dist * M.n;
    return e;
}

// The second half of an event that moveEvent ended at an interaction: drop, roulette, spin,
// the next step's draw, and the maxSteps guard.
FM_HD void interactEvent(const KernelParams& kp, const MaterialRecord& M, PacketState& st, Event& e) {
    e.kind = interact(kp, M, st.pk, st.rng, e.w0, e.w1);
    if (e.kind & kEventLost) return;
    st.s = drawStep(st.rng);
    if (++st.steps >= kp.maxSteps) e.kind |= kEventTooLong;
}

// What follows the drop of an interaction: roulette lost (the packet ends), won, the maxSteps
// guard, else a scatter. The CPU lane loop books the drops of 8 lanes at once and calls this
// for the lanes whose interaction was more than a scatter.
template <class Scorer>
FM_HD bool bookInteractionOutcome(const Event& e, const PacketState& st, Scorer& sc) {
    const Packet& pk = st.pk;
    if (e.kind & kEventLost) {
        book<&Ledger::rouletteLost>(sc, e.w1);
        ++sc.events.die;
        return endPacket(st, sc);
    }
    if (e.kind & kEventWon) {
        book<&Ledger::rouletteGained>(sc, widen(pk.w) - widen(e.w1));
        ++sc.events.win;
    }
    ++sc.events.scatter;
    if (!(e.kind & kEventTooLong)) return true;
    return endAbnormal(st, sc);
}

// Tallies, ledger and event counts of an interaction (event e, kEventInteract set). The ledger
// books the drop as w0 - w1 computed in double from the two floats, which is exact, so it
// closes to double rounding. Returns false when the packet has ended (lost at roulette, or over
// maxSteps and booked abnormal).
template <class Scorer>
FM_HD bool bookInteraction(const Event& e, const PacketState& st, Scorer& sc) {
    const double dw = widen(e.w0) - widen(e.w1);
    onAbsorb(sc, st, dw);
    book<&Ledger::absorbed>(sc, dw);
    ++sc.events.absorb;
    return bookInteractionOutcome(e, st, sc);
}

// The bookkeeping of event e: an interaction's tallies, or a hop's face crossing (Fresnel draws
// from the packet's stream; *matOut as in crossFace), or a guard booked abnormal. Returns false
// when the packet has ended.
template <class Model, class Scorer>
FM_HD bool bookEvent(const Model& m, uint32_t mat, const MaterialRecord& M, const Event& e,
                     PacketState& st, Scorer& sc, uint32_t* matOut = nullptr) {
    if (e.kind & kEventInteract) return bookInteraction(e, st, sc);
    if (e.kind & kEventHop) {
        ++sc.events.boundary;
        return !crossFace(m, mat, M, e.h, st, sc, matOut);
    }
    return endAbnormal(st, sc);
}

// One event of a live packet in cell material mat (record M): a hop to the next face of its
// cell, or an interaction (drop, roulette, spin) where its step runs out. Returns false when
// the packet has ended; *matOut as in crossFace. One event per call keeps GPU lanes in step: a
// lane whose packet ends launches the next while the others go on.
// The interaction's physics and its booking sit in one branch (moveEvent, interactEvent,
// bookInteraction, fused): on the GPU a warp then diverges once per event instead of
// twice.
template <class Model, class Scorer>
FM_HD bool advanceIn(const Model& m, const KernelParams& kp, PacketState& st, uint32_t mat,
                     const MaterialRecord& M, Scorer& sc, uint32_t* matOut) {
    Event e = moveEvent<NeedsClock<Scorer>::value>(m, kp, M, st);
    if constexpr (NeedsMoves<Scorer>::value)
        if (e.kind & (kEventInteract | kEventHop)) onMove(sc, st, mat, e.dist);
    if (e.kind & kEventInteract) {
        // The common interaction on its own path: interactEvent and bookInteraction written
        // out for it.
        Packet& pk = st.pk;
        float w0, w1;
        if (interactAboveRoulette(kp, M, pk, st.rng, w0, w1)) {
            const double dw = widen(w0) - widen(w1);
            onAbsorb(sc, st, dw);
            book<&Ledger::absorbed>(sc, dw);
            ++sc.events.absorb;
            ++sc.events.scatter;
            // The next step (as interactEvent draws it), drawn here so that the GPU overlaps it
            // with the spin's arithmetic.
            st.s = drawStep(st.rng);
            if (++st.steps < kp.maxSteps) return true;
            return endAbnormal(st, sc);
        }
        interactEvent(kp, M, st, e);
        return bookInteraction(e, st, sc);
    }
    return bookEvent(m, mat, M, e, st, sc, matOut);  // a hop or a guard
}

// One event, the cell's material read from the model.
template <class Model, class Scorer>
FM_HD bool advance(const Model& m, const KernelParams& kp, PacketState& st, Scorer& sc) {
    const uint32_t mat = m.cellMaterial(st.pk.tetra);
    return advanceIn(m, kp, st, mat, m.material(mat), sc, nullptr);
}

// The material of a packet's cell, kept by the caller between events (a GPU thread: in
// registers) and replaced only when a crossing enters another material, instead of read from
// the cell at every event. Models opt in with kKeepMaterial: 1 keeps the index (the properties
// are still read from the material table at each event), 2 also the properties. The GPU's mesh
// model keeps the index; SlabModel keeps both (the lanes of a warp sit in different layers, so
// per-event constant-memory reads of the properties would diverge). Same histories as
// advance(m, kp, st, sc).
struct KeptMaterial {
    uint32_t mat = 0;
    MaterialRecord M{};
};
template <class Model, class = void>
struct KeepsMaterial : std::integral_constant<int, 0> {};
template <class Model>
struct KeepsMaterial<Model, std::void_t<decltype(Model::kKeepMaterial)>>
    : std::integral_constant<int, int(Model::kKeepMaterial)> {};

// The kept material of a packet starting in `cell` (nothing for models that do not keep it).
template <class Model>
FM_HD KeptMaterial keptMaterial(const Model& m, uint32_t cell) {
    if constexpr (KeepsMaterial<Model>::value == 0) {
        return KeptMaterial{};
    } else {
        const uint32_t mat = m.cellMaterial(cell);
        return KeptMaterial{mat, m.material(mat)};
    }
}

// One event with the material kept in km, for any model: those that do not keep it read it
// per event (advance above) and leave km alone.
template <class Model, class Scorer>
FM_HD bool advance(const Model& m, const KernelParams& kp, PacketState& st, KeptMaterial& km, Scorer& sc) {
    if constexpr (KeepsMaterial<Model>::value == 0) {
        return advance(m, kp, st, sc);
    } else {
        uint32_t mat = km.mat;
        bool live;
        if constexpr (KeepsMaterial<Model>::value >= 2) live = advanceIn(m, kp, st, km.mat, km.M, sc, &mat);
        else live = advanceIn(m, kp, st, km.mat, m.material(km.mat), sc, &mat);
        if (mat != km.mat) {
            km.mat = mat;
            if constexpr (KeepsMaterial<Model>::value >= 2) km.M = m.material(mat);
        }
        return live;
    }
}

// Simulate packet `index` of the run from start to end.
template <class Model, class Scorer>
FM_HD void runPacket(const Model& m, const KernelParams& kp, uint64_t index, Scorer& sc) {
    PacketState st;
    if (!launchPacket(m, kp, index, st, sc)) return;
    KeptMaterial km = keptMaterial(m, st.pk.tetra);
    while (advance(m, kp, st, km, sc)) {
    }
}

}  // namespace fm
