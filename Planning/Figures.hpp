// SPDX-License-Identifier: GPL-3.0-or-later
// Pictures of a plan, drawn with cairo into PNG files (no display needed).
//
// Dose slices: the plane axis = at (mm) seen with its first in-plane axis to the right and the
// second up, always in the mesh's coordinates: z-plane x right / y up, y-plane x right / z up,
// x-plane y right / z up. So x grows to the right in every view that shows it (a source at x < 0
// is on the left in both the z- and y-planes), and z is up in every view that shows it. Edge
// labels ("-x" / "+x", ...) repeat this on each picture. With patient axes as in DICOM LPS
// (x to the patient's left), the z-plane is the radiological axial view seen from the feet.
// Colour: dose in J/cm^2 (SliceStyle: linear or log); isodose lines at the given levels; region outlines and names; source markers (magenta).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "Geometry/Sources.hpp"
#include "Geometry/TetraMesh.hpp"
#include "Planning/PlanSpec.hpp"

namespace fm::planning {

struct SourceMarker {
    std::string name;
    Point3 a{}, b{};      // a segment (diffusers, lines) or a == b (points, fibres, balls)
};
// The marker of a source (volume and surface sources have none: empty name).
SourceMarker markerOf(const std::string& name, const Source& s);

struct SliceStyle {
    std::vector<double> isodose;  // J/cm^2
    // Colours linear from 0 to twice the highest isodose level (the slice's maximum without
    // levels), or logarithmic over four decades below the slice's maximum.
    bool logScale = false;
    int width = 900, height = 760;
};

// Writes a PNG; throws fm::Error when it cannot. dose is per tetra id (index 0 the dummy), J/cm^2.
void renderDoseSlice(const std::string& png, const TetraMesh& mesh, const std::vector<double>& dose,
                     const std::map<uint32_t, std::string>& regionNames, const std::vector<SourceMarker>& sources,
                     const SlicePlane& plane, const SliceStyle& style, const std::string& title);

struct DvhCurve {
    std::string name;
    std::vector<double> dose;      // ascending, J/cm^2
    std::vector<double> fraction;  // volume fraction receiving >= dose
};
struct DvhMark {
    std::string label;
    double dose = 0;       // J/cm^2
    double fraction = 0;   // volume fraction
    bool upper = true;     // a limit (curve must pass below/left) or a goal (above/right)
    size_t curve = 0;      // whose colour
};
void renderDvh(const std::string& png, const std::vector<DvhCurve>& curves, const std::vector<DvhMark>& marks,
               const std::string& title, int width = 900, int height = 640);

// In-plane axes of a slice: (u, v) = (first, second) of {x, y, z} without the plane's axis.
std::pair<int, int> sliceAxes(int planeAxis);

}  // namespace fm::planning
