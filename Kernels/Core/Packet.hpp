// The packet loop: launch, then hop (draw a step, cross faces), drop, roulette, spin until the
// packet exits, dies or trips a guard. Called per packet by the CPU threads and CUDA threads.
//
// Model provides cell(i) -> TetraRecord, material(i) -> MaterialRecord and emitters.
// Scorer provides absorb(tetra, pos, dw), exit(face, pos, dir, w), cross(face, w) and the
// members `ledger` and `events`; scorers with empty bodies compile away.
#pragma once
#include "Kernels/Core/Emitters.hpp"

namespace fm {

struct Packet {
    Vec3 pos, dir;
    uint32_t tetra;
    float w;
};

// Cross face h of the packet's cell (material index mat, properties M): Fresnel/TIR where the
// index changes, else straight through. Returns true when the packet left the mesh.
template <class Model, class Scorer>
FM_HD bool crossFace(const Model& m, uint32_t mat, const MaterialRecord& M, const FaceHit& h,
                     Packet& pk, Scorer& sc, PacketRng& rng) {
    const uint32_t adj = m.adjacent(pk.tetra, h.face);
    const bool outside = isExterior(adj);
    const uint32_t nextMat = outside ? exteriorMaterial(adj) : m.cellMaterial(adj);
    const float n2 = m.material(nextMat).n;
    if (n2 != M.n) {
        float cosi = dot(pk.dir, h.normal), cost;
        float R = fresnelReflectance(M.n, n2, cosi, cost);
        if (R >= 1.f || rng.uniform() < R) {
            pk.dir = reflect(pk.dir, h.normal, cosi);
            if (R >= 1.f) ++sc.events.tir; else ++sc.events.fresnel;
            return false;
        }
        pk.dir = refract(pk.dir, h.normal, M.n, n2, cosi, cost);
        ++sc.events.refract;
    }
    if (Scorer::kScoresFaces) {
        const uint32_t face = m.faceId(pk.tetra, h.face);
        if ((m.scoredFaces(pk.tetra) >> h.face) & 1u) sc.cross(face, pk.w);
        if (outside) sc.exit(face, pk.pos, pk.dir, pk.w);
    }
    if (outside) {
        sc.ledger.exited += pk.w;
        ++sc.events.exit;
        return true;
    }
    if (nextMat != mat) ++sc.events.interface;
    pk.tetra = adj;
    return false;
}

// Deposit mu_a/mu_t of the weight. The ledger books w0 - w1 computed in double from the two
// floats, which is exact, so the ledger closes to double rounding.
template <class Scorer>
FM_HD void drop(const MaterialRecord& M, Packet& pk, Scorer& sc) {
    float w1 = pk.w * (1.f - M.absorbFraction);
    double dw = double(pk.w) - double(w1);
    pk.w = w1;
    sc.absorb(pk.tetra, pk.pos, dw);
    sc.ledger.absorbed += dw;
    ++sc.events.absorb;
}

// Russian roulette below wmin: survive with probability prwin at weight w/prwin.
template <class Scorer>
FM_HD bool roulette(const KernelParams& kp, Packet& pk, Scorer& sc, PacketRng& rng) {
    if (pk.w >= kp.wmin) return true;
    if (pk.w > 0.f && rng.uniform() < kp.prwin) {
        float w1 = pk.w / kp.prwin;
        sc.ledger.rouletteGained += double(w1) - double(pk.w);
        pk.w = w1;
        ++sc.events.win;
        return true;
    }
    sc.ledger.rouletteLost += pk.w;
    ++sc.events.die;
    return false;
}

template <class Scorer>
FM_HD void bookAbnormal(Packet& pk, Scorer& sc) {
    sc.ledger.abnormal += pk.w;
    ++sc.events.abnormal;
}

// A live packet between events: its state and random stream.
struct PacketState {
    Packet pk;
    PacketRng rng{0, 0};
    float s = -1.f;      // mean free paths left of the current step; < 0: draw a new step
    uint32_t steps = 0;  // interactions so far
    uint32_t hits = 0;   // faces crossed in the current step
};

// Start packet `index`: emission with its own stream, launched weight booked. Returns false
// when emission failed (booked abnormal), so there is nothing to advance.
template <class Model, class Scorer>
FM_HD bool launchPacket(const Model& m, const KernelParams& kp, uint64_t index, PacketState& st,
                        Scorer& sc) {
    st.rng = PacketRng(kp.seed, index);
    LaunchRecord L = emit(m, m.emitters, st.rng);
    st.pk = Packet{L.pos, L.dir, L.tetra, L.weight};
    st.s = -1.f;
    st.steps = 0;
    st.hits = 0;
    ++sc.events.launch;
    sc.ledger.launched += 1.0;
    if (L.weight <= 0.f || L.tetra == 0) {  // emission failed: the whole packet is abnormal
        st.pk.w = 1.f;
        bookAbnormal(st.pk, sc);
        return false;
    }
    sc.ledger.specular += 1.0 - double(L.weight);
    return true;
}

// One event of a live packet: a hop to the next face of its cell, or an interaction (drop,
// roulette, spin) where its step runs out. Returns false when the packet has ended (exited,
// lost at roulette, or stopped by a guard and booked abnormal). One event per call keeps GPU
// lanes in step: a lane whose packet ends launches the next while the others go on.
template <class Model, class Scorer>
FM_HD bool advance(const Model& m, const KernelParams& kp, PacketState& st, Scorer& sc) {
    Packet& pk = st.pk;
    if (st.s < 0.f) st.s = -fm_log(st.rng.uniformOpen());
    const uint32_t mat = m.cellMaterial(pk.tetra);
    const MaterialRecord& M = m.material(mat);
    const FaceHit h = cellExit(m, pk.tetra, pk.pos, pk.dir);
    const float dist = M.mu_t > 0.f ? st.s / M.mu_t : kInfinity;
    if (dist < h.t) {
        pk.pos = pk.pos + dist * pk.dir;
        st.s = -1.f;
        st.hits = 0;
        drop(M, pk, sc);
        if (!roulette(kp, pk, sc, st.rng)) return false;
        pk.dir = deflect(pk.dir, sampleHG(M, st.rng), st.rng);
        ++sc.events.scatter;
        if (++st.steps < kp.maxSteps) return true;
    } else if (h.face >= 0 && ++st.hits < kp.maxHits) {  // else: stuck, or grazing forever
        pk.pos = pk.pos + h.t * pk.dir;
        st.s = positivePart(st.s - h.t * M.mu_t);
        ++sc.events.boundary;
        return !crossFace(m, mat, M, h, pk, sc, st.rng);
    }
    bookAbnormal(pk, sc);
    return false;
}

// Simulate packet `index` of the run from start to end.
template <class Model, class Scorer>
FM_HD void runPacket(const Model& m, const KernelParams& kp, uint64_t index, Scorer& sc) {
    PacketState st;
    if (!launchPacket(m, kp, index, st, sc)) return;
    while (advance(m, kp, st, sc)) {
    }
}

}  // namespace fm
