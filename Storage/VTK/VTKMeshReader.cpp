// SPDX-License-Identifier: GPL-3.0-or-later
#include "Storage/VTK/VTKMeshReader.hpp"

#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkCellType.h>
#include <vtkCellTypes.h>
#include <vtkDataArray.h>
#include <vtkPoints.h>
#include <vtkUnsignedCharArray.h>
#include <vtkUnstructuredGrid.h>
#include <vtkUnstructuredGridReader.h>
#include <vtkXMLUnstructuredGridReader.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "Common/Errors.hpp"
#include "Storage/VTK/VTKLegacyCheck.hpp"
#include "Storage/VTK/VTKSupport.hpp"

namespace fm {

namespace {

enum class Flavour { Legacy, XML };

[[noreturn]] void fail(const std::string& file, const std::string& why) {
    throw FormatError(file + ": " + why);
}

// The format comes from the content: users rename files, and a wrong guess would otherwise
// surface as an obscure parser message.
Flavour sniff(const std::string& file) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) fail(file, "no such file (or not a regular file)");
    std::ifstream in(file, std::ios::binary);
    if (!in) fail(file, "cannot open for reading");
    std::string head(512, '\0');
    in.read(&head[0], std::streamsize(head.size()));
    head.resize(size_t(in.gcount()));
    if (head.empty()) fail(file, "empty file");
    size_t p = head.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
    if (p != std::string::npos && head.compare(p, 22, "# vtk DataFile Version") == 0) return Flavour::Legacy;
    if (p != std::string::npos && (head.compare(p, 5, "<?xml") == 0 || head.compare(p, 8, "<VTKFile") == 0))
        return Flavour::XML;
    fail(file, "not a VTK file (expected a legacy '# vtk DataFile Version' header or an XML <VTKFile>)");
}

vtkSmartPointer<vtkUnstructuredGrid> readLegacy(const std::string& file, vtkio::MessageCapture& cap) {
    vtkio::checkLegacyCells(file);
    auto r = vtkSmartPointer<vtkUnstructuredGridReader>::New();
    r->SetFileName(file.c_str());
    if (!r->IsFileUnstructuredGrid()) {
        std::string why = cap.firstProblem();
        fail(file, "not a legacy VTK UNSTRUCTURED_GRID" + (why.empty() ? "" : " (" + why + ")"));
    }
    // Without these the legacy reader keeps only the first array of each attribute kind.
    r->ReadAllScalarsOn();
    r->ReadAllVectorsOn();
    r->ReadAllNormalsOn();
    r->ReadAllTensorsOn();
    r->ReadAllColorScalarsOn();
    r->ReadAllTCoordsOn();
    r->ReadAllFieldsOn();
    r->Update();
    // The legacy reader reports short or corrupt data only as warnings ("Error reading binary
    // data!") and fills the rest with whatever was in memory: any warning is fatal here.
    if (cap.hasProblem() || r->GetErrorCode() != 0) {
        std::string why = cap.firstProblem();
        fail(file, "unreadable (" + (why.empty() ? "malformed or truncated" : why) + ")");
    }
    return r->GetOutput();
}

vtkSmartPointer<vtkUnstructuredGrid> readXML(const std::string& file, vtkio::MessageCapture& cap) {
    auto r = vtkSmartPointer<vtkXMLUnstructuredGridReader>::New();
    if (!r->CanReadFile(file.c_str()))
        fail(file, "not an XML VTK UnstructuredGrid (.vtu) file (wrong type, or malformed XML)");
    r->SetFileName(file.c_str());
    r->Update();
    if (cap.hasProblem() || r->GetErrorCode() != 0) {
        std::string why = cap.firstProblem();
        fail(file, "unreadable (" + (why.empty() ? "truncated or malformed XML" : why) + ")");
    }
    return r->GetOutput();
}

std::vector<Point3> gridPoints(const std::string& file, vtkUnstructuredGrid* g) {
    std::vector<Point3> pts(1, Point3{0, 0, 0});
    vtkPoints* P = g->GetPoints();
    vtkIdType n = P ? P->GetNumberOfPoints() : 0;
    pts.reserve(size_t(n) + 1);
    for (vtkIdType i = 0; i < n; ++i) {
        Point3 p;
        P->GetPoint(i, p.data());
        if (!std::isfinite(p[0]) || !std::isfinite(p[1]) || !std::isfinite(p[2]))
            fail(file, "point " + std::to_string(i) + " has a non-finite coordinate");
        pts.push_back(p);
    }
    return pts;
}

