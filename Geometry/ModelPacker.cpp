// SPDX-License-Identifier: GPL-3.0-or-later
#include "Geometry/ModelPacker.hpp"

#include <cmath>
#include <limits>

#include "Common/Errors.hpp"
#include "Common/ParallelFor.hpp"
#include "Geometry/SourceCompiler.hpp"

namespace fm {

MaterialRecord packMaterial(const Material& m) {
    MaterialRecord r{};
    r.mu_t = float(m.mu_a + m.mu_s);
    // +inf, not kInfinity: a step of 0 mean free paths (-log 1) is then NaN long, and a NaN
    // step, like an infinite one, never ends inside the cell (moveEvent), as mu_t = 0 requires.
    r.mfp = r.mu_t > 0 ? float(1 / (m.mu_a + m.mu_s)) : std::numeric_limits<float>::infinity();
    r.n = float(m.n);
    r.absorbFraction = r.mu_t > 0 ? float(m.mu_a / (m.mu_a + m.mu_s)) : 0.f;
    r.g = float(m.g);
    r.hgScale = std::fabs(r.g) < 1e-6f ? 0.f : float(1 / (2 * double(r.g)));
    r.hgA = float(1 + m.g * m.g);
    r.hgB = float(1 - m.g * m.g);
    return r;
}

std::vector<MaterialRecord> packMaterials(const MaterialSet& mats) {
    mats.validate();
    std::vector<MaterialRecord> out;
    for (size_t i = 0; i < mats.size(); ++i) out.push_back(packMaterial(mats.material(i)));
    return out;
}

namespace {

// The record of tetra t: its faces' planes (outward), neighbours and their materials.
void packCell(const TetraMesh& mesh, const MaterialSet& mats, uint32_t t, TetraRecord& R) {
    R.material = mesh.region(t);
    for (int i = 0; i < 4; ++i) {
        uint32_t code = mesh.tetraFace(t, i);
        const MeshFace& F = mesh.face(code & 0x7fffffffu);
        double s = (code & 0x80000000u) ? -1.0 : 1.0;
        R.nx[i] = float(s * F.normal[0]);
        R.ny[i] = float(s * F.normal[1]);
        R.nz[i] = float(s * F.normal[2]);
        const Point3& q = mesh.point(F.points[0]);
        R.C[i] = float(s * dotP(F.normal, q));
        uint32_t nb = mesh.neighbour(t, i);
        R.adj[i] = nb ? nb : (kExteriorBit | (mats.matchedBoundary ? R.material : 0u));
        R.adjMaterial[i] = uint16_t(nb ? mesh.region(nb) : exteriorMaterial(R.adj[i]));
        R.face[i] = code;
    }
}

}  // namespace

// Everything the cells depend on: the mesh (never changed once built: its identity), the
// boundary flag and the directed face ids, mixed into one non-zero number.
uint64_t cellsIdentity(const TetraMesh& mesh, const MaterialSet& mats, const std::vector<uint32_t>& directedFaces) {
    auto mix = [](uint64_t h, uint64_t v) {
        h = (h ^ v) * 0x9e3779b97f4a7c15ull;
        return h ^ (h >> 31);
    };
    uint64_t h = mix(mix(0x243f6a8885a308d3ull, mesh.identity()), mats.matchedBoundary ? 1u : 0u);
    h = mix(h, directedFaces.size());
    for (uint32_t f : directedFaces) h = mix(h, f);
    return h ? h : 1;
}

void packModelCells(const TetraMesh& mesh, const MaterialSet& mats, const std::vector<uint32_t>& directedFaces,
                    KernelInput& in) {
    in.cells.assign(mesh.tetraCount() + 1, TetraRecord{});
    parallelFor(1, mesh.tetraCount() + 1, [&](unsigned, size_t lo, size_t hi) {
        for (size_t t = lo; t < hi; ++t) packCell(mesh, mats, uint32_t(t), in.cells[t]);
    });
    for (uint32_t f : directedFaces) {
        if (f == 0 || f > mesh.faceCount())
            throw ModelError("directed surface face " + std::to_string(f) + " does not exist");
        const MeshFace& F = mesh.face(f);
        for (uint32_t t : {F.owner, F.other})
            if (t)
                for (int i = 0; i < 4; ++i)
                    if ((mesh.tetraFace(t, i) & 0x7fffffffu) == f) in.cells[t].scoredFaces |= 1u << i;
    }
    in.faceCount = uint32_t(mesh.faceCount() + 1);
    in.cellsIdentity = cellsIdentity(mesh, mats, directedFaces);
}

namespace {
// The materials packed, after the checks that they serve the mesh.
std::vector<MaterialRecord> packMeshMaterials(const TetraMesh& mesh, const MaterialSet& mats) {
    std::vector<MaterialRecord> out = packMaterials(mats);
    if (mesh.regionCount() > mats.size())
        throw ModelError("region " + std::to_string(mesh.regionCount() - 1) + " has no material (" +
                         std::to_string(mats.size() - 1) + " materials given besides the exterior)");
    if (mats.size() > kMaxPackedMaterials)
        throw ModelError(std::to_string(mats.size()) + " materials: at most " + std::to_string(kMaxPackedMaterials) +
                         " are supported");
    return out;
}
}  // namespace

void packModelRun(const TetraMesh& mesh, const MaterialSet& mats, const Source& src, KernelInput& in) {
    in.materials = packMeshMaterials(mesh, mats);
    compileSources(src, mesh, mats, in);
}

KernelInput packModel(const TetraMesh& mesh, const MaterialSet& mats, const Source& src,
                      const std::vector<uint32_t>& directedFaces) {
    KernelInput in;
    in.materials = packMeshMaterials(mesh, mats);
    packModelCells(mesh, mats, directedFaces, in);
    compileSources(src, mesh, mats, in);
    return in;
}

}  // namespace fm
