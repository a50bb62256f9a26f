// SPDX-License-Identifier: GPL-3.0-or-later
#include "Geometry/MeshBuilder.hpp"

#include "Common/Errors.hpp"

namespace fm {

TetraMesh makeBoxMesh(const Point3& lo, const Point3& hi, unsigned nx, unsigned ny, unsigned nz,
                      const std::function<uint32_t(const Point3&)>& region) {
    if (nx == 0 || ny == 0 || nz == 0) throw ParameterError("box mesh: divisions must be >= 1");
    if (double(nx) * ny * nz > 5e7) throw ParameterError("box mesh: too many cells");
    for (int k = 0; k < 3; ++k)
        if (!(hi[k] > lo[k])) throw ParameterError("box mesh: upper corner must exceed lower corner");
    auto pid = [&](unsigned i, unsigned j, unsigned k) {
        return uint32_t(1 + i + (nx + 1) * (j + (ny + 1) * size_t(k)));
    };
    std::vector<Point3> pts(1, Point3{0, 0, 0});
    for (unsigned k = 0; k <= nz; ++k)
        for (unsigned j = 0; j <= ny; ++j)
            for (unsigned i = 0; i <= nx; ++i)
                pts.push_back({lo[0] + (hi[0] - lo[0]) * i / nx, lo[1] + (hi[1] - lo[1]) * j / ny,
                               lo[2] + (hi[2] - lo[2]) * k / nz});
    static const int kTets[6][4] = {{0, 1, 3, 7}, {0, 1, 5, 7}, {0, 2, 3, 7},
                                    {0, 2, 6, 7}, {0, 4, 5, 7}, {0, 4, 6, 7}};
    std::vector<TetraPoints> tets(1, TetraPoints{0, 0, 0, 0});
    std::vector<uint32_t> regions(1, 0);
    for (unsigned k = 0; k < nz; ++k)
        for (unsigned j = 0; j < ny; ++j)
            for (unsigned i = 0; i < nx; ++i) {
                uint32_t v[8];
                for (int c = 0; c < 8; ++c) v[c] = pid(i + (c & 1), j + ((c >> 1) & 1), k + ((c >> 2) & 1));
                for (auto& t : kTets) {
                    TetraPoints T{v[t[0]], v[t[1]], v[t[2]], v[t[3]]};
                    Point3 c{0, 0, 0};
                    for (uint32_t p : T)
                        for (int d = 0; d < 3; ++d) c[d] += 0.25 * pts[p][d];
                    tets.push_back(T);
                    regions.push_back(region(c));
                }
            }
    return TetraMesh(std::move(pts), std::move(tets), std::move(regions));
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