// The cell arrays as stored may still disagree with each other (offsets out of order or past the
// connectivity, fewer types than cells); reading cells through them would then leave the arrays.
void checkCellArrays(const std::string& file, vtkUnstructuredGrid* g) {
    vtkIdType n = g->GetNumberOfCells();
    vtkUnsignedCharArray* types = g->GetCellTypesArray();
    if (!types || types->GetNumberOfValues() != n)
        fail(file, std::to_string(types ? types->GetNumberOfValues() : 0) + " cell types for " + std::to_string(n) + " cells");
    vtkCellArray* cells = g->GetCells();
    vtkDataArray* off = cells->GetOffsetsArray();
    vtkIdType connSize = cells->GetConnectivityArray()->GetNumberOfTuples();
    if (!off || off->GetNumberOfTuples() != n + 1 || off->GetTuple1(0) != 0 || off->GetTuple1(n) != double(connSize))
        fail(file, "inconsistent cell offsets");
    for (vtkIdType c = 0; c < n; ++c)
        if (off->GetTuple1(c + 1) < off->GetTuple1(c)) fail(file, "cell offsets decrease at cell " + std::to_string(c));
}

std::string cellTypeName(int type) {
    const char* n = vtkCellTypes::GetClassNameFromTypeId(type);
    return std::string(n ? n : "unknown cell") + " (VTK type " + std::to_string(type) + ")";
}

std::vector<TetraPoints> gridTetras(const std::string& file, vtkUnstructuredGrid* g, vtkIdType nPoints) {
    std::vector<TetraPoints> tets(1, TetraPoints{0, 0, 0, 0});
    vtkIdType n = g->GetNumberOfCells();
    tets.reserve(size_t(n) + 1);
    for (vtkIdType c = 0; c < n; ++c) {
        int type = g->GetCellType(c);
        if (type != VTK_TETRA)
            fail(file, "cell " + std::to_string(c) + " is a " + cellTypeName(type) +
                           "; only tetrahedra (VTK_TETRA, type 10) are supported");
        vtkIdType npts = 0;
        const vtkIdType* ids = nullptr;
        g->GetCellPoints(c, npts, ids);
        TetraPoints T;
        if (npts != 4)
            fail(file, "cell " + std::to_string(c) + " is typed VTK_TETRA but has " + std::to_string(npts) + " points");
        for (int k = 0; k < 4; ++k) {
            if (ids[k] < 0 || ids[k] >= nPoints)
                fail(file, "cell " + std::to_string(c) + " refers to point " + std::to_string(ids[k]) +
                               ", valid points are 0.." + std::to_string(nPoints - 1));
            T[k] = uint32_t(ids[k] + 1);
        }
        tets.push_back(T);
    }
    return tets;
}

std::string arrayList(vtkCellData* cd) {
    std::string s;
    for (int i = 0; i < cd->GetNumberOfArrays(); ++i) {
        const char* n = cd->GetArrayName(i);
        s += (s.empty() ? "\"" : ", \"") + std::string(n ? n : "") + "\"";
    }
    return s.empty() ? "none" : s;
}

// Lower case without spaces, '_' and '-': "Tissue Type", "tissue_type" and "TissueType" match.
std::string normalName(const std::string& s) {
    std::string n;
    for (char c : s)
        if (c != ' ' && c != '_' && c != '-') n += char(std::tolower(static_cast<unsigned char>(c)));
    return n;
}

vtkDataArray* findRegionArray(const std::string& file, vtkCellData* cd, const std::string& wanted) {
    if (!wanted.empty()) {
        vtkDataArray* a = cd->GetArray(wanted.c_str());
        if (!a) fail(file, "no cell array \"" + wanted + "\" for the regions (cell arrays: " + arrayList(cd) + ")");
        return a;
    }
    for (const std::string& name : VTKMeshReader::regionArrayNames())
        for (int i = 0; i < cd->GetNumberOfArrays(); ++i) {
            vtkDataArray* a = cd->GetArray(i);
            if (a && a->GetName() && normalName(a->GetName()) == normalName(name)) return a;
        }
    // A one-region mesh is a guess that silently changes the physics: ask instead.
    fail(file, "no region cell array found (cell arrays: " + arrayList(cd) +
                   "); name it with --region-array NAME (Tcl: regionArrayName NAME), or ask for one region "
                   "with --single-region (Tcl: singleRegion 1). Names tried: Region, Tissue Type, Material, "
                   "Label, CellEntityIds, gmsh:physical, medit:ref, ... (docs/MESH_CHECKS.md)");
}

