// SPDX-License-Identifier: GPL-3.0-or-later
// A head-sized synthetic model for the large-mesh benchmarks (bench/mesh_capacity.cpp,
// bench/big_mesh.sh): a 180 mm cube of structured tetras (six per cube, Geometry/MeshBuilder)
// with nested spheres of scalp, skull, CSF and brain, and a point source in the scalp. Needs no
// mesher, so the GPU machine makes it from a tetra count.
#pragma once
#include <cmath>
#include <memory>

#include "Geometry/MaterialSet.hpp"
#include "Geometry/MeshBuilder.hpp"
#include "Geometry/Sources.hpp"

namespace fmbench {

constexpr double kHeadHalfSide = 90;  // mm

// Cubes per axis for about `tetras` tetras (six per cube), at least 1.
inline unsigned headDivisions(double tetras) { return unsigned(std::max(1.0, std::round(std::cbrt(tetras / 6.0)))); }

// Region from the distance to the centre: brain (4) within 75 mm, CSF (3) to 78, skull (2) to
// 85, scalp and soft tissue (1) out to the cube's faces.
inline uint32_t headRegion(const fm::Point3& c) {
    const double r = std::sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
    return r < 75 ? 4u : r < 78 ? 3u : r < 85 ? 2u : 1u;
}

inline fm::BoxMeshArrays headArrays(unsigned n) {
    return fm::makeBoxMeshArrays({-kHeadHalfSide, -kHeadHalfSide, -kHeadHalfSide},
                                 {kHeadHalfSide, kHeadHalfSide, kHeadHalfSide}, n, n, n, headRegion);
}

// Near-infrared properties of the four tissues (1/mm), air outside.
inline fm::MaterialSet headMaterials() {
    fm::MaterialSet m;
    m.exterior(fm::Material(0, 0, 0, 1.0));
    m.append(fm::Material(0.018, 9.0, 0.9, 1.37));   // 1 scalp
    m.append(fm::Material(0.016, 8.0, 0.9, 1.43));   // 2 skull
    m.append(fm::Material(0.004, 0.3, 0.9, 1.33));   // 3 CSF
    m.append(fm::Material(0.036, 11.0, 0.9, 1.37));  // 4 brain
    return m;
}

// A point source in the scalp 1.9 mm under the top face, off the grid's planes: an optode on
// the scalp, whose light reaches the brain and also leaves (the absorbed fraction is a sharp
// check).
inline std::shared_ptr<fm::PointSource> headSource() {
    auto p = std::make_shared<fm::PointSource>();
    p->position = {3.3, 2.7, 88.1};
    return p;
}

}  // namespace fmbench
