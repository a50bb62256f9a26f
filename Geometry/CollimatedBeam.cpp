// SPDX-License-Identifier: GPL-3.0-or-later
#include "Geometry/CollimatedBeam.hpp"

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
                                 " lie one behind the other); a collimated beam must light a surface that faces it");
        }
}

Point3 add(const Point3& a, const Point3& b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }

double polygonArea(const std::vector<P2>& p) {  // signed, positive counter-clockwise
    double a = 0;
    for (size_t i = 0; i < p.size(); ++i) a += cross2(p[i], p[(i + 1) % p.size()]);
    return 0.5 * a;
}

// The part of `poly` inside the convex counter-clockwise polygon `clip` (Sutherland-Hodgman).
std::vector<P2> clipConvex(std::vector<P2> poly, const std::vector<P2>& clip) {
    for (size_t k = 0; k < clip.size() && !poly.empty(); ++k) {
        P2 A = clip[k], B = clip[(k + 1) % clip.size()], e = minus(B, A);
        std::vector<P2> out;
        for (size_t i = 0; i < poly.size(); ++i) {
            P2 P = poly[i], Q = poly[(i + 1) % poly.size()];
            double sp = cross2(e, minus(P, A)), sq = cross2(e, minus(Q, A));
            if (sp >= 0) out.push_back(P);
            if ((sp >= 0) != (sq >= 0)) {
                double t = sp / (sp - sq);
                out.push_back({P.x + t * (Q.x - P.x), P.y + t * (Q.y - P.y)});
            }
        }
        poly = std::move(out);
    }
    return poly;
}

// The beam's frame: coordinates across it (e1, e2) and the distance along u from the source
// surface (through `origin`, normal n) to a point.
struct Frame {
    Point3 origin, u, n, e1, e2;
    double un;
    Frame(const Point3& o, const Point3& dir, const Point3& normal) : origin(o), u(dir), n(normal) {
        Point3 helper = std::fabs(u[0]) < 0.9 ? Point3{1, 0, 0} : Point3{0, 1, 0};
        e1 = crossP(u, helper);
        double L = normP(e1);
        e1 = {e1[0] / L, e1[1] / L, e1[2] / L};
        e2 = crossP(u, e1);
        un = dotP(u, n);
    }
    P2 across(const Point3& p) const {
        Point3 d = sub(p, origin);
        return {dotP(d, e1), dotP(d, e2)};
    }
    double along(const Point3& p) const { return dotP(sub(p, origin), n) / un; }
    // The point of the face plane (through a, normal nf) on the beam line through q.
    Point3 onFace(P2 q, const Point3& a, const Point3& nf) const {
        Point3 s{origin[0] + q.x * e1[0] + q.y * e2[0], origin[1] + q.x * e1[1] + q.y * e2[1],
                 origin[2] + q.x * e1[2] + q.y * e2[2]};
        double t = dotP(sub(a, s), nf) / dotP(u, nf);
        return {s[0] + t * u[0], s[1] + t * u[1], s[2] + t * u[2]};
    }
};

// The boundary faces the beam enters through: those it meets (`meets`, on the face's shadow)
// in front of the source surface and facing it. Throws when the source lies in tissue (its
// reference point `inside`), when a face within the beam crosses the source surface, or when
// one face shadows another.
std::vector<Entering> enteringFaces(const TetraMesh& mesh, const Frame& F, const Point3& inside,
                                    const std::function<bool(const P2*)>& meets, double eps, const std::string& what) {
    auto span = mesh.bounds();
    const double tol = 1e-6 * normP(sub(span[1], span[0]));
    // Just behind the source along the beam: a source on the tissue's surface, facing it, is outside.
    const Point3 behind{inside[0] - tol * F.u[0], inside[1] - tol * F.u[1], inside[2] - tol * F.u[2]};
    if (uint32_t t = mesh.locate(behind))
        throw ModelError(what + ": its centre lies in tissue (tetra " + std::to_string(t) +
                         "); a collimated beam starts outside the tissue, in front of the surface it lights");
    std::vector<Entering> entering;
    for (uint32_t f : mesh.boundaryFaces()) {
        const MeshFace& M = mesh.face(f);
        Entering E{f, {}, 1e300, -1e300, 1e300, -1e300};
        double lo = 1e300, hi = -1e300;
        for (int k = 0; k < 3; ++k) {
            const Point3& p = mesh.point(M.points[k]);
            E.v[k] = F.across(p);
            lo = std::min(lo, F.along(p)), hi = std::max(hi, F.along(p));
            E.minX = std::min(E.minX, E.v[k].x), E.maxX = std::max(E.maxX, E.v[k].x);
            E.minY = std::min(E.minY, E.v[k].y), E.maxY = std::max(E.maxY, E.v[k].y);
        }
        if (hi < -tol || !meets(E.v)) continue;  // behind the source, or beside the beam
        if (lo < -tol)
            throw ModelError(what + ": its plane cuts the tissue (boundary face " + std::to_string(f) +
                             " crosses it within the beam); a collimated beam starts outside the tissue, in front "
                             "of the surface it lights");
        if (dotP(M.normal, F.u) < 0) entering.push_back(E);  // the beam enters the tissue here
    }
    checkSingleEntry(entering, eps, what);
    return entering;
}

}  // namespace

