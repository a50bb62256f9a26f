// SPDX-License-Identifier: GPL-3.0-or-later
#include "Geometry/TetraMesh.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <sstream>
#include <string>

#include "Common/Errors.hpp"
#include "Common/ParallelFor.hpp"
#include "Geometry/MaterialSet.hpp"

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

// Seconds since the last lap.
class Stopwatch {
public:
    double lap() {
        auto now = std::chrono::steady_clock::now();
        double s = std::chrono::duration<double>(now - last_).count();
        last_ = now;
        return s;
    }

private:
    std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace

// Uniform grid of tetra bounding boxes: about one tetra per cell. Holds no reference to the
// mesh (which may be moved); the mesh passes itself to locate(). The grid's lists are built on
// the first queries beyond kScans: until then a query scans every tetra for those whose box
// overlaps the point's cell, which gives the same answer (the lowest such tetra containing the
// point) and spares a run with one point source the grid's cost.
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
    }

    uint32_t locate(const TetraMesh& mesh, const Point3& p) const {
        int idx[3];
        for (int k = 0; k < 3; ++k) {
            double f = (p[k] - lo_[k]) / h_[k];
            if (!(f >= -1e-9 && f <= n_[k] + 1e-9)) return 0;
            idx[k] = std::min(n_[k] - 1, std::max(0, int(f)));
        }
        if (queries_.fetch_add(1, std::memory_order_relaxed) < kScans) return scan(mesh, p, idx);
        std::call_once(built_, [&] { build(mesh); });
        size_t c = (size_t(idx[2]) * n_[1] + idx[1]) * n_[0] + idx[0];
        for (size_t i = start_[c]; i < start_[c + 1]; ++i)
            if (mesh.contains(items_[i], p)) return items_[i];
        return 0;
    }

private:
    static constexpr unsigned kScans = 4;

    // (cell, tetra) pairs grouped by cell on all threads; each cell's tetras in increasing
    // order, the order locate() tries them in.
    void build(const TetraMesh& m) const {
        const size_t cells = size_t(n_[0]) * n_[1] * n_[2];
        parallelBucketSort(cells, 1, m.tetraCount() + 1, [&](size_t t, auto&& put) {
            forEachOverlap(m, uint32_t(t), [&](size_t c) { put(c, uint32_t(t)); });
        }, start_, items_, 65536);
    }

    // The lowest tetra whose box overlaps cell idx and that contains p, as the grid finds it.
    uint32_t scan(const TetraMesh& mesh, const Point3& p, const int idx[3]) const {
        const unsigned chunks = chunkCount(mesh.tetraCount(), 65536);
        std::vector<uint32_t> first(chunks, 0);
        parallelChunks(1, mesh.tetraCount() + 1, chunks, [&](unsigned c, size_t lo, size_t hi) {
            for (size_t t = lo; t < hi; ++t) {
                int a[3], b[3];
                overlap(mesh, uint32_t(t), a, b);
                if (idx[0] < a[0] || idx[0] > b[0] || idx[1] < a[1] || idx[1] > b[1] || idx[2] < a[2] ||
                    idx[2] > b[2] || !mesh.contains(uint32_t(t), p))
                    continue;
                first[c] = uint32_t(t);
                return;
            }
        });
        for (uint32_t t : first)
            if (t) return t;
        return 0;
    }

    // The cells [lo, hi] (per axis) that tetra t's bounding box overlaps.
    void overlap(const TetraMesh& mesh, uint32_t t, int lo[3], int hi[3]) const {
        for (int k = 0; k < 3; ++k) {
            double mn = 1e300, mx = -1e300;
            for (uint32_t v : mesh.tetra(t)) {
                mn = std::min(mn, mesh.point(v)[k]);
                mx = std::max(mx, mesh.point(v)[k]);
            }
            lo[k] = std::max(0, std::min(n_[k] - 1, int((mn - lo_[k]) / h_[k])));
            hi[k] = std::max(0, std::min(n_[k] - 1, int((mx - lo_[k]) / h_[k])));
        }
    }

    // Calls f(cell) for each grid cell that tetra t's bounding box overlaps.
    template <class F>
    void forEachOverlap(const TetraMesh& mesh, uint32_t t, F f) const {
        int lo[3], hi[3];
        overlap(mesh, t, lo, hi);
        for (int z = lo[2]; z <= hi[2]; ++z)
            for (int y = lo[1]; y <= hi[1]; ++y)
                for (int x = lo[0]; x <= hi[0]; ++x) f((size_t(z) * n_[1] + y) * n_[0] + x);
    }

    Point3 lo_;
    int n_[3];
    double h_[3];
    mutable std::atomic<unsigned> queries_{0};
    mutable std::once_flag built_;
    mutable std::vector<size_t> start_;
    mutable std::vector<uint32_t> items_;
};

