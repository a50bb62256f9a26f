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

// packModel in its two parts, for callers that keep the cells between runs
// (Geometry/PackedModelCache.hpp). The cells (cells, faceCount, cellsIdentity) depend on the
// mesh, the matched-boundary flag and the directed faces only, never on material values;
// packModelRun packs the rest (materials, sources, warnings) into an input whose cells are set.
uint64_t cellsIdentity(const TetraMesh& mesh, const MaterialSet& mats, const std::vector<uint32_t>& directedFaces);
void packModelCells(const TetraMesh& mesh, const MaterialSet& mats, const std::vector<uint32_t>& directedFaces,
                    KernelInput& in);
void packModelRun(const TetraMesh& mesh, const MaterialSet& mats, const Source& src, KernelInput& in);

}  // namespace fm
