// SPDX-License-Identifier: GPL-3.0-or-later
#include "Storage/VTK/VTKImageReader.hpp"

#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkDataArray.h>
#include <vtkImageData.h>
#include <vtkMatrix3x3.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkXMLImageDataReader.h>
#include <vtkXMLPolyDataReader.h>

#include <cmath>
#include <filesystem>

#include "Common/Errors.hpp"
#include "Storage/VTK/VTKSupport.hpp"

namespace fm {

namespace {

// Runs a VTK XML reader on `path` and returns it (it owns its output); VTK's complaints become a
// FormatError naming the file, a missing file an Error.
template <class Reader>
vtkSmartPointer<Reader> readXML(const std::string& path, const std::string& what) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) throw Error(path + ": no such file (or not a regular file)");
    vtkio::MessageCapture cap;
    auto r = vtkSmartPointer<Reader>::New();
    if (!r->CanReadFile(path.c_str())) throw FormatError(path + ": not a " + what + " file");
    r->SetFileName(path.c_str());
    r->Update();
    if (cap.hasError() || !r->GetOutput()) throw FormatError(path + ": " + cap.firstProblem());
    return r;
}

}  // namespace

LabelImage readVTKLabelImage(const std::string& path) {
    auto r = readXML<vtkXMLImageDataReader>(path, "VTK XML image (.vti)");
    vtkImageData* im = r->GetOutput();
    vtkDataArray* a = im->GetPointData()->GetScalars();
    if (!a && im->GetPointData()->GetNumberOfArrays() > 0) a = im->GetPointData()->GetArray(0);
    if (!a) throw FormatError(path + ": the image has no point data (one label per voxel expected)");
    if (a->GetNumberOfComponents() != 1)
        throw FormatError(path + ": array '" + std::string(a->GetName() ? a->GetName() : "") + "' has " +
                          std::to_string(a->GetNumberOfComponents()) + " components; labels have 1");
    int dims[3];
    im->GetDimensions(dims);
    LabelImage stored;
    std::array<std::array<double, 3>, 3> dir{};
    vtkMatrix3x3* d = im->GetDirectionMatrix();
    for (int i = 0; i < 3; ++i) {
        stored.dims[i] = size_t(std::max(dims[i], 1));
        stored.spacing[i] = im->GetSpacing()[i];
        stored.origin[i] = im->GetOrigin()[i];
        for (int j = 0; j < 3; ++j) dir[i][j] = d->GetElement(i, j);
    }
    size_t n = stored.dims[0] * stored.dims[1] * stored.dims[2];
    if (size_t(a->GetNumberOfTuples()) != n)
        throw FormatError(path + ": " + std::to_string(a->GetNumberOfTuples()) + " values for " +
                          std::to_string(n) + " voxels");
    stored.labels.resize(n);
    for (size_t i = 0; i < n; ++i) {
        double v = a->GetComponent(vtkIdType(i), 0);
        if (!std::isfinite(v) || v != std::floor(v) || v < 0 || v > INT32_MAX)
            throw FormatError(path + ": voxel " + std::to_string(i) + " has value " + std::to_string(v) +
                              ", not a label (integers >= 0)");
        stored.labels[i] = int32_t(v);
    }
    stored.validate(path);
    return orientToAxes(std::move(stored), dir, path);
}

TriangleSurface readVTKSurface(const std::string& path) {
    auto r = readXML<vtkXMLPolyDataReader>(path, "VTK XML polydata (.vtp)");
    vtkPolyData* pd = r->GetOutput();
    TriangleSurface s;
    for (vtkIdType i = 0; i < pd->GetNumberOfPoints(); ++i) {
        double p[3];
        pd->GetPoint(i, p);
        s.points.push_back({p[0], p[1], p[2]});
    }
    // A labelled surface carries "Labels": per polygon the label behind it and the one its
    // normal points into. Cell data counts vertices and lines before polygons.
    vtkDataArray* labels = pd->GetCellData()->GetArray("Labels");
    if (labels && labels->GetNumberOfComponents() != 2)
        throw FormatError(path + ": cell array 'Labels' has " + std::to_string(labels->GetNumberOfComponents()) +
                          " components; 2 expected (label behind each polygon, label in front)");
    vtkIdType cell = pd->GetNumberOfVerts() + pd->GetNumberOfLines();
    vtkCellArray* polys = pd->GetPolys();
    vtkIdType np = 0;
    const vtkIdType* ids = nullptr;
    for (polys->InitTraversal(); polys->GetNextCell(np, ids); ++cell)
        for (vtkIdType k = 1; k + 1 < np; ++k) {
            s.triangles.push_back({uint32_t(ids[0]), uint32_t(ids[k]), uint32_t(ids[k + 1])});
            if (labels)
                s.sides.push_back({int32_t(labels->GetComponent(cell, 0)), int32_t(labels->GetComponent(cell, 1))});
        }
    if (s.triangles.empty()) throw FormatError(path + ": the polydata has no polygons (a closed triangle surface expected)");
    return s;
}

}  // namespace fm
