// SPDX-License-Identifier: GPL-3.0-or-later
// Writes packet traces (the path of each packet, with its weight at each point) as VTK
// polylines: .vtp (XML) or .vtk (legacy binary) by extension. One polyline per trace; point data
// "Weight" (packet weight at that point) and "Step" (index along the trace); cell data "Trace"
// (0-based trace number, in the order added). Traces from a trace run (TraceSet) add point data
// "Tetra", "Material", "Event" (TraceEvent code), "Step length (mm)", "Path length (mm)",
// "Time of flight (ns)" and cell data "End event".
#pragma once
#include <string>
#include <vector>

#include "Geometry/TetraMesh.hpp"
#include "Kernels/Core/TraceSet.hpp"

namespace fm {

struct PacketTrace {
    std::vector<Point3> points;   // mm
    std::vector<double> weights;  // one per point
    // Optional (empty, or one per point): written when every trace has them.
    std::vector<uint32_t> tetras, materials;
    std::vector<uint8_t> events;
    std::vector<double> stepLengths, pathLengths, times;
};

class VTKTraceWriter {
public:
    VTKTraceWriter() = default;
    explicit VTKTraceWriter(const std::string& filename) : filename_(filename) {}

    void filename(const std::string& f) { filename_ = f; }
    const std::string& filename() const { return filename_; }
    // Throws ParameterError for an empty trace or a weight count that differs from the points'.
    void addTrace(const std::vector<Point3>& points, const std::vector<double>& weights);
    void addTrace(PacketTrace t);  // also checks the optional fields' lengths
    void traces(const std::vector<PacketTrace>& t);  // replaces all traces
    void traces(const TraceSet& t);                   // replaces all traces, with every field
    void clear() { traces_.clear(); }
    size_t traceCount() const { return traces_.size(); }
    void addHeaderComment(const std::string& text) { comments_.push_back(text); }
    // Legacy .vtk file version: "5.1" (default, VTK 9) or "4.2" (VTK 8-era tools, ParaView < 5.9).
    // Anything else is a ParameterError. Ignored for XML files.
    void legacyVersion(const std::string& v);
    std::string legacyVersion() const { return legacy42_ ? "4.2" : "5.1"; }

    // Throws ParameterError (no filename, unknown extension) or Error (cannot write).
    void write() const;

private:
    std::string filename_;
    std::vector<PacketTrace> traces_;
    std::vector<std::string> comments_;
    bool legacy42_ = false;
};

// The TraceSet's trace i as a PacketTrace with every field.
PacketTrace packetTrace(const TraceSet& t, size_t i);

}  // namespace fm
