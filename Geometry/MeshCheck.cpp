// SPDX-License-Identifier: GPL-3.0-or-later
#include "Geometry/MeshCheck.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <numeric>
#include <sstream>
#include <unordered_map>

#include "Common/ParallelFor.hpp"
#include "Geometry/TetraMesh.hpp"

namespace fm {

namespace {

constexpr size_t kExamples = 3;

std::string at(const Point3& p) { return pointText(p); }

// Union-find whose joins may run on several threads at once (a root is linked below the other
// with a compare-and-swap, retried when another thread got there first). The root of a set is
// its lowest id, whatever the order of the joins.
struct UnionFind {
    std::unique_ptr<std::atomic<uint32_t>[]> parent;
    explicit UnionFind(size_t n) : parent(new std::atomic<uint32_t>[n]) {
        for (size_t i = 0; i < n; ++i) parent[i].store(uint32_t(i), std::memory_order_relaxed);
    }
    uint32_t find(uint32_t a) const {
        for (;;) {
            uint32_t p = parent[a].load(std::memory_order_relaxed);
            if (p == a) return a;
            uint32_t g = parent[p].load(std::memory_order_relaxed);
            if (g != p) parent[a].compare_exchange_weak(p, g, std::memory_order_relaxed);  // halve the path
            a = g;
        }
    }
    void join(uint32_t a, uint32_t b) {
        for (;;) {
            a = find(a);
            b = find(b);
            if (a == b) return;
            if (a < b) std::swap(a, b);  // link the higher root below the lower
            uint32_t expected = a;
            if (parent[a].compare_exchange_strong(expected, b, std::memory_order_relaxed)) return;
        }
    }
};

// Uniform grid over points: cell side h >= tol, so coincident points are in neighbouring
// cells. Cell indices are packed 21 bits per axis into a key; the points are kept sorted by
// (key, point), so a cell's points are one run of the list.
struct PointHash {
    Point3 lo;
    double h;
    std::vector<std::pair<uint64_t, uint32_t>> sorted;  // (cell key, point)

