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

enum class StepEnd { Interact, Exited, Abnormal };

// Cross the face h of cell T: Fresnel/TIR where the index changes, else straight through.
// Returns true when the packet left the mesh.
template <class Model, class Scorer>
FM_HD bool crossFace(const Model& m, const TetraRecord& T, const MaterialRecord& M, const FaceHit& h,
                     Packet& pk, Scorer& sc, PacketRng& rng) {
    bool outside = isExterior(h.adj);
    uint32_t nextMat = outside ? exteriorMaterial(h.adj) : m.cellMaterial(h.adj);
    float n2 = m.material(nextMat).n;
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
    if ((T.scoredFaces >> h.face) & 1u) sc.cross(h.faceId, pk.w);
    if (outside) {
        sc.exit(h.faceId, pk.pos, pk.dir, pk.w);
        sc.ledger.exited += pk.w;
        ++sc.events.exit;
        return true;
    }
    if (nextMat != T.material) ++sc.events.interface;
    pk.tetra = h.adj;
    return false;
}

// Move the packet one scattering step: -ln(U) mean free paths, rescaled as mu_t changes.
template <class Model, class Scorer>
FM_HD StepEnd hop(const Model& m, const KernelParams& kp, Packet& pk, Scorer& sc,
                  PacketRng& rng) {
    float s = -fm_log(rng.uniformOpen());
    for (uint32_t hits = 0; hits < kp.maxHits; ++hits) {
        TetraRecord T = m.cell(pk.tetra);
        const MaterialRecord& M = m.material(T.material);
        FaceHit h = exitFace(T, pk.pos, pk.dir);
        float dist = M.mu_t > 0.f ? s / M.mu_t : kInfinity;
        if (dist < h.t) {
            pk.pos = pk.pos + dist * pk.dir;
            return StepEnd::Interact;
        }
        if (h.face < 0) return StepEnd::Abnormal;  // no way out and nothing to interact with
        pk.pos = pk.pos + h.t * pk.dir;
        s = fmaxf(0.f, s - h.t * M.mu_t);
        ++sc.events.boundary;
        if (crossFace(m, T, M, h, pk, sc, rng)) return StepEnd::Exited;
    }
    return StepEnd::Abnormal;
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

// Simulate packet `index` of the run from start to end.
template <class Model, class Scorer>
FM_HD void runPacket(const Model& m, const KernelParams& kp, uint64_t index, Scorer& sc) {
    PacketRng rng(kp.seed, index);
    LaunchRecord L = emit(m, m.emitters, rng);
    Packet pk{L.pos, L.dir, L.tetra, L.weight};
    ++sc.events.launch;
    sc.ledger.launched += 1.0;
    sc.ledger.specular += 1.0 - double(L.weight);
    if (L.weight <= 0.f || L.tetra == 0) {  // emission failed; its weight was booked specular
        sc.ledger.specular -= 1.0 - double(L.weight);
        pk.w = 1.f;
        bookAbnormal(pk, sc);
        return;
    }
    for (uint32_t step = 0; step < kp.maxSteps; ++step) {
        StepEnd end = hop(m, kp, pk, sc, rng);
        if (end == StepEnd::Exited) return;
        if (end == StepEnd::Abnormal) break;
        const MaterialRecord& M = m.material(m.cellMaterial(pk.tetra));
        drop(M, pk, sc);
        if (!roulette(kp, pk, sc, rng)) return;
        pk.dir = deflect(pk.dir, sampleHG(M, rng), rng);
        ++sc.events.scatter;
    }
    bookAbnormal(pk, sc);
}

}  // namespace fm
