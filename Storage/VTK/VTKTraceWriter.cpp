// SPDX-License-Identifier: GPL-3.0-or-later
#include "Storage/VTK/VTKTraceWriter.hpp"

#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkDoubleArray.h>
#include <vtkIntArray.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>

#include "Common/Errors.hpp"
#include "Storage/VTK/VTKSupport.hpp"

namespace fm {

void VTKTraceWriter::addTrace(const std::vector<Point3>& points, const std::vector<double>& weights) {
    PacketTrace t;
    t.points = points;
    t.weights = weights;
    addTrace(std::move(t));
}

void VTKTraceWriter::addTrace(PacketTrace t) {
    std::string n = std::to_string(traces_.size());
    if (t.points.empty()) throw ParameterError("VTKTraceWriter: trace " + n + " has no points");
    if (t.weights.size() != t.points.size())
        throw ParameterError("VTKTraceWriter: trace " + n + " has " + std::to_string(t.points.size()) + " points but " +
                             std::to_string(t.weights.size()) + " weights (need one weight per point)");
    auto check = [&](size_t size, const char* field) {
        if (size != 0 && size != t.points.size())
            throw ParameterError("VTKTraceWriter: trace " + n + " has " + std::to_string(t.points.size()) +
                                 " points but " + std::to_string(size) + " " + field + " (need none or one per point)");
    };
    check(t.tetras.size(), "tetras");
    check(t.materials.size(), "materials");
    check(t.events.size(), "events");
    check(t.stepLengths.size(), "step lengths");
    check(t.pathLengths.size(), "path lengths");
    check(t.times.size(), "times");
    traces_.push_back(std::move(t));
}

void VTKTraceWriter::traces(const std::vector<PacketTrace>& t) {
    std::vector<PacketTrace> keep;
    keep.swap(traces_);
    try {
        for (const auto& tr : t) addTrace(tr);
    } catch (...) {
        traces_.swap(keep);  // all or nothing
        throw;
    }
}

PacketTrace packetTrace(const TraceSet& t, size_t i) {
    PacketTrace p;
    const size_t n = t.length(i);
    for (size_t j = 0; j < n; ++j) {
        const TraceStep& s = t.step(i, j);
        p.points.push_back({s.pos[0], s.pos[1], s.pos[2]});
        p.weights.push_back(s.w);
        p.tetras.push_back(s.tetra);
        p.materials.push_back(s.material);
        p.events.push_back(s.event);
        p.stepLengths.push_back(s.step);
        p.pathLengths.push_back(s.path);
        p.times.push_back(s.time);
    }
    return p;
}

void VTKTraceWriter::traces(const TraceSet& t) {
    std::vector<PacketTrace> all;
    all.reserve(t.traceCount());
    for (size_t i = 0; i < t.traceCount(); ++i) all.push_back(packetTrace(t, i));
    traces(all);
}

namespace {

template <class A>
vtkSmartPointer<A> named(const char* name) {
    auto a = vtkSmartPointer<A>::New();
    a->SetName(name);
    return a;
}

vtkSmartPointer<vtkPolyData> polylines(const std::vector<PacketTrace>& traces) {
    auto pts = vtkSmartPointer<vtkPoints>::New();
    pts->SetDataTypeToDouble();
    auto lines = vtkSmartPointer<vtkCellArray>::New();
    auto weight = named<vtkDoubleArray>("Weight");
    auto step = named<vtkIntArray>("Step");
    auto id = named<vtkIntArray>("Trace");
    // The optional fields are written when every trace carries them.
    auto all = [&](auto field) {
        if (traces.empty()) return false;
        for (const auto& t : traces)
            if ((t.*field).empty()) return false;
        return true;
    };
    const bool hasTetra = all(&PacketTrace::tetras), hasMat = all(&PacketTrace::materials),
               hasEvent = all(&PacketTrace::events), hasStep = all(&PacketTrace::stepLengths),
               hasPath = all(&PacketTrace::pathLengths), hasTime = all(&PacketTrace::times);
    auto tetra = named<vtkIntArray>("Tetra");
    auto mat = named<vtkIntArray>("Material");
    auto event = named<vtkIntArray>("Event");
    auto stepLen = named<vtkDoubleArray>("Step length (mm)");
    auto path = named<vtkDoubleArray>("Path length (mm)");
    auto time = named<vtkDoubleArray>("Time of flight (ns)");
    auto endEvent = named<vtkIntArray>("End event");
    for (size_t t = 0; t < traces.size(); ++t) {
        const PacketTrace& tr = traces[t];
        lines->InsertNextCell(vtkIdType(tr.points.size()));
        for (size_t i = 0; i < tr.points.size(); ++i) {
            lines->InsertCellPoint(pts->InsertNextPoint(tr.points[i].data()));
            weight->InsertNextValue(tr.weights[i]);
            step->InsertNextValue(int(i));
            if (hasTetra) tetra->InsertNextValue(int(tr.tetras[i]));
            if (hasMat) mat->InsertNextValue(int(tr.materials[i]));
            if (hasEvent) event->InsertNextValue(int(tr.events[i]));
            if (hasStep) stepLen->InsertNextValue(tr.stepLengths[i]);
            if (hasPath) path->InsertNextValue(tr.pathLengths[i]);
            if (hasTime) time->InsertNextValue(tr.times[i]);
        }
        id->InsertNextValue(int(t));
        if (hasEvent) endEvent->InsertNextValue(int(tr.events.back()));
    }
    auto pd = vtkSmartPointer<vtkPolyData>::New();
    pd->SetPoints(pts);
    pd->SetLines(lines);
    pd->GetPointData()->AddArray(weight);
    pd->GetPointData()->AddArray(step);
    if (hasTetra) pd->GetPointData()->AddArray(tetra);
    if (hasMat) pd->GetPointData()->AddArray(mat);
    if (hasEvent) pd->GetPointData()->AddArray(event);
    if (hasStep) pd->GetPointData()->AddArray(stepLen);
    if (hasPath) pd->GetPointData()->AddArray(path);
    if (hasTime) pd->GetPointData()->AddArray(time);
    pd->GetCellData()->AddArray(id);
    if (hasEvent) pd->GetCellData()->AddArray(endEvent);
    return pd;
}

}  // namespace

void VTKTraceWriter::legacyVersion(const std::string& v) {
    legacy42_ = vtkio::parseLegacyVersion(v, "VTKTraceWriter legacyVersion") == vtkio::LegacyVersion::V4_2;
}

void VTKTraceWriter::write() const {
    if (filename_.empty()) throw ParameterError("VTKTraceWriter: no filename set");
    auto pd = polylines(traces_);
    vtkio::addComments(pd, comments_);
    std::string header = "FullMonte packet traces";
    for (const auto& c : comments_) header += "; " + c;
    vtkio::writeDataSet(pd, filename_, "VTKTraceWriter", header, legacy42_ ? vtkio::LegacyVersion::V4_2 : vtkio::LegacyVersion::V5_1);
}

}  // namespace fm
