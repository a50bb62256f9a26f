// SPDX-License-Identifier: GPL-3.0-or-later
// meshSurfaces with CGAL's Mesh_3 over a polyhedral complex: closed organ surfaces are cut into
// patches, one per pair of labels they separate, so each interface is meshed once and both sides
// conform. The only translation unit that includes CGAL's polyhedral meshing.
#include <CGAL/Exact_predicates_inexact_constructions_kernel.h>
#include <CGAL/IO/polygon_soup_io.h>
#include <CGAL/box_intersection_d.h>
#include <CGAL/intersections.h>
#include <CGAL/Mesh_complex_3_in_triangulation_3.h>
#include <CGAL/Mesh_criteria_3.h>
#include <CGAL/Mesh_triangulation_3.h>
#include <CGAL/Polygon_mesh_processing/measure.h>
#include <CGAL/Polygon_mesh_processing/orient_polygon_soup.h>
#include <CGAL/Polygon_mesh_processing/orientation.h>
#include <CGAL/Polygon_mesh_processing/polygon_soup_to_polygon_mesh.h>
#include <CGAL/Polygon_mesh_processing/repair_polygon_soup.h>
#include <CGAL/Polyhedral_complex_mesh_domain_3.h>
#include <CGAL/Side_of_triangle_mesh.h>
#include <CGAL/Surface_mesh.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "Common/Errors.hpp"
#include "Geometry/Meshing/CGALPipeline.hpp"

