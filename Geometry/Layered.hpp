// SPDX-License-Identifier: GPL-3.0-or-later
// The layered (MCML) model: infinite slabs stacked along +z from z = 0, an ambient medium above
// and below. It is packed as slab cells (Kernels/Core/SlabModel.hpp SlabCell: the MCML kernels
// read these) and into the same cell records the tetra mesh uses, so the one packet loop
// (Kernels/Core/Packet.hpp) simulates it too: cell i (1..L) is layer i, bounded by its top plane
// (face 0) and bottom plane (face 1); faces 2 and 3 are never hit (zero normal, C = +inf).
//
//   materials:  0 = ambient above, 1..L = layers, L+1 = ambient below
//   face ids:   1 = top surface, i+1 = the interface below layer i (L+1 = bottom surface)
#pragma once
#include <cstdint>
#include <vector>

#include "Kernels/KernelInput.hpp"

namespace fm {

struct Layer {
    double n = 1, mu_a = 0, mu_s = 0, g = 0;  // -, 1/mm, 1/mm, -
    double thickness = 0;                     // mm
};

struct LayeredModel {
    double nAbove = 1, nBelow = 1;
    std::vector<Layer> layers;  // top to bottom

    // Throws ModelError naming the layer and parameter for values no kernel can use.
    void validate() const;
    double top(size_t i) const;     // z of the top of layer i (0-based), mm
    double depth() const;           // total thickness, mm
    // MCML launches below a clear (mu_a = mu_s = 0) first layer when a second layer exists.
    bool startsBelowGlass() const;
};

constexpr uint32_t kLayeredTopFace = 1;
inline uint32_t layerCell(size_t i) { return uint32_t(i + 1); }  // cell of layer i (0-based)

// MCML's specular reflectance of a normal beam: Fresnel at the top surface, or, over a clear
// first layer, the two surfaces of that layer with their multiple reflections summed.
double specularReflectance(const LayeredModel& m);

// Cells, materials and a normal pencil beam at the origin carrying weight 1 - Rsp (launched in
// layer 1, or at the top of layer 2 below a clear first layer, as MCML).
KernelInput packLayered(const LayeredModel& m);

}  // namespace fm
