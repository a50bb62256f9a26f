// SPDX-License-Identifier: GPL-3.0-or-later
#include "Geometry/SourceCompiler.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "Common/Errors.hpp"
#include "Geometry/CollimatedBeam.hpp"
#include "Geometry/SourceCoverage.hpp"

namespace fm {
namespace {

Vec3 toV(const Point3& p) { return Vec3{float(p[0]), float(p[1]), float(p[2])}; }
void put(float* dst, const Point3& p) { for (int k = 0; k < 3; ++k) dst[k] = float(p[k]); }

std::string str(const Point3& p) {
    std::ostringstream o;
    o << "(" << p[0] << " " << p[1] << " " << p[2] << ")";
    return o.str();
}

std::string num(double x) {
    std::ostringstream o;
    o << x;
    return o.str();
}

Point3 unit(const Point3& d, const std::string& what) {
    double L = normP(d);
    if (!(L > 0) || !std::isfinite(L)) throw ModelError(what + ": direction " + str(d) + " is not a usable vector");
    return {d[0] / L, d[1] / L, d[2] / L};
}

void checkFinite(const Point3& p, const std::string& what) {
    for (double c : p)
        if (!(std::fabs(c) <= kMaxCoordinate))  // also rejects NaN and inf
            throw ModelError(what + ": coordinate " + str(p) + " is not finite or beyond +-1e15");
}

// Appends the cumulative fractions of weights w (finite, >= 0) to cdf, ending at exactly 1;
// false when they sum to zero. Weights are scaled by the largest first, so weights near DBL_MAX
// sum without overflow.
bool appendCdf(const std::vector<double>& w, std::vector<double>& cdf) {
    double largest = 0;
    for (double x : w) largest = std::max(largest, x);
    if (!(largest > 0)) return false;
    double total = 0;
    for (double x : w) total += x / largest;
    double acc = 0;
    for (double x : w) {
        acc += x / largest;
        cdf.push_back(acc / total);
    }
    cdf.back() = 1.0;
    return true;
}

struct Builder {
    const TetraMesh& mesh;
    const MaterialSet& mats;
    KernelInput& out;
    std::vector<double> power;  // per emitter, before normalisation

