// SPDX-License-Identifier: GPL-3.0-or-later
#include "Geometry/Meshing/MeshQuality.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace fm {

namespace {

constexpr double kDegrees = 180.0 / 3.14159265358979323846;

Point3 scaled(const Point3& a, double s) { return {a[0] * s, a[1] * s, a[2] * s}; }
Point3 added(const Point3& a, const Point3& b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }

// Circumradius / shortest edge of the tetra (a, b, c, d).
double radiusEdgeRatio(const std::array<Point3, 4>& p) {
    Point3 a = sub(p[0], p[3]), b = sub(p[1], p[3]), c = sub(p[2], p[3]);
    double det = dotP(a, crossP(b, c));
    Point3 num = added(added(scaled(crossP(b, c), dotP(a, a)), scaled(crossP(c, a), dotP(b, b))),
                       scaled(crossP(a, b), dotP(c, c)));
    double radius = normP(num) / (2 * std::fabs(det));
    double shortest = INFINITY;
    for (int i = 0; i < 4; ++i)
        for (int j = i + 1; j < 4; ++j) shortest = std::min(shortest, normP(sub(p[i], p[j])));
    return radius / shortest;
}

// The six dihedral angles (degrees): pi minus the angle between two faces' outward normals.
void dihedralAngles(const std::array<Point3, 4>& p, std::vector<double>& out) {
    Point3 n[4];
    for (int k = 0; k < 4; ++k) {
        const Point3 &a = p[(k + 1) % 4], &b = p[(k + 2) % 4], &c = p[(k + 3) % 4];
        Point3 v = crossP(sub(b, a), sub(c, a));
        if (dotP(v, sub(p[k], a)) > 0) v = scaled(v, -1);  // away from the opposite vertex
        n[k] = scaled(v, 1 / normP(v));
    }
    for (int k = 0; k < 4; ++k)
        for (int l = k + 1; l < 4; ++l)
            out.push_back(180 - std::acos(std::clamp(dotP(n[k], n[l]), -1.0, 1.0)) * kDegrees);
}

double median(std::vector<double>& v) {
    if (v.empty()) return 0;
    auto mid = v.begin() + v.size() / 2;
    std::nth_element(v.begin(), mid, v.end());
    return *mid;
}

}  // namespace

MeshQuality meshQuality(const TetraMesh& mesh) {
    std::vector<double> angles, ratios;
    angles.reserve(6 * mesh.tetraCount());
    ratios.reserve(mesh.tetraCount());
    for (uint32_t t = 1; t <= mesh.tetraCount(); ++t) {
        std::array<Point3, 4> p;
        for (int i = 0; i < 4; ++i) p[i] = mesh.point(mesh.tetra(t)[i]);
        dihedralAngles(p, angles);
        ratios.push_back(radiusEdgeRatio(p));
    }
    MeshQuality q;
    if (angles.empty()) return q;
    q.minDihedral = *std::min_element(angles.begin(), angles.end());
    q.maxRadiusEdge = *std::max_element(ratios.begin(), ratios.end());
    q.medianDihedral = median(angles);
    q.medianRadiusEdge = median(ratios);
    return q;
}

std::vector<RegionVolume> regionVolumes(const TetraMesh& mesh, const LabelImage* image) {
    std::map<int32_t, RegionVolume> rows;
    for (uint32_t t = 1; t <= mesh.tetraCount(); ++t) {
        RegionVolume& r = rows[int32_t(mesh.region(t))];
        r.tetras++;
        r.meshVolume += mesh.volume(t);
    }
    if (image)
        for (const auto& [label, n] : image->labelCounts()) {
            if (label == 0) continue;
            RegionVolume& r = rows[label];
            r.voxels = n;
            r.voxelVolume = double(n) * image->voxelVolume();
        }
    std::vector<RegionVolume> out;
    for (auto& [label, r] : rows) {
        r.label = label;
        out.push_back(r);
    }
    return out;
}

std::string formatMeshReport(const TetraMesh& mesh, const std::vector<RegionVolume>& volumes,
                             const MeshQuality& q) {
    std::ostringstream s;
    char line[200];
    s << mesh.tetraCount() << " tetras, " << mesh.pointCount() << " points, " << mesh.boundaryFaces().size()
      << " boundary faces\n";
    bool image = std::any_of(volumes.begin(), volumes.end(), [](const RegionVolume& r) { return r.voxels > 0; });
    s << (image ? "region   tetras  mesh volume (mm^3)  voxels  voxel volume (mm^3)  difference\n"
                : "region   tetras  mesh volume (mm^3)\n");
    for (const RegionVolume& r : volumes) {
        if (image)
            std::snprintf(line, sizeof line, "%6d %8zu %19.4f %7zu %20.4f %10.2f%%\n", r.label, r.tetras,
                          r.meshVolume, r.voxels, r.voxelVolume, 100 * r.relativeError());
        else
            std::snprintf(line, sizeof line, "%6d %8zu %19.4f\n", r.label, r.tetras, r.meshVolume);
        s << line;
    }
    std::snprintf(line, sizeof line,
                  "quality: dihedral angle min %.2f deg, median %.2f deg; radius-edge ratio median %.3f, max %.3f\n",
                  q.minDihedral, q.medianDihedral, q.medianRadiusEdge, q.maxRadiusEdge);
    s << line;
    for (const std::string& w : regionVolumeWarnings(volumes)) s << "warning: " << w << "\n";
    return s.str();
}

std::vector<std::string> regionVolumeWarnings(const std::vector<RegionVolume>& volumes, double tolerance) {
    std::vector<std::string> out;
    const std::string remedy = ": give it a smaller --facet-size-label / --cell-size-label (or --facet-distance)";
    for (const RegionVolume& r : volumes) {
        if (r.voxels == 0) continue;
        const std::string label = "label " + std::to_string(r.label) + " (" + std::to_string(r.voxels) + " voxels)";
        if (r.tetras == 0) {
            out.push_back(label + " is not in the mesh: it is thinner than the mesh sizes resolve" + remedy +
                          ", or merge it into a neighbour with a label map");
        } else if (std::fabs(r.relativeError()) > tolerance) {
            char pct[32];
            std::snprintf(pct, sizeof pct, "%+.1f%%", 100 * r.relativeError());
            out.push_back(label + ": mesh volume differs from its voxel volume by " + pct +
                          ", the mesh sizes are too coarse for it" + remedy);
        }
    }
    return out;
}

}  // namespace fm
