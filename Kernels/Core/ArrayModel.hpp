// SPDX-License-Identifier: GPL-3.0-or-later
// The model as plain arrays: what the CPU kernel (and any simple caller) hands the packet loop.
#pragma once
#include "Kernels/Core/Emitters.hpp"

namespace fm {

struct ArrayModel {
    const TetraRecord* cells;
    const MaterialRecord* materials;
    EmitterView emitters;

    FM_HD const TetraRecord& planes(uint32_t i) const { return cells[i]; }
    FM_HD uint32_t cellMaterial(uint32_t i) const { return cells[i].material; }
    FM_HD uint32_t adjacent(uint32_t i, int f) const { return cells[i].adj[f]; }
    FM_HD uint32_t adjacentMaterial(uint32_t i, int f) const { return cells[i].adjMaterial[f]; }
    FM_HD uint32_t faceId(uint32_t i, int f) const { return cells[i].face[f]; }
    FM_HD uint32_t scoredFaces(uint32_t i) const { return cells[i].scoredFaces; }
    FM_HD const MaterialRecord& material(uint32_t i) const { return materials[i]; }
};

}  // namespace fm
