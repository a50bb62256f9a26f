// SPDX-License-Identifier: GPL-3.0-or-later
// The model a fluence matrix was simulated from, in four 48-bit parts: the mesh, the materials,
// the sources, and the runs (packets per column and the kernel settings that change the answer).
// A saved matrix carries it (docs/FLUENCE_MATRIX.md, "Model fingerprint", defines every byte that
// goes in), so a plan that reuses the matrix can tell a matrix of its own model from one of
// another, and say which part differs. Each part is 64-bit FNV-1a over canonical little-endian
// bytes, folded to 48 bits: the same model gives the same parts on every host and build.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "Geometry/MaterialSet.hpp"
#include "Geometry/Sources.hpp"
#include "Geometry/TetraMesh.hpp"
#include "Kernels/Core/Records.hpp"

namespace fm {

constexpr uint64_t kFingerprintPartMask = (uint64_t(1) << 48) - 1;

struct ModelFingerprint {
    // Each part in [1, 2^48); all four 0: no fingerprint (a file written before there was one).
    uint64_t mesh = 0, materials = 0, sources = 0, runs = 0;
    bool none() const { return (mesh | materials | sources | runs) == 0; }
    bool operator==(const ModelFingerprint& o) const {
        return mesh == o.mesh && materials == o.materials && sources == o.sources && runs == o.runs;
    }
    bool operator!=(const ModelFingerprint& o) const { return !(*this == o); }
};

// The parts, each over what docs/FLUENCE_MATRIX.md lists for it.
// Points, tetras (their point ids) and region labels of tetras 1..N, and the length unit.
uint64_t meshFingerprint(const TetraMesh& mesh);
// Every material set in column-block order: per set the matched-boundary flag, the exterior's n
// and mu_a, mu_s, g, n of materials 1..N.
uint64_t materialsFingerprint(const std::vector<MaterialSet>& sets);
// Every source in column order: its kind and the fields that shape its emission (position,
// direction, radius, aperture, ...); a composite's elements with their relative powers. A
// top-level source's power is left out: the matrix is per J emitted.
uint64_t sourcesFingerprint(const std::vector<SourcePtr>& sources);
// The packets of every column, in column order, and the roulette and step limits (the seed is
// left out: another seed gives another estimate of the same matrix).
uint64_t runsFingerprint(const std::vector<uint64_t>& packetsPerColumn, const KernelParams& params);

ModelFingerprint modelFingerprint(const TetraMesh& mesh, const std::vector<MaterialSet>& sets,
                                  const std::vector<SourcePtr>& sources, const std::vector<uint64_t>& packetsPerColumn,
                                  const KernelParams& params);

// The names of the parts where a and b differ ("mesh", "materials", "sources", "packets or
// kernel settings"), in that order; empty when they agree.
std::vector<std::string> fingerprintDifferences(const ModelFingerprint& a, const ModelFingerprint& b);
// "mesh 0123456789ab, materials ..., sources ..., runs ..." (12 hex digits each), or "none".
std::string fingerprintText(const ModelFingerprint& f);

}  // namespace fm
