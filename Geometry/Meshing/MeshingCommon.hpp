// SPDX-License-Identifier: GPL-3.0-or-later
// Private to Geometry/Meshing: option checks, defaults and stage progress shared by the meshers.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "Geometry/Meshing/Mesher.hpp"

namespace fm {

// Refuses (ParameterError) a per-label cell or facet size for a label not in `present` (the
// non-zero labels of the input; `whose` starts the message: "the image has", "the surfaces have").
void requireKnownLabels(const MeshingOptions& o, const std::set<int32_t>& present, const std::string& whose);

// Fills in the bytes and text of an estimate whose tetras and triangles are set: `fixedBytes`
// (the input's) plus the peak bytes per tetra; the text names the volume and area they come
// from and the smallest cell and facet sizes used.
void completeEstimate(MeshingEstimate& e, double fixedBytes, double volume, double cellSize, double area,
                      double facetSize);

// The fewest surface triangles of circumradius up to `facetSize` covering `area`.
double fewestTriangles(double area, double facetSize);
// The fewest tetras of circumradius up to `cellSize` filling `volume`.
double fewestTetras(double volume, double cellSize);

// Refuses sizes whose mesh cannot fit in memory: requireMemory with `what` and the estimate's
// detail.
void requireMeshingMemory(const MeshingEstimate& e, const std::string& what, const std::string& advice);

// Reports "stage..." at start, "stage: N s (detail)" at the end, and "stage: N s so far" every
// few seconds in between (from a helper thread), through MeshingOptions::progress.
class StageReporter {
public:
    explicit StageReporter(std::function<void(const std::string&)> sink, double tickSeconds = 5);
    ~StageReporter();
    void start(const std::string& stage);
    void end(const std::string& detail = "");

private:
    void tick();
    std::function<void(const std::string&)> sink_;
    double tickSeconds_;
    std::string stage_;
    std::chrono::steady_clock::time_point t0_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool running_ = false, quit_ = false;
    std::thread ticker_;
};

}  // namespace fm
