// SPDX-License-Identifier: GPL-3.0-or-later
// Where a collimated beam of uniform intensity (MMC's "disk" and "planar" sources) meets the mesh:
// the boundary faces it enters through, as pieces, each with the area of its shadow across the
// beam and the part of that shadow the beam covers. A packet is a uniform point of the beam's
// cross-section, which enters where its ray meets the surface: a point of a piece drawn by shadow
// area (Geometry/SourceCompiler.cpp). A disk's pieces are cut small against it and the points
// outside the disk are rejected at launch; a parallelogram's are clipped to it exactly.
#pragma once
#include <string>
#include <vector>

#include "Geometry/TetraMesh.hpp"

namespace fm {

struct BeamPiece {
    uint32_t face;   // boundary face it is part of
    Point3 a, b, c;  // the piece, on the face
    double shadow;   // area of its projection across the beam
    double lit;      // the part of that projection inside the beam
};

struct BeamPlan {
    std::vector<BeamPiece> pieces;
    double beamArea = 0;  // the beam's cross-section
    double litArea = 0;   // sum of the pieces' lit areas: the part of the beam that meets the mesh
};

// Disk of radius r around `centre`, normal to the unit direction u.
BeamPlan planDiskBeam(const TetraMesh& mesh, const Point3& centre, const Point3& u, double r,
                      const std::string& what);
// Parallelogram corner + s side1 + t side2 (s, t in [0, 1]), every point along the unit u (not
// parallel to the parallelogram).
BeamPlan planParallelogramBeam(const TetraMesh& mesh, const Point3& corner, const Point3& side1,
                               const Point3& side2, const Point3& u, const std::string& what);
// Both throw ModelError (naming `what`) when the source surface lies in tissue or cuts it, or when
// the beam meets the surface twice (one face shadows another), where the entry points would need a
// ray cast per packet.

// Area of the triangle (p, q, s) in the plane intersected with the disk of radius r at the origin.
double triangleDiskArea(const double p[2], const double q[2], const double s[2], double r);

}  // namespace fm