    EmitterRecord& add(EmitterType type, double p) {
        EmitterRecord e{};
        e.type = type;
        e.weight = 1.f;
        e.cosMax = 1.f;
        e.dir = Vec3{0, 0, 1};
        out.emitters.push_back(e);
        power.push_back(p);
        return out.emitters.back();
    }
    // Close a run of pieces [first, end) with weights w, as the range of emitter e.
    void closePieces(EmitterRecord& e, size_t first, const std::vector<double>& w, const std::string& what) {
        if (!appendCdf(w, out.pieceCdf)) throw ModelError(what + " does not overlap the mesh (nothing to emit from)");
        e.first = uint32_t(first);
        e.count = uint32_t(w.size());
    }
    Piece tetraPiece(uint32_t t) const {
        Piece p{};
        const auto& T = mesh.tetra(t);
        put(p.a, mesh.point(T[0]));
        put(p.b, mesh.point(T[1]));
        put(p.c, mesh.point(T[2]));
        put(p.d, mesh.point(T[3]));
        p.tetra = t;
        return p;
    }
    uint32_t locateOrThrow(const Point3& p, uint32_t hint, const std::string& what) {
        checkFinite(p, what);
        if (hint && hint <= mesh.tetraCount() && mesh.contains(hint, p)) return hint;
        uint32_t t = mesh.locate(p);
        if (!t) throw ModelError(what + ": position " + str(p) + " is outside the mesh");
        if (hint)
            warn(what + " at " + str(p) + ": its element hint " + std::to_string(hint) +
                 (hint > mesh.tetraCount() ? " does not exist (tetras 1.." + std::to_string(mesh.tetraCount()) + ")"
                                           : " does not contain it") +
                 "; located by its position instead (tetra " + std::to_string(t) + ")");
        return t;
    }
    double tetraDistance2(uint32_t t, const Point3& c) const {  // to the tetra's bounding box
        double d2 = 0;
        for (int k = 0; k < 3; ++k) {
            double lo = 1e300, hi = -1e300;
            for (uint32_t v : mesh.tetra(t)) {
                lo = std::min(lo, mesh.point(v)[k]);
                hi = std::max(hi, mesh.point(v)[k]);
            }
            double e = c[k] < lo ? lo - c[k] : (c[k] > hi ? c[k] - hi : 0);
            d2 += e * e;
        }
        return d2;
    }
    // Tetras whose bounding box comes within r of the point c, or of the segment a-b.
    void volumePieces(EmitterRecord& e, const std::vector<uint32_t>& tetras, const std::string& what) {
        size_t first = out.pieces.size();
        std::vector<double> w;
        for (uint32_t t : tetras) {
            out.pieces.push_back(tetraPiece(t));
            w.push_back(mesh.volume(t));
        }
        closePieces(e, first, w, what);
    }
    void warn(const std::string& w) { out.warnings.push_back(w); }
    // A ball or cylinder emitter (kEmitVolume with its shape's rejection) draws its points in the
    // shape itself (EmitterRecord::inShape) where its tetras would reject most of theirs: when
    // the shape's part inside the mesh is less than half the tetras' volume, and one of the
    // candidate walk starts (a point on the axis and its distance from e.pos) lies inside the
    // mesh.
    void preferShape(EmitterRecord& e, double shapeVolume, const Coverage& c, const std::vector<uint32_t>& tetras,
                     const std::vector<std::pair<Point3, double>>& starts) {
        double tetraVolume = 0;
        for (uint32_t t : tetras) tetraVolume += mesh.volume(t);
        if (!(shapeVolume * (1 - c.outside - c.lost) < 0.5 * tetraVolume)) return;
        for (const auto& [from, s] : starts) {
            const uint32_t t = mesh.locate(from);
            if (!t) continue;
            e.inShape = 1;
            e.walkFrom = float(s);
            e.tetra = t;
            return;
        }
    }
    // Warns about the part of an emitter outside the mesh; throws when all of it is.
    void checkCoverage(const Coverage& c, const std::string& what) {
        if (c.outside + c.lost >= 1)
            throw ModelError(what + " lies entirely outside the mesh (none of " + std::to_string(c.samples) +
                             " points sampled on it is inside)");
        if (c.outside > 0)
            warn(what + ": " + percentOutside(c.outside, c.samples) +
                 " of it lies outside the mesh; nothing is emitted there and the part inside emits the "
                 "source's full power");
        if (c.lost > 0)
            warn(what + ": " + percentOutside(c.lost, c.samples) +
                 " of its surface lies outside the mesh around an axis inside it; packets launched there are "
                 "lost (booked abnormal)");
    }
    // Clip segment a->b to every tetra it passes through: pieces weighted by length. Warns
    // about the fraction of the segment outside the mesh.
    void segmentPieces(EmitterRecord& e, const Point3& a, const Point3& b, const std::string& what) {
        Point3 d = sub(b, a);
        size_t first = out.pieces.size();
        std::vector<double> w;
        std::vector<std::pair<double, double>> spans;  // each piece's [t0, t1] along the segment
        for (uint32_t t = 1; t <= mesh.tetraCount(); ++t) {
            double t0 = 0, t1 = 1;
            for (int i = 0; i < 4 && t0 < t1; ++i) {
                const MeshFace& F = mesh.face(mesh.tetraFace(t, i) & 0x7fffffffu);
                double sgn = (mesh.tetraFace(t, i) & 0x80000000u) ? -1.0 : 1.0;
                Point3 n{sgn * F.normal[0], sgn * F.normal[1], sgn * F.normal[2]};
                double h = dotP(n, sub(mesh.point(F.points[0]), a));  // >= 0 inside at a
                double dn = dotP(n, d);
                if (std::fabs(dn) < 1e-300) {
                    if (h < 0) t1 = -1;
                } else if (dn > 0) {
                    t1 = std::min(t1, h / dn);
                } else {
                    t0 = std::max(t0, h / dn);
                }
            }
            if (t1 - t0 > 1e-12) {
                Piece p{};
                put(p.a, {a[0] + t0 * d[0], a[1] + t0 * d[1], a[2] + t0 * d[2]});
                put(p.b, {a[0] + t1 * d[0], a[1] + t1 * d[1], a[2] + t1 * d[2]});
                p.tetra = t;
                out.pieces.push_back(p);
                w.push_back((t1 - t0) * normP(d));
                spans.emplace_back(t0, t1);
            }
        }
        closePieces(e, first, w, what);
        // The part inside is the union of the spans: a segment along an edge or a face lies in
        // every tetra around it (their pieces overlap).
        std::sort(spans.begin(), spans.end());
        double inside = 0, reach = 0;
        for (const auto& [t0, t1] : spans) {
            if (t1 > reach) inside += t1 - std::max(t0, reach), reach = t1;
        }
        double outside = 1 - inside;
        if (outside > 1e-9)
            warn(what + " from " + str(a) + " to " + str(b) + ": " + percentOutside(outside, 0) +
                 " of its length lies outside the mesh; nothing is emitted there and the part inside emits the "
                 "source's full power");
    }
    std::vector<uint32_t> tetrasNear(const Point3& a, const Point3& b, double r) const {
        Point3 d = sub(b, a);
        double L2 = dotP(d, d);
        std::vector<uint32_t> ts;
        for (uint32_t t = 1; t <= mesh.tetraCount(); ++t) {
            // distance from the tetra's centroid to the segment, minus its circumradius bound
            Point3 c{0, 0, 0};
            for (uint32_t v : mesh.tetra(t))
                for (int k = 0; k < 3; ++k) c[k] += 0.25 * mesh.point(v)[k];
            double rad = 0;
            for (uint32_t v : mesh.tetra(t)) rad = std::max(rad, normP(sub(mesh.point(v), c)));
            double s = L2 > 0 ? std::max(0.0, std::min(1.0, dotP(sub(c, a), d) / L2)) : 0.0;
            Point3 q{a[0] + s * d[0], a[1] + s * d[1], a[2] + s * d[2]};
            if (normP(sub(c, q)) <= r + rad) ts.push_back(t);
        }
        return ts;
    }

