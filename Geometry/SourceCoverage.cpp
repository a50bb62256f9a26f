// SPDX-License-Identifier: GPL-3.0-or-later
#include "Geometry/SourceCoverage.hpp"

#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>

namespace fm {

namespace {

// Fixed seed: the warning for a model never changes from run to run.
struct Sampler {
    std::mt19937_64 gen{0x5eed5eedULL};
    double uniform() { return double(gen() >> 11) * 0x1.0p-53; }
    Point3 unitPerpendicular(const Point3& u) {  // uniform on the circle perpendicular to u
        Point3 e = std::fabs(u[0]) < 0.9 ? Point3{1, 0, 0} : Point3{0, 1, 0};
        Point3 v = crossP(u, e);
        double L = normP(v);
        v = {v[0] / L, v[1] / L, v[2] / L};
        Point3 w = crossP(u, v);
        double phi = 2 * M_PI * uniform();
        return {std::cos(phi) * v[0] + std::sin(phi) * w[0], std::cos(phi) * v[1] + std::sin(phi) * w[1],
                std::cos(phi) * v[2] + std::sin(phi) * w[2]};
    }
};

Point3 along(const Point3& a, const Point3& d, double s) { return {a[0] + s * d[0], a[1] + s * d[1], a[2] + s * d[2]}; }

Coverage finish(int out, int lost) {
    return Coverage{double(out) / kCoverageSamples, double(lost) / kCoverageSamples, kCoverageSamples};
}

}  // namespace

Coverage ballCoverage(const TetraMesh& mesh, const Point3& c, double r) {
    Sampler S;
    int out = 0;
    for (int i = 0; i < kCoverageSamples;) {
        Point3 q{2 * S.uniform() - 1, 2 * S.uniform() - 1, 2 * S.uniform() - 1};
        if (dotP(q, q) > 1) continue;  // rejection from the cube: uniform in the ball
        ++i;
        if (!mesh.locate(along(c, q, r))) ++out;
    }
    return finish(out, 0);
}

Coverage cylinderVolumeCoverage(const TetraMesh& mesh, const Point3& a, const Point3& b, double r) {
    Sampler S;
    Point3 d = sub(b, a);
    Point3 u = along({0, 0, 0}, d, 1 / normP(d));
    int out = 0;
    for (int i = 0; i < kCoverageSamples; ++i) {
        Point3 axis = along(a, d, S.uniform());
        Point3 p = along(axis, S.unitPerpendicular(u), r * std::sqrt(S.uniform()));
        if (!mesh.locate(p)) ++out;
    }
    return finish(out, 0);
}

double surfaceLeavingShare(const TetraMesh& mesh, const Point3& p, uint32_t t) {
    const int n = 2000;
    const double h = 1e-4 * std::cbrt(6 * mesh.volume(t)), golden = M_PI * (3 - std::sqrt(5.0));
    int out = 0;
    for (int i = 0; i < n; ++i) {
        const double z = 1 - (2 * i + 1.0) / n, r = std::sqrt(1 - z * z), phi = golden * i;
        out += mesh.locate(along(p, {r * std::cos(phi), r * std::sin(phi), z}, h)) == 0;
    }
    return double(out) / n;
}

Coverage cylinderSurfaceCoverage(const TetraMesh& mesh, const Point3& a, const Point3& b, double r) {
    Sampler S;
    Point3 d = sub(b, a);
    Point3 u = along({0, 0, 0}, d, 1 / normP(d));
    int out = 0, lost = 0;
    for (int i = 0; i < kCoverageSamples; ++i) {
        Point3 axis = along(a, d, S.uniform());
        Point3 p = along(axis, S.unitPerpendicular(u), r);
        if (!mesh.locate(axis)) ++out;
        else if (!mesh.locate(p)) ++lost;
    }
    return finish(out, lost);
}

std::string percentOutside(double f, int samples) {
    std::ostringstream o;
    o.precision(3);
    if (samples > 0)
        o << "about " << 100 * f << "% (+-" << 100 * std::sqrt(std::max(f * (1 - f), 0.25 / samples) / samples)
          << "%, " << samples << " samples)";
    else
        o << 100 * f << "%";
    return o.str();
}

bool onMeshBoundary(const TetraMesh& mesh, uint32_t t, const Point3& p) {
    double tol = 1e-9 * std::cbrt(mesh.volume(t));
    for (int i = 0; i < 4; ++i) {
        if (mesh.neighbour(t, i)) continue;
        const MeshFace& F = mesh.face(mesh.tetraFace(t, i) & 0x7fffffffu);
        if (std::fabs(dotP(F.normal, sub(p, mesh.point(F.points[0])))) <= tol) return true;
    }
    return false;
}

}  // namespace fm
