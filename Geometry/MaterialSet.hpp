// SPDX-License-Identifier: GPL-3.0-or-later
// Optical properties per region. Slot 0 is the exterior (only its n matters).
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "Common/Errors.hpp"
#include "Kernels/Core/Records.hpp"

namespace fm {

// Largest mu_a, mu_s (1/mm) or n a material may have: the kernels hold them in single
// precision, and a mean free path below 1e-15 mm means nothing anyway.
constexpr double kMaxCoefficient = 1e15;

// The largest region label a mesh holds (TetraMesh refuses larger ones): each region is a
// material index in the packed cells, whose neighbour materials are 16 bits. So it is also the
// largest material slot a model can use.
constexpr uint32_t kMaxRegion = kMaxPackedMaterials - 1;

// Throws ParameterError naming `what` unless slot is a material slot a mesh can use (0..kMaxRegion):
// a set's slots up to the one given are allocated, so a mistyped index must not size them.
inline void checkMaterialSlot(uint64_t slot, const std::string& what) {
    if (slot > kMaxRegion)
        throw ParameterError(what + ": slot " + std::to_string(slot) + " is beyond the largest region a mesh holds (" +
                             std::to_string(kMaxRegion) + ")");
}

struct Material {
    double mu_a = 0, mu_s = 0, g = 0, n = 1;  // 1/mm, 1/mm, -, -
    Material() = default;
    Material(double a, double s, double g_, double n_) : mu_a(a), mu_s(s), g(g_), n(n_) {}
};

class MaterialSet {
public:
    MaterialSet() : m_(1, Material(0, 0, 0, 1)) {}
    void exterior(const Material& m) { m_[0] = m; }
    const Material& exterior() const { return m_[0]; }
    size_t append(const Material& m) { m_.push_back(m); return m_.size() - 1; }
    void set(size_t i, const Material& m) {
        checkMaterialSlot(i, "MaterialSet set");
        if (i >= m_.size()) m_.resize(i + 1);
        m_[i] = m;
    }
    const Material& material(size_t i) const {
        if (i >= m_.size()) throw ParameterError("material " + std::to_string(i) + " does not exist (" +
                                                 std::to_string(m_.size()) + " materials incl. exterior)");
        return m_[i];
    }
    size_t size() const { return m_.size(); }  // including the exterior
    // Matched boundary: the exterior takes the index of the tissue it touches (no Fresnel).
    bool matchedBoundary = false;
    // Throws ModelError naming the region and parameter for values no kernel can use.
    void validate() const {
        for (size_t i = 0; i < m_.size(); ++i) {
            const Material& m = m_[i];
            auto bad = [&](const char* what, double v) {
                throw ModelError("material " + std::to_string(i) + (i == 0 ? " (exterior)" : "") +
                                 ": " + what + " = " + std::to_string(v));
            };
            // Written as !(in range) so that NaN fails too.
            if (!(m.n > 0 && m.n <= kMaxCoefficient)) bad("refractive index n must be in (0, 1e15], got n", m.n);
            if (i == 0) continue;
            if (!(m.mu_a >= 0 && m.mu_a <= kMaxCoefficient)) bad("mu_a must be in [0, 1e15] /mm, got mu_a", m.mu_a);
            if (!(m.mu_s >= 0 && m.mu_s <= kMaxCoefficient)) bad("mu_s must be in [0, 1e15] /mm, got mu_s", m.mu_s);
            if (!(std::isfinite(m.g) && std::fabs(m.g) < 1)) bad("anisotropy must satisfy |g| < 1, got g", m.g);
        }
    }

private:
    std::vector<Material> m_;
};

}  // namespace fm