std::vector<uint32_t> regionLabels(const std::string& file, vtkDataArray* a, size_t nTetras) {
    std::vector<uint32_t> regions(nTetras + 1, 1);
    regions[0] = 0;
    if (!a) return regions;
    std::string name = a->GetName() ? a->GetName() : "";
    for (size_t t = 1; t <= nTetras; ++t) {
        double v = a->GetComponent(vtkIdType(t - 1), 0);
        if (!(v >= 1 && v <= double(1u << 20) && v == std::floor(v))) {
            std::ostringstream m;
            m << "cell " << t - 1 << " has region " << v << " in array \"" << name
              << "\" (regions must be whole numbers >= 1; 0 is the exterior)";
            fail(file, m.str());
        }
        regions[t] = uint32_t(v);
    }
    return regions;
}

std::vector<std::pair<std::string, std::vector<double>>> namedCellArrays(const std::string& file,
                                                                        vtkUnstructuredGrid* g) {
    std::vector<std::pair<std::string, std::vector<double>>> out;
    vtkCellData* cd = g->GetCellData();
    for (int i = 0; i < cd->GetNumberOfArrays(); ++i) {
        vtkDataArray* a = cd->GetArray(i);
        if (!a || !a->GetName()) continue;
        if (a->GetNumberOfTuples() != g->GetNumberOfCells())
            fail(file, "cell array \"" + std::string(a->GetName()) + "\" has " + std::to_string(a->GetNumberOfTuples()) +
                           " values for " + std::to_string(g->GetNumberOfCells()) + " cells");
        out.emplace_back(a->GetName(), vtkio::arrayValues(a));
    }
    return out;
}

}  // namespace

VTKMeshReader::VTKMeshReader() = default;
VTKMeshReader::VTKMeshReader(const std::string& filename) : filename_(filename) {}
VTKMeshReader::~VTKMeshReader() = default;

void VTKMeshReader::read() {
    mesh_.reset();
    cellData_.clear();
    regionArrayUsed_.clear();
    const std::string& file = filename_;
    if (file.empty()) throw ParameterError("VTKMeshReader: no filename set");
    Flavour fl = sniff(file);
    vtkio::MessageCapture cap;
    vtkSmartPointer<vtkUnstructuredGrid> g = fl == Flavour::Legacy ? readLegacy(file, cap) : readXML(file, cap);
    if (!g || g->GetNumberOfCells() == 0) fail(file, "the grid has no cells");
    checkCellArrays(file, g);
    std::vector<Point3> pts = gridPoints(file, g);
    std::vector<TetraPoints> tets = gridTetras(file, g, vtkIdType(pts.size() - 1));
    vtkCellData* cd = g->GetCellData();
    auto arrays = namedCellArrays(file, g);
    vtkDataArray* ra = singleRegion_ ? nullptr : findRegionArray(file, cd, regionArrayName_);
    std::vector<uint32_t> regions = regionLabels(file, ra, tets.size() - 1);
    try {
        mesh_ = std::make_unique<TetraMesh>(std::move(pts), std::move(tets), std::move(regions), check_);
    } catch (const ModelError& e) {
        throw ModelError(file + ": " + e.what());
    }
    cellData_ = std::move(arrays);  // only after success: a failed read leaves nothing behind
    regionArrayUsed_ = ra ? ra->GetName() : "";
}

const std::vector<std::string>& VTKMeshReader::regionArrayNames() {
    static const std::vector<std::string> names{
        "Region", "Regions", "RegionId", "Tissue Type", "Tissue", "TissueId", "Material", "Materials",
        "MaterialId", "MaterialIds", "Label", "Labels", "LabelId", "CellEntityIds", "gmsh:physical",
        "medit:ref", "tetgen:ref", "ref", "Subdomain", "Subdomains", "Domain", "cell_markers", "ObjectId"};
    return names;
}

TetraMesh& VTKMeshReader::mesh() {
    if (!mesh_) throw Error("VTKMeshReader: no mesh (call read() first" +
                            std::string(filename_.empty() ? "" : " on " + filename_) + ")");
    return *mesh_;
}

TetraMesh VTKMeshReader::takeMesh() {
    TetraMesh m = std::move(mesh());
    mesh_.reset();
    return m;
}

std::vector<std::string> VTKMeshReader::cellArrayNames() const {
    std::vector<std::string> names;
    for (const auto& d : cellData_) names.push_back(d.first);
    return names;
}

const std::vector<double>& VTKMeshReader::cellData(const std::string& name) const {
    for (const auto& d : cellData_)
        if (d.first == name) return d.second;
    std::string have;
    for (const auto& d : cellData_) have += (have.empty() ? "" : ", ") + ("\"" + d.first + "\"");
    throw Error("VTKMeshReader: " + filename_ + ": no cell array \"" + name + "\" (have: " +
                (have.empty() ? "none" : have) + ")");
}

}  // namespace fm
