// SPDX-License-Identifier: GPL-3.0-or-later
// Where a collimated disk beam (MMC's "disk" source) meets the mesh: the boundary faces it enters
// through, cut into pieces small against the disk, each with the area of its shadow on the disk
// plane and the part of that shadow inside the disk. A packet of the beam is then a uniform point
// of a piece's shadow (drawn on the piece, kept when inside the disk), which is where a uniform
// point of the disk enters the tissue (Geometry/SourceCompiler.cpp).
#pragma once
#include <string>
#include <vector>

#include "Geometry/TetraMesh.hpp"

namespace fm {

struct DiskBeamPiece {
    uint32_t face;      // boundary face it is part of
    Point3 a, b, c;     // the piece, on the face
    double shadow;      // area of its projection on the disk plane
    double lit;         // the part of that projection inside the disk
};

struct DiskBeamPlan {
    std::vector<DiskBeamPiece> pieces;
    double diskArea = 0;
    double litArea = 0;  // sum of the pieces' lit areas: the part of the disk that meets the mesh
};

// The beam of radius r around `centre` along unit `u`. Throws ModelError (naming `what`) when the
// disk lies in tissue or its plane cuts the mesh, or when the beam meets the surface twice
// (one face shadows another), where the entry points would need a ray cast per packet.
DiskBeamPlan planDiskBeam(const TetraMesh& mesh, const Point3& centre, const Point3& u, double r,
                          const std::string& what);

// Area of the triangle (p, q, s) in the plane intersected with the disk of radius r at the origin.
double triangleDiskArea(const double p[2], const double q[2], const double s[2], double r);

}  // namespace fm
