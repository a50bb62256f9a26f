// SPDX-License-Identifier: GPL-3.0-or-later
// Renders a per-tetra field (fluence, dose, energy...) to a PNG without a window: a planar slice
// through the mesh with region outlines, or a surface (the mesh boundary or one region's
// boundary). Log colour scale by default, with a colour bar titled by the data's name.
// Needs an X display for OpenGL: on a headless machine run under `xvfb-run -a`; without one,
// write() throws an Error saying so (never a crash).
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "Common/Errors.hpp"
#include "Geometry/TetraMesh.hpp"

namespace fm {

class FluenceRenderer {
public:
    FluenceRenderer() = default;

    void filename(const std::string& png) { filename_ = png; }
    const std::string& filename() const { return filename_; }
    // Kept by address: the mesh must outlive write().
    void mesh(const TetraMesh& m) { mesh_ = &m; }
    // Per-tetra values, index 0 the dummy (size tetraCount()+1, or tetraCount()). The title
    // labels the colour bar and should carry the unit, e.g. "Fluence (W/mm^2)".
    void data(const std::vector<double>& perTetra, const std::string& title = "Fluence");
    // Per-face values (size faceCount()+1, index 0 the dummy), for surface views only, e.g. the
    // exit fluence; takes precedence over the per-tetra data on surfaces.
    void faceData(const std::vector<double>& perFace, const std::string& title = "Exit fluence");

    // A slice through `origin` with normal `normal`, viewed from the normal's side (default:
    // through the centre of the mesh's bounding box, normal +z).
    void slice(const Point3& origin, const Point3& normal);
    void sliceThroughCentre(const Point3& normal);
    // The mesh boundary (region 0) or the boundary of region r, seen from an oblique angle.
    // Faces take the value of the tetra inside them unless faceData() is set.
    void surface(uint32_t region = 0);

    void size(unsigned width, unsigned height);  // pixels, default 800 x 600
    void logScale(bool on) { log_ = on; }       // default on; non-positive values are grey
    // Colour range; lo >= hi (the default) picks it from the data: [min, max] over the finite
    // (positive, on a log scale) values, at most 6 decades below the maximum.
    void range(double lo, double hi) {
        if (!std::isfinite(lo) || !std::isfinite(hi))
            throw ParameterError("FluenceRenderer range: lo and hi must be finite, got " + std::to_string(lo) + " and " +
                                 std::to_string(hi));
        lo_ = lo;
        hi_ = hi;
    }
    void showRegionOutlines(bool on) { outlines_ = on; }  // slices only, default on

    // Renders and writes the PNG (via "<file>.*.partial"). Throws ParameterError for missing or
    // inconsistent settings, Error when there is no display or nothing to draw.
    void write() const;

    // The colour range the last write() used (for captions and tests).
    double usedMin() const { return usedLo_; }
    double usedMax() const { return usedHi_; }

private:
    std::string filename_, title_ = "Fluence", faceTitle_ = "Exit fluence";
    const TetraMesh* mesh_ = nullptr;
    std::vector<double> tetraValues_, faceValues_;
    bool sliceMode_ = true, centred_ = true, log_ = true, outlines_ = true;
    Point3 origin_{0, 0, 0}, normal_{0, 0, 1};
    uint32_t region_ = 0;
    unsigned width_ = 800, height_ = 600;
    double lo_ = 0, hi_ = 0;
    mutable double usedLo_ = 0, usedHi_ = 0;
};

}  // namespace fm
