// SPDX-License-Identifier: GPL-3.0-or-later
// MCML's photon loop over slabs, run by the GPU's and the CPU's MCML kernels: the common packet
// loop (Core/Packet.hpp) over Core/SlabModel.hpp, written out for a layered model: the event step
// of the slab geometry model. A photon keeps its layer (properties and both bounds) in
// registers, so an event reads nothing but its own state; the layer's absorbed weight is added
// up in one register and booked when the photon leaves the layer or ends (the visit hook of
// kVisitSums tallies, Core/Tally.hpp), instead of through a per-event cell cache; and the event
// kinds need no Event record. Same physics functions, same arithmetic, same order of random
// draws: the same histories as runPacket(SlabModel, McmlScorer) (test_mcml checks every event
// count and the grids against it). It executes fewer instructions than the generic loop, and
// lets the GPU's (r, z) tally add deposits up per bin (CUDA/McmlCuda.cu).
#pragma once
#include "Kernels/Core/Packet.hpp"
#include "Kernels/Core/SlabModel.hpp"
#include "Kernels/McmlScorer.hpp"

namespace fm {

// A sink's choices of how the loop books (both off unless the sink says them):
// - kDepositsAsDifferences (the GPU's plain run, Kernels/CUDA/McmlCuda.cu): the sum of an
//   interaction's drops w0 - w1 over a run of interactions is the weight where the run began less
//   the weight now (each partial sum of these float differences is exact in double), so an
//   interaction adds nothing up: the layer's visit is booked as its entry weight less the weight
//   at its end, and the sink's (r, z) tally sends a run of deposits into one bin when the bin
//   changes, from the two weights. A roulette win (the weight jumps) closes both runs and begins
//   new ones. Same histories; the tallies equal to rounding. The sink then has the hooks
//   interaction(st, w0) (an interaction at st.pk.pos took the weight from w0 to st.pk.w) and
//   reweight(st, w1) (the weight jumped from w1 to st.pk.w without a deposit).
// - kBoundariesAtCrossing (the GPU, which crosses several lanes together): layer boundaries
//   reached are counted where the photon crosses (by the caller of crossSlab) instead of at the
//   hop onto the face; every hop onto a face is followed by its crossing, so the count is the
//   same.
template <class Sink, class = void>
struct BoundariesAtCrossing : std::false_type {};
template <class Sink>
struct BoundariesAtCrossing<Sink, std::void_t<decltype(Sink::kBoundariesAtCrossing)>>
    : std::bool_constant<Sink::kBoundariesAtCrossing> {};
template <class Sink, class = void>
struct DepositsAsDifferences : std::false_type {};
template <class Sink>
struct DepositsAsDifferences<Sink, std::void_t<decltype(Sink::kDepositsAsDifferences)>>
    : std::bool_constant<Sink::kDepositsAsDifferences> {};

struct SlabPhoton {
    PacketState st;        // st.pk.tetra is the layer (1..layers)
    MaterialRecord M;      // the layer's properties
    // 1 - M.absorbFraction, the fraction of the weight an interaction keeps: set with the layer,
    // so an interaction does not derive it (the same float).
    float keep = 1;
    float zTop = 0, zBot = 0;  // the layer's bounds
    // Weight absorbed in this layer since the photon entered it; for a sink that books deposits
    // as weight differences, the (widened) weight the photon had there instead.
    double absorbed = 0;

