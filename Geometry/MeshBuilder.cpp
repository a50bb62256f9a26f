// SPDX-License-Identifier: GPL-3.0-or-later
#include "Geometry/MeshBuilder.hpp"

#include "Common/Errors.hpp"
#include "Common/ParallelFor.hpp"

namespace fm {

BoxMeshArrays makeBoxMeshArrays(const Point3& lo, const Point3& hi, unsigned nx, unsigned ny, unsigned nz,
                                const std::function<uint32_t(const Point3&)>& region) {
    if (nx == 0 || ny == 0 || nz == 0) throw ParameterError("box mesh: divisions must be >= 1");
    for (int k = 0; k < 3; ++k)
        if (!(hi[k] > lo[k])) throw ParameterError("box mesh: upper corner must exceed lower corner");
    const size_t cells = size_t(nx) * ny * nz, points = size_t(nx + 1) * (ny + 1) * (nz + 1);
    if (6.0 * double(nx) * ny * nz >= 4294967295.0 || double(nx + 1) * (ny + 1) * (nz + 1) >= 4294967295.0)
        throw ParameterError("box mesh: more tetras or points than 32-bit indices hold");
    auto pid = [&](size_t i, size_t j, size_t k) { return uint32_t(1 + i + (nx + 1) * (j + (ny + 1) * k)); };
    BoxMeshArrays a;
    a.points.resize(points + 1);
    a.points[0] = Point3{0, 0, 0};
    parallelFor(0, points, [&](unsigned, size_t b, size_t e) {
        for (size_t p = b; p < e; ++p) {
            const size_t i = p % (nx + 1), j = (p / (nx + 1)) % (ny + 1), k = p / (size_t(nx + 1) * (ny + 1));
            a.points[p + 1] = {lo[0] + (hi[0] - lo[0]) * i / nx, lo[1] + (hi[1] - lo[1]) * j / ny,
                               lo[2] + (hi[2] - lo[2]) * k / nz};
        }
    });
    static const int kTets[6][4] = {{0, 1, 3, 7}, {0, 1, 5, 7}, {0, 2, 3, 7},
                                    {0, 2, 6, 7}, {0, 4, 5, 7}, {0, 4, 6, 7}};
    a.tetras.resize(6 * cells + 1);
    a.regions.resize(6 * cells + 1);
    a.tetras[0] = TetraPoints{0, 0, 0, 0};
    a.regions[0] = 0;
    // Cube (i, j, k) holds tetras 1 + 6 (i + nx (j + ny k)) .. + 5, so chunks of cubes fill
    // disjoint ranges: the same arrays for any thread count.
    parallelFor(0, cells, [&](unsigned, size_t b, size_t e) {
        for (size_t c = b; c < e; ++c) {
            const size_t i = c % nx, j = (c / nx) % ny, k = c / (size_t(nx) * ny);
            uint32_t v[8];
            for (int q = 0; q < 8; ++q) v[q] = pid(i + (q & 1), j + ((q >> 1) & 1), k + ((q >> 2) & 1));
            for (int t = 0; t < 6; ++t) {
                TetraPoints T{v[kTets[t][0]], v[kTets[t][1]], v[kTets[t][2]], v[kTets[t][3]]};
                Point3 ctr{0, 0, 0};
                for (uint32_t p : T)
                    for (int d = 0; d < 3; ++d) ctr[d] += 0.25 * a.points[p][d];
                a.tetras[1 + 6 * c + t] = T;
                a.regions[1 + 6 * c + t] = region(ctr);
            }
        }
    });
    return a;
}

TetraMesh makeBoxMesh(const Point3& lo, const Point3& hi, unsigned nx, unsigned ny, unsigned nz,
                      const std::function<uint32_t(const Point3&)>& region) {
    if (nx == 0 || ny == 0 || nz == 0) throw ParameterError("box mesh: divisions must be >= 1");
    if (double(nx) * ny * nz > 5e7) throw ParameterError("box mesh: too many cells");
    BoxMeshArrays a = makeBoxMeshArrays(lo, hi, nx, ny, nz, region);
    return TetraMesh(std::move(a.points), std::move(a.tetras), std::move(a.regions));
}

bool RegionShape::contains(const Point3& c, const Point3& lo, const Point3& hi) const {
    switch (kind) {
    case Box:
        for (int k = 0; k < 3; ++k)
            if (c[k] < a[k] || c[k] > b[k]) return false;
        return true;
    case Sphere:
        return normP(sub(c, a)) <= r;
    case Cylinder: {
        Point3 d = sub(b, a);
        double L2 = dotP(d, d), t = L2 > 0 ? dotP(sub(c, a), d) / L2 : 0;
        if (t < 0 || t > 1) return false;
        Point3 q{a[0] + t * d[0], a[1] + t * d[1], a[2] + t * d[2]};
        return normP(sub(c, q)) <= r;
    }
    case Shell:
        for (int k = 0; k < 3; ++k)
            if (c[k] - lo[k] < r || hi[k] - c[k] < r) return true;
        return false;
    }
    return false;
}

void checkRegionShapes(const std::vector<RegionShape>& shapes) {
    for (const auto& s : shapes) {
        if (!s.region) throw ParameterError("region shapes: region 0 is the exterior; shapes need regions >= 1");
        if (s.kind != RegionShape::Box && !(s.r > 0))
            throw ParameterError("region shapes: a sphere, cylinder or shell needs a positive size");
    }
}

uint32_t paintRegion(const std::vector<RegionShape>& shapes, uint32_t background, const Point3& c,
                     const Point3& lo, const Point3& hi) {
    uint32_t r = background;
    for (const auto& s : shapes)
        if (s.contains(c, lo, hi)) r = s.region;
    return r;
}

}  // namespace fm