namespace {
uint64_t newMeshIdentity() {
    static std::atomic<uint64_t> next{1};
    return next++;
}
}  // namespace

TetraMesh::Identity::Identity() : value(newMeshIdentity()) {}
TetraMesh::Identity::Identity(Identity&& o) noexcept : value(o.value) { o.value = newMeshIdentity(); }
TetraMesh::Identity& TetraMesh::Identity::operator=(Identity&& o) noexcept {
    value = o.value;
    o.value = newMeshIdentity();
    return *this;
}

TetraMesh::TetraMesh() : points_(1), tetras_(1), regions_(1, 0), volumes_(1, 0), faces_(1),
                         tetraFaces_(1) {}
TetraMesh::~TetraMesh() = default;
TetraMesh::TetraMesh(TetraMesh&&) noexcept = default;
TetraMesh& TetraMesh::operator=(TetraMesh&&) noexcept = default;

TetraMesh::TetraMesh(std::vector<Point3> points, std::vector<TetraPoints> tetras,
                     std::vector<uint32_t> regions, const MeshCheckOptions& opt)
    : points_(std::move(points)), tetras_(std::move(tetras)), regions_(std::move(regions)) {
    Stopwatch clock;
    check();
    report_.tolerance = meshTolerance(points_, opt);
    report_.allowDefects = opt.allowDefects;
    times_.validate = clock.lap();
    checkDuplicateTetras(tetras_, points_, report_);
    times_.duplicates = clock.lap();
    // Degenerate tetras have no face normals: stop before building faces. Duplicates go on, so
    // that the faces they make non-manifold are reported with them.
    bool flat = !orient();
    times_.orient = clock.lap();
    if (flat) throwIfFatal();
    buildFaces();
    times_.faces = clock.lap();
    throwIfFatal();
    checkMeshStructure(*this, report_);
    times_.structure = clock.lap();
    if (report_.hasErrors() && !opt.allowDefects) throw ModelError(report_.errorText());
    locator_ = std::make_unique<PointLocator>(*this);
    times_.locator = clock.lap();
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
        if (regions_[t] > kMaxRegion)  // a region's material index must fit the packed cells
            throw ModelError("mesh: tetra " + std::to_string(t) + " has region " + std::to_string(regions_[t]) +
                             ": region labels up to " + std::to_string(kMaxRegion) +
                             " are supported (each region is a material index)");
        regionCount_ = std::max(regionCount_, regions_[t] + 1);
    }
}