    FM_HD void setMaterial(const MaterialRecord& m) {
        M = m;
        keep = 1.f - m.absorbFraction;
    }
};

// Sink: the scorer the loop books into, a TallyPack (McmlScorer, Kernels/McmlScorer.hpp) or one
// with its hooks and members: ledger, events (members or references). Only rare events touch
// those (launches, crossings, ends, roulette): interactions are counted per photon, absorption
// per layer visit. Interactions go to absorbStep (the tallies without kVisitSums), layer visits
// to visit, exits to exit; launch and end bracket each photon, and the clock and moves are kept
// when the sink says kNeedsClock / kNeedsMoves.
// Events counted: everything but scatter, which is absorb - die (slabScatterCount).

template <class Model>
FM_HD void enterLayer(const Model& m, uint32_t layer, SlabPhoton& p) {
    p.st.pk.tetra = layer;
    p.setMaterial(m.material(layer));
    p.zTop = m.cells[layer].z0;
    p.zBot = m.cells[layer].z1;
}

// The layer visit so far booked; wNow is the photon's weight at its end (the visit of a
// DepositsAsDifferences sink absorbed the weight it began with less wNow; the next begins at
// the photon's weight).
template <class Sink>
FM_HD void bookLayerVisit(SlabPhoton& p, Sink& sk, float wNow) {
    constexpr bool kDiff = DepositsAsDifferences<Sink>::value;
    const double absorbed = kDiff ? p.absorbed - widen(wNow) : p.absorbed;
    if (absorbed != 0.0) {
        onVisit(sk, p.st, absorbed);
        sk.ledger.absorbed += absorbed;
    }
    p.absorbed = kDiff ? widen(p.st.pk.w) : 0.0;
}
template <class Sink>
FM_HD void bookLayerVisit(SlabPhoton& p, Sink& sk) {
    bookLayerVisit(p, sk, p.st.pk.w);
}

// The deposit of an interaction that took the weight from w0 to w1 (= the packet's weight now).
template <class Sink>
FM_HD void slabDeposit(SlabPhoton& p, Sink& sk, float w0, float w1) {
    if constexpr (DepositsAsDifferences<Sink>::value) {
        sk.interaction(p.st, w0);
    } else {
        const double dw = widen(w0) - widen(w1);
        onAbsorbStep(sk, p.st, dw);
        p.absorbed += dw;
    }
}

// The photon ended: its weight absorbed in the last layer and its interactions are booked (the
// interactions not lost at roulette are the steps the maxSteps guard counts; the caller adds a
// lost one). Returns false (not live).
template <class Sink>
FM_HD bool endSlabPhoton(SlabPhoton& p, Sink& sk) {
    sk.events.absorb += p.st.steps;
    bookLayerVisit(p, sk);
    onEnd(sk, p.st);
    return false;
}

// Start photon `index` (launchPacket: emission, launch and specular booked). Returns whether it
// is live.
template <class Model, class Sink>
FM_HD bool startSlabPhoton(const Model& m, const KernelParams& kp, uint64_t index, SlabPhoton& p, Sink& sk) {
    p.absorbed = 0.0;
    if (!launchPacket(m, kp, index, p.st, sk)) return false;
    if constexpr (DepositsAsDifferences<Sink>::value) p.absorbed = widen(p.st.pk.w);
    enterLayer(m, p.st.pk.tetra, p);
    return true;
}

// The hop's face crossing: crossFace for the slab's face (top when moving up), term for term,
// with two results written out for the plane z = const: the incidence cosine dot(d, n) is
// |d.z| and the mirror image reflect(d, n) is (d.x, d.y, -d.z), exactly (the products with the
// normal's zeros and ones are exact); and the neighbour is outside at the stack's first and
// last layer (SlabModel::adjacent).
template <class Model, class Sink>
FM_HD bool crossSlab(const Model& m, SlabPhoton& p, Sink& sk) {
    Packet& pk = p.st.pk;
    const uint32_t layer = pk.tetra;
    const bool down = pk.dir.z > 0.f;
    const int face = down ? 1 : 0;
    const uint32_t next = m.adjacentMaterial(layer, face);
    const float n2 = m.material(next).n;
    if (n2 != p.M.n) {
        float cosi = fabsf(pk.dir.z), cost;
        const float R = fresnelReflectance(p.M.n, n2, cosi, cost);
        if (R >= 1.f || p.st.rng.uniform() < R) {
            pk.dir.z = -pk.dir.z;
            if (R >= 1.f) ++sk.events.tir;
            else ++sk.events.fresnel;
            return true;
        }
        pk.dir = refract(pk.dir, Vec3{0.f, 0.f, down ? 1.f : -1.f}, p.M.n, n2, cosi, cost);
        ++sk.events.refract;
    }
    if (down ? layer == m.layers : layer == 1u) {
        if constexpr (ScoresFaces<Sink>::value) onExit(sk, p.st, m.faceId(layer, face));
        sk.ledger.exited += pk.w;
        ++sk.events.exit;
        return endSlabPhoton(p, sk);
    }
    ++sk.events.interface;
    bookLayerVisit(p, sk);
    enterLayer(m, next, p);
    return true;
}

// What slabStep left a photon in: live (its next event is a step), at a face (moved onto it,
// the crossing still to be done by crossSlab), or ended.
enum SlabState : uint32_t { kSlabLive = 0u, kSlabAtFace = 1u, kSlabEnded = 2u };

// A photon that trips a guard (over maxSteps, stuck, grazing forever) ends, booked abnormal.
template <class Sink>
FM_HD SlabState endSlabAbnormal(SlabPhoton& p, Sink& sk) {
    bookAbnormal(p.st.pk, sk);
    endSlabPhoton(p, sk);
    return kSlabEnded;
}

// The interaction where a photon's step ran out (moved there, step used up) when its weight
// falls below the roulette threshold (or is NaN), i.e. where interactAboveRoulette declined:
// interact()'s drop, roulette and spin, deposited and booked. The common case is written out
// in slabStep (and in the CPU's lane loop, Kernels/CPU/McmlLanesImpl.hpp).
template <class Sink>
FM_HD SlabState slabInteractBelowRoulette(const KernelParams& kp, SlabPhoton& p, Sink& sk) {
    PacketState& st = p.st;
    Packet& pk = st.pk;
    float w0, w1;
    uint32_t kind = interactKeeping(kp, p.keep, p.M, pk, st.rng, w0, w1);
    if (!(kind & kEventLost) && ++st.steps >= kp.maxSteps) kind |= kEventTooLong;
    slabDeposit(p, sk, w0, w1);
    if (kind & kEventLost) {
        sk.ledger.rouletteLost += w1;
        ++sk.events.die;
        ++sk.events.absorb;  // the lost interaction (not a step)
        endSlabPhoton(p, sk);
        return kSlabEnded;
    }
    if (kind & kEventWon) {
        sk.ledger.rouletteGained += widen(pk.w) - widen(w1);
        ++sk.events.win;
        if constexpr (DepositsAsDifferences<Sink>::value) {
            bookLayerVisit(p, sk, w1);
            sk.reweight(st, w1);
        }
    }
    if (!(kind & kEventTooLong)) return kSlabLive;
    return endSlabAbnormal(p, sk);
}

// After a photon's move of dist in its layer: the packet clock and the move hook, for sinks that
// need them (nothing otherwise).
template <class Model, class Sink>
FM_HD void slabMoved(const Model& m, SlabPhoton& p, float dist, Sink& sk) {
    if constexpr (NeedsClock<Sink>::value) p.st.opl += dist * p.M.n;
    if constexpr (NeedsMoves<Sink>::value) onMove(sk, p.st, m.cellMaterial(p.st.pk.tetra), dist);
}

// One event of a live photon up to a face crossing: moveEvent, then interactEvent and
// bookInteraction, or the hop's move onto the face, as advance() does them. The crossing itself
// is left to the caller (crossSlab), so the GPU can run the crossings of several lanes at once.
template <class Model, class Sink>
FM_HD SlabState slabStep(const Model& m, const KernelParams& kp, SlabPhoton& p, Sink& sk) {
    PacketState& st = p.st;
    Packet& pk = st.pk;
    // st.s >= 0: drawn at launch and after every interaction the photon survives (the draw that
    // comes first in its next step: the same order), so a step needs no test for a missing one.
    // cellExit(SlabModel): no face when the distance is not below kInfinity. Without a branch:
    // where d.z = 0 the quotient is +inf or NaN, neither below kInfinity.
    const float tz = positivePart(pk.dir.z > 0.f ? p.zBot - pk.pos.z : pk.pos.z - p.zTop) / fabsf(pk.dir.z);
    const float t = tz < kInfinity ? tz : kInfinity;
    const float dist = st.s * p.M.mfp;  // as in moveEvent: +inf or NaN where mu_t = 0
    if (dist < t) {
        pk.pos = pk.pos + dist * pk.dir;
        slabMoved(m, p, dist, sk);
        st.s = -1.f;
        st.hits = 0;
        float w0, w1;
        if (interactAboveRouletteKeeping(kp, p.keep, p.M, pk, st.rng, w0, w1)) {  // the common case on its own path
            slabDeposit(p, sk, w0, w1);
            if (++st.steps < kp.maxSteps) {
                st.s = drawStep(st.rng);
                return kSlabLive;
            }
            return endSlabAbnormal(p, sk);
        }
        const SlabState r = slabInteractBelowRoulette(kp, p, sk);
        if (r == kSlabLive) st.s = drawStep(st.rng);
        return r;
    }
    if (t < kInfinity && ++st.hits < kp.maxHits) {
        pk.pos = pk.pos + t * pk.dir;
        slabMoved(m, p, t, sk);
        st.s = positivePart(st.s - t * p.M.mu_t);
        if constexpr (!BoundariesAtCrossing<Sink>::value) ++sk.events.boundary;
        return kSlabAtFace;
    }
    return endSlabAbnormal(p, sk);  // stuck, or grazing forever
}

// One whole event of a live photon: the step, and the crossing when it reached a face. Returns
// false when the photon has ended.
template <class Model, class Sink>
FM_HD bool slabEvent(const Model& m, const KernelParams& kp, SlabPhoton& p, Sink& sk) {
    const SlabState s = slabStep(m, kp, p, sk);
    if (s == kSlabAtFace) return crossSlab(m, p, sk);
    return s == kSlabLive;
}

// The scatter count the loop leaves out: every interaction not lost at roulette.
template <class Count>
FM_HD void slabScatterCount(EventCounts<Count>& e) {
    e.scatter = e.absorb - e.die;
}

// Photon `index` from start to end (the host's form; the GPU interleaves photons per thread).
template <class Model, class Sink>
FM_HD void runSlabPhoton(const Model& m, const KernelParams& kp, uint64_t index, Sink& sk) {
    SlabPhoton p;
    if (!startSlabPhoton(m, kp, index, p, sk)) return;
    while (slabEvent(m, kp, p, sk)) {
    }
}

}  // namespace fm
