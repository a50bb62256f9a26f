#include "Storage/VTK/VTKTraceWriter.hpp"

#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkDoubleArray.h>
#include <vtkIntArray.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>

#include "Geometry/Errors.hpp"
#include "Storage/VTK/VTKSupport.hpp"

namespace fm {

void VTKTraceWriter::addTrace(const std::vector<Point3>& points, const std::vector<double>& weights) {
    std::string n = std::to_string(traces_.size());
    if (points.empty()) throw ParameterError("VTKTraceWriter: trace " + n + " has no points");
    if (weights.size() != points.size())
        throw ParameterError("VTKTraceWriter: trace " + n + " has " + std::to_string(points.size()) + " points but " +
                             std::to_string(weights.size()) + " weights (need one weight per point)");
    traces_.push_back({points, weights});
}

void VTKTraceWriter::traces(const std::vector<PacketTrace>& t) {
    std::vector<PacketTrace> keep;
    keep.swap(traces_);
    try {
        for (const auto& tr : t) addTrace(tr.points, tr.weights);
    } catch (...) {
        traces_.swap(keep);  // all or nothing
        throw;
    }
}

namespace {

vtkSmartPointer<vtkPolyData> polylines(const std::vector<PacketTrace>& traces) {
    auto pts = vtkSmartPointer<vtkPoints>::New();
    pts->SetDataTypeToDouble();
    auto lines = vtkSmartPointer<vtkCellArray>::New();
    auto weight = vtkSmartPointer<vtkDoubleArray>::New();
    weight->SetName("Weight");
    auto step = vtkSmartPointer<vtkIntArray>::New();
    step->SetName("Step");
    auto id = vtkSmartPointer<vtkIntArray>::New();
    id->SetName("Trace");
    for (size_t t = 0; t < traces.size(); ++t) {
        const PacketTrace& tr = traces[t];
        lines->InsertNextCell(vtkIdType(tr.points.size()));
        for (size_t i = 0; i < tr.points.size(); ++i) {
            lines->InsertCellPoint(pts->InsertNextPoint(tr.points[i].data()));
            weight->InsertNextValue(tr.weights[i]);
            step->InsertNextValue(int(i));
        }
        id->InsertNextValue(int(t));
    }
    auto pd = vtkSmartPointer<vtkPolyData>::New();
    pd->SetPoints(pts);
    pd->SetLines(lines);
    pd->GetPointData()->AddArray(weight);
    pd->GetPointData()->AddArray(step);
    pd->GetCellData()->AddArray(id);
    return pd;
}

}  // namespace

void VTKTraceWriter::write() const {
    if (filename_.empty()) throw ParameterError("VTKTraceWriter: no filename set");
    auto pd = polylines(traces_);
    vtkio::addComments(pd, comments_);
    std::string header = "FullMonte packet traces";
    for (const auto& c : comments_) header += "; " + c;
    vtkio::writeDataSet(pd, filename_, "VTKTraceWriter", header);
}

}  // namespace fm