double triangleDiskArea(const double p[2], const double q[2], const double s[2], double r) {
    P2 a{p[0], p[1]}, b{q[0], q[1]}, c{s[0], s[1]};
    return std::fabs(wedge(a, b, r) + wedge(b, c, r) + wedge(c, a, r));
}

BeamPlan planDiskBeam(const TetraMesh& mesh, const Point3& centre, const Point3& u, double r,
                      const std::string& what) {
    const Frame F(centre, u, u);
    BeamPlan plan;
    plan.beamArea = M_PI * r * r;
    auto meets = [r](const P2* v) { return distanceFromOrigin(v) < r; };
    const double maxShadow = plan.beamArea / 64;
    for (const Entering& E : enteringFaces(mesh, F, centre, meets, 1e-6 * r, what)) {
        const MeshFace& M = mesh.face(E.face);
        // Halve a piece's edges until it is small against the disk, keeping only what the beam lights.
        std::function<void(Point3, Point3, Point3, int)> cut = [&](Point3 a, Point3 b, Point3 c, int depth) {
            P2 v[3] = {F.across(a), F.across(b), F.across(c)};
            if (!meets(v)) return;
            double shadow = 0.5 * std::fabs(cross2(minus(v[1], v[0]), minus(v[2], v[0])));
            if (shadow > maxShadow && depth < 24) {
                auto mid = [](const Point3& p, const Point3& q) {
                    return Point3{0.5 * (p[0] + q[0]), 0.5 * (p[1] + q[1]), 0.5 * (p[2] + q[2])};
                };
                Point3 ab = mid(a, b), bc = mid(b, c), ca = mid(c, a);
                cut(a, ab, ca, depth + 1), cut(ab, b, bc, depth + 1), cut(ca, bc, c, depth + 1), cut(ab, bc, ca, depth + 1);
                return;
            }
            double pv[3][2] = {{v[0].x, v[0].y}, {v[1].x, v[1].y}, {v[2].x, v[2].y}};
            double lit = triangleDiskArea(pv[0], pv[1], pv[2], r);
            if (lit > 1e-12 * plan.beamArea) {
                plan.pieces.push_back({E.face, a, b, c, shadow, lit});
                plan.litArea += lit;
            }
        };
        cut(mesh.point(M.points[0]), mesh.point(M.points[1]), mesh.point(M.points[2]), 0);
    }
    return plan;
}

BeamPlan planParallelogramBeam(const TetraMesh& mesh, const Point3& corner, const Point3& side1,
                               const Point3& side2, const Point3& u, const std::string& what) {
    Point3 n = crossP(side1, side2);
    double area = normP(n);
    if (!(area > 0)) throw ModelError(what + ": its sides are parallel or zero (no area)");
    n = {n[0] / area, n[1] / area, n[2] / area};
    if (std::fabs(dotP(n, u)) < 1e-9) throw ModelError(what + ": its direction lies in its plane");
    const Frame F(corner, u, n);
    std::vector<P2> quad = {F.across(corner), F.across(add(corner, side1)), F.across(add(add(corner, side1), side2)),
                            F.across(add(corner, side2))};
    if (polygonArea(quad) < 0) std::reverse(quad.begin(), quad.end());
    BeamPlan plan;
    plan.beamArea = polygonArea(quad);
    const double tiny = 1e-12 * plan.beamArea;
    auto meets = [&](const P2* v) {
        std::vector<P2> t(v, v + 3);
        if (polygonArea(t) < 0) std::reverse(t.begin(), t.end());
        return polygonArea(clipConvex(t, quad)) > tiny;
    };
    const Point3 mid{corner[0] + 0.5 * (side1[0] + side2[0]), corner[1] + 0.5 * (side1[1] + side2[1]),
                     corner[2] + 0.5 * (side1[2] + side2[2])};
    for (const Entering& E : enteringFaces(mesh, F, mid, meets, 1e-6 * std::sqrt(plan.beamArea), what)) {
        const MeshFace& M = mesh.face(E.face);
        std::vector<P2> t(E.v, E.v + 3);
        if (polygonArea(t) < 0) std::reverse(t.begin(), t.end());
        std::vector<P2> lit = clipConvex(t, quad);
        const Point3& a = mesh.point(M.points[0]);
        for (size_t k = 1; k + 1 < lit.size(); ++k) {  // a fan of the clipped polygon, on the face
            double sh = polygonArea({lit[0], lit[k], lit[k + 1]});
            if (!(sh > tiny)) continue;
            plan.pieces.push_back({E.face, F.onFace(lit[0], a, M.normal), F.onFace(lit[k], a, M.normal),
                                   F.onFace(lit[k + 1], a, M.normal), sh, sh});
            plan.litArea += sh;
        }
    }
    return plan;
}

}  // namespace fm
