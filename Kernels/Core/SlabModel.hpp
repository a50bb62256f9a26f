// SPDX-License-Identifier: GPL-3.0-or-later
// The layered (MCML) model as the packet loop reads it, computed instead of loaded: cell i
// (1..L) is layer i between the planes z = z[i] (top, face 0) and z = z[i+1] (bottom, face 1);
// its material is i, the ambient media are materials 0 (above) and L+1 (below). These are the
// same cells, face ids and numbers that Geometry/Layered.cpp packs into cell records, so a run
// through SlabModel gives the same result as one through the packed records (a test checks it),
// only with two plane distances per hop instead of four and no record loads.
//
// Any Model of the packet loop may provide its own cellExit; the generic one (Physics.hpp)
// reads the cell's four planes.
#pragma once
#include "Kernels/Core/Emitters.hpp"

namespace fm {

// z[i] = top of layer i (1..layers), z[layers+1] = bottom of the stack; on the GPU z points
// to a per-block shared-memory copy.
struct SlabModel {
    // The packet loop keeps a packet's layer material, index and properties, between events
    // (Core/Packet.hpp KeptMaterial).
    static constexpr int kKeepMaterial = 2;
    const float* z;
    uint32_t layers;
    const MaterialRecord* materials;
    EmitterView emitters;

    FM_HD uint32_t cellMaterial(uint32_t i) const { return i; }
    FM_HD uint32_t adjacent(uint32_t i, int f) const {
        if (f == 0) return i == 1u ? kExteriorBit : i - 1u;
        return i == layers ? (kExteriorBit | (layers + 1u)) : i + 1u;
    }
    FM_HD uint32_t adjacentMaterial(uint32_t i, int f) const { return f == 0 ? i - 1u : i + 1u; }
    FM_HD uint32_t faceId(uint32_t i, int f) const { return f == 0 ? (i | kFaceSideBit) : i + 1u; }
    FM_HD uint32_t scoredFaces(uint32_t) const { return 0u; }
    FM_HD const MaterialRecord& material(uint32_t i) const { return materials[i]; }
};

// The generic exitFace over the slab's two planes, term for term: top plane normal (0,0,-1)
// with C = -z[i], bottom plane (0,0,1) with C = z[i+1].
FM_HD FaceHit cellExit(const SlabModel& m, uint32_t i, Vec3 p, Vec3 d) {
    FaceHit h{kInfinity, -1, Vec3{0.f, 0.f, 0.f}};
    const bool down = d.z > 0.f;  // towards the bottom plane
    const float t = d.z != 0.f ? positivePart(down ? m.z[i + 1] - p.z : p.z - m.z[i]) / fabsf(d.z)
                               : kInfinity;
    if (t < h.t) {  // as exitFace: no face when the distance overflows
        h.t = t;
        h.face = down ? 1 : 0;
        h.normal = Vec3{0.f, 0.f, down ? 1.f : -1.f};
    }
    return h;
}

}  // namespace fm
