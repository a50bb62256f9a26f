// SPDX-License-Identifier: GPL-3.0-or-later
// TetraMesh + MaterialSet + Source -> KernelInput: the packed, GPU-ready records.
#pragma once
#include <vector>

#include "Geometry/MaterialSet.hpp"
#include "Geometry/Sources.hpp"
#include "Kernels/KernelInput.hpp"

namespace fm {

MaterialRecord packMaterial(const Material& m);
std::vector<MaterialRecord> packMaterials(const MaterialSet& mats);

// Validates materials and that every region has one; directedFaces are face ids whose
// crossings (both directions) the DirectedSurfaceEnergy tally records.
KernelInput packModel(const TetraMesh& mesh, const MaterialSet& mats, const Source& src,
                      const std::vector<uint32_t>& directedFaces = {});

}  // namespace fm