    PointHash(const std::vector<Point3>& pts, const std::vector<char>& used, double tol) {
        Point3 hi{-1e300, -1e300, -1e300};
        lo = {1e300, 1e300, 1e300};
        size_t n = 0;
        for (size_t i = 1; i < pts.size(); ++i)
            if (used[i]) {
                ++n;
                for (int k = 0; k < 3; ++k) {
                    lo[k] = std::min(lo[k], pts[i][k]);
                    hi[k] = std::max(hi[k], pts[i][k]);
                }
            }
        double span = 0;
        for (int k = 0; k < 3; ++k) span = std::max(span, hi[k] - lo[k]);
        h = std::max({tol, span / 1e6, 1e-300});
        sorted.reserve(n);
        for (size_t i = 1; i < pts.size(); ++i)
            if (used[i]) sorted.push_back({0, uint32_t(i)});
        parallelFor(0, sorted.size(), [&](unsigned, size_t a, size_t b) {
            for (size_t j = a; j < b; ++j) sorted[j].first = key(cell(pts[sorted[j].second]));
        });
        parallelSort(sorted);  // (key, point) pairs are all different
    }
    std::array<int64_t, 3> cell(const Point3& p) const {
        return {int64_t(std::floor((p[0] - lo[0]) / h)), int64_t(std::floor((p[1] - lo[1]) / h)),
                int64_t(std::floor((p[2] - lo[2]) / h))};
    }
    static uint64_t key(const std::array<int64_t, 3>& c) {
        auto f = [](int64_t v) { return uint64_t(v + 1) & 0x1fffffu; };
        return f(c[0]) | (f(c[1]) << 21) | (f(c[2]) << 42);
    }
    // The points of the cells with keys first..last: [from, to) of `sorted`. Cells x..x+2 of
    // one row have consecutive keys: h >= span / 1e6 keeps each index below 2^21 - 2, so no
    // index wraps into another's bits.
    std::pair<size_t, size_t> find(uint64_t first, uint64_t last) const {
        auto lo = std::lower_bound(sorted.begin(), sorted.end(), std::make_pair(first, uint32_t(0)));
        auto hi = lo;
        while (hi != sorted.end() && hi->first <= last) ++hi;
        return {size_t(lo - sorted.begin()), size_t(hi - sorted.begin())};
    }
};

MeshDefect defect(const std::string& kind, MeshDefect::Severity s, const std::string& what) {
    MeshDefect d;
    d.kind = kind;
    d.severity = s;
    d.what = what;
    return d;
}

void note(MeshDefect& d, const std::string& example) {
    ++d.count;
    if (d.examples.size() < kExamples) d.examples.push_back(example);
}


void checkComponents(const TetraMesh& m, MeshCheckReport& rep) {
    UnionFind uf(m.tetraCount() + 1);
    parallelFor(1, m.faceCount() + 1, [&](unsigned, size_t lo, size_t hi) {
        for (size_t f = lo; f < hi; ++f)
            if (m.face(uint32_t(f)).other) uf.join(m.face(uint32_t(f)).owner, m.face(uint32_t(f)).other);
    });
    std::vector<uint32_t> size(m.tetraCount() + 1, 0);
    for (uint32_t t = 1; t <= m.tetraCount(); ++t) ++size[uf.find(t)];
    MeshDefect d = defect("connected components", MeshDefect::Warning,
                          "separate pieces (no shared face between them); fine for separate bodies, "
                          "a sign of unjoined surfaces otherwise");
    for (uint32_t t = 1; t <= m.tetraCount(); ++t)
        if (size[t]) {
            ++rep.components;
            note(d, std::to_string(size[t]) + " tetras from tetra " + std::to_string(t) + " (region " +
                        std::to_string(m.region(t)) + ")");
        }
    if (rep.components > 1) rep.add(d);
}

void checkCoincidentVertices(const TetraMesh& m, MeshCheckReport& rep) {
    std::vector<char> used(m.points().size(), 0);
    for (uint32_t t = 1; t <= m.tetraCount(); ++t)
        for (uint32_t v : m.tetra(t)) used[v] = 1;
    auto pairs = coincidentPoints(m.points(), used, rep.tolerance);
    if (pairs.empty()) return;
    std::ostringstream what;
    what << "point pairs closer than the tolerance (" << rep.tolerance
         << "): one position under two ids; merging coincident vertices joins them";
    MeshDefect d = defect("coincident vertices", MeshDefect::Warning, what.str());
    for (auto [a, b] : pairs)
        note(d, "points " + std::to_string(a) + " and " + std::to_string(b) + " at " + at(m.point(a)));
    rep.add(d);
}

// Cell side for the boundary-face grid: at least h, doubled until the faces' bounding boxes
// cover a bounded number of cells (a few huge faces among many small ones would otherwise fill
// (L/h)^3 cells each).
double boundedCellSize(const TetraMesh& m, const std::vector<uint32_t>& B, double h, double tol) {
    const double budget = 16.0 * B.size() + 1e6;
    for (;;) {
        double cells = 0;
        for (uint32_t f : B) {
            double c = 1;
            for (int k = 0; k < 3; ++k) {
                double mn = 1e300, mx = -1e300;
                for (uint32_t v : m.face(f).points) {
                    mn = std::min(mn, m.point(v)[k]);
                    mx = std::max(mx, m.point(v)[k]);
                }
                c *= (mx - mn + 2 * tol) / h + 2;
            }
            cells += c;
        }
        if (cells <= budget) return h;
        h *= 2;
    }
}

// Boundary faces lying on other boundary faces with the opposite normal: two surfaces meant to
// be one interface but meshed apart. A packet reaching one exits the mesh there.
void checkCracks(const TetraMesh& m, MeshCheckReport& rep) {
    const auto& B = m.boundaryFaces();
    if (B.size() < 2) return;
    double area = 0;
    for (uint32_t f : B) area += m.face(f).area;
    double h = std::max(std::sqrt(2 * area / B.size()), 1e-300);  // about one face per cell
    auto span = m.bounds();
    Point3 lo = span[0];
    double extent = 0;
    for (int k = 0; k < 3; ++k) extent = std::max(extent, span[1][k] - span[0][k]);
    h = std::max(h, extent / 1e6);
    h = boundedCellSize(m, B, h, rep.tolerance);
    auto cellOf = [&](double x, int k) { return int64_t(std::floor((x - lo[k]) / h)); };
    std::unordered_map<uint64_t, std::vector<uint32_t>> grid;
    grid.reserve(B.size() * 2);
    const double tol = rep.tolerance;
    for (uint32_t f : B) {
        int64_t c0[3], c1[3];
        for (int k = 0; k < 3; ++k) {
            double mn = 1e300, mx = -1e300;
            for (uint32_t v : m.face(f).points) {
                mn = std::min(mn, m.point(v)[k]);
                mx = std::max(mx, m.point(v)[k]);
            }
            c0[k] = cellOf(mn - tol, k);
            c1[k] = cellOf(mx + tol, k);
        }
        for (int64_t z = c0[2]; z <= c1[2]; ++z)
            for (int64_t y = c0[1]; y <= c1[1]; ++y)
                for (int64_t x = c0[0]; x <= c1[0]; ++x) grid[PointHash::key({x, y, z})].push_back(f);
    }
    MeshDefect d = defect("cracks", MeshDefect::Error,
                          "boundary faces lying on another boundary face (surfaces meshed apart, not joined): "
                          "light leaves the mesh through them");
    auto centroid = [&](const MeshFace& F) {
        Point3 c{0, 0, 0};
        for (uint32_t v : F.points)
            for (int k = 0; k < 3; ++k) c[k] += m.point(v)[k] / 3;
        return c;
    };
    // The face each boundary face lies on (0: none), found on all threads.
    std::vector<uint32_t> onFace(B.size(), 0);
    parallelFor(0, B.size(), [&](unsigned, size_t lo, size_t hi) {
        for (size_t b = lo; b < hi; ++b) {
            const uint32_t f = B[b];
            const MeshFace& F = m.face(f);
            const Point3 c = centroid(F);
            auto it = grid.find(PointHash::key({cellOf(c[0], 0), cellOf(c[1], 1), cellOf(c[2], 2)}));
            if (it == grid.end()) continue;
            for (uint32_t g : it->second) {
                const MeshFace& G = m.face(g);
                if (g == f || dotP(F.normal, G.normal) > -0.999) continue;
                const Point3& a = m.point(G.points[0]);
                if (std::fabs(dotP(G.normal, sub(c, a))) > tol) continue;
                bool inside = true;
                for (int k = 0; k < 3 && inside; ++k) {
                    const Point3& u = m.point(G.points[k]);
                    const Point3& v = m.point(G.points[(k + 1) % 3]);
                    inside = dotP(crossP(sub(v, u), sub(c, u)), G.normal) >= -tol * normP(sub(v, u));
                }
                if (!inside) continue;
                onFace[b] = g;
                break;
            }
        }
    }, 4096);
    double crackArea = 0;  // summed in boundary order, so the reported total does not vary
    for (size_t b = 0; b < B.size(); ++b) {
        if (!onFace[b]) continue;
        const uint32_t f = B[b], g = onFace[b];
        const MeshFace &F = m.face(f), &G = m.face(g);
        crackArea += F.area;
        note(d, "face " + std::to_string(f) + " (tetra " + std::to_string(F.owner) + ", region " +
                    std::to_string(m.region(F.owner)) + ") lies on face " + std::to_string(g) + " (tetra " +
                    std::to_string(G.owner) + ", region " + std::to_string(m.region(G.owner)) + ") at " +
                    at(centroid(F)));
    }
    if (d.count) {
        std::ostringstream o;
        o << " (total area " << crackArea << ", in squared mesh units)";
        d.what += o.str();
        rep.add(d);
    }
}

// Two tetras sharing a face must lie on opposite sides of it; on the same side they overlap
// (a folded or inverted element among correctly oriented ones).
void checkFolds(const TetraMesh& m, MeshCheckReport& rep) {
    MeshDefect d = defect("folded tetras", MeshDefect::Error,
                          "neighbours on the same side of their shared face (overlapping volumes: an "
                          "inverted element)");
    const unsigned chunks = chunkCount(m.faceCount());
    std::vector<MeshDefect> found(chunks);
    parallelChunks(1, m.faceCount() + 1, chunks, [&](unsigned c, size_t lo, size_t hi) {
        for (size_t f = lo; f < hi; ++f) {
            const MeshFace& F = m.face(uint32_t(f));
            if (!F.other) continue;
            uint32_t opp = 0;
            for (uint32_t v : m.tetra(F.other))
                if (v != F.points[0] && v != F.points[1] && v != F.points[2]) opp = v;
            // A numerically flat sliver (height ~1e-11 of its size, as meshers leave them) has no
            // orientation to speak of and no volume to overlap: a fold needs a height beyond rounding.
            double size = std::max({normP(sub(m.point(F.points[1]), m.point(F.points[0]))),
                                    normP(sub(m.point(F.points[2]), m.point(F.points[1]))),
                                    normP(sub(m.point(F.points[0]), m.point(F.points[2])))});
            double hgt = dotP(F.normal, sub(m.point(opp), m.point(F.points[0])));
            if (hgt < -1e-9 * size)
                note(found[c], "tetras " + std::to_string(F.owner) + " and " + std::to_string(F.other) + " at face " +
                                   std::to_string(f) + " " + at(m.point(F.points[0])));
        }
    });
    joinChunks(d, found);
    if (d.count) rep.add(d);
}

void checkEmptyRegions(const TetraMesh& m, MeshCheckReport& rep) {
    std::vector<size_t> n(m.regionCount(), 0);
    for (uint32_t t = 1; t <= m.tetraCount(); ++t) ++n[m.region(t)];
    MeshDefect d = defect("empty regions", MeshDefect::Warning,
                          "region labels below the largest with no tetra (their materials are unused)");
    for (uint32_t r = 1; r < m.regionCount(); ++r)
        if (!n[r]) note(d, "region " + std::to_string(r));
    if (d.count) rep.add(d);
}

}  // namespace

std::string pointText(const Point3& p) {
    std::ostringstream o;
    o.precision(9);
    o << "(" << p[0] << " " << p[1] << " " << p[2] << ")";
    return o.str();
}

std::string MeshDefect::line() const {
    std::ostringstream o;
    o << kind << ": " << count << " " << what;
    for (size_t i = 0; i < examples.size(); ++i) o << (i ? "; " : ", e.g. ") << examples[i];
    if (count > examples.size()) o << "; ...";
    return o.str();
}

void MeshCheckReport::add(MeshDefect d) { defects.push_back(std::move(d)); }

void joinChunks(MeshDefect& d, std::vector<MeshDefect>& chunks) {
    for (auto& c : chunks) {
        d.count += c.count;
        for (auto& e : c.examples)
            if (d.examples.size() < kExamples) d.examples.push_back(std::move(e));
    }
}

bool MeshCheckReport::hasFatal() const {
    for (const auto& d : defects)
        if (d.severity == MeshDefect::Fatal) return true;
    return false;
}

bool MeshCheckReport::hasErrors() const {
    for (const auto& d : defects)
        if (d.severity != MeshDefect::Warning) return true;
    return false;
}

std::string MeshCheckReport::errorText() const {
    std::string s = "mesh check failed:";
    bool fatal = hasFatal();
    for (const auto& d : defects)
        if (d.severity != MeshDefect::Warning) s += "\n  " + d.line();
    auto has = [&](const std::string& kind) {
        return std::any_of(defects.begin(), defects.end(), [&](const MeshDefect& d) { return d.kind == kind; });
    };
    if (fatal) {
        s += "\n  (the kernels cannot run on such a mesh; fix the mesh file)";
        return s;
    }
    // Merging coincident vertices joins cracks whose two sides have the same points; a crack
    // between different triangulations, or a folded tetra, needs the mesh made again.
    if (has("cracks") && has("coincident vertices"))
        s += "\n  (repair: merge coincident vertices with Tcl MeshRepair, C++ mergeCoincidentVertices or "
             "fullmonte-mesh --repair, which joins cracks whose two sides have the same points; sides triangulated "
             "differently need the organs meshed together (fullmonte-mesh);";
    else if (has("cracks"))
        s += "\n  (the cracks' two sides have no points in common: merging vertices cannot join them; mesh the "
             "organs together (fullmonte-mesh from one labelled image, or surfaces that share their triangles);";
    else
        s += "\n  (folded tetras are inverted elements, which merging vertices does not undo: mesh the model again;";
    s += " or accept the defects with --allow-defects, Tcl: allowDefects 1 on the reader; docs/MESH_CHECKS.md)";
    return s;
}

std::vector<std::string> MeshCheckReport::warnings() const {
    std::vector<std::string> w;  // allowed errors first: they change the physics
    for (const auto& d : defects)
        if (d.severity != MeshDefect::Warning) w.push_back("mesh (allowed defect): " + d.line());
    for (const auto& d : defects)
        if (d.severity == MeshDefect::Warning) w.push_back("mesh: " + d.line());
    return w;
}

double meshTolerance(const std::vector<Point3>& points, const MeshCheckOptions& opt) {
    if (opt.tolerance > 0) return opt.tolerance;
    Point3 lo{1e300, 1e300, 1e300}, hi{-1e300, -1e300, -1e300};
    for (size_t i = 1; i < points.size(); ++i)
        for (int k = 0; k < 3; ++k) {
            lo[k] = std::min(lo[k], points[i][k]);
            hi[k] = std::max(hi[k], points[i][k]);
        }
    return points.size() > 1 ? MeshCheckOptions::kRelativeTolerance * normP(sub(hi, lo)) : 0.0;
}

std::vector<std::pair<uint32_t, uint32_t>> coincidentPoints(const std::vector<Point3>& pts,
                                                            const std::vector<char>& used, double tol) {
    std::vector<std::pair<uint32_t, uint32_t>> out;
    if (pts.size() < 3 || !(tol > 0)) return out;
    PointHash H(pts, used, tol);
    const double tol2 = tol * tol;
    const unsigned chunks = chunkCount(pts.size());
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>> found(chunks);
    parallelChunks(1, pts.size(), chunks, [&](unsigned chunk, size_t first, size_t last) {
        for (uint32_t i = uint32_t(first); i < last; ++i) {
            if (!used[i]) continue;
            auto c = H.cell(pts[i]);
            // Only the neighbour cells within tol of the point: usually none, one lookup per point.
            int lo[3], hi[3];
            for (int k = 0; k < 3; ++k) {
                double f = (pts[i][k] - H.lo[k]) / H.h - double(c[k]);
                lo[k] = f * H.h <= tol ? -1 : 0;
                hi[k] = (1 - f) * H.h <= tol ? 1 : 0;
            }
            // The cells of one row (dx = lo..hi) have consecutive keys: one search per row.
            for (int dz = lo[2]; dz <= hi[2]; ++dz)
                for (int dy = lo[1]; dy <= hi[1]; ++dy) {
                    auto [from, to] = H.find(PointHash::key({c[0] + lo[0], c[1] + dy, c[2] + dz}),
                                             PointHash::key({c[0] + hi[0], c[1] + dy, c[2] + dz}));
                    for (size_t s = from; s < to; ++s) {
                        uint32_t j = H.sorted[s].second;
                        if (j <= i) continue;
                        Point3 e = sub(pts[i], pts[j]);
                        if (dotP(e, e) <= tol2) found[chunk].push_back({i, j});
                    }
                }
        }
    });
    for (auto& f : found) out.insert(out.end(), f.begin(), f.end());
    std::sort(out.begin(), out.end());
    return out;
}

void checkDuplicateTetras(const std::vector<TetraPoints>& tetras, const std::vector<Point3>& points,
                          MeshCheckReport& rep) {
    std::vector<std::pair<TetraPoints, uint32_t>> keys(tetras.empty() ? 0 : tetras.size() - 1);
    parallelFor(1, tetras.size(), [&](unsigned, size_t lo, size_t hi) {
        for (size_t t = lo; t < hi; ++t) {
            TetraPoints k = tetras[t];
            std::sort(k.begin(), k.end());
            keys[t - 1] = {k, uint32_t(t)};
        }
    });
    parallelSort(keys);  // (points, tetra) pairs are all different
    MeshDefect d = defect("duplicated tetras", MeshDefect::Fatal,
                          "tetras listing the same four points as an earlier one (the volume would count twice)");
    for (size_t i = 1; i < keys.size(); ++i)
        if (keys[i].first == keys[i - 1].first) {
            size_t j = i;
            while (j > 0 && keys[j - 1].first == keys[i].first) --j;
            note(d, "tetra " + std::to_string(keys[i].second) + " repeats tetra " + std::to_string(keys[j].second) +
                        " at " + at(points[keys[i].first[0]]));
        }
    if (d.count) rep.add(d);
}

// The kernels hold positions in single precision (24-bit mantissa): at coordinate magnitude C a
// position is resolved to C * 2^-24, which must stay small against the shortest edge, or the
// faces a packet meets come out wrong (a mesh in micrometres, or in scanner coordinates far from
// the origin). Above kMaxCoordinateOverEdge the resolution is over 0.6% of the shortest edge.
constexpr double kMaxCoordinateOverEdge = 1e5;
void checkPrecision(const TetraMesh& m, MeshCheckReport& rep) {
    if (!m.tetraCount()) return;
    double far = 0;
    for (uint32_t p = 1; p <= m.pointCount(); ++p)  // point 0 is a placeholder
        for (int k = 0; k < 3; ++k) far = std::max(far, std::fabs(m.point(p)[k]));
    const unsigned chunks = chunkCount(m.tetraCount());
    std::vector<double> shortest(chunks, INFINITY);
    std::vector<uint32_t> which(chunks, 0);
    parallelChunks(1, m.tetraCount() + 1, chunks, [&](unsigned c, size_t lo, size_t hi) {
        for (size_t t = lo; t < hi; ++t) {
            const auto& T = m.tetra(uint32_t(t));
            for (int i = 0; i < 4; ++i)
                for (int j = i + 1; j < 4; ++j) {
                    const Point3 d = sub(m.point(T[i]), m.point(T[j]));
                    const double e2 = dotP(d, d);
                    if (e2 < shortest[c]) shortest[c] = e2, which[c] = uint32_t(t);
                }
        }
    });
    const size_t best = size_t(std::min_element(shortest.begin(), shortest.end()) - shortest.begin());
    const double edge = std::sqrt(shortest[best]);
    if (!(edge > 0) || far <= kMaxCoordinateOverEdge * edge) return;
    MeshDefect d = defect("coordinates far from the origin", MeshDefect::Warning,
                          "mesh whose coordinates are too large for its smallest tetras in single precision (the "
                          "kernels' positions): move the mesh near the origin, or use larger units");
    std::ostringstream o;
    o.precision(3);
    o << "largest |coordinate| " << far << ", shortest edge " << edge << " (tetra " << which[best]
      << "): positions resolved to " << far * std::ldexp(1.0, -24) << ", " << 100 * far * std::ldexp(1.0, -24) / edge
      << "% of that edge";
    note(d, o.str());
    rep.add(d);
}

void checkMeshStructure(const TetraMesh& mesh, MeshCheckReport& rep) {
    checkPrecision(mesh, rep);
    checkComponents(mesh, rep);
    checkCoincidentVertices(mesh, rep);
    checkCracks(mesh, rep);
    checkFolds(mesh, rep);
    checkEmptyRegions(mesh, rep);
}

}  // namespace fm
