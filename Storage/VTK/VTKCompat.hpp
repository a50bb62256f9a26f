// SPDX-License-Identifier: GPL-3.0-or-later
// In-memory datasets for the VTK-style Tcl commands of FullMonte 2018 scripts
// (vtkFullMonteTetraMeshWrapper, vtkFullMonteArrayAdaptor, vtkUnstructuredGridWriter ...). Debian's
// VTK has no Tcl bindings, so the Tcl package keeps such data here (no VTK types in this header)
// and writes and reads it with VTK's own writers and readers.
#pragma once
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "Geometry/TetraMesh.hpp"

namespace fm {
namespace vtkcompat {

// A one-component data array. `type` is the VTK type it is written as.
struct Array {
    enum Type { Double, Float, Int, UnsignedShort } type = Double;
    std::string name;
    std::vector<double> values;
};
using ArrayPtr = std::shared_ptr<Array>;
const char* typeName(Array::Type t);  // "double", "float", "int", "unsigned_short"

// Named arrays of one association (cell or point data); AddArray replaces one of the same name.
struct Attributes {
    std::vector<ArrayPtr> arrays;
    void add(const ArrayPtr& a);
    bool remove(const std::string& name);
    ArrayPtr find(const std::string& name) const;
};

// An unstructured grid of tetras (`mesh`: tetra t is cell t-1, point p is point p-1) or polydata
// (points, polylines, triangles; cells are the lines then the triangles).
struct DataSet {
    enum Kind { Grid, Poly } kind = Grid;
    std::shared_ptr<const TetraMesh> mesh;  // Grid
    std::vector<Point3> points;             // Poly
    std::vector<std::vector<long long>> lines;
    std::vector<std::array<long long, 3>> polys;
    Attributes pointData, cellData;
    size_t numberOfPoints() const;
    size_t numberOfCells() const;
};

// Checks every array's length against the dataset's points or cells (ParameterError naming the
// array), then writes a legacy (.vtk; binary unless ascii) or XML (.vtu/.vtp) file whatever the
// name's extension, through "<path>.*.partial". `what` names the caller in errors.
void write(const DataSet& d, const std::string& path, bool xml, bool ascii, const std::string& header,
           const std::string& what);

// Reads a legacy or XML polydata file (lines and triangles; other cells are an error).
DataSet readPolyData(const std::string& path, bool xml, const std::string& what);

}  // namespace vtkcompat
}  // namespace fm
