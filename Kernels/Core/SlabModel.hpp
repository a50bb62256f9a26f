// SPDX-License-Identifier: GPL-3.0-or-later
// The layered (MCML) model as the packet loop reads it: its own cell type, a slab (two planes,
// the neighbours across them, materials), instead of a tetra record. Cell i (1..L) is layer i
// between the planes z = z0 (top, face 0) and z = z1 (bottom, face 1); the ambient media are
// materials 0 (above) and L+1 (below). Geometry/Layered.cpp packs the same cells, face ids and
// numbers into tetra records too (the generic loop and the traces run those), so a run through
// SlabModel gives the same result as one through the packed records (a test checks it), only
// with two plane distances per hop instead of four.
//
// Any Model of the packet loop may provide its own cellExit; the generic one (Physics.hpp)
// reads the cell's four planes.
#pragma once
#include "Kernels/Core/Emitters.hpp"

namespace fm {

// One layer: the planes z = z0 (top, outward normal -z) and z = z1 (bottom, +z), z0 < z1.
// 32 bytes on a 16-byte boundary, so the GPU reads a cell from shared memory in two vector loads.
struct alignas(16) SlabCell {
    float z0, z1;
    uint32_t adj[2];          // the cell across the top (0) and bottom (1), or kExteriorBit | material
    uint32_t adjMaterial[2];  // the material across each face
    uint32_t material;
    uint32_t unused;          // explicit padding (zero: the packer value-initialises every cell)
};
static_assert(sizeof(SlabCell) == 32, "a slab cell is two 16-byte vectors");

// cells[i] = layer i (1..layers; cells[0] unused); on the GPU cells points to a per-block
// shared-memory copy.
struct SlabModel {
    // The packet loop keeps a packet's layer material, index and properties, between events
    // (Core/Packet.hpp KeptMaterial).
    static constexpr int kKeepMaterial = 2;
    const SlabCell* cells;
    uint32_t layers;
    const MaterialRecord* materials;
    EmitterView emitters;

    FM_HD uint32_t cellMaterial(uint32_t i) const { return cells[i].material; }
    FM_HD uint32_t adjacent(uint32_t i, int f) const { return cells[i].adj[f & 1]; }
    FM_HD uint32_t adjacentMaterial(uint32_t i, int f) const { return cells[i].adjMaterial[f & 1]; }
    FM_HD uint32_t faceId(uint32_t i, int f) const { return f == 0 ? (i | kFaceSideBit) : i + 1u; }
    FM_HD uint32_t scoredFaces(uint32_t) const { return 0u; }
    FM_HD const MaterialRecord& material(uint32_t i) const { return materials[i]; }
};

// The generic exitFace over the slab's two planes, term for term: top plane normal (0,0,-1)
// with C = -z0, bottom plane (0,0,1) with C = z1.
FM_HD FaceHit cellExit(const SlabModel& m, uint32_t i, Vec3 p, Vec3 d) {
    FaceHit h{kInfinity, -1, Vec3{0.f, 0.f, 0.f}};
    const bool down = d.z > 0.f;  // towards the bottom plane
    const float t = d.z != 0.f ? positivePart(down ? m.cells[i].z1 - p.z : p.z - m.cells[i].z0) / fabsf(d.z)
                               : kInfinity;
    if (t < h.t) {  // as exitFace: no face when the distance overflows
        h.t = t;
        h.face = down ? 1 : 0;
        h.normal = Vec3{0.f, 0.f, down ? 1.f : -1.f};
    }
    return h;
}

}  // namespace fm
