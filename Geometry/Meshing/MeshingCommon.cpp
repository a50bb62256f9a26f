// SPDX-License-Identifier: GPL-3.0-or-later
#include "Geometry/Meshing/MeshingCommon.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "Common/Errors.hpp"
#include "Common/ResourceLimits.hpp"

namespace fm {

namespace {

void checkSize(double v, const std::string& name) {
    if (!std::isfinite(v) || v < 0)
        throw ParameterError(name + " must be a finite size in mm >= 0 (0 = default), got " + std::to_string(v));
}

}  // namespace

void validateMeshingOptions(const MeshingOptions& o) {
    checkSize(o.cellSize, "cell size");
    checkSize(o.facetSize, "facet size");
    checkSize(o.facetDistance, "facet distance");
    for (const auto& [l, s] : o.cellSizeByLabel) {
        checkSize(s, "cell size of label " + std::to_string(l));
        if (s == 0) throw ParameterError("cell size of label " + std::to_string(l) + " must be > 0");
    }
    for (const auto& [l, s] : o.facetSizeByLabel) {
        checkSize(s, "facet size of label " + std::to_string(l));
        if (s == 0) throw ParameterError("facet size of label " + std::to_string(l) + " must be > 0");
    }
    if (!(o.facetAngle >= 0 && o.facetAngle <= 30))
        throw ParameterError("facet angle must be in [0, 30] degrees (CGAL's bound for termination), got " +
                             std::to_string(o.facetAngle));
    if (!(o.cellRadiusEdgeRatio >= 2 && std::isfinite(o.cellRadiusEdgeRatio)))
        throw ParameterError("cell radius-edge ratio must be >= 2 (CGAL's bound for termination), got " +
                             std::to_string(o.cellRadiusEdgeRatio));
    if (!(o.sliverBound >= 0 && o.sliverBound < 70.5))
        throw ParameterError("sliver bound must be in [0, 70.5) degrees (0 = no bound), got " +
                             std::to_string(o.sliverBound));
    if (!(o.optimiserTimeLimit >= 0 && std::isfinite(o.optimiserTimeLimit)))
        throw ParameterError("optimiser time limit must be >= 0 s (0 = none), got " +
                             std::to_string(o.optimiserTimeLimit));
}

void requireKnownLabels(const MeshingOptions& o, const std::set<int32_t>& present, const std::string& whose) {
    auto check = [&](const std::map<int32_t, double>& sizes, const std::string& what) {
        for (const auto& [label, size] : sizes) {
            if (present.count(label)) continue;
            std::string list;
            for (int32_t l : present) list += (list.empty() ? "" : ", ") + std::to_string(l);
            throw ParameterError(what + " of label " + std::to_string(label) + ": " +
                                 (label == 0 ? std::string("label 0 is the outside, which is not meshed")
                                             : whose + " no label " + std::to_string(label)) +
                                 " (labels present: " + (list.empty() ? "none" : list) + ")");
        }
    };
    check(o.cellSizeByLabel, "cell size");
    check(o.facetSizeByLabel, "facet size");
}

// Mesh_3 keeps cells of circumradius up to the cell size; they average at least this fraction
// of size^3 (a regular tetra's is 0.51 size^3; refinement and the radius-edge bound leave most
// smaller).
constexpr double kCellVolumeFraction = 0.3;
// A triangle of circumradius r has at most the equilateral one's area, 3 sqrt(3) / 4 r^2.
constexpr double kLargestTriangleArea = 1.299;
// The mesher's peak bytes per tetra: the triangulation, its cells outside the domain, the
// extracted mesh.
constexpr double kPeakBytesPerTetra = 700;

double fewestTriangles(double area, double facetSize) {
    return area / (kLargestTriangleArea * facetSize * facetSize);
}

double fewestTetras(double volume, double cellSize) {
    return volume / (kCellVolumeFraction * cellSize * cellSize * cellSize);
}

void completeEstimate(MeshingEstimate& e, double fixedBytes, double volume, double cellSize, double area,
                      double facetSize) {
    // Each surface triangle is a face of a tetra, which has four.
    e.bytes = fixedBytes + std::max(e.tetras, e.triangles / 4) * kPeakBytesPerTetra;
    char text[256];
    std::snprintf(text, sizeof text,
                  "at least %.3g tetras (cell size %g mm over %.3g mm^3) and %.3g surface triangles (facet size %g "
                  "mm over %.3g mm^2)",
                  e.tetras, cellSize, volume, e.triangles, facetSize, area);
    e.detail = text;
}

void requireMeshingMemory(const MeshingEstimate& e, const std::string& what, const std::string& advice) {
    requireMemory(e.bytes, what + ": " + e.detail + ",", advice);
}

MeshingOptions resolveMeshingDefaults(MeshingOptions o, double spacing) {
    if (o.cellSize == 0) o.cellSize = 2.5 * spacing;
    if (o.facetSize == 0) o.facetSize = 2 * spacing;
    if (o.facetDistance == 0) o.facetDistance = 0.5 * spacing;
    return o;
}

StageReporter::StageReporter(std::function<void(const std::string&)> sink, double tickSeconds)
    : sink_(std::move(sink)), tickSeconds_(tickSeconds) {
    if (sink_) ticker_ = std::thread([this] { tick(); });
}

StageReporter::~StageReporter() {
    if (!ticker_.joinable()) return;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        quit_ = true;
    }
    wake_.notify_all();
    ticker_.join();
}

void StageReporter::start(const std::string& stage) {
    if (!sink_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    stage_ = stage;
    t0_ = std::chrono::steady_clock::now();
    running_ = true;
    sink_(stage + "...");
}

void StageReporter::end(const std::string& detail) {
    if (!sink_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    running_ = false;
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    std::ostringstream msg;
    msg.precision(3);
    msg << stage_ << ": " << s << " s";
    if (!detail.empty()) msg << " (" << detail << ")";
    sink_(msg.str());
}

void StageReporter::tick() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!quit_) {
        wake_.wait_for(lock, std::chrono::duration<double>(tickSeconds_));
        if (quit_ || !running_) continue;
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
        if (s < tickSeconds_) continue;
        std::ostringstream msg;
        msg.precision(3);
        msg << stage_ << ": " << s << " s so far";
        sink_(msg.str());
    }
}

}  // namespace fm
