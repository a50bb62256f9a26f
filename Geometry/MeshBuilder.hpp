// SPDX-License-Identifier: GPL-3.0-or-later
// A small structured mesher: a box split into nx*ny*nz cubes, each cut into 6 tetras that
// share the cube's main diagonal (Freudenthal/Kuhn), which conforms across cubes. Regions come
// from a function of the tetra centroid. Used by tests and the examples' built-in models.
#pragma once
#include <functional>
#include <vector>

#include "Geometry/TetraMesh.hpp"

namespace fm {

// A shape that paints the tetras whose centroid it contains with its region (BoxMeshBuilder in
// Tcl, box_mesh in Python): an axis-aligned box (a, b), a sphere (centre a, radius r), a finite
// cylinder (axis a-b, radius r), or a shell of thickness r inside the mesh box's faces.
struct RegionShape {
    enum Kind { Box, Sphere, Cylinder, Shell } kind = Box;
    uint32_t region = 1;
    Point3 a{}, b{};
    double r = 0;
    // Whether the centroid c lies in the shape; lo/hi are the mesh box (for Shell).
    bool contains(const Point3& c, const Point3& lo, const Point3& hi) const;
};
// The region of a centroid: background, painted over by each shape containing it in turn (later
// shapes win). Throws ParameterError for a shape of region 0 or a non-positive size.
uint32_t paintRegion(const std::vector<RegionShape>& shapes, uint32_t background, const Point3& c,
                     const Point3& lo, const Point3& hi);
void checkRegionShapes(const std::vector<RegionShape>& shapes);

// The arrays of a box mesh (index 0 the dummy, as TetraMesh takes them): points on the grid,
// cube (i, j, k)'s six tetras at 1 + 6 (i + nx (j + ny k)), each tetra's region from its
// centroid. Built on all threads: `region` must be safe to call concurrently. Throws
// ParameterError for no divisions, an empty box, or more tetras than 32-bit indices hold.
struct BoxMeshArrays {
    std::vector<Point3> points;
    std::vector<TetraPoints> tetras;
    std::vector<uint32_t> regions;
};
BoxMeshArrays makeBoxMeshArrays(const Point3& lo, const Point3& hi, unsigned nx, unsigned ny, unsigned nz,
                                const std::function<uint32_t(const Point3&)>& region);
// The box mesh itself (at most 5e7 cubes: a guard against a typo in a script's divisions).
TetraMesh makeBoxMesh(const Point3& lo, const Point3& hi, unsigned nx, unsigned ny, unsigned nz,
                      const std::function<uint32_t(const Point3&)>& region);

}  // namespace fm