bool TetraMesh::orient() {
    volumes_.assign(tetras_.size(), 0.0);
    // Per chunk: the count and the first examples, joined in chunk (= tetra) order.
    const unsigned chunks = chunkCount(tetras_.size() - 1);
    std::vector<MeshDefect> found(chunks);
    parallelChunks(1, tetras_.size(), chunks, [&](unsigned c, size_t lo, size_t hi) {
        MeshDefect& degenerate = found[c];
        for (size_t t = lo; t < hi; ++t) {
            auto& T = tetras_[t];
            const Point3 &a = points_[T[0]], &b = points_[T[1]], &c2 = points_[T[2]], &d = points_[T[3]];
            double v = signedVolume(a, b, c2, d);
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
    });
    MeshDefect degenerate;
    degenerate.kind = "degenerate tetras";
    degenerate.severity = MeshDefect::Fatal;
    degenerate.what = "zero-volume (flat) tetras";
    joinChunks(degenerate, found);
    if (degenerate.count) report_.add(degenerate);
    return degenerate.count == 0;
}

namespace {

// One tetra face in its bucket (the face's lowest point): the other two points in increasing
// order, the tetra and the vertex the face is opposite.
struct FaceEntry {
    uint32_t k1, k2, t, i;
    bool operator<(const FaceEntry& o) const {
        return k1 != o.k1 ? k1 < o.k1 : k2 != o.k2 ? k2 < o.k2 : t < o.t;
    }
    bool sameFace(const FaceEntry& o) const { return k1 == o.k1 && k2 == o.k2; }
};

// Tetra faces grouped by their lowest point (a counting sort), each group sorted by the other
// two points and the tetra: the order of a sort of all faces by (sorted points, tetra).
struct FaceBuckets {
    std::vector<size_t> start;  // bucket p holds entries[start[p] .. start[p + 1])
    std::vector<FaceEntry> entries;

    FaceBuckets(const std::vector<TetraPoints>& tetras, size_t pointSlots) {
        parallelBucketSort(pointSlots, 1, tetras.size(), [&](size_t t, auto&& put) {
            for (int i = 0; i < 4; ++i) {
                auto k = faceOpposite(tetras[t], i);
                std::sort(k.begin(), k.end());
                put(k[0], FaceEntry{k[1], k[2], uint32_t(t), uint32_t(i)});
            }
        }, start, entries, 4096);
    }
};

}  // namespace

void TetraMesh::buildFaces() {
    FaceBuckets B(tetras_, points_.size());
    // Two passes over contiguous point ranges: count the faces of each range (for its first
    // face id), then make them. Face ids follow the sorted order, as a single sort would.
    const size_t P = points_.size();
    const unsigned chunks = chunkCount(B.entries.size(), 65536);
    std::vector<size_t> chunkStart(chunks + 1, P);
    for (unsigned c = 0; c < chunks; ++c) {
        // Split by entries, not points, so that chunks hold similar work.
        size_t target = B.entries.size() * c / chunks;
        chunkStart[c] = size_t(std::lower_bound(B.start.begin(), B.start.end() - 1, target) - B.start.begin());
    }
    chunkStart[0] = 0;
    auto groups = [&](size_t p, auto&& visit) {
        for (size_t j = B.start[p], end = B.start[p + 1]; j < end;) {
            size_t k = j;
            while (k < end && B.entries[k].sameFace(B.entries[j])) ++k;
            visit(uint32_t(p), j, k);
            j = k;
        }
    };
    std::vector<size_t> faceCountOf(chunks + 1, 0);
    parallelChunks(0, chunks, chunks, [&](unsigned, size_t c, size_t) {
        size_t nf = 0;
        for (size_t p = chunkStart[c]; p < chunkStart[c + 1]; ++p)
            groups(p, [&](uint32_t, size_t j, size_t k) { nf += (k - j <= 2); });
        faceCountOf[c + 1] = nf;
    });
    for (unsigned c = 0; c < chunks; ++c) faceCountOf[c + 1] += faceCountOf[c];
    // A tetra's face id keeps its side in the top bit: ids must fit in 31 bits.
    if (faceCountOf[chunks] >= 0x7fffffffu)
        throw ModelError("mesh: " + std::to_string(faceCountOf[chunks]) + " faces, more than the " +
                         std::to_string(0x7fffffffu - 1) + " face ids hold (about 1.07e9 tetras); split the model");
    faces_.assign(faceCountOf[chunks] + 1, MeshFace{});
    tetraFaces_.assign(tetras_.size(), {0, 0, 0, 0});
    std::vector<std::vector<uint32_t>> boundary(chunks);
    std::vector<MeshDefect> shared(chunks);
    parallelChunks(0, chunks, chunks, [&](unsigned, size_t c, size_t) {
        uint32_t id = uint32_t(faceCountOf[c] + 1);
        for (size_t p = chunkStart[c]; p < chunkStart[c + 1]; ++p)
            groups(p, [&](uint32_t k0, size_t j, size_t k) {
                const FaceEntry* e = &B.entries[j];
                if (k - j > 2) {
                    if (++shared[c].count <= 3)
                        shared[c].examples.push_back(
                            "face (" + std::to_string(k0) + "," + std::to_string(e[0].k1) + "," +
                            std::to_string(e[0].k2) + ") is shared by " + std::to_string(k - j) + " tetras (" +
                            std::to_string(e[0].t) + ", " + std::to_string(e[1].t) + ", " +
                            std::to_string(e[2].t) + ")");
                    return;
                }
                MeshFace& f = faces_[id];
                f.owner = e[0].t;
                f.points = faceOpposite(tetras_[f.owner], int(e[0].i));
                Point3 n = crossP(sub(points_[f.points[1]], points_[f.points[0]]),
                                  sub(points_[f.points[2]], points_[f.points[0]]));
                f.area = 0.5 * normP(n);
                for (int d = 0; d < 3; ++d) f.normal[d] = n[d] / (2 * f.area);
                tetraFaces_[f.owner][e[0].i] = id;
                if (k - j == 2) {
                    f.other = e[1].t;
                    tetraFaces_[f.other][e[1].i] = id | 0x80000000u;
                } else {
                    boundary[c].push_back(id);
                }
                ++id;
            });
    });
    boundary_.clear();
    for (auto& b : boundary) boundary_.insert(boundary_.end(), b.begin(), b.end());
    MeshDefect all;
    all.kind = "non-manifold faces";
    all.severity = MeshDefect::Fatal;
    all.what = "faces shared by more than two tetras (overlapping or repeated tetras)";
    joinChunks(all, shared);
    if (all.count) report_.add(all);
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
