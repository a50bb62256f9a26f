// SPDX-License-Identifier: GPL-3.0-or-later
#include "Geometry/Layered.hpp"

#include <cmath>
#include <string>

#include "Common/Errors.hpp"
#include "Geometry/ModelPacker.hpp"

namespace fm {
namespace {

bool positiveFinite(double v) { return std::isfinite(v) && v > 0; }

void checkLayer(const Layer& L, size_t i) {
    auto bad = [&](const std::string& what, double v) {
        throw ModelError("layer " + std::to_string(i + 1) + ": " + what + ", got " + std::to_string(v));
    };
    if (!positiveFinite(L.n)) bad("refractive index n must be > 0", L.n);
    if (!(std::isfinite(L.mu_a) && L.mu_a >= 0)) bad("mu_a must be >= 0 and finite", L.mu_a);
    if (!(std::isfinite(L.mu_s) && L.mu_s >= 0)) bad("mu_s must be >= 0 and finite", L.mu_s);
    if (!(std::isfinite(L.g) && std::fabs(L.g) <= 1)) bad("anisotropy g must satisfy |g| <= 1", L.g);
    if (!positiveFinite(L.thickness)) bad("thickness must be > 0 and finite", L.thickness);
}

double normalFresnel(double n1, double n2) {
    double r = (n1 - n2) / (n1 + n2);
    return r * r;
}

// MCML accepts |g| = 1 (no deflection). Henyey-Greenstein sampling divides by 1 - g^2, so g is
// moved to the nearest float inside (-1, 1): the same distribution to float resolution.
double usableAnisotropy(double g) {
    const double edge = double(std::nextafter(1.0f, 0.0f));
    return std::fmax(-edge, std::fmin(edge, g));
}

// Layer cell: top plane (outward normal -z), bottom plane (+z); faces 2 and 3 are inert.
TetraRecord slabCell(const LayeredModel& m, size_t i) {
    const size_t L = m.layers.size();
    TetraRecord R{};
    R.nz[0] = -1.f;
    R.C[0] = -float(m.top(i));
    R.nz[1] = 1.f;
    R.C[1] = float(m.top(i) + m.layers[i].thickness);
    R.C[2] = R.C[3] = kInfinity;
    R.adj[0] = i == 0 ? (kExteriorBit | 0u) : layerCell(i - 1);
    R.adj[1] = i + 1 == L ? (kExteriorBit | uint32_t(L + 1)) : layerCell(i + 1);
    // A layer cell's material index is its cell index, and the ambient media are coded in adj:
    // the material across either face is adj without the exterior bit.
    for (int f = 0; f < 2; ++f) R.adjMaterial[f] = uint16_t(exteriorMaterial(R.adj[f]));
    // Face ids are canonically oriented along +z; the top face of a cell sees it reversed.
    R.face[0] = uint32_t(kLayeredTopFace + i) | kFaceSideBit;
    R.face[1] = uint32_t(kLayeredTopFace + i + 1);
    R.material = layerCell(i);
    return R;
}

// The same layer as the slab loops read it (Kernels/Core/SlabModel.hpp): the record's planes,
// neighbours and materials.
SlabCell slabOf(const TetraRecord& R) {
    SlabCell s{};
    s.z0 = -R.C[0];
    s.z1 = R.C[1];
    for (int f = 0; f < 2; ++f) {
        s.adj[f] = R.adj[f];
        s.adjMaterial[f] = R.adjMaterial[f];
    }
    s.material = R.material;
    return s;
}

}  // namespace

void LayeredModel::validate() const {
    if (layers.empty()) throw ModelError("layered model: at least one layer is needed");
    if (layers.size() + 2 > kMaxPackedMaterials)
        throw ModelError("layered model: " + std::to_string(layers.size()) + " layers, at most " +
                         std::to_string(kMaxPackedMaterials - 2) + " are supported");
    if (!positiveFinite(nAbove))
        throw ModelError("layered model: n of the medium above must be > 0, got " + std::to_string(nAbove));
    if (!positiveFinite(nBelow))
        throw ModelError("layered model: n of the medium below must be > 0, got " + std::to_string(nBelow));
    for (size_t i = 0; i < layers.size(); ++i) checkLayer(layers[i], i);
}

double LayeredModel::top(size_t i) const {
    double z = 0;
    for (size_t k = 0; k < i && k < layers.size(); ++k) z += layers[k].thickness;
    return z;
}

double LayeredModel::depth() const { return top(layers.size()); }

bool LayeredModel::startsBelowGlass() const {
    return layers.size() >= 2 && layers[0].mu_a == 0 && layers[0].mu_s == 0;
}

double specularReflectance(const LayeredModel& m) {
    double r1 = normalFresnel(m.nAbove, m.layers.at(0).n);
    if (!m.startsBelowGlass()) return r1;
    double r2 = normalFresnel(m.layers[0].n, m.layers[1].n);
    return r1 + (1 - r1) * (1 - r1) * r2 / (1 - r1 * r2);
}

KernelInput packLayered(const LayeredModel& m) {
    m.validate();
    const size_t L = m.layers.size();
    KernelInput in;
    in.materials.push_back(packMaterial(Material(0, 0, 0, m.nAbove)));
    for (const Layer& l : m.layers)
        in.materials.push_back(packMaterial(Material(l.mu_a, l.mu_s, usableAnisotropy(l.g), l.n)));
    in.materials.push_back(packMaterial(Material(0, 0, 0, m.nBelow)));
    in.cells.assign(L + 1, TetraRecord{});
    in.slabs.assign(L + 1, SlabCell{});
    for (size_t i = 0; i < L; ++i) {
        in.cells[layerCell(i)] = slabCell(m, i);
        in.slabs[layerCell(i)] = slabOf(in.cells[layerCell(i)]);
    }
    in.faceCount = uint32_t(L + 2);

    const size_t start = m.startsBelowGlass() ? 1 : 0;
    EmitterRecord e{};
    e.type = kEmitPencil;
    e.tetra = layerCell(start);
    e.pos = Vec3{0.f, 0.f, float(m.top(start))};
    e.dir = Vec3{0.f, 0.f, 1.f};
    e.weight = float(1 - specularReflectance(m));
    in.emitters.push_back(e);
    in.emitterCdf.push_back(1.0);
    return in;
}

}  // namespace fm
