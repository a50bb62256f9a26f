// SPDX-License-Identifier: GPL-3.0-or-later
// Surface detectors on a mesh's boundary, as users give them: a disk (centre and radius: the
// boundary within the radius of the centre) or an explicit set of boundary faces. Compiled into
// the kernels' DetectionSpec (Kernels/DetectedPackets.hpp), checked against the mesh.
#pragma once
#include <string>
#include <vector>

#include "Geometry/TetraMesh.hpp"
#include "Kernels/KernelInput.hpp"  // DetectedPackets.hpp: the detectors and records

namespace fm {

struct Detector {
    // A disk when faces is empty: exits within `radius` (mm) of `centre`. Else the faces (ids of
    // boundary faces), any exit point on them.
    Point3 centre{0, 0, 0};
    double radius = 0;
    std::vector<uint32_t> faces;
};

// Throws ParameterError, naming `name` (e.g. "detector 0"), unless the disk's centre is finite and
// its radius finite and > 0: the rule compileDetectors applies, for a binding to apply at once.
void checkDisk(const Detector& disk, const std::string& name);

// Parses "x,y,z,r" (a disk) or "faces:f1,f2,..." (a face set); `what` names the parameter in
// errors (ParameterError).
Detector parseDetector(const std::string& text, const std::string& what);

// The spec of `detectors` on `mesh`: each disk's candidate faces are the boundary faces within
// its radius of its centre. Throws ParameterError naming detector i's parameter when a disk
// touches no boundary face, a radius is not positive and finite, a face is out of range or not
// on the boundary, or there are more than kMaxDetectors.
DetectionSpec compileDetectors(const TetraMesh& mesh, const std::vector<Detector>& detectors,
                               uint64_t maxRecords = 1000000);

// Distance from p to the triangle abc (closest point on the triangle, edges and corners
// included).
double pointTriangleDistance(const Point3& p, const Point3& a, const Point3& b, const Point3& c);

}  // namespace fm
