// SPDX-License-Identifier: GPL-3.0-or-later
// How much of a source lies outside the mesh, for the warnings SourceCompiler gives: exact for
// segments, sampled with a fixed seed (so the same model always gives the same numbers) for
// balls and cylinders. Sampling uses TetraMesh::locate, O(1) per point.
#pragma once
#include <string>

#include "Geometry/TetraMesh.hpp"

namespace fm {

constexpr int kCoverageSamples = 20000;

// Fraction of sampled points of the emitter that fall outside the mesh (0 when none does).
struct Coverage {
    double outside = 0;  // emitter points outside the mesh
    double lost = 0;     // of which the kernel launches and books abnormal (cylinder surface)
    int samples = 0;
};

Coverage ballCoverage(const TetraMesh& mesh, const Point3& centre, double radius);
Coverage cylinderVolumeCoverage(const TetraMesh& mesh, const Point3& a, const Point3& b, double radius);
// Lateral surface: `outside` counts points whose axis point is outside (the kernel does not
// emit there), `lost` those whose axis point is inside but surface point outside.
Coverage cylinderSurfaceCoverage(const TetraMesh& mesh, const Point3& a, const Point3& b, double radius);

// The share of the directions from p, a point on the mesh surface in tetra t, that leave the mesh
// at once: 1/2 on a face, more on an edge or at a corner of the surface (7/8 at a box's corner).
// Directions spread evenly over the sphere (a Fibonacci lattice), each tried a short step from p.
double surfaceLeavingShare(const TetraMesh& mesh, const Point3& p, uint32_t t);

// "about 12.3% (+-0.2%, 20000 samples)" or "12.3%" when exact (samples == 0).
std::string percentOutside(double fraction, int samples);

// True when p lies within the location tolerance of a boundary face of tetra t.
bool onMeshBoundary(const TetraMesh& mesh, uint32_t t, const Point3& p);

}  // namespace fm
