// A small structured mesher: a box split into nx*ny*nz cubes, each cut into 6 tetras that
// share the cube's main diagonal (Freudenthal/Kuhn), which conforms across cubes. Regions come
// from a function of the tetra centroid. Used by tests and the examples' built-in models.
#pragma once
#include <functional>

#include "Geometry/TetraMesh.hpp"

namespace fm {

TetraMesh makeBoxMesh(const Point3& lo, const Point3& hi, unsigned nx, unsigned ny, unsigned nz,
                      const std::function<uint32_t(const Point3&)>& region);

}  // namespace fm
