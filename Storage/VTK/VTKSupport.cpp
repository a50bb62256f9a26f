// SPDX-License-Identifier: GPL-3.0-or-later
#include "Storage/VTK/VTKSupport.hpp"
#include "Storage/AtomicFile.hpp"

#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkCellType.h>
#include <vtkDataWriter.h>
#include <vtkDoubleArray.h>
#include <vtkFieldData.h>
#include <vtkIntArray.h>
#include <vtkLogger.h>
#include <vtkObjectFactory.h>
#include <vtkOutputWindow.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPolyDataWriter.h>
#include <vtkStringArray.h>
#include <vtkUnstructuredGrid.h>
#include <vtkUnstructuredGridWriter.h>
#include <vtkXMLPolyDataWriter.h>
#include <vtkXMLUnstructuredGridWriter.h>
#include <vtkXMLWriter.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <unordered_map>

#include "Common/Errors.hpp"

namespace fm {
namespace vtkio {

namespace {

// Collects what VTK would have printed (its logger's stderr copy is switched off meanwhile).
class CapturingWindow : public vtkOutputWindow {
public:
    static CapturingWindow* New();
    vtkTypeMacro(CapturingWindow, vtkOutputWindow);
    void DisplayText(const char*) override {}
    void DisplayErrorText(const char* text) override { errors.push_back(trimmed(text)); }
    void DisplayWarningText(const char* text) override { warnings.push_back(trimmed(text)); }
    void DisplayGenericWarningText(const char* text) override { warnings.push_back(trimmed(text)); }
    void DisplayDebugText(const char*) override {}
    std::vector<std::string> errors, warnings;

private:
    static std::string trimmed(const char* text) {
        std::string t = text ? text : "";
        while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
        return t;
    }
};
vtkStandardNewMacro(CapturingWindow);

// VTK prefixes messages with "ERROR: In /path/file.cxx, line N\nvtkClass (0x...): text" (or
// "Generic Warning: In ..., line N\ntext"); the user needs only the text.
std::string shorten(const std::string& msg) {
    size_t nl = msg.find('\n');
    std::string s = nl == std::string::npos ? msg : msg.substr(nl + 1);
    size_t p = s.find("): ");
    if (p != std::string::npos && s.compare(0, 3, "vtk") == 0) s = s.substr(p + 3);
    std::replace(s.begin(), s.end(), '\n', ' ');
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    return s;
}

}  // namespace

struct MessageCapture::Impl {
    vtkSmartPointer<CapturingWindow> window = vtkSmartPointer<CapturingWindow>::New();
    vtkOutputWindow* previous = nullptr;
    vtkLogger::Verbosity stderrLevel = vtkLogger::VERBOSITY_INFO;
};

MessageCapture::MessageCapture() : impl_(new Impl) {
    // VTK 9 logs every error to stderr besides the output window. vtkLogger has no getter for
    // the stderr level; the cutoff equals it unless a log file or callback was added.
    impl_->stderrLevel = vtkLogger::GetCurrentVerbosityCutoff();
    vtkLogger::SetStderrVerbosity(vtkLogger::VERBOSITY_OFF);
    impl_->previous = vtkOutputWindow::GetInstance();
    // Keep the previous window alive while ours is installed; SetInstance drops its reference.
    if (impl_->previous) impl_->previous->Register(nullptr);
    vtkOutputWindow::SetInstance(impl_->window);
}

MessageCapture::~MessageCapture() {
    vtkOutputWindow::SetInstance(impl_->previous);
    if (impl_->previous) impl_->previous->UnRegister(nullptr);
    vtkLogger::SetStderrVerbosity(impl_->stderrLevel);
    delete impl_;
}

bool MessageCapture::hasError() const { return !impl_->window->errors.empty(); }
bool MessageCapture::hasProblem() const { return hasError() || !impl_->window->warnings.empty(); }

std::string MessageCapture::firstProblem() const {
    if (!impl_->window->errors.empty()) return shorten(impl_->window->errors.front());
    if (!impl_->window->warnings.empty()) return shorten(impl_->window->warnings.front());
    return "";
}

std::string lowerExtension(const std::string& path) {
    size_t dot = path.rfind('.');
    size_t slash = path.find_last_of("/\\");
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
    std::string e = path.substr(dot);
    for (char& c : e) c = char(std::tolower(static_cast<unsigned char>(c)));
    return e;
}

vtkSmartPointer<vtkDoubleArray> makeArray(const std::string& name, const std::vector<double>& v,
                                          size_t first) {
    auto a = vtkSmartPointer<vtkDoubleArray>::New();
    a->SetName(name.c_str());
    a->SetNumberOfComponents(1);
    a->SetNumberOfTuples(vtkIdType(v.size() - first));
    for (size_t i = first; i < v.size(); ++i) a->SetValue(vtkIdType(i - first), v[i]);
    return a;
}

std::vector<double> arrayValues(vtkDataArray* a) {
    std::vector<double> v(size_t(a->GetNumberOfTuples()) + 1, 0.0);
    for (vtkIdType i = 0; i < a->GetNumberOfTuples(); ++i) v[size_t(i) + 1] = a->GetComponent(i, 0);
    return v;
}

namespace {

vtkSmartPointer<vtkPoints> meshPoints(const TetraMesh& mesh) {
    auto pts = vtkSmartPointer<vtkPoints>::New();
    pts->SetDataTypeToDouble();
    pts->SetNumberOfPoints(vtkIdType(mesh.pointCount()));
    for (uint32_t i = 1; i <= mesh.pointCount(); ++i) pts->SetPoint(i - 1, mesh.point(i).data());
    return pts;
}

vtkSmartPointer<vtkIntArray> intArray(const char* name, size_t n) {
    auto a = vtkSmartPointer<vtkIntArray>::New();
    a->SetName(name);
    a->SetNumberOfTuples(vtkIdType(n));
    return a;
}

}  // namespace

vtkSmartPointer<vtkUnstructuredGrid> makeGrid(const TetraMesh& mesh) {
    auto cells = vtkSmartPointer<vtkCellArray>::New();
    cells->AllocateExact(vtkIdType(mesh.tetraCount()), vtkIdType(4 * mesh.tetraCount()));
    auto region = intArray("Region", mesh.tetraCount());
    for (uint32_t t = 1; t <= mesh.tetraCount(); ++t) {
        const TetraPoints& T = mesh.tetra(t);
        vtkIdType ids[4] = {T[0] - 1, T[1] - 1, T[2] - 1, T[3] - 1};
        cells->InsertNextCell(4, ids);
        region->SetValue(t - 1, int(mesh.region(t)));
    }
    auto grid = vtkSmartPointer<vtkUnstructuredGrid>::New();
    grid->SetPoints(meshPoints(mesh));
    grid->SetCells(VTK_TETRA, cells);
    grid->GetCellData()->AddArray(region);
    return grid;
}

std::vector<FaceRef> surfaceFaces(const TetraMesh& mesh, uint32_t region) {
    std::vector<FaceRef> out;
    if (region == 0) {
        // On the boundary the owner is the tetra inside the mesh (other == 0).
        for (uint32_t f : mesh.boundaryFaces()) out.push_back({f, mesh.face(f).owner});
        return out;
    }
    for (const auto& fr : mesh.regionBoundary(region)) out.push_back({fr.first, fr.second});
    return out;
}

vtkSmartPointer<vtkPolyData> makeFaces(const TetraMesh& mesh, const std::vector<FaceRef>& faces) {
    std::unordered_map<uint32_t, vtkIdType> local;  // mesh point -> polydata point
    std::vector<uint32_t> used;
    auto pointId = [&](uint32_t p) {
        auto it = local.emplace(p, vtkIdType(used.size()));
        if (it.second) used.push_back(p);
        return it.first->second;
    };
    auto polys = vtkSmartPointer<vtkCellArray>::New();
    auto faceId = intArray("FaceId", faces.size());
    auto region = intArray("Region", faces.size());
    for (size_t i = 0; i < faces.size(); ++i) {
        const MeshFace& F = mesh.face(faces[i].face);
        vtkIdType ids[3] = {pointId(F.points[0]), pointId(F.points[1]), pointId(F.points[2])};
        if (faces[i].inside != F.owner) std::swap(ids[1], ids[2]);  // normal must leave `inside`
        polys->InsertNextCell(3, ids);
        faceId->SetValue(vtkIdType(i), int(faces[i].face));
        region->SetValue(vtkIdType(i), int(mesh.region(faces[i].inside)));
    }
    auto pts = vtkSmartPointer<vtkPoints>::New();
    pts->SetDataTypeToDouble();
    pts->SetNumberOfPoints(vtkIdType(used.size()));
    for (size_t i = 0; i < used.size(); ++i) pts->SetPoint(vtkIdType(i), mesh.point(used[i]).data());
    auto pd = vtkSmartPointer<vtkPolyData>::New();
    pd->SetPoints(pts);
    pd->SetPolys(polys);
    pd->GetCellData()->AddArray(faceId);
    pd->GetCellData()->AddArray(region);
    return pd;
}

void addComments(vtkDataObject* obj, const std::vector<std::string>& comments) {
    if (comments.empty()) return;
    auto a = vtkSmartPointer<vtkStringArray>::New();
    a->SetName("Comment");
    for (const auto& c : comments) a->InsertNextValue(c);
    obj->GetFieldData()->AddArray(a);
}

void addUnits(vtkDataObject* obj, const std::vector<std::pair<std::string, std::string>>& units) {
    auto a = vtkSmartPointer<vtkStringArray>::New();
    a->SetName("Units");
    for (const auto& [name, unit] : units)
        if (!unit.empty()) a->InsertNextValue(name + ": " + unit);
    if (a->GetNumberOfValues() > 0) obj->GetFieldData()->AddArray(a);
}

namespace {

// Legacy headers are one line of at most 255 characters.
std::string headerLine(const std::string& h) {
    std::string s = h.empty() ? "FullMonte" : h;
    std::replace(s.begin(), s.end(), '\n', ' ');
    std::replace(s.begin(), s.end(), '\r', ' ');
    return s.substr(0, 255);
}

// vtkDataWriter (legacy) and vtkXMLWriter share no base with Write(): vtkAlgorithm it is.
vtkSmartPointer<vtkAlgorithm> writerFor(vtkDataSet* data, const std::string& ext,
                                     const std::string& header, LegacyVersion legacy) {
    bool grid = vtkUnstructuredGrid::SafeDownCast(data) != nullptr;
    if (ext == ".vtk") {
        // Binary: exact doubles and NaN survive (ASCII NaN does not read back everywhere).
        vtkSmartPointer<vtkDataWriter> w;
        if (grid) w = vtkSmartPointer<vtkUnstructuredGridWriter>::New();
        else w = vtkSmartPointer<vtkPolyDataWriter>::New();
        w->SetFileTypeToBinary();
        w->SetHeader(headerLine(header).c_str());
        w->SetFileVersion(legacy == LegacyVersion::V4_2 ? vtkDataWriter::VTK_LEGACY_READER_VERSION_4_2
                                                        : vtkDataWriter::VTK_LEGACY_READER_VERSION_5_1);
        return w;
    }
    if (grid && ext == ".vtu") return vtkSmartPointer<vtkXMLUnstructuredGridWriter>::New();
    if (!grid && ext == ".vtp") return vtkSmartPointer<vtkXMLPolyDataWriter>::New();
    return nullptr;
}

}  // namespace

LegacyVersion parseLegacyVersion(const std::string& text, const std::string& what) {
    if (text == "4.2" || text == "42") return LegacyVersion::V4_2;
    if (text == "5.1" || text == "51") return LegacyVersion::V5_1;
    throw ParameterError(what + ": legacy VTK file version '" + text + "' is not 4.2 or 5.1");
}

void writeDataSet(vtkDataSet* data, const std::string& path, const std::string& what,
                  const std::string& legacyHeader, LegacyVersion legacy) {
    std::string ext = lowerExtension(path);
    auto writer = writerFor(data, ext, legacyHeader, legacy);
    bool grid = vtkUnstructuredGrid::SafeDownCast(data) != nullptr;
    if (!writer)
        throw ParameterError(what + ": " + path + ": unknown extension '" + ext + "' (use " +
                             (grid ? ".vtu (XML) or .vtk (legacy)" : ".vtp (XML) or .vtk (legacy)") + ")");
    std::string tmp = stagingPath(path);
    writer->SetInputDataObject(data);
    MessageCapture capture;
    int ok = 0;
    if (auto* x = vtkXMLWriter::SafeDownCast(writer)) {
        x->SetFileName(tmp.c_str());
        ok = x->Write();
    } else if (auto* d = vtkDataWriter::SafeDownCast(writer)) {
        d->SetFileName(tmp.c_str());
        ok = d->Write();
    }
    if (!ok || capture.hasError() || !moveIntoPlace(tmp, path)) {
        std::remove(tmp.c_str());
        std::string why = capture.firstProblem();
        throw Error(what + ": " + path + ": write failed (" +
                    (why.empty() ? "disk full or not writable?" : why) + ")");
    }
}

void addNamedData(NamedData& data, const std::string& what, const std::string& name,
                  const std::vector<double>& values, const std::vector<std::string>& reserved) {
    if (name.empty()) throw ParameterError(what + ": addData needs a non-empty name");
    for (const auto& r : reserved)
        if (name == r) throw ParameterError(what + ": \"" + name + "\" is written by the writer itself; choose another name");
    for (auto& d : data)
        if (d.first == name) {
            d.second = values;
            return;
        }
    data.emplace_back(name, values);
}

size_t firstIndexFor(const std::string& what, const std::string& name, size_t size, size_t n,
                     const char* elements) {
    if (size == n + 1) return 1;
    if (size == n) return 0;
    throw ParameterError(what + ": data \"" + name + "\" has " + std::to_string(size) +
                         " values but the mesh has " + std::to_string(n) + " " + elements +
                         " (expected " + std::to_string(n + 1) + ", index 0 being the dummy)");
}

}  // namespace vtkio
}  // namespace fm