    uint32_t findBoundaryFace(std::array<uint32_t, 3> tri) const {
        std::sort(tri.begin(), tri.end());
        for (uint32_t f : mesh.boundaryFaces()) {
            auto k = mesh.face(f).points;
            std::sort(k.begin(), k.end());
            if (k == tri) return f;
        }
        throw ModelError("Surface source: points " + std::to_string(tri[0]) + " " + std::to_string(tri[1]) +
                         " " + std::to_string(tri[2]) + " are not a boundary face of the mesh");
    }
    static constexpr int kMaxCompositeDepth = 256;
    void compile(const Source& s, double scale, int depth = 0);
    void point(const PointSource& s, double p);
    void pencil(const PencilBeamSource& s, double p);
    void fiber(const FiberSource& s, double p);
    void surface(const SurfaceSource& s, double p);
    void cylinder(const CylinderSource& s, double p);
    void disk(const DiskSource& s, double p);
    void planar(const PlanarSource& s, double p);
    EmitterRecord& beam(const BeamPlan& plan, const Point3& u, bool specularAtEntry, double p, const std::string& what);
};

// Where a beam along d from p enters the tissue: returns false when p is strictly inside.
// With `fresnel` false the beam enters as through a matched boundary: no specular reflection, no
// refraction (a matched exterior, or FullMonte 2018's pencil beams and fibres).
struct Entry {
    uint32_t tetra;
    Point3 pos, dir;
    float weight;
};

void warnAbout(const Builder& B, const std::string& w) { B.out.warnings.push_back(w); }

Entry enterMesh(const Builder& B, const Point3& p, const Point3& d, uint32_t hint, bool fresnel,
                const std::string& what) {
    auto hit = rayEntry(B.mesh, p, d);
    uint32_t inside = B.mesh.locate(p);
    if (hint && hint <= B.mesh.tetraCount() && B.mesh.contains(hint, p)) inside = hint;
    else if (hint > B.mesh.tetraCount())  // a beam from outside has no tetra at its start: only a missing one is wrong
        warnAbout(B, what + " at " + str(p) + ": its element hint " + std::to_string(hint) + " does not exist (tetras 1.." +
                         std::to_string(B.mesh.tetraCount()) + "); located by its position instead");
    auto span = B.mesh.bounds();
    double tol = 1e-6 * normP(sub(span[1], span[0]));
    if (inside && !(hit.first && std::fabs(hit.second) <= tol)) return Entry{inside, p, d, 1.f};
    if (!hit.first) throw ModelError(what + " at " + str(p) + " along " + str(d) + " misses the mesh");
    const MeshFace& F = B.mesh.face(hit.first);
    bool away = hit.second > tol;  // starting on the surface is the usual placement, not "outside"
    double n2 = B.mats.material(B.mesh.region(F.owner)).n;
    double n1 = fresnel && !B.mats.matchedBoundary ? B.mats.exterior().n : n2;
    double cosi = -dotP(F.normal, d);  // > 0: entering against the outward normal
    Point3 q{p[0] + hit.second * d[0], p[1] + hit.second * d[1], p[2] + hit.second * d[2]};
    float cost;
    float R = n1 == n2 ? 0.f : fresnelReflectance(float(n1), float(n2), float(cosi), cost);
    Point3 dir = d;
    if (n1 != n2) {
        Vec3 in = refract(toV(d), Vec3{-float(F.normal[0]), -float(F.normal[1]), -float(F.normal[2])},
                          float(n1), float(n2), float(cosi), cost);
        dir = {in.x, in.y, in.z};
    }
    if (away) {
        std::ostringstream o;
        o << what << " at " << str(p) << " is outside the mesh: it travels " << hit.second
          << " mm (mesh units) unattenuated and enters at " << str(q) << " (boundary face " << hit.first
          << "), where " << 100 * R << "% of its power is reflected (booked as specular)";
        warnAbout(B, o.str());
    }
    return Entry{F.owner, q, dir, 1.f - R};
}

// A point on a face, edge or vertex belongs to the lowest-numbered tetra containing it (the
// element hint, when it contains the point, wins): TetraMesh::locate's rule.
void Builder::point(const PointSource& s, double p) {
    auto& e = add(kEmitPoint, p);
    e.tetra = locateOrThrow(s.position, s.elementHint, "Point source");
    if (onMeshBoundary(mesh, e.tetra, s.position)) {
        std::ostringstream o;
        o.precision(2);
        o << 100.0 * surfaceLeavingShare(mesh, s.position, e.tetra);
        warn("Point source at " + str(s.position) + " lies on the mesh surface (tetra " + std::to_string(e.tetra) +
             "): about " + o.str() + "% of its light leaves the mesh at once");
    }
    e.pos = toV(s.position);
    e.mode = kDirIsotropic;
}

void Builder::pencil(const PencilBeamSource& s, double p) {
    checkFinite(s.position, "PencilBeam source");
    Entry en = enterMesh(*this, s.position, unit(s.direction, "PencilBeam source"), s.elementHint,
                         s.specularAtEntry, "PencilBeam source");
    auto& e = add(kEmitPencil, p);
    e.tetra = en.tetra;
    e.pos = toV(en.pos);
    e.dir = toV(en.dir);
    e.weight = en.weight;
}

void Builder::fiber(const FiberSource& s, double p) {
    checkFinite(s.position, "Fiber source");
    Entry en = enterMesh(*this, s.position, unit(s.direction, "Fiber source"), 0, s.specularAtEntry,
                         "Fiber source");
    double n = mats.material(mesh.region(en.tetra)).n;
    double sinMax = s.numericalAperture / n;
    if (!(s.numericalAperture > 0) || sinMax > 1)
        throw ModelError("Fiber source: numerical aperture " + std::to_string(s.numericalAperture) +
                         " must be in (0, n] with n = " + std::to_string(n));
    auto& e = add(kEmitPoint, p);
    e.tetra = en.tetra;
    e.pos = toV(en.pos);
    e.dir = toV(en.dir);
    e.weight = en.weight;
    e.mode = kDirCone;
    e.cosMax = float(std::sqrt(1 - sinMax * sinMax));
}

void Builder::surface(const SurfaceSource& s, double p) {
    std::vector<std::pair<uint32_t, uint32_t>> faces;  // (face, tetra on the emitting side)
    std::vector<uint32_t> ids = s.faces;
    for (auto tri : s.triangles) ids.push_back(findBoundaryFace(tri));
    if (!ids.empty()) {
        for (uint32_t f : ids) {
            if (f == 0 || f > mesh.faceCount())
                throw ModelError("Surface source: face " + std::to_string(f) + " does not exist (1.." +
                                 std::to_string(mesh.faceCount()) + ")");
            if (mesh.face(f).other)
                throw ModelError("Surface source: face " + std::to_string(f) + " is not a boundary face");
            faces.push_back({f, mesh.face(f).owner});
        }
    }
    for (auto [f, t] : s.sides) {
        if (f == 0 || f > mesh.faceCount())
            throw ModelError("Surface source: face " + std::to_string(f) + " does not exist (1.." +
                             std::to_string(mesh.faceCount()) + ")");
        const MeshFace& F = mesh.face(f);
        if (t == 0 || (t != F.owner && t != F.other))
            throw ModelError("Surface source: tetra " + std::to_string(t) + " is not on either side of face " +
                             std::to_string(f));
        faces.push_back({f, t});
    }
    if (ids.empty() && s.sides.empty()) {
        faces = mesh.regionBoundary(s.region);
        if (faces.empty()) throw ModelError("Surface source: region " + std::to_string(s.region) + " has no boundary faces");
    }
    auto& e = add(kEmitFaces, p);
    e.mode = s.emission == SurfaceSource::Normal ? kDirNormal
             : s.emission == SurfaceSource::Lambert ? kDirLambert
             : s.emission == SurfaceSource::Cone ? kDirCone : kDirHemisphere;
    if (s.emission == SurfaceSource::Cone) {
        // One cone for the emitter: every face must emit into tissue of the same index.
        double n = mats.material(mesh.region(faces.front().second)).n;
        for (auto [f, t] : faces)
            if (mats.material(mesh.region(t)).n != n)
                throw ModelError("Surface source: a numerical-aperture (CUSTOM) emission needs one refractive index "
                                 "on the emitting side; face " + std::to_string(f) + " emits into n = " +
                                 std::to_string(mats.material(mesh.region(t)).n) + ", others into n = " +
                                 std::to_string(n));
        double sinMax = s.numericalAperture / n;
        if (!(s.numericalAperture > 0) || sinMax > 1)
            throw ModelError("Surface source: numerical aperture " + std::to_string(s.numericalAperture) +
                             " must be in (0, n] with n = " + std::to_string(n));
        e.cosMax = float(std::sqrt(1 - sinMax * sinMax));
    }
    size_t first = out.pieces.size();
    std::vector<double> w;
    for (auto [f, t] : faces) {
        const MeshFace& F = mesh.face(f);
        Piece pc{};
        for (int k = 0; k < 3; ++k) {
            put(k == 0 ? pc.a : k == 1 ? pc.b : pc.c, mesh.point(F.points[k]));
        }
        double sgn = (t == F.owner) ? -1.0 : 1.0;  // inward = against the owner's outward normal
        put(pc.d, {sgn * F.normal[0], sgn * F.normal[1], sgn * F.normal[2]});
        pc.tetra = t;
        out.pieces.push_back(pc);
        w.push_back(F.area);
    }
    closePieces(e, first, w, "Surface source");
}

void Builder::cylinder(const CylinderSource& s, double p) {
    checkFinite(s.endpoint[0], "Cylinder source");
    checkFinite(s.endpoint[1], "Cylinder source");
    Point3 axis = sub(s.endpoint[1], s.endpoint[0]);
    Point3 u = unit(axis, "Cylinder source (endpoints coincide)");
    if (!(s.radius >= 0) || !std::isfinite(s.radius))
        throw ModelError("Cylinder source: radius must be >= 0, got " + std::to_string(s.radius));
    if (s.emitVolume && s.radius > 0) {
        auto& e = add(kEmitVolume, p);
        e.reject = kRejectCylinder;
        e.pos = toV(s.endpoint[0]);
        e.dir = toV(u);
        e.radius = float(s.radius);
        e.length = float(normP(axis));
        const Coverage cov = cylinderVolumeCoverage(mesh, s.endpoint[0], s.endpoint[1], s.radius);
        checkCoverage(cov, "Cylinder source (volume) from " + str(s.endpoint[0]) + " to " + str(s.endpoint[1]));
        const std::vector<uint32_t> near = tetrasNear(s.endpoint[0], s.endpoint[1], s.radius);
        volumePieces(e, near, "Cylinder source");
        const double length = normP(axis);
        const Point3 mid{0.5 * (s.endpoint[0][0] + s.endpoint[1][0]), 0.5 * (s.endpoint[0][1] + s.endpoint[1][1]),
                         0.5 * (s.endpoint[0][2] + s.endpoint[1][2])};
        preferShape(out.emitters.back(), M_PI * s.radius * s.radius * length, cov, near,
                    {{mid, 0.5 * length}, {s.endpoint[0], 0.0}, {s.endpoint[1], length}});
        return;
    }
    if (s.radius > 0) {
        Coverage c = cylinderSurfaceCoverage(mesh, s.endpoint[0], s.endpoint[1], s.radius);
        if (c.outside + c.lost < 1) c.outside = 0;  // the axis outside is reported exactly below
        checkCoverage(c, "Cylinder source (surface) from " + str(s.endpoint[0]) + " to " + str(s.endpoint[1]));
    }
    auto& e = add(s.radius > 0 ? kEmitCylinderSurface : kEmitLine, p);
    e.dir = toV(u);
    e.radius = float(s.radius);
    if (!s.emitHemiSphere) e.mode = kDirIsotropic;
    else if (s.hemiSphereEmitDistribution == CylinderSource::Lambert) e.mode = kDirLambert;
    else if (s.hemiSphereEmitDistribution == CylinderSource::Custom) {
        e.mode = kDirCone;
        double sn = s.numericalAperture;
        if (!(sn > 0 && sn <= 1)) throw ModelError("Cylinder source: numericalAperture must be in (0,1]");
        e.cosMax = float(std::sqrt(1 - sn * sn));
    } else e.mode = kDirHemisphere;
    if (s.radius == 0 && e.mode != kDirIsotropic) e.mode = kDirPerpendicular;
    segmentPieces(e, s.endpoint[0], s.endpoint[1], "Cylinder source axis");
}

// A collimated beam: pieces of the lit surface, drawn by shadow area times the face's
// transmittance (a point of a piece is where a uniform point of the beam's cross-section enters),
// with the transmittances moved from weight into probability: the emitter's weight is their mean
// over the lit area, so each face receives its lit share times its transmittance.
EmitterRecord& Builder::beam(const BeamPlan& plan, const Point3& u, bool specularAtEntry, double p,
                             const std::string& what) {
    if (plan.pieces.empty()) throw ModelError(what + " along " + str(u) + " misses the mesh");
    auto& e = add(kEmitFaces, p);
    e.mode = kDirNormal;  // each piece's d is the refracted beam direction
    e.dir = toV(u);
    size_t first = out.pieces.size();
    std::vector<double> w;
    double litT = 0;
    for (const BeamPiece& pc : plan.pieces) {
        const MeshFace& F = mesh.face(pc.face);
        double n2 = mats.material(mesh.region(F.owner)).n;
        double n1 = specularAtEntry && !mats.matchedBoundary ? mats.exterior().n : n2;
        float cosi = float(-dotP(F.normal, u)), cost = cosi;
        float R = n1 == n2 ? 0.f : fresnelReflectance(float(n1), float(n2), cosi, cost);
        Vec3 dir = n1 == n2 ? toV(u)
                            : refract(toV(u), Vec3{-float(F.normal[0]), -float(F.normal[1]), -float(F.normal[2])},
                                      float(n1), float(n2), cosi, cost);
        Piece q{};
        put(q.a, pc.a), put(q.b, pc.b), put(q.c, pc.c);
        q.d[0] = dir.x, q.d[1] = dir.y, q.d[2] = dir.z;
        q.tetra = F.owner;
        out.pieces.push_back(q);
        w.push_back(pc.shadow * (1 - R));
        litT += pc.lit * (1 - R);
    }
    closePieces(e, first, w, what);
    e.weight = float(litT / plan.litArea);
    double missed = 1 - plan.litArea / plan.beamArea;
    if (missed > 1e-6)
        warn(what + ": " + percentOutside(missed, 0) + " of its beam misses the mesh; nothing is emitted there and "
             "the part that meets it emits the source's whole power");
    return e;
}

// The disk's pieces overhang it: points outside the beam's cylinder are drawn again.
void Builder::disk(const DiskSource& s, double p) {
    checkFinite(s.centre, "Disk source");
    const std::string what = "Disk source at " + str(s.centre) + " of radius " + num(s.radius);
    if (!(s.radius > 0) || !(s.radius <= kMaxCoordinate)) throw ModelError(what + ": radius must be > 0");
    const Point3 u = unit(s.direction, "Disk source");
    BeamPlan plan = planDiskBeam(mesh, s.centre, u, s.radius, what);
    EmitterRecord& e = beam(plan, u, s.specularAtEntry, p, what);
    const double margin = 1e-3 * s.radius;
    double far = 0;
    for (const BeamPiece& pc : plan.pieces)
        for (const Point3* v : {&pc.a, &pc.b, &pc.c}) far = std::max(far, dotP(sub(*v, s.centre), u));
    e.reject = kRejectCylinder;
    e.pos = toV({s.centre[0] - margin * u[0], s.centre[1] - margin * u[1], s.centre[2] - margin * u[2]});
    e.radius = float(s.radius);
    e.length = float(far + 2 * margin);
}

// The parallelogram's pieces are clipped to it exactly: nothing to reject.
void Builder::planar(const PlanarSource& s, double p) {
    for (const Point3* v : {&s.corner, &s.side1, &s.side2}) checkFinite(*v, "Planar source");
    const std::string what = "Planar source at " + str(s.corner) + " with sides " + str(s.side1) + " and " + str(s.side2);
    const Point3 u = unit(s.direction, "Planar source");
    beam(planParallelogramBeam(mesh, s.corner, s.side1, s.side2, u, what), u, s.specularAtEntry, p, what);
}

void Builder::compile(const Source& s, double scale, int depth) {
    double p = s.power * scale;
    if (!(s.power >= 0) || !std::isfinite(s.power))
        throw ModelError(s.typeName() + " source: power must be >= 0, got " + std::to_string(s.power));
    if (auto c = dynamic_cast<const CompositeSource*>(&s)) {
        if (c->elements.empty()) throw ModelError("Composite source has no elements");
        // Bounds the recursion: a cycle (or absurd nesting) is an error, not a stack overflow.
        if (depth >= kMaxCompositeDepth)
            throw ModelError("Composite source: nested deeper than " + std::to_string(kMaxCompositeDepth) +
                             " levels (a composite that contains itself?)");
        for (auto& el : c->elements) compile(*el, scale, depth + 1);
    } else if (auto q = dynamic_cast<const PointSource*>(&s)) point(*q, p);
    else if (auto q = dynamic_cast<const PencilBeamSource*>(&s)) pencil(*q, p);
    else if (auto q = dynamic_cast<const FiberSource*>(&s)) fiber(*q, p);
    else if (auto q = dynamic_cast<const SurfaceSource*>(&s)) surface(*q, p);
    else if (auto q = dynamic_cast<const CylinderSource*>(&s)) cylinder(*q, p);
    else if (auto q = dynamic_cast<const DiskSource*>(&s)) disk(*q, p);
    else if (auto q = dynamic_cast<const PlanarSource*>(&s)) planar(*q, p);
    else if (auto q = dynamic_cast<const BallSource*>(&s)) {
        checkFinite(q->centre, "Ball source");
        if (!(q->radius > 0)) throw ModelError("Ball source: radius must be > 0, got " + std::to_string(q->radius));
        auto& e = add(kEmitVolume, p);
        e.reject = kRejectBall;
        e.pos = toV(q->centre);
        e.radius = float(q->radius);
        const Coverage cov = ballCoverage(mesh, q->centre, q->radius);
        checkCoverage(cov, "Ball source at " + str(q->centre) + " of radius " + num(q->radius));
        const std::vector<uint32_t> near = tetrasNear(q->centre, q->centre, q->radius);
        volumePieces(e, near, "Ball source");
        preferShape(out.emitters.back(), 4.0 / 3.0 * M_PI * q->radius * q->radius * q->radius, cov, near,
                    {{q->centre, 0.0}});
    } else if (auto q = dynamic_cast<const LineSource*>(&s)) {
        checkFinite(q->endpoint[0], "Line source");
        checkFinite(q->endpoint[1], "Line source");
        auto& e = add(kEmitLine, p);
        e.dir = toV(unit(sub(q->endpoint[1], q->endpoint[0]), "Line source (endpoints coincide)"));
        e.mode = q->pattern == LineSource::Normal ? kDirPerpendicular : kDirIsotropic;
        segmentPieces(e, q->endpoint[0], q->endpoint[1], "Line source");
    } else if (auto q = dynamic_cast<const VolumeSource*>(&s)) {
        std::vector<uint32_t> ts;
        if (q->element) {
            if (q->element > mesh.tetraCount())
                throw ModelError("Volume source: element " + std::to_string(q->element) +
                                 " does not exist (1.." + std::to_string(mesh.tetraCount()) + ")");
            ts.push_back(q->element);
        } else {
            for (uint32_t t = 1; t <= mesh.tetraCount(); ++t)
                if (mesh.region(t) == q->region) ts.push_back(t);
            if (ts.empty()) throw ModelError("Volume source: region " + std::to_string(q->region) + " has no tetras");
        }
        auto& e = add(kEmitVolume, p);
        volumePieces(e, ts, "Volume source");
    } else {
        throw ModelError("unsupported source type " + s.typeName());
    }
}

}  // namespace

std::pair<uint32_t, double> rayEntry(const TetraMesh& mesh, const Point3& p, const Point3& d) {
    auto span = mesh.bounds();
    double tol = 1e-6 * normP(sub(span[1], span[0]));
    uint32_t best = 0;
    double bestT = 1e300;
    for (uint32_t f : mesh.boundaryFaces()) {
        const MeshFace& F = mesh.face(f);
        double dn = dotP(F.normal, d);
        if (dn >= 0) continue;  // only faces the ray enters through
        const Point3& a = mesh.point(F.points[0]);
        double t = dotP(F.normal, sub(a, p)) / dn;
        if (t < -tol || t >= bestT) continue;
        Point3 q{p[0] + t * d[0], p[1] + t * d[1], p[2] + t * d[2]};
        bool in = true;  // inside the triangle: same side of all three edges
        for (int k = 0; k < 3 && in; ++k) {
            const Point3& u = mesh.point(F.points[k]);
            const Point3& v = mesh.point(F.points[(k + 1) % 3]);
            in = dotP(crossP(sub(v, u), sub(q, u)), F.normal) >= -tol * normP(sub(v, u));
        }
        if (in) {
            best = f;
            bestT = t;
        }
    }
    return {best, best ? bestT : 0.0};
}

void compileSources(const Source& src, const TetraMesh& mesh, const MaterialSet& mats,
                    KernelInput& out) {
    out.emitters.clear();
    out.emitterCdf.clear();
    out.pieces.clear();
    out.pieceCdf.clear();
    out.warnings.clear();
    Builder b{mesh, mats, out, {}};
    b.compile(src, 1.0);
    if (!appendCdf(b.power, out.emitterCdf)) throw ModelError("sources: total power is zero");
}

}  // namespace fm
