// SPDX-License-Identifier: GPL-3.0-or-later
#include "Geometry/DiskBeam.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "Common/Errors.hpp"

namespace fm {
namespace {

struct P2 {
    double x, y;
};
P2 minus(P2 a, P2 b) { return {a.x - b.x, a.y - b.y}; }
double cross2(P2 a, P2 b) { return a.x * b.y - a.y * b.x; }
double dot2(P2 a, P2 b) { return a.x * b.x + a.y * b.y; }

// Signed area of the triangle (origin, a, b) intersected with the disk of radius r: the chord
// inside the disk contributes its triangle, the rest circular sectors.
double wedge(P2 a, P2 b, double r) {
    auto sector = [r](P2 p, P2 q) { return 0.5 * r * r * std::atan2(cross2(p, q), dot2(p, q)); };
    P2 d = minus(b, a);
    double A = dot2(d, d);
    if (A == 0) return 0;
    double B = dot2(a, d), C = dot2(a, a) - r * r, disc = B * B - A * C;
    if (disc <= 0) return sector(a, b);
    double s = std::sqrt(disc), t1 = (-B - s) / A, t2 = (-B + s) / A;
    if (t2 <= 0 || t1 >= 1) return sector(a, b);
    t1 = std::max(t1, 0.0);
    t2 = std::min(t2, 1.0);
    P2 p1{a.x + t1 * d.x, a.y + t1 * d.y}, p2{a.x + t2 * d.x, a.y + t2 * d.y};
    return sector(a, p1) + 0.5 * cross2(p1, p2) + sector(p2, b);
}

double segmentDistance(P2 a, P2 b) {  // from the origin
    P2 d = minus(b, a);
    double L2 = dot2(d, d), t = L2 > 0 ? std::clamp(-dot2(a, d) / L2, 0.0, 1.0) : 0.0;
    P2 q{a.x + t * d.x, a.y + t * d.y};
    return std::sqrt(dot2(q, q));
}

double distanceFromOrigin(const P2 v[3]) {  // 0 inside the triangle
    double s0 = cross2(minus(v[1], v[0]), minus(P2{0, 0}, v[0]));
    double s1 = cross2(minus(v[2], v[1]), minus(P2{0, 0}, v[1]));
    double s2 = cross2(minus(v[0], v[2]), minus(P2{0, 0}, v[2]));
    if ((s0 >= 0 && s1 >= 0 && s2 >= 0) || (s0 <= 0 && s1 <= 0 && s2 <= 0)) return 0;
    return std::min({segmentDistance(v[0], v[1]), segmentDistance(v[1], v[2]), segmentDistance(v[2], v[0])});
}

// Whether two triangles overlap by more than eps (touching along an edge or at a vertex does not
// count): no edge normal of either separates them.
bool overlap(const P2 a[3], const P2 b[3], double eps) {
    for (const P2* t : {a, b})
        for (int k = 0; k < 3; ++k) {
            P2 e = minus(t[(k + 1) % 3], t[k]);
            double L = std::sqrt(dot2(e, e));
            if (!(L > 0)) continue;
            P2 n{-e.y / L, e.x / L};
            double lo[2] = {1e300, 1e300}, hi[2] = {-1e300, -1e300};
            for (int i = 0; i < 3; ++i) {
                double pa = dot2(a[i], n), pb = dot2(b[i], n);
                lo[0] = std::min(lo[0], pa), hi[0] = std::max(hi[0], pa);
                lo[1] = std::min(lo[1], pb), hi[1] = std::max(hi[1], pb);
            }
            if (hi[0] <= lo[1] + eps || hi[1] <= lo[0] + eps) return false;
        }
    return true;
}

struct Entering {
    uint32_t face;
    P2 v[3];
    double minX, maxX, minY, maxY;
};

// Throws when one entering face shadows another (sweep over the faces sorted by their x extent).
void checkSingleEntry(std::vector<Entering>& fs, double eps, const std::string& what) {
    std::sort(fs.begin(), fs.end(), [](const Entering& a, const Entering& b) { return a.minX < b.minX; });
    for (size_t i = 0; i < fs.size(); ++i)
        for (size_t j = i + 1; j < fs.size() && fs[j].minX < fs[i].maxX; ++j) {
            if (fs[j].minY >= fs[i].maxY || fs[i].minY >= fs[j].maxY) continue;
            if (overlap(fs[i].v, fs[j].v, eps))
                throw ModelError(what + ": its beam meets the mesh surface more than once (boundary faces " +
                                 std::to_string(fs[i].face) + " and " + std::to_string(fs[j].face) +
                                 " lie one behind the other); a disk beam must light a surface that faces it");
        }
}

}  // namespace

double triangleDiskArea(const double p[2], const double q[2], const double s[2], double r) {
    P2 a{p[0], p[1]}, b{q[0], q[1]}, c{s[0], s[1]};
    return std::fabs(wedge(a, b, r) + wedge(b, c, r) + wedge(c, a, r));
}

DiskBeamPlan planDiskBeam(const TetraMesh& mesh, const Point3& centre, const Point3& u, double r,
                          const std::string& what) {
    if (uint32_t t = mesh.locate(centre))
        throw ModelError(what + ": its centre lies in tissue (tetra " + std::to_string(t) +
                         "); a disk beam starts outside the tissue, in front of the surface it lights");
    Point3 helper = std::fabs(u[0]) < 0.9 ? Point3{1, 0, 0} : Point3{0, 1, 0};
    Point3 e1 = crossP(u, helper);
    double L = normP(e1);
    e1 = {e1[0] / L, e1[1] / L, e1[2] / L};
    Point3 e2 = crossP(u, e1);
    auto span = mesh.bounds();
    const double tol = 1e-6 * normP(sub(span[1], span[0]));
    auto project = [&](const Point3& p) {
        Point3 d = sub(p, centre);
        return P2{dotP(d, e1), dotP(d, e2)};
    };
    DiskBeamPlan plan;
    plan.diskArea = M_PI * r * r;
    std::vector<Entering> entering;
    for (uint32_t f : mesh.boundaryFaces()) {
        const MeshFace& F = mesh.face(f);
        Entering E{f, {}, 1e300, -1e300, 1e300, -1e300};
        double lo = 1e300, hi = -1e300;
        for (int k = 0; k < 3; ++k) {
            const Point3& p = mesh.point(F.points[k]);
            E.v[k] = project(p);
            double along = dotP(sub(p, centre), u);
            lo = std::min(lo, along), hi = std::max(hi, along);
            E.minX = std::min(E.minX, E.v[k].x), E.maxX = std::max(E.maxX, E.v[k].x);
            E.minY = std::min(E.minY, E.v[k].y), E.maxY = std::max(E.maxY, E.v[k].y);
        }
        if (hi < -tol || distanceFromOrigin(E.v) >= r) continue;  // behind the disk, or beside the beam
        if (lo < -tol)
            throw ModelError(what + ": its plane cuts the tissue (boundary face " + std::to_string(f) +
                             " crosses it within the beam); a disk beam starts outside the tissue, in front "
                             "of the surface it lights");
        if (dotP(F.normal, u) < 0) entering.push_back(E);  // the beam enters the tissue here
    }
    checkSingleEntry(entering, 1e-6 * r, what);
    const double maxShadow = plan.diskArea / 64;
    for (const Entering& E : entering) {
        const MeshFace& F = mesh.face(E.face);
        // Halve a piece's edges until it is small against the disk, keeping only what the beam lights.
        std::function<void(Point3, Point3, Point3, int)> cut = [&](Point3 a, Point3 b, Point3 c, int depth) {
            P2 v[3] = {project(a), project(b), project(c)};
            if (distanceFromOrigin(v) >= r) return;
            double shadow = 0.5 * std::fabs(cross2(minus(v[1], v[0]), minus(v[2], v[0])));
            if (shadow > maxShadow && depth < 12) {
                auto mid = [](const Point3& p, const Point3& q) {
                    return Point3{0.5 * (p[0] + q[0]), 0.5 * (p[1] + q[1]), 0.5 * (p[2] + q[2])};
                };
                Point3 ab = mid(a, b), bc = mid(b, c), ca = mid(c, a);
                cut(a, ab, ca, depth + 1), cut(ab, b, bc, depth + 1), cut(ca, bc, c, depth + 1), cut(ab, bc, ca, depth + 1);
                return;
            }
            double pv[3][2] = {{v[0].x, v[0].y}, {v[1].x, v[1].y}, {v[2].x, v[2].y}};
            double lit = triangleDiskArea(pv[0], pv[1], pv[2], r);
            if (lit > 1e-12 * plan.diskArea) {
                plan.pieces.push_back({E.face, a, b, c, shadow, lit});
                plan.litArea += lit;
            }
        };
        cut(mesh.point(F.points[0]), mesh.point(F.points[1]), mesh.point(F.points[2]), 0);
    }
    return plan;
}

}  // namespace fm