namespace fm {

namespace {

using K = CGAL::Exact_predicates_inexact_constructions_kernel;
using Polyhedron = CGAL::Mesh_polyhedron_3<K>::type;
using Domain = CGAL::Polyhedral_complex_mesh_domain_3<K>;
using Tr = CGAL::Mesh_triangulation_3<Domain, CGAL::Default, CGAL::Sequential_tag>::type;
using C3t3 = CGAL::Mesh_complex_3_in_triangulation_3<Tr, Domain::Corner_index, Domain::Curve_index>;
using Criteria = CGAL::Mesh_criteria_3<Tr>;
using SurfaceMesh = CGAL::Surface_mesh<K::Point_3>;
namespace PMP = CGAL::Polygon_mesh_processing;
namespace params = CGAL::parameters;
using Triangle = std::array<size_t, 3>;

// One surface as read and checked: closed, oriented outward, in its own point numbering.
struct Closed {
    int32_t label = 0;
    std::string file;
    std::vector<K::Point_3> points;
    std::vector<Triangle> triangles;
    SurfaceMesh mesh;
    double volume = 0;
    int32_t outside = 0;  // label on the other side, from nesting
};

void readSoup(const RegionSurface& in, std::vector<K::Point_3>& points, std::vector<std::vector<size_t>>& polys) {
    if (!in.surface.triangles.empty()) {
        for (const Point3& p : in.surface.points) points.emplace_back(p[0], p[1], p[2]);
        for (const auto& t : in.surface.triangles) {
            for (uint32_t v : t)
                if (v >= points.size()) throw FormatError(in.file + ": a triangle refers to point " + std::to_string(v) + ", past the end");
            polys.push_back({t[0], t[1], t[2]});
        }
        return;
    }
    std::error_code ec;
    if (!std::filesystem::is_regular_file(in.file, ec)) throw Error(in.file + ": no such file");
    if (!CGAL::IO::read_polygon_soup(in.file, points, polys) || polys.empty())
        throw FormatError(in.file + ": not a readable triangle surface (.stl, .obj, .off or .ply)");
}

Closed readClosed(const RegionSurface& in) {
    Closed c;
    c.label = in.label;
    c.file = in.file;
    std::vector<std::vector<size_t>> polys;
    readSoup(in, c.points, polys);
    for (const auto& p : c.points)
        if (!std::isfinite(p.x()) || !std::isfinite(p.y()) || !std::isfinite(p.z()))
            throw FormatError(in.file + ": a point has a non-finite coordinate");
    PMP::repair_polygon_soup(c.points, polys);  // merges duplicate points (STL), drops degenerate faces
    std::vector<std::vector<size_t>> tris;
    for (const auto& p : polys)
        for (size_t k = 1; k + 1 < p.size(); ++k) tris.push_back({p[0], p[k], p[k + 1]});
    if (!PMP::orient_polygon_soup(c.points, tris) || !PMP::is_polygon_soup_a_polygon_mesh(tris))
        throw FormatError(in.file + ": the surface is not a 2-manifold (an edge with more than two triangles)");
    PMP::polygon_soup_to_polygon_mesh(c.points, tris, c.mesh);
    if (!CGAL::is_closed(c.mesh))
        throw FormatError(in.file + ": the surface is not closed (it has border edges): it cannot bound region " +
                          std::to_string(in.label));
    if (!PMP::is_outward_oriented(c.mesh)) PMP::reverse_face_orientations(c.mesh);
    c.volume = PMP::volume(c.mesh);
    c.points.clear();
    for (auto v : c.mesh.vertices()) c.points.push_back(c.mesh.point(v));
    for (auto f : c.mesh.faces()) {
        Triangle t;
        int i = 0;
        for (auto v : CGAL::vertices_around_face(c.mesh.halfedge(f), c.mesh)) t[i++] = size_t(v);
        c.triangles.push_back(t);
    }
    return c;
}

// Label outside each surface: that of the smallest other surface containing it.
void assignOutsides(std::vector<Closed>& s) {
    for (size_t i = 0; i < s.size(); ++i) {
        double best = INFINITY;
        for (size_t j = 0; j < s.size(); ++j) {
            if (i == j) continue;
            CGAL::Side_of_triangle_mesh<SurfaceMesh, K> inside(s[j].mesh);
            CGAL::Bounded_side side = CGAL::ON_BOUNDARY;
            for (size_t v = 0; v < s[i].points.size() && side == CGAL::ON_BOUNDARY; ++v) side = inside(s[i].points[v]);
            if (side == CGAL::ON_BOUNDARY)
                throw FormatError(s[i].file + " and " + s[j].file + ": the two surfaces coincide");
            if (side == CGAL::ON_BOUNDED_SIDE && s[j].volume < best) {
                best = s[j].volume;
                s[i].outside = s[j].label;
            }
        }
    }
}

bool isRotation(const Triangle& a, const Triangle& b) {
    return a == b || a == Triangle{b[1], b[2], b[0]} || a == Triangle{b[2], b[0], b[1]};
}

struct Patches {
    std::vector<K::Point_3> points;
    std::map<std::pair<int, int>, std::vector<std::vector<size_t>>> triangles;  // (inside, outside)
    std::map<std::array<double, 3>, size_t> ids;  // points merged by exact coordinates
    size_t point(const K::Point_3& q) {
        auto [it, added] = ids.emplace(std::array<double, 3>{q.x(), q.y(), q.z()}, points.size());
        if (added) points.push_back(q);
        return it->second;
    }
};

// A labelled surface: its triangles grouped by the pair of labels they separate.
Patches labelledPatches(const RegionSurface& in) {
    const TriangleSurface& t = in.surface;
    if (t.sides.empty())
        throw FormatError(in.file + ": no per-triangle labels (a 'Labels' cell array of 2 components); "
                          "for a closed surface of one region give FILE:LABEL");
    if (t.sides.size() != t.triangles.size())
        throw FormatError(in.file + ": " + std::to_string(t.sides.size()) + " label pairs for " +
                          std::to_string(t.triangles.size()) + " triangles");
    Patches p;
    for (size_t i = 0; i < t.triangles.size(); ++i) {
        auto [inside, outside] = t.sides[i];
        if (inside < 0 || outside < 0 || inside == outside)
            throw FormatError(in.file + ": triangle " + std::to_string(i) + " separates labels " + std::to_string(inside) +
                              " and " + std::to_string(outside) + " (two different labels >= 0 expected)");
        std::vector<size_t> tri;
        for (uint32_t v : t.triangles[i]) {
            if (v >= t.points.size()) throw FormatError(in.file + ": triangle " + std::to_string(i) + " refers to point " + std::to_string(v) + ", past the end");
            const Point3& q = t.points[v];
            tri.push_back(p.point(K::Point_3(q[0], q[1], q[2])));
        }
        p.triangles[{inside, outside}].push_back(tri);
    }
    return p;
}

// Points merged by exact coordinates; a triangle in two surfaces becomes one interface.
Patches buildPatches(const std::vector<Closed>& s) {
    Patches p;
    struct Use { size_t surface; Triangle t; };
    std::map<Triangle, std::vector<Use>> uses;
    for (size_t i = 0; i < s.size(); ++i)
        for (const Triangle& t : s[i].triangles) {
            Triangle g;
            for (int k = 0; k < 3; ++k) g[k] = p.point(s[i].points[t[k]]);
            Triangle key = g;
            std::sort(key.begin(), key.end());
            uses[key].push_back({i, g});
        }
    for (const auto& [key, u] : uses) {
        const Closed& a = s[u[0].surface];
        std::pair<int, int> sides{a.label, a.outside};
        if (u.size() > 2)
            throw FormatError(a.file + ": a triangle is shared by " + std::to_string(u.size()) + " surfaces (at most 2)");
        if (u.size() == 2) {
            const Closed& b = s[u[1].surface];
            // Touching organs see the shared triangle from opposite sides (b outside a); a surface
            // touching its container from inside sees it from the same side (both outsides beyond).
            const Triangle& t = u[0].t;
            bool reversed = isRotation(u[1].t, Triangle{t[0], t[2], t[1]});
            sides.second = reversed ? b.label : (a.volume < b.volume ? b.outside : a.outside);
            if (!reversed && a.volume > b.volume) sides.first = b.label;
        }
        if (sides.first == sides.second) continue;  // inside one region: no interface
        const Triangle& t = u[0].t;
        p.triangles[sides].push_back({t[0], t[1], t[2]});
    }
    return p;
}

// ---- Intersection checks ----
// The polyhedral-complex domain needs surfaces that meet only along triangles they share: a
// crossing, a coplanar overlap or a touch between different triangles makes refinement crash or
// run without end. Triangles are compared in pairs whose bounding boxes overlap (CGAL's box
// intersection, O(n log n) in the triangles of all surfaces together).

// A triangle of the checked set: its corners, their numbers after merging points by exact
// coordinates, and the surface (or, for a labelled surface, the patch) it belongs to.
struct CheckedTriangle {
    std::array<K::Point_3, 3> p;
    std::array<size_t, 3> id;
    size_t owner;
};

std::string pointText(const K::Point_3& q) {
    std::ostringstream s;
    s.precision(6);
    s << "(" << q.x() << ", " << q.y() << ", " << q.z() << ")";
    return s.str();
}

// A point where two triangles meet: the mean of the corners of their intersection, else the
// first triangle's centroid.
K::Point_3 contactPoint(const CheckedTriangle& a, const CheckedTriangle& b) {
    K::Triangle_3 ta(a.p[0], a.p[1], a.p[2]), tb(b.p[0], b.p[1], b.p[2]);
    std::vector<K::Point_3> pts;
    if (auto r = CGAL::intersection(ta, tb)) {
        if (const auto* q = boost::get<K::Point_3>(&*r)) pts.push_back(*q);
        else if (const auto* g = boost::get<K::Segment_3>(&*r)) pts = {g->source(), g->target()};
        else if (const auto* t = boost::get<K::Triangle_3>(&*r)) pts = {t->vertex(0), t->vertex(1), t->vertex(2)};
        else if (const auto* v = boost::get<std::vector<K::Point_3>>(&*r)) pts = *v;
    }
    if (pts.empty()) pts.assign(a.p.begin(), a.p.end());
    double x = 0, y = 0, z = 0;
    for (const auto& q : pts) x += q.x(), y += q.y(), z += q.z();
    const double n = double(pts.size());
    return K::Point_3(x / n, y / n, z / n);
}

// Whether two triangles meet anywhere but at the corners they have in common (by exact
// coordinates). Triangles with all three corners in common are the same triangle: `sameOk`
// says whether that is allowed (a triangle two surfaces share). Corners in common are allowed
// only when `cornerOk` accepts each of them.
template <class CornerOk>
bool conflict(const CheckedTriangle& a, const CheckedTriangle& b, bool sameOk, const CornerOk& cornerOk) {
    int ia[3], ib[3], common = 0;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            if (a.id[i] == b.id[j]) {
                ia[common] = i;
                ib[common] = j;
                ++common;
            }
    if (common == 3) return !sameOk;
    for (int c = 0; c < common; ++c)
        if (!cornerOk(a.id[ia[c]])) return true;
    if (common == 0) return CGAL::do_intersect(K::Triangle_3(a.p[0], a.p[1], a.p[2]), K::Triangle_3(b.p[0], b.p[1], b.p[2]));
    if (common == 2) {
        // Two triangles with an edge in common overlap beyond it only when they are coplanar and
        // their third corners lie on the same side of the edge (a fold).
        const K::Point_3& p = a.p[ia[0]];
        const K::Point_3& q = a.p[ia[1]];
        const K::Point_3& r = a.p[3 - ia[0] - ia[1]];
        const K::Point_3& s = b.p[3 - ib[0] - ib[1]];
        return CGAL::coplanar(p, q, r, s) && CGAL::coplanar_orientation(p, q, r, s) == CGAL::POSITIVE;
    }
    // One corner in common: they meet elsewhere exactly when the edge of either opposite that
    // corner meets the other triangle.
    const int oa = ia[0], ob = ib[0];
    K::Segment_3 ea(a.p[(oa + 1) % 3], a.p[(oa + 2) % 3]), eb(b.p[(ob + 1) % 3], b.p[(ob + 2) % 3]);
    return CGAL::do_intersect(ea, K::Triangle_3(b.p[0], b.p[1], b.p[2])) ||
           CGAL::do_intersect(eb, K::Triangle_3(a.p[0], a.p[1], a.p[2]));
}

// The first pair (lowest indices) of triangles for which `bad(i, j)` holds among those whose
// bounding boxes meet; {npos, npos} when none.
template <class Bad>
std::pair<size_t, size_t> firstConflict(const std::vector<CheckedTriangle>& t, const Bad& bad) {
    using Box = CGAL::Box_intersection_d::Box_with_info_d<double, 3, size_t>;
    std::vector<Box> boxes;
    boxes.reserve(t.size());
    for (size_t i = 0; i < t.size(); ++i) {
        CGAL::Bbox_3 b = t[i].p[0].bbox() + t[i].p[1].bbox() + t[i].p[2].bbox();
        boxes.emplace_back(b, i);
    }
    std::pair<size_t, size_t> first{SIZE_MAX, SIZE_MAX};
    CGAL::box_self_intersection_d(boxes.begin(), boxes.end(), [&](const Box& x, const Box& y) {
        size_t i = std::min(x.info(), y.info()), j = std::max(x.info(), y.info());
        if (std::make_pair(i, j) < first && bad(i, j)) first = {i, j};
    });
    return first;
}

// Refuses a triangle whose corners are collinear: it has no plane to be meshed on.
void requireAreas(const std::vector<CheckedTriangle>& t, const std::vector<std::string>& ownerName) {
    for (const auto& x : t)
        if (CGAL::collinear(x.p[0], x.p[1], x.p[2]))
            throw FormatError(ownerName[x.owner] + ": a triangle near " + pointText(x.p[0]) +
                              " has no area (its corners are collinear)");
}

// Closed surfaces: none may intersect itself, and two may meet only along triangles both have
// (the same three corners), at the corners and edges of those triangles.
void checkIntersections(const std::vector<Closed>& s) {
    std::vector<CheckedTriangle> t;
    std::map<std::array<double, 3>, size_t> ids;
    std::map<std::array<size_t, 3>, std::set<size_t>> owners;  // sorted corner ids -> surfaces
    for (size_t i = 0; i < s.size(); ++i)
        for (const Triangle& tri : s[i].triangles) {
            CheckedTriangle c;
            c.owner = i;
            for (int k = 0; k < 3; ++k) {
                c.p[k] = s[i].points[tri[k]];
                c.id[k] = ids.emplace(std::array<double, 3>{c.p[k].x(), c.p[k].y(), c.p[k].z()}, ids.size()).first->second;
            }
            std::array<size_t, 3> key = c.id;
            std::sort(key.begin(), key.end());
            owners[key].insert(i);
            t.push_back(c);
        }
    std::vector<std::string> names;
    for (const auto& x : s) names.push_back(x.file);
    requireAreas(t, names);
    std::set<size_t> sharedCorners;  // corners of triangles that two surfaces have
    for (const auto& [key, who] : owners)
        if (who.size() > 1) sharedCorners.insert(key.begin(), key.end());
    auto bad = [&](size_t i, size_t j) {
        const CheckedTriangle &a = t[i], &b = t[j];
        if (a.owner == b.owner) return conflict(a, b, false, [](size_t) { return true; });
        return conflict(a, b, true, [&](size_t v) { return sharedCorners.count(v) > 0; });
    };
    auto [i, j] = firstConflict(t, bad);
    if (i == SIZE_MAX) return;
    const std::string where = pointText(contactPoint(t[i], t[j]));
    if (t[i].owner == t[j].owner) throw FormatError(s[t[i].owner].file + " intersects itself near " + where);
    throw FormatError(s[t[i].owner].file + " and " + s[t[j].owner].file + " intersect near " + where +
                      ": organ surfaces must not cross; a surface inside another is fine, and surfaces that "
                      "touch must share their triangles there (one labelled surface, or the same triangles in "
                      "both files)");
}

// A labelled surface: its patches may meet only at the edges and corners of their triangles.
void checkIntersections(const Patches& p, const std::string& file) {
    std::vector<CheckedTriangle> t;
    std::vector<std::string> names;
    std::vector<std::pair<int, int>> sides;
    for (const auto& [pair, tris] : p.triangles) {
        names.push_back(file);
        sides.push_back(pair);
        for (const auto& tri : tris) {
            CheckedTriangle c;
            c.owner = names.size() - 1;
            for (int k = 0; k < 3; ++k) {
                c.id[k] = tri[k];
                c.p[k] = p.points[tri[k]];
            }
            t.push_back(c);
        }
    }
    requireAreas(t, names);
    auto [i, j] = firstConflict(t, [&](size_t a, size_t b) { return conflict(t[a], t[b], false, [](size_t) { return true; }); });
    if (i == SIZE_MAX) return;
    auto patch = [&](size_t k) {
        return "the interface between labels " + std::to_string(sides[t[k].owner].first) + " and " +
               std::to_string(sides[t[k].owner].second);
    };
    throw FormatError(file + ": " + patch(i) + (t[i].owner == t[j].owner ? " intersects itself" : " and " + patch(j) + " intersect") +
                      " near " + pointText(contactPoint(t[i], t[j])) +
                      ": interfaces may meet only along the edges and corners of their triangles");
}

std::vector<Polyhedron> patchPolyhedra(const Patches& p, std::vector<std::pair<int, int>>& sides) {
    std::vector<Polyhedron> out;
    for (const auto& [pair, tris] : p.triangles) {
        std::vector<K::Point_3> pts;
        std::vector<std::vector<size_t>> local;
        std::map<size_t, size_t> remap;
        for (const auto& t : tris) {
            std::vector<size_t> l;
            for (size_t v : t) {
                auto [it, added] = remap.emplace(v, pts.size());
                if (added) pts.push_back(p.points[v]);
                l.push_back(it->second);
            }
            local.push_back(l);
        }
        if (!PMP::is_polygon_soup_a_polygon_mesh(local))
            throw FormatError("the interface between labels " + std::to_string(pair.first) + " and " +
                              std::to_string(pair.second) + " is not a manifold surface (surfaces touching at a point or an edge?)");
        out.emplace_back();
        PMP::polygon_soup_to_polygon_mesh(pts, local, out.back());
        sides.push_back(pair);
    }
    return out;
}

// The fewest tetras and surface triangles Mesh_3 makes of the patches at these (resolved) sizes:
// each label's volume (from the patches' signed volumes: a triangle's normal points into its
// second label) at its cell size, each patch's area at the smaller facet size of its labels.
MeshingEstimate fewestElements(const Patches& p, const MeshingOptions& o) {
    auto size = [](const std::map<int32_t, double>& byLabel, double global, int label) {
        auto it = byLabel.find(label);
        return it == byLabel.end() ? global : it->second;
    };
    CGAL::Bbox_3 box = CGAL::bbox_3(p.points.begin(), p.points.end());
    const K::Point_3 c((box.xmin() + box.xmax()) / 2, (box.ymin() + box.ymax()) / 2, (box.zmin() + box.zmax()) / 2);
    std::map<int, double> volumes;
    MeshingEstimate e;
    double area = 0, facetSize = o.facetSize;
    for (const auto& [pair, tris] : p.triangles) {
        const double s = std::min(size(o.facetSizeByLabel, o.facetSize, pair.first), size(o.facetSizeByLabel, o.facetSize, pair.second));
        double a = 0;
        for (const auto& t : tris) {
            const K::Point_3 &p0 = p.points[t[0]], &p1 = p.points[t[1]], &p2 = p.points[t[2]];
            a += std::sqrt(CGAL::squared_area(p0, p1, p2));
            const double v = CGAL::volume(c, p0, p1, p2);
            volumes[pair.first] += v;
            volumes[pair.second] -= v;
        }
        e.triangles += fewestTriangles(a, s);
        area += a;
        facetSize = std::min(facetSize, s);
    }
    double volume = 0, cellSize = o.cellSize;
    for (const auto& [label, v] : volumes) {
        if (label == 0 || !(v > 0)) continue;
        const double s = size(o.cellSizeByLabel, o.cellSize, label);
        e.tetras += fewestTetras(v, s);
        volume += v;
        cellSize = std::min(cellSize, s);
    }
    completeEstimate(e, 0, volume, cellSize, area, facetSize);
    return e;
}

// Labels on the two sides of a surface point: those of its patch.
struct PatchLabels {
    const Domain* domain;
    std::pair<int, int> operator()(Domain::Surface_patch_index p) const {
        const auto& pair = domain->incident_subdomains_indices(p);
        return {int(pair.first), int(pair.second)};
    }
};
using Sizing = LabelSizing<Domain, PatchLabels>;

}  // namespace

TetraMesh meshSurfaces(const std::vector<RegionSurface>& surfaces, const MeshingOptions& options) {
    validateMeshingOptions(options);
    if (surfaces.empty()) throw ParameterError("meshSurfaces: no surfaces");
    bool labelled = surfaces.size() == 1 && surfaces[0].label == 0;
    for (const auto& s : surfaces)
        if (s.label < 1 && !labelled)
            throw ParameterError(s.file + ": region label must be >= 1 (0 is the outside; a labelled surface, "
                                          "label 0, must be the only input)");
    MeshingOptions o = options;
    StageReporter report(o.progress);
    CGAL::Random rng(o.seed);
    CGAL::get_default_random() = CGAL::Random(o.seed);

    report.start("reading surfaces");
    Patches patches;
    std::vector<Closed> closed;
    if (labelled) {
        patches = labelledPatches(surfaces[0]);
    } else {
        for (const auto& s : surfaces) closed.push_back(readClosed(s));
    }
    size_t triangles = 0;
    for (const auto& [pair, tris] : patches.triangles) triangles += tris.size();
    for (const auto& c : closed) triangles += c.triangles.size();
    report.end(std::to_string(triangles) + " triangles");
    report.start("checking intersections");
    if (labelled) checkIntersections(patches, surfaces[0].file);
    else checkIntersections(closed);
    report.end("none");
    report.start("building interfaces");
    if (!labelled) {
        assignOutsides(closed);
        patches = buildPatches(closed);
    }
    std::set<int32_t> labels;
    for (const auto& [pair, tris] : patches.triangles)
        for (int l : {pair.first, pair.second})
            if (l != 0) labels.insert(l);
    requireKnownLabels(o, labels, "the surfaces have");
    std::vector<std::pair<int, int>> sides;
    std::vector<Polyhedron> polyhedra = patchPolyhedra(patches, sides);
    CGAL::Bbox_3 box = CGAL::bbox_3(patches.points.begin(), patches.points.end());
    double L = std::max({box.xmax() - box.xmin(), box.ymax() - box.ymin(), box.zmax() - box.zmin()});
    if (o.cellSize == 0) o.cellSize = L / 30;
    if (o.facetSize == 0) o.facetSize = L / 40;
    if (o.facetDistance == 0) o.facetDistance = L / 200;
    report.end(std::to_string(polyhedra.size()) + " interfaces");
    const MeshingEstimate least = fewestElements(patches, o);
    requireMeshingMemory(least, "meshing", kSurfaceMeshTooLargeAdvice);
    if (o.progress) o.progress("surfaces: " + least.detail);

    Domain domain(polyhedra.begin(), polyhedra.end(), sides.begin(), sides.end(), &rng);
    domain.detect_features();  // protects the curves where interfaces meet, and sharp edges
    Sizing cellSize{&domain, o.cellSize, &o.cellSizeByLabel, {&domain}};
    Sizing facetSize{&domain, o.facetSize, &o.facetSizeByLabel, {&domain}};
    Criteria criteria(params::edge_size = o.facetSize, params::facet_angle = o.facetAngle,
                      params::facet_size = facetSize, params::facet_distance = o.facetDistance,
                      params::cell_radius_edge_ratio = o.cellRadiusEdgeRatio, params::cell_size = cellSize);
    C3t3 c3t3 = refineAndOptimise<C3t3>(domain, criteria, o, report);
    return extractTetraMesh(c3t3, Point3{0, 0, 0});
}

}  // namespace fm
