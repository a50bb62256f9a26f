// SPDX-License-Identifier: GPL-3.0-or-later
#include "Geometry/MeshRepair.hpp"

#include <numeric>
#include <sstream>

#include "Common/Errors.hpp"

namespace fm {

namespace {

// Lowest-id representative of each point's cluster (union of all coincident pairs).
std::vector<uint32_t> clusterRoots(const std::vector<Point3>& pts, const std::vector<char>& used, double tol) {
    std::vector<uint32_t> root(pts.size());
    std::iota(root.begin(), root.end(), 0u);
    auto find = [&](uint32_t a) {
        while (root[a] != a) a = root[a] = root[root[a]];
        return a;
    };
    for (auto [a, b] : coincidentPoints(pts, used, tol)) {
        uint32_t ra = find(a), rb = find(b);
        if (ra != rb) root[std::max(ra, rb)] = std::min(ra, rb);
    }
    for (uint32_t i = 0; i < pts.size(); ++i) root[i] = find(i);
    return root;
}

std::string at(const Point3& p) { return pointText(p); }

}  // namespace

std::string RepairReport::summary() const {
    std::ostringstream o;
    o << "merged " << pointsMerged << " coincident points (tolerance " << tolerance << "): " << pointsBefore
      << " -> " << pointsAfter << " points, " << facesJoined << " boundary faces joined";
    return o.str();
}

TetraMesh mergeCoincidentVertices(const TetraMesh& mesh, double tolerance, RepairReport* report,
                                  const MeshCheckOptions& opt) {
    MeshCheckOptions tolOpt;
    tolOpt.tolerance = tolerance > 0 ? tolerance : 0;
    const double tol = meshTolerance(mesh.points(), tolOpt);
    std::vector<char> used(mesh.points().size(), 0);
    for (const auto& T : mesh.tetras())
        for (uint32_t v : T) used[v] = 1;
    used[0] = 0;
    std::vector<uint32_t> root = clusterRoots(mesh.points(), used, tol);

    RepairReport rep;
    rep.tolerance = tol;
    rep.pointsBefore = mesh.pointCount();
    std::vector<uint32_t> newId(root.size(), 0);
    std::vector<Point3> pts(1, Point3{0, 0, 0});
    for (uint32_t i = 1; i < root.size(); ++i) {
        if (!used[i]) continue;
        if (root[i] != i) {
            ++rep.pointsMerged;
            if (rep.examples.size() < 3)
                rep.examples.push_back("point " + std::to_string(i) + " -> " + std::to_string(root[i]) + " at " +
                                       at(mesh.point(i)));
            continue;
        }
        newId[i] = uint32_t(pts.size());
        pts.push_back(mesh.point(i));
    }
    rep.pointsAfter = pts.size() - 1;
    std::vector<TetraPoints> tets(mesh.tetras().size());
    for (uint32_t t = 1; t <= mesh.tetraCount(); ++t) {
        TetraPoints T = mesh.tetra(t);
        for (uint32_t& v : T) v = newId[root[v]];
        for (int a = 0; a < 4; ++a)
            for (int b = a + 1; b < 4; ++b)
                if (T[a] == T[b])
                    throw ModelError("mergeCoincidentVertices: tolerance " + std::to_string(tol) + " collapses tetra " +
                                     std::to_string(t) + " (two of its corners merge at " +
                                     at(mesh.point(mesh.tetra(t)[a])) + "); use a smaller tolerance");
        tets[t] = T;
    }
    TetraMesh out(std::move(pts), std::move(tets), mesh.regions(), opt);
    out.unitDimension = mesh.unitDimension;
    rep.facesJoined = mesh.boundaryFaces().size() - out.boundaryFaces().size();
    if (report) *report = rep;
    return out;
}

}  // namespace fm
