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

TetraMesh makeBoxMesh(const Point3& lo, const Point3& hi, unsigned nx, unsigned ny, unsigned nz,
                      const std::function<uint32_t(const Point3&)>& region);

}  // namespace fm
