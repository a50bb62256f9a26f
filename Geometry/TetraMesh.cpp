// SPDX-License-Identifier: GPL-3.0-or-later
#include "Geometry/TetraMesh.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "Common/Errors.hpp"

namespace fm {

Point3 sub(const Point3& a, const Point3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
Point3 crossP(const Point3& a, const Point3& b) {
    return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
double dotP(const Point3& a, const Point3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
double normP(const Point3& a) { return std::sqrt(dotP(a, a)); }

namespace {

double signedVolume(const Point3& a, const Point3& b, const Point3& c, const Point3& d) {
    return dotP(sub(b, a), crossP(sub(c, a), sub(d, a))) / 6.0;
}

// Vertices of the face opposite vertex i, in an order whose right-hand normal points away
// from vertex i for a positively oriented tetra.
std::array<uint32_t, 3> faceOpposite(const TetraPoints& T, int i) {
    static const int kFace[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};
    return {T[kFace[i][0]], T[kFace[i][1]], T[kFace[i][2]]};
}

}  // namespace

// Uniform grid of tetra bounding boxes: about one tetra per cell. Holds no reference to the
// mesh (which may be moved); the mesh passes itself to locate().
class PointLocator {
public:
    explicit PointLocator(const TetraMesh& m) {
        auto b = m.bounds();
        lo_ = b[0];
        double span[3];
        double vol = 1;
        for (int k = 0; k < 3; ++k) {
            span[k] = std::max(b[1][k] - b[0][k], 1e-12);
            vol *= span[k];
        }
        double cell = std::cbrt(vol / std::max<size_t>(1, m.tetraCount()));
        for (int k = 0; k < 3; ++k) {
            // Clamp before converting: span/cell can exceed INT_MAX (or be NaN) for extreme
            // coordinates, and that conversion is undefined.
            n_[k] = int(std::max(1.0, std::min(512.0, std::ceil(span[k] / cell))));
            h_[k] = span[k] / n_[k];
        }
        start_.assign(size_t(n_[0]) * n_[1] * n_[2] + 1, 0);
        forEachOverlap(m, [&](size_t c, uint32_t) { ++start_[c + 1]; });
        for (size_t c = 1; c < start_.size(); ++c) start_[c] += start_[c - 1];
        items_.resize(start_.back());
        std::vector<uint32_t> fill(start_.begin(), start_.end() - 1);
        forEachOverlap(m, [&](size_t c, uint32_t t) { items_[fill[c]++] = t; });
    }

    uint32_t locate(const TetraMesh& mesh, const Point3& p) const {
        int idx[3];
        for (int k = 0; k < 3; ++k) {
            double f = (p[k] - lo_[k]) / h_[k];
            if (!(f >= -1e-9 && f <= n_[k] + 1e-9)) return 0;
            idx[k] = std::min(n_[k] - 1, std::max(0, int(f)));
        }
        size_t c = (size_t(idx[2]) * n_[1] + idx[1]) * n_[0] + idx[0];
        for (uint32_t i = start_[c]; i < start_[c + 1]; ++i)
            if (mesh.contains(items_[i], p)) return items_[i];
        return 0;
    }

private:
    template <class F>
    void forEachOverlap(const TetraMesh& mesh_, F f) const {
        for (uint32_t t = 1; t <= mesh_.tetraCount(); ++t) {
            int lo[3], hi[3];
            for (int k = 0; k < 3; ++k) {
                double mn = 1e300, mx = -1e300;
                for (uint32_t v : mesh_.tetra(t)) {
                    mn = std::min(mn, mesh_.point(v)[k]);
                    mx = std::max(mx, mesh_.point(v)[k]);
                }
                lo[k] = std::max(0, std::min(n_[k] - 1, int((mn - lo_[k]) / h_[k])));
                hi[k] = std::max(0, std::min(n_[k] - 1, int((mx - lo_[k]) / h_[k])));
            }
            for (int z = lo[2]; z <= hi[2]; ++z)
                for (int y = lo[1]; y <= hi[1]; ++y)
                    for (int x = lo[0]; x <= hi[0]; ++x)
                        f((size_t(z) * n_[1] + y) * n_[0] + x, t);
        }
    }
    Point3 lo_;
    int n_[3];
    double h_[3];
    std::vector<uint32_t> start_, items_;
};

TetraMesh::TetraMesh() : points_(1), tetras_(1), regions_(1, 0), volumes_(1, 0), faces_(1),
                         tetraFaces_(1) {}
TetraMesh::~TetraMesh() = default;
TetraMesh::TetraMesh(TetraMesh&&) noexcept = default;
TetraMesh& TetraMesh::operator=(TetraMesh&&) noexcept = default;

TetraMesh::TetraMesh(std::vector<Point3> points, std::vector<TetraPoints> tetras,
                     std::vector<uint32_t> regions, const MeshCheckOptions& opt)
    : points_(std::move(points)), tetras_(std::move(tetras)), regions_(std::move(regions)) {
    check();
    report_.tolerance = meshTolerance(points_, opt);
    report_.allowDefects = opt.allowDefects;
    checkDuplicateTetras(tetras_, points_, report_);
    // Degenerate tetras have no face normals: stop before building faces. Duplicates go on, so
    // that the faces they make non-manifold are reported with them.
    if (!orient()) throwIfFatal();
    buildFaces();
    throwIfFatal();
    checkMeshStructure(*this, report_);
    if (report_.hasErrors() && !opt.allowDefects) throw ModelError(report_.errorText());
    locator_ = std::make_unique<PointLocator>(*this);
}

void TetraMesh::throwIfFatal() const {
    if (report_.hasFatal()) throw ModelError(report_.errorText());
}

void TetraMesh::check() {
    if (points_.empty() || tetras_.empty())
        throw ModelError("mesh: points and tetras must include the dummy entry 0");
    if (tetras_.size() < 2) throw ModelError("mesh: no tetrahedra");
    if (regions_.size() != tetras_.size())
        throw ModelError("mesh: " + std::to_string(regions_.size()) + " region labels for " +
                         std::to_string(tetras_.size()) + " tetras (incl. dummy 0)");
    for (size_t i = 1; i < points_.size(); ++i)
        for (double c : points_[i])
            if (!(std::fabs(c) <= kMaxCoordinate)) {  // also true for NaN
                std::ostringstream o;
                o << "mesh: point " << i << " has coordinate " << c
                  << ", outside +-1e15 (non-finite or beyond single precision)";
                throw ModelError(o.str());
            }
    regions_[0] = 0;
    for (size_t t = 1; t < tetras_.size(); ++t) {
        for (uint32_t v : tetras_[t])
            if (v == 0 || v >= points_.size())
                throw ModelError("mesh: tetra " + std::to_string(t) + " refers to point " +
                                 std::to_string(v) + ", valid points are 1.." +
                                 std::to_string(points_.size() - 1));
        if (regions_[t] == 0)
            throw ModelError("mesh: tetra " + std::to_string(t) + " has region 0 (the exterior)");
        regionCount_ = std::max(regionCount_, regions_[t] + 1);
    }
}

bool TetraMesh::orient() {
    volumes_.assign(tetras_.size(), 0.0);
    MeshDefect degenerate;
    degenerate.kind = "degenerate tetras";
    degenerate.severity = MeshDefect::Fatal;
    degenerate.what = "zero-volume (flat) tetras";
    for (size_t t = 1; t < tetras_.size(); ++t) {
        auto& T = tetras_[t];
        const Point3 &a = points_[T[0]], &b = points_[T[1]], &c = points_[T[2]], &d = points_[T[3]];
        double v = signedVolume(a, b, c, d);
        double L = 0;
        for (int i = 0; i < 4; ++i)
            for (int j = i + 1; j < 4; ++j) L = std::max(L, normP(sub(points_[T[i]], points_[T[j]])));
        if (!(std::fabs(v) > 1e-12 * L * L * L)) {
            if (++degenerate.count <= 3)
                degenerate.examples.push_back("tetra " + std::to_string(t) + " is degenerate (volume " +
                                              std::to_string(v) + ", points " + std::to_string(T[0]) + " " +
                                              std::to_string(T[1]) + " " + std::to_string(T[2]) + " " +
                                              std::to_string(T[3]) + ")");
            continue;
        }
        // Orientation is a file convention (meshers mix both); overlap is what matters, and
        // the fold check finds it.
        if (v < 0) std::swap(T[2], T[3]);
        volumes_[t] = std::fabs(v);
    }
    if (degenerate.count) report_.add(degenerate);
    return degenerate.count == 0;
}

void TetraMesh::buildFaces() {
    struct Entry {
        std::array<uint32_t, 3> key;
        uint32_t t;
        int i;
    };
    std::vector<Entry> e;
    e.reserve(4 * tetraCount());
    for (uint32_t t = 1; t < tetras_.size(); ++t)
        for (int i = 0; i < 4; ++i) {
            auto k = faceOpposite(tetras_[t], i);
            std::sort(k.begin(), k.end());
            e.push_back({k, t, i});
        }
    std::sort(e.begin(), e.end(), [](const Entry& a, const Entry& b) {
        return a.key != b.key ? a.key < b.key : a.t < b.t;
    });
    faces_.assign(1, MeshFace{});
    tetraFaces_.assign(tetras_.size(), {0, 0, 0, 0});
    MeshDefect shared;
    shared.kind = "non-manifold faces";
    shared.severity = MeshDefect::Fatal;
    shared.what = "faces shared by more than two tetras (overlapping or repeated tetras)";
    for (size_t j = 0; j < e.size();) {
        size_t k = j;
        while (k < e.size() && e[k].key == e[j].key) ++k;
        if (k - j > 2) {
            if (++shared.count <= 3)
                shared.examples.push_back(
                    "face (" + std::to_string(e[j].key[0]) + "," + std::to_string(e[j].key[1]) + "," +
                    std::to_string(e[j].key[2]) + ") is shared by " + std::to_string(k - j) + " tetras (" +
                    std::to_string(e[j].t) + ", " + std::to_string(e[j + 1].t) + ", " +
                    std::to_string(e[j + 2].t) + ")");
            j = k;
            continue;
        }
        uint32_t id = uint32_t(faces_.size());
        MeshFace f;
        f.owner = e[j].t;
        f.points = faceOpposite(tetras_[f.owner], e[j].i);
        Point3 n = crossP(sub(points_[f.points[1]], points_[f.points[0]]),
                          sub(points_[f.points[2]], points_[f.points[0]]));
        f.area = 0.5 * normP(n);
        for (int c = 0; c < 3; ++c) f.normal[c] = n[c] / (2 * f.area);
        tetraFaces_[f.owner][e[j].i] = id;
        if (k - j == 2) {
            f.other = e[j + 1].t;
            tetraFaces_[f.other][e[j + 1].i] = id | 0x80000000u;
        } else {
            boundary_.push_back(id);
        }
        faces_.push_back(f);
        j = k;
    }
    if (shared.count) report_.add(shared);
}

uint32_t TetraMesh::neighbour(uint32_t t, int i) const {
    uint32_t code = tetraFaces_[t][i];
    const MeshFace& f = faces_[code & 0x7fffffffu];
    return (code & 0x80000000u) ? f.owner : f.other;
}

std::vector<std::pair<uint32_t, uint32_t>> TetraMesh::regionBoundary(uint32_t r) const {
    std::vector<std::pair<uint32_t, uint32_t>> out;
    for (uint32_t f = 1; f < faces_.size(); ++f) {
        const MeshFace& F = faces_[f];
        uint32_t ro = regions_[F.owner], rx = F.other ? regions_[F.other] : 0;
        if (ro == r && rx != r) out.push_back({f, F.owner});
        else if (rx == r && ro != r) out.push_back({f, F.other});
    }
    return out;
}

double TetraMesh::regionVolume(uint32_t r) const {
    double v = 0;
    for (size_t t = 1; t < tetras_.size(); ++t)
        if (regions_[t] == r) v += volumes_[t];
    return v;
}

std::array<Point3, 2> TetraMesh::bounds() const {
    Point3 lo{1e300, 1e300, 1e300}, hi{-1e300, -1e300, -1e300};
    for (size_t i = 1; i < points_.size(); ++i)
        for (int k = 0; k < 3; ++k) {
            lo[k] = std::min(lo[k], points_[i][k]);
            hi[k] = std::max(hi[k], points_[i][k]);
        }
    return {lo, hi};
}

bool TetraMesh::contains(uint32_t t, const Point3& p, double tol) const {
    const auto& T = tetras_[t];
    double scale = std::cbrt(volumes_[t]);
    for (int i = 0; i < 4; ++i) {
        auto f = faceOpposite(T, i);
        const Point3 &a = points_[f[0]], &b = points_[f[1]], &c = points_[f[2]];
        Point3 n = crossP(sub(b, a), sub(c, a));
        double h = dotP(n, sub(p, a)) / normP(n);
        if (h > tol * scale) return false;
    }
    return true;
}

uint32_t TetraMesh::locate(const Point3& p) const { return locator_ ? locator_->locate(*this, p) : 0; }

}  // namespace fm
