// SPDX-License-Identifier: GPL-3.0-or-later
#include "Storage/VTK/VTKCompat.hpp"
#include "Storage/AtomicFile.hpp"

#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkDataWriter.h>
#include <vtkDoubleArray.h>
#include <vtkFloatArray.h>
#include <vtkIdList.h>
#include <vtkIntArray.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPolyDataReader.h>
#include <vtkPolyDataWriter.h>
#include <vtkUnsignedShortArray.h>
#include <vtkUnstructuredGrid.h>
#include <vtkUnstructuredGridWriter.h>
#include <vtkXMLPolyDataReader.h>
#include <vtkXMLPolyDataWriter.h>
#include <vtkXMLUnstructuredGridWriter.h>
#include <vtkXMLWriter.h>

#include <cstdio>
#include <fstream>

#include "Common/Errors.hpp"
#include "Storage/VTK/VTKSupport.hpp"

namespace fm {
namespace vtkcompat {

const char* typeName(Array::Type t) {
    switch (t) {
        case Array::Float: return "float";
        case Array::Int: return "int";
        case Array::UnsignedShort: return "unsigned_short";
        default: return "double";
    }
}

void Attributes::add(const ArrayPtr& a) {
    for (auto& x : arrays)
        if (x->name == a->name) {
            x = a;
            return;
        }
    arrays.push_back(a);
}
bool Attributes::remove(const std::string& name) {
    for (auto it = arrays.begin(); it != arrays.end(); ++it)
        if ((*it)->name == name) {
            arrays.erase(it);
            return true;
        }
    return false;
}
ArrayPtr Attributes::find(const std::string& name) const {
    for (const auto& x : arrays)
        if (x->name == name) return x;
    return nullptr;
}

size_t DataSet::numberOfPoints() const {
    if (kind == Grid) return mesh ? mesh->pointCount() : 0;
    return points.size();
}
size_t DataSet::numberOfCells() const {
    if (kind == Grid) return mesh ? mesh->tetraCount() : 0;
    return lines.size() + polys.size();
}

namespace {

vtkSmartPointer<vtkDataArray> toVtk(const Array& a) {
    vtkSmartPointer<vtkDataArray> v;
    switch (a.type) {
        case Array::Float: v = vtkSmartPointer<vtkFloatArray>::New(); break;
        case Array::Int: v = vtkSmartPointer<vtkIntArray>::New(); break;
        case Array::UnsignedShort: v = vtkSmartPointer<vtkUnsignedShortArray>::New(); break;
        default: v = vtkSmartPointer<vtkDoubleArray>::New(); break;
    }
    v->SetName(a.name.c_str());
    v->SetNumberOfComponents(1);
    v->SetNumberOfTuples(vtkIdType(a.values.size()));
    for (size_t i = 0; i < a.values.size(); ++i) v->SetComponent(vtkIdType(i), 0, a.values[i]);
    return v;
}

Array fromVtk(vtkDataArray* v) {
    Array a;
    a.name = v->GetName() ? v->GetName() : "";
    int t = v->GetDataType();
    a.type = t == VTK_FLOAT ? Array::Float
             : (t == VTK_INT || t == VTK_LONG || t == VTK_ID_TYPE || t == VTK_LONG_LONG || t == VTK_SHORT ||
                t == VTK_CHAR || t == VTK_SIGNED_CHAR) ? Array::Int
             : (t == VTK_UNSIGNED_SHORT || t == VTK_UNSIGNED_CHAR) ? Array::UnsignedShort : Array::Double;
    a.values.resize(size_t(v->GetNumberOfTuples()));
    for (vtkIdType i = 0; i < v->GetNumberOfTuples(); ++i) a.values[size_t(i)] = v->GetComponent(i, 0);
    return a;
}

void checkSizes(const Attributes& at, size_t n, const char* what, const char* elements, const std::string& caller) {
    for (const auto& a : at.arrays)
        if (a->values.size() != n)
            throw ParameterError(caller + ": " + what + " array \"" + a->name + "\" has " + std::to_string(a->values.size()) +
                                 " values but the dataset has " + std::to_string(n) + " " + elements);
}

vtkSmartPointer<vtkDataSet> toVtk(const DataSet& d) {
    vtkSmartPointer<vtkDataSet> out;
    if (d.kind == DataSet::Grid) {
        auto g = vtkio::makeGrid(*d.mesh);
        g->GetCellData()->RemoveArray("Region");  // only the arrays the script added
        out = g;
    } else {
        auto pts = vtkSmartPointer<vtkPoints>::New();
        pts->SetDataTypeToDouble();
        for (const auto& p : d.points) pts->InsertNextPoint(p.data());
        auto lines = vtkSmartPointer<vtkCellArray>::New();
        for (const auto& l : d.lines) {
            lines->InsertNextCell(vtkIdType(l.size()));
            for (long long i : l) lines->InsertCellPoint(vtkIdType(i));
        }
        auto polys = vtkSmartPointer<vtkCellArray>::New();
        for (const auto& t : d.polys) {
            vtkIdType ids[3] = {vtkIdType(t[0]), vtkIdType(t[1]), vtkIdType(t[2])};
            polys->InsertNextCell(3, ids);
        }
        auto pd = vtkSmartPointer<vtkPolyData>::New();
        pd->SetPoints(pts);
        if (!d.lines.empty()) pd->SetLines(lines);
        if (!d.polys.empty()) pd->SetPolys(polys);
        out = pd;
    }
    for (const auto& a : d.cellData.arrays) out->GetCellData()->AddArray(toVtk(*a));
    for (const auto& a : d.pointData.arrays) out->GetPointData()->AddArray(toVtk(*a));
    return out;
}

}  // namespace

void write(const DataSet& d, const std::string& path, bool xml, bool ascii, const std::string& header,
           const std::string& what) {
    if (path.empty()) throw ParameterError(what + ": no file name (call SetFileName first)");
    if (d.kind == DataSet::Grid && !d.mesh) throw ParameterError(what + ": the grid has no mesh");
    checkSizes(d.cellData, d.numberOfCells(), "cell", "cells", what);
    checkSizes(d.pointData, d.numberOfPoints(), "point", "points", what);
    for (const auto& l : d.lines)
        for (long long i : l)
            if (i < 0 || size_t(i) >= d.points.size())
                throw ParameterError(what + ": a line refers to point " + std::to_string(i) + " of " +
                                     std::to_string(d.points.size()));
    auto data = toVtk(d);
    vtkSmartPointer<vtkAlgorithm> w;
    std::string tmp = stagingPath(path);
    const bool grid = d.kind == DataSet::Grid;
    if (xml) {
        vtkSmartPointer<vtkXMLWriter> x;
        if (grid) x = vtkSmartPointer<vtkXMLUnstructuredGridWriter>::New();
        else x = vtkSmartPointer<vtkXMLPolyDataWriter>::New();
        x->SetFileName(tmp.c_str());
        if (ascii) x->SetDataModeToAscii();
        w = x;
    } else {
        vtkSmartPointer<vtkDataWriter> l;
        if (grid) l = vtkSmartPointer<vtkUnstructuredGridWriter>::New();
        else l = vtkSmartPointer<vtkPolyDataWriter>::New();
        l->SetFileName(tmp.c_str());
        if (ascii) l->SetFileTypeToASCII(); else l->SetFileTypeToBinary();
        std::string h = header.empty() ? "FullMonte" : header.substr(0, 255);
        for (char& c : h)
            if (c == '\n' || c == '\r') c = ' ';
        l->SetHeader(h.c_str());
        w = l;
    }
    w->SetInputDataObject(data);
    vtkio::MessageCapture capture;
    int ok = 0;
    if (auto* x = vtkXMLWriter::SafeDownCast(w)) ok = x->Write();
    else if (auto* l = vtkDataWriter::SafeDownCast(w)) ok = l->Write();
    if (!ok || capture.hasError() || !moveIntoPlace(tmp, path)) {
        std::remove(tmp.c_str());
        std::string why = capture.firstProblem();
        throw Error(what + ": " + path + ": write failed (" + (why.empty() ? "disk full or not writable?" : why) + ")");
    }
}

DataSet readPolyData(const std::string& path, bool xml, const std::string& what) {
    if (path.empty()) throw ParameterError(what + ": no file name (call SetFileName first)");
    if (!std::ifstream(path).good()) throw FormatError(what + ": " + path + ": cannot open the file");
    vtkio::MessageCapture capture;
    vtkSmartPointer<vtkPolyData> pd;
    if (xml) {
        auto r = vtkSmartPointer<vtkXMLPolyDataReader>::New();
        r->SetFileName(path.c_str());
        r->Update();
        pd = r->GetOutput();
    } else {
        auto r = vtkSmartPointer<vtkPolyDataReader>::New();
        r->SetFileName(path.c_str());
        r->Update();
        pd = r->GetOutput();
    }
    if (capture.hasError() || !pd)
        throw FormatError(what + ": " + path + ": not a readable " + (xml ? "XML" : "legacy") + " VTK polydata file (" +
                          capture.firstProblem() + ")");
    DataSet d;
    d.kind = DataSet::Poly;
    for (vtkIdType i = 0; i < pd->GetNumberOfPoints(); ++i) {
        Point3 p;
        pd->GetPoint(i, p.data());
        d.points.push_back(p);
    }
    if (pd->GetNumberOfVerts() || pd->GetNumberOfStrips())
        throw FormatError(what + ": " + path + ": has vertex or strip cells (only lines and triangles are read)");
    auto ids = vtkSmartPointer<vtkIdList>::New();
    vtkCellArray* lines = pd->GetLines();
    if (lines)
        for (vtkIdType c = 0; c < lines->GetNumberOfCells(); ++c) {
            lines->GetCellAtId(c, ids);
            std::vector<long long> l;
            for (vtkIdType k = 0; k < ids->GetNumberOfIds(); ++k) l.push_back(ids->GetId(k));
            d.lines.push_back(l);
        }
    vtkCellArray* polys = pd->GetPolys();
    if (polys)
        for (vtkIdType c = 0; c < polys->GetNumberOfCells(); ++c) {
            polys->GetCellAtId(c, ids);
            if (ids->GetNumberOfIds() != 3)
                throw FormatError(what + ": " + path + ": polygon " + std::to_string(c) + " is not a triangle");
            d.polys.push_back({ids->GetId(0), ids->GetId(1), ids->GetId(2)});
        }
    for (int i = 0; i < pd->GetPointData()->GetNumberOfArrays(); ++i)
        if (vtkDataArray* a = pd->GetPointData()->GetArray(i)) d.pointData.add(std::make_shared<Array>(fromVtk(a)));
    for (int i = 0; i < pd->GetCellData()->GetNumberOfArrays(); ++i)
        if (vtkDataArray* a = pd->GetCellData()->GetArray(i)) d.cellData.add(std::make_shared<Array>(fromVtk(a)));
    return d;
}

}  // namespace vtkcompat
}  // namespace fm
