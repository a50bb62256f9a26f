// SPDX-License-Identifier: GPL-3.0-or-later
#include "Geometry/MeshOrder.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

namespace fm {
namespace {

// The 21 low bits of v spread to every third bit of a 63-bit word.
uint64_t spreadBits(uint64_t v) {
    v &= 0x1fffff;
    v = (v | v << 32) & 0x1f00000000ffffULL;
    v = (v | v << 16) & 0x1f0000ff0000ffULL;
    v = (v | v << 8) & 0x100f00f00f00f00fULL;
    v = (v | v << 4) & 0x10c30c30c30c30c3ULL;
    v = (v | v << 2) & 0x1249249249249249ULL;
    return v;
}

// Morton key of each tetra's centroid on a 2^21 grid over the centroids' bounding cube.
std::vector<uint64_t> centroidKeys(const std::vector<Point3>& points, const std::vector<TetraPoints>& tetras) {
    const size_t n = tetras.size();
    std::vector<Point3> c(n, Point3{0, 0, 0});
    Point3 lo{std::numeric_limits<double>::max(), std::numeric_limits<double>::max(),
              std::numeric_limits<double>::max()};
    Point3 hi{-lo[0], -lo[1], -lo[2]};
    for (size_t t = 1; t < n; ++t) {
        for (int d = 0; d < 3; ++d) {
            double s = 0;
            for (int k = 0; k < 4; ++k) s += points[tetras[t][k]][d];
            c[t][d] = s / 4;
            lo[d] = std::min(lo[d], c[t][d]);
            hi[d] = std::max(hi[d], c[t][d]);
        }
    }
    const double span = std::max({hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2], 1e-300});
    const double cells = double((1u << 21) - 1);
    std::vector<uint64_t> key(n, 0);
    for (size_t t = 1; t < n; ++t) {
        uint64_t k = 0;
        for (int d = 0; d < 3; ++d) k |= spreadBits(uint64_t((c[t][d] - lo[d]) / span * cells)) << d;
        key[t] = k;
    }
    return key;
}

}  // namespace

MeshNumbering orderForLocality(std::vector<Point3>& points, std::vector<TetraPoints>& tetras,
                               std::vector<uint32_t>& regions) {
    MeshNumbering m;
    const size_t nt = tetras.size(), np = points.size();
    if (nt < 2) return m;
    const std::vector<uint64_t> key = centroidKeys(points, tetras);
    m.tetraFrom.resize(nt);
    std::iota(m.tetraFrom.begin(), m.tetraFrom.end(), 0u);
    std::stable_sort(m.tetraFrom.begin() + 1, m.tetraFrom.end(),
                     [&](uint32_t a, uint32_t b) { return key[a] < key[b]; });

    std::vector<uint32_t> pointTo(np, 0);  // old point id -> new (0: not yet used)
    m.pointFrom.assign(1, 0);
    m.pointFrom.reserve(np);
    std::vector<TetraPoints> newTetras(nt, tetras[0]);
    std::vector<uint32_t> newRegions(nt, regions[0]);
    for (size_t t = 1; t < nt; ++t) {
        const uint32_t old = m.tetraFrom[t];
        for (int k = 0; k < 4; ++k) {
            uint32_t& to = pointTo[tetras[old][k]];
            if (to == 0) {
                to = uint32_t(m.pointFrom.size());
                m.pointFrom.push_back(tetras[old][k]);
            }
            newTetras[t][k] = to;
        }
        newRegions[t] = regions[old];
    }
    for (uint32_t p = 1; p < np; ++p)  // points no tetra uses keep their relative order, last
        if (pointTo[p] == 0) {
            pointTo[p] = uint32_t(m.pointFrom.size());
            m.pointFrom.push_back(p);
        }
    std::vector<Point3> newPoints(np);
    newPoints[0] = points[0];
    for (size_t p = 1; p < np; ++p) newPoints[p] = points[m.pointFrom[p]];
    points.swap(newPoints);
    tetras.swap(newTetras);
    regions.swap(newRegions);
    return m;
}

TetraMesh orderForLocality(const TetraMesh& mesh, MeshNumbering* numbering, const MeshCheckOptions& opt) {
    std::vector<Point3> points = mesh.points();
    std::vector<TetraPoints> tetras = mesh.tetras();
    std::vector<uint32_t> regions = mesh.regions();
    MeshNumbering m = orderForLocality(points, tetras, regions);
    TetraMesh out(std::move(points), std::move(tetras), std::move(regions), opt);
    out.unitDimension = mesh.unitDimension;
    if (numbering) *numbering = std::move(m);
    return out;
}

}  // namespace fm
