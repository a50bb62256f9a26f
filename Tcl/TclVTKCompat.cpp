// SPDX-License-Identifier: GPL-3.0-or-later
#include "Tcl/TclVTKCompat.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

#include "Common/Errors.hpp"
#include "Storage/VTK/VTKMeshReader.hpp"
#include "Storage/VTK/VTKTraceWriter.hpp"
#include "Tcl/TclGeometry.hpp"
#include "Tcl/TclMeshCheck.hpp"
#include "Tcl/TclTraces.hpp"
#include "Tcl/TclUtil.hpp"

using fm::ParameterError;
namespace vc = fm::vtkcompat;

namespace {

std::string num(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.17g", v);
    return b;
}

vc::ArrayPtr makeArray(const std::string& name, vc::Array::Type t, size_t n = 0) {
    auto a = std::make_shared<vc::Array>();
    a->name = name;
    a->type = t;
    a->values.assign(n, 0.0);
    return a;
}

std::shared_ptr<vc::DataSet> gridOf(std::shared_ptr<const fm::TetraMesh> m) {
    auto d = std::make_shared<vc::DataSet>();
    d->kind = vc::DataSet::Grid;
    d->mesh = std::move(m);
    return d;
}

std::shared_ptr<const fm::TraceSet> tracesArg(OutputData* d, const std::string& what) {
    auto* t = dynamic_cast<PacketPositionTraceSet*>(&fmtcl::need(d, what));
    if (!t)
        throw ParameterError(what + ": expected PacketTraces (a PacketPositionTraceSet from TetraTraceKernel), got " +
                             d->type() + " '" + d->name() + "'");
    return t->data();
}

}  // namespace

// ---- FMvtkDataArray ----

std::string FMvtkDataArray::GetName() const { return a_->name; }
void FMvtkDataArray::SetName(const std::string& n) { a_->name = n; }
unsigned FMvtkDataArray::GetNumberOfTuples() const { return unsigned(a_->values.size()); }
int FMvtkDataArray::GetNumberOfComponents() const { return 1; }
double FMvtkDataArray::GetValue(unsigned i) const {
    if (i >= a_->values.size())
        throw ParameterError("vtkDataArray GetValue: index " + std::to_string(i) + " is out of range (" +
                             std::to_string(a_->values.size()) + " tuples)");
    return a_->values[i];
}
double FMvtkDataArray::GetComponent(unsigned i, int c) const {
    if (c != 0) throw ParameterError("vtkDataArray GetComponent: arrays here have one component (0)");
    return GetValue(i);
}
double FMvtkDataArray::GetTuple1(unsigned i) const { return GetValue(i); }
std::string FMvtkDataArray::GetRange() const {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (double v : a_->values)
        if (!std::isnan(v)) lo = std::min(lo, v), hi = std::max(hi, v);
    if (lo > hi) lo = hi = std::numeric_limits<double>::quiet_NaN();
    return num(lo) + " " + num(hi);
}
std::string FMvtkDataArray::GetDataTypeAsString() const { return vc::typeName(a_->type); }
void FMvtkDataArray::Delete() {}

// ---- FMvtkDataSetAttributes ----

int FMvtkDataSetAttributes::AddArray(FMvtkDataArray* a) {
    const vc::ArrayPtr& p = fmtcl::need(a, "AddArray").ptr();
    if (p->name.empty()) throw ParameterError("AddArray: the array has no name (SetName first)");
    at().add(p);
    for (size_t i = 0; i < at().arrays.size(); ++i)
        if (at().arrays[i] == p) return int(i);
    return -1;
}
void FMvtkDataSetAttributes::RemoveArray(const std::string& name) { at().remove(name); }
int FMvtkDataSetAttributes::GetNumberOfArrays() const { return int(at().arrays.size()); }
std::string FMvtkDataSetAttributes::GetArrayName(int i) const {
    if (i < 0 || size_t(i) >= at().arrays.size()) return "";
    return at().arrays[size_t(i)]->name;
}
FMvtkDataArray* FMvtkDataSetAttributes::GetArray(int i) const {
    if (i < 0 || size_t(i) >= at().arrays.size())
        throw ParameterError("GetArray: index " + std::to_string(i) + " is out of range (" +
                             std::to_string(at().arrays.size()) + " arrays)");
    return new FMvtkDataArray(at().arrays[size_t(i)]);
}
FMvtkDataArray* FMvtkDataSetAttributes::GetArray(const std::string& name) const {
    if (auto a = at().find(name)) return new FMvtkDataArray(a);
    std::string names;
    for (const auto& a : at().arrays) names += (names.empty() ? "\"" : ", \"") + a->name + "\"";
    throw ParameterError("GetArray: no array \"" + name + "\" (arrays: " + (names.empty() ? "none" : names) + ")");
}
int FMvtkDataSetAttributes::HasArray(const std::string& name) const { return at().find(name) ? 1 : 0; }
void FMvtkDataSetAttributes::Delete() {}

// ---- datasets ----

FMvtkDataSet::~FMvtkDataSet() = default;
FMvtkDataSetAttributes* FMvtkDataSet::GetCellData() const { return new FMvtkDataSetAttributes(d_, true); }
FMvtkDataSetAttributes* FMvtkDataSet::GetPointData() const { return new FMvtkDataSetAttributes(d_, false); }
unsigned FMvtkDataSet::GetNumberOfCells() const { return unsigned(d_->numberOfCells()); }
unsigned FMvtkDataSet::GetNumberOfPoints() const { return unsigned(d_->numberOfPoints()); }
std::string FMvtkDataSet::GetPoint(unsigned i) const {
    if (i >= d_->numberOfPoints())
        throw ParameterError("GetPoint: point " + std::to_string(i) + " is out of range (" +
                             std::to_string(d_->numberOfPoints()) + " points)");
    const fm::Point3& p = d_->kind == vc::DataSet::Grid ? d_->mesh->point(i + 1) : d_->points[i];
    return num(p[0]) + " " + num(p[1]) + " " + num(p[2]);
}
std::string FMvtkDataSet::GetClassName() const {
    return d_->kind == vc::DataSet::Grid ? "vtkUnstructuredGrid" : "vtkPolyData";
}
void FMvtkDataSet::Delete() {}

FMvtkUnstructuredGrid::FMvtkUnstructuredGrid() : FMvtkDataSet(gridOf(nullptr)) {}
std::string FMvtkUnstructuredGrid::GetCellPoints(unsigned c) const {
    if (!d_->mesh || c >= d_->mesh->tetraCount())
        throw ParameterError("GetCellPoints: cell " + std::to_string(c) + " is out of range (" +
                             std::to_string(d_->numberOfCells()) + " cells)");
    const fm::TetraPoints& T = d_->mesh->tetra(c + 1);
    return std::to_string(T[0] - 1) + " " + std::to_string(T[1] - 1) + " " + std::to_string(T[2] - 1) + " " +
           std::to_string(T[3] - 1);
}

FMvtkPolyData::FMvtkPolyData() : FMvtkDataSet(std::make_shared<vc::DataSet>()) { d_->kind = vc::DataSet::Poly; }
unsigned FMvtkPolyData::GetNumberOfLines() const { return unsigned(d_->lines.size()); }
unsigned FMvtkPolyData::GetNumberOfPolys() const { return unsigned(d_->polys.size()); }
std::string FMvtkPolyData::GetCellPoints(unsigned c) const {
    std::string r;
    if (c < d_->lines.size()) {
        for (long long i : d_->lines[c]) r += (r.empty() ? "" : " ") + std::to_string(i);
        return r;
    }
    if (c - d_->lines.size() < d_->polys.size()) {
        for (long long i : d_->polys[c - d_->lines.size()]) r += (r.empty() ? "" : " ") + std::to_string(i);
        return r;
    }
    throw ParameterError("GetCellPoints: cell " + std::to_string(c) + " is out of range (" +
                         std::to_string(d_->numberOfCells()) + " cells)");
}

// ---- writers ----

FMvtkWriter::~FMvtkWriter() = default;
void FMvtkAlgorithmOutput::Delete() {}

namespace {
void checkKind(const vc::DataSet& d, vc::DataSet::Kind want, const std::string& what) {
    if (d.kind != want)
        throw ParameterError(what + ": expected a " + (want == vc::DataSet::Grid ? "vtkUnstructuredGrid" : "vtkPolyData") +
                             ", got a " + (d.kind == vc::DataSet::Grid ? "vtkUnstructuredGrid" : "vtkPolyData"));
}
}  // namespace

void FMvtkWriter::SetInputData(FMvtkDataSet* d) {
    const auto& p = fmtcl::need(d, cls_ + " SetInputData").ptr();
    checkKind(*p, kind_, cls_ + " SetInputData");
    in_ = p;
    port_ = nullptr;
}
void FMvtkWriter::SetInputConnection(FMvtkAlgorithmOutput* port) {
    port_ = [p = fmtcl::need(port, cls_ + " SetInputConnection")] { return p.produce(); };
    in_ = nullptr;
}
void FMvtkWriter::SetFileName(const std::string& f) { file_ = f; }
std::string FMvtkWriter::GetFileName() const { return file_; }
void FMvtkWriter::SetFileTypeToBinary() { ascii_ = false; }
void FMvtkWriter::SetFileTypeToASCII() { ascii_ = true; }
void FMvtkWriter::SetDataModeToAscii() { ascii_ = true; }
void FMvtkWriter::SetDataModeToBinary() { ascii_ = false; }
void FMvtkWriter::SetDataModeToAppended() { ascii_ = false; }
void FMvtkWriter::SetHeader(const std::string& h) { header_ = h; }
int FMvtkWriter::Write() {
    std::shared_ptr<vc::DataSet> in = port_ ? port_() : in_;
    if (!in) throw ParameterError(cls_ + ": no input (call SetInputData or SetInputConnection first)");
    if (port_) checkKind(*in, kind_, cls_ + " input connection");
    if (file_.empty()) throw ParameterError(cls_ + ": no file name (call SetFileName first)");
    vc::write(*in, file_, xml_, ascii_, header_, cls_);
    return 1;
}
void FMvtkWriter::Update() { Write(); }
void FMvtkWriter::Delete() {}

FMvtkUnstructuredGridWriter::FMvtkUnstructuredGridWriter() : FMvtkWriter("vtkUnstructuredGridWriter", false, vc::DataSet::Grid) {}
FMvtkXMLUnstructuredGridWriter::FMvtkXMLUnstructuredGridWriter()
    : FMvtkWriter("vtkXMLUnstructuredGridWriter", true, vc::DataSet::Grid) {}
FMvtkPolyDataWriter::FMvtkPolyDataWriter() : FMvtkWriter("vtkPolyDataWriter", false, vc::DataSet::Poly) {}
FMvtkXMLPolyDataWriter::FMvtkXMLPolyDataWriter() : FMvtkWriter("vtkXMLPolyDataWriter", true, vc::DataSet::Poly) {}

// ---- readers ----

FMvtkUnstructuredGridReader::FMvtkUnstructuredGridReader() = default;
void FMvtkUnstructuredGridReader::SetFileName(const std::string& f) { file_ = f; }
std::string FMvtkUnstructuredGridReader::GetFileName() const { return file_; }
void FMvtkUnstructuredGridReader::Update() {
    const char* cls = xml_ ? "vtkXMLUnstructuredGridReader" : "vtkUnstructuredGridReader";
    if (file_.empty()) throw ParameterError(std::string(cls) + ": no file name (call SetFileName first)");
    fm::VTKMeshReader r(file_);
    // A plain grid: regions come later (vtkFullMonteMeshFromUnstructuredGrid), which checks the mesh.
    r.singleRegion(true);
    fm::MeshCheckOptions check;
    check.allowDefects = true;
    r.checkOptions(check);
    r.read();  // legacy or XML, sniffed from the file
    std::vector<std::pair<std::string, std::vector<double>>> cells;
    for (const std::string& n : r.cellArrayNames()) cells.push_back({n, r.cellData(n)});
    auto d = gridOf(std::make_shared<const fm::TetraMesh>(r.takeMesh()));
    for (auto& [name, v] : cells) {
        auto a = makeArray(name, vc::Array::Double);
        a->values.assign(v.begin() + 1, v.end());  // drop the dummy element 0
        d->cellData.add(a);
    }
    out_ = d;
}
FMvtkUnstructuredGrid* FMvtkUnstructuredGridReader::GetOutput() const {
    if (!out_) throw ParameterError("GetOutput: call Update first");
    return new FMvtkUnstructuredGrid(out_);
}
void FMvtkUnstructuredGridReader::Delete() {}
FMvtkXMLUnstructuredGridReader::FMvtkXMLUnstructuredGridReader() { xml_ = true; }

FMvtkPolyDataReader::FMvtkPolyDataReader() = default;
void FMvtkPolyDataReader::SetFileName(const std::string& f) { file_ = f; }
std::string FMvtkPolyDataReader::GetFileName() const { return file_; }
void FMvtkPolyDataReader::Update() {
    out_ = std::make_shared<vc::DataSet>(
        vc::readPolyData(file_, xml_, xml_ ? "vtkXMLPolyDataReader" : "vtkPolyDataReader"));
}
FMvtkPolyData* FMvtkPolyDataReader::GetOutput() const {
    if (!out_) throw ParameterError("GetOutput: call Update first");
    return new FMvtkPolyData(out_);
}
void FMvtkPolyDataReader::Delete() {}
FMvtkXMLPolyDataReader::FMvtkXMLPolyDataReader() { xml_ = true; }

// ---- vtkFullMonteTetraMeshWrapper ----

void FMvtkFullMonteTetraMeshWrapper::mesh(TetraMesh* m) {
    mesh_ = fmtcl::need(m, "vtkFullMonteTetraMeshWrapper mesh").ptr();
}
void FMvtkFullMonteTetraMeshWrapper::update() { need("update"); }
const fm::TetraMesh& FMvtkFullMonteTetraMeshWrapper::need(const char* what) const {
    if (!mesh_) throw ParameterError(std::string("vtkFullMonteTetraMeshWrapper ") + what + ": call mesh first");
    return *mesh_;
}
FMvtkUnstructuredGrid* FMvtkFullMonteTetraMeshWrapper::blankMesh() const {
    need("blankMesh");
    return new FMvtkUnstructuredGrid(gridOf(mesh_));
}
FMvtkDataArray* FMvtkFullMonteTetraMeshWrapper::regions() const {
    const fm::TetraMesh& m = need("regions");
    auto a = makeArray("Region", vc::Array::UnsignedShort, m.tetraCount());
    if (m.regionCount() > 65536) a->type = vc::Array::Int;
    for (uint32_t t = 1; t <= m.tetraCount(); ++t) a->values[t - 1] = m.region(t);
    return new FMvtkDataArray(a);
}
FMvtkUnstructuredGrid* FMvtkFullMonteTetraMeshWrapper::regionMesh() const {
    need("regionMesh");
    auto d = gridOf(mesh_);
    std::unique_ptr<FMvtkDataArray> r(regions());
    d->cellData.add(r->ptr());
    return new FMvtkUnstructuredGrid(d);
}
FMvtkPolyData* FMvtkFullMonteTetraMeshWrapper::faces() const {
    const fm::TetraMesh& m = need("faces");
    auto d = std::make_shared<vc::DataSet>();
    d->kind = vc::DataSet::Poly;
    for (uint32_t p = 1; p <= m.pointCount(); ++p) d->points.push_back(m.point(p));
    auto id = makeArray("Face", vc::Array::Int, m.faceCount());
    for (uint32_t f = 1; f <= m.faceCount(); ++f) {
        const auto& P = m.face(f).points;
        d->polys.push_back({P[0] - 1ll, P[1] - 1ll, P[2] - 1ll});
        id->values[f - 1] = f;
    }
    d->cellData.add(id);
    return new FMvtkPolyData(d);
}
void FMvtkFullMonteTetraMeshWrapper::Delete() {}

// ---- vtkFullMonteArrayAdaptor ----

void FMvtkFullMonteArrayAdaptor::source(OutputData* d) {
    map_ = mapDataOf(fmtcl::need(d, "vtkFullMonteArrayAdaptor source"));
    if (!map_)
        throw ParameterError("vtkFullMonteArrayAdaptor source: expected a spatial map, got " + d->type() + " '" +
                             d->name() + "'");
    update();  // FullMonte scripts read `array` without calling update
}
void FMvtkFullMonteArrayAdaptor::update() {
    if (!map_) throw ParameterError("vtkFullMonteArrayAdaptor update: call source first");
    const MapData& d = *map_;
    // FullMonte's quantity words: its raw tallies were "energy" in packet units.
    const std::string q = d.quantity == "PhotonWeight" || d.quantity == "Energy" ? "energy"
                          : d.quantity == "Fluence"                             ? "fluence"
                          : d.quantity == "EnergyPerVolume"                     ? "energy density"
                          : d.quantity.empty()                                  ? d.name
                                                                                : d.quantity;
    array_->name = d.spatialType + " " + q + (d.unit.empty() ? "" : " (" + d.unit + ")");
    array_->type = vc::Array::Double;
    // Per-element maps carry FullMonte's dummy element 0, which the VTK datasets do not have.
    const bool dummy = d.mesh && (d.spatialType == "Volume" || d.spatialType == "Surface");
    array_->values.assign(d.values.begin() + (dummy && !d.values.empty() ? 1 : 0), d.values.end());
}
FMvtkDataArray* FMvtkFullMonteArrayAdaptor::array() const {
    if (!map_) throw ParameterError("vtkFullMonteArrayAdaptor array: call source first");
    return new FMvtkDataArray(array_);
}
void FMvtkFullMonteArrayAdaptor::Delete() {}

// ---- vtkFullMonteMeshFromUnstructuredGrid ----

void FMvtkFullMonteMeshFromUnstructuredGrid::unstructuredGrid(FMvtkUnstructuredGrid* ug) {
    in_ = fmtcl::need(ug, "vtkFullMonteMeshFromUnstructuredGrid unstructuredGrid").ptr();
}
void FMvtkFullMonteMeshFromUnstructuredGrid::regionLabelFieldName(const std::string& n) { field_ = n; }
void FMvtkFullMonteMeshFromUnstructuredGrid::allowDefects(bool on) { allow_ = on; }
std::string FMvtkFullMonteMeshFromUnstructuredGrid::regionLabelFieldName() const { return field_; }
void FMvtkFullMonteMeshFromUnstructuredGrid::update() {
    const std::string what = "vtkFullMonteMeshFromUnstructuredGrid update";
    if (!in_ || !in_->mesh) throw ParameterError(what + ": call unstructuredGrid with a grid that has cells first");
    vc::ArrayPtr labels = in_->cellData.find(field_);
    // FullMonte 2018's default name; files written by this package call the array "Region".
    if (!labels && field_ == "Tissue Type") labels = in_->cellData.find("Region");
    if (!labels) {
        std::string names;
        for (const auto& a : in_->cellData.arrays) names += (names.empty() ? "\"" : ", \"") + a->name + "\"";
        throw ParameterError(what + ": the grid has no cell array \"" + field_ + "\" (cell arrays: " +
                             (names.empty() ? "none" : names) + "; set regionLabelFieldName)");
    }
    const fm::TetraMesh& m = *in_->mesh;
    if (labels->values.size() != m.tetraCount())
        throw ParameterError(what + ": \"" + labels->name + "\" has " + std::to_string(labels->values.size()) +
                             " values for " + std::to_string(m.tetraCount()) + " cells");
    std::vector<uint32_t> regions(m.tetraCount() + 1, 0);
    for (size_t t = 0; t < labels->values.size(); ++t) {
        double v = labels->values[t];
        if (!(v >= 0 && v < 4294967296.0) || v != std::floor(v))
            throw fm::ModelError(what + ": cell " + std::to_string(t) + " has region label " + num(v) +
                                 " (need a whole number >= 0)");
        regions[t + 1] = uint32_t(v);
    }
    fm::MeshCheckOptions check;
    check.allowDefects = allow_;
    auto mesh = std::make_shared<fm::TetraMesh>(m.points(), m.tetras(), std::move(regions), check);
    fmtcl::reportWarnings(mesh->checkReport().warnings());
    mesh->unitDimension = m.unitDimension;
    out_ = mesh;
}
TetraMesh* FMvtkFullMonteMeshFromUnstructuredGrid::mesh() const {
    if (!out_) throw ParameterError("vtkFullMonteMeshFromUnstructuredGrid mesh: call update first");
    return new TetraMesh(out_);
}
TetraMesh* FMvtkFullMonteMeshFromUnstructuredGrid::meshPtr() const { return mesh(); }
void FMvtkFullMonteMeshFromUnstructuredGrid::Delete() {}

// ---- vtkFullMontePacketPositionTraceSetToPolyData ----

void FMvtkFullMontePacketPositionTraceSetToPolyData::source(OutputData* t) {
    traces_ = tracesArg(t, "vtkFullMontePacketPositionTraceSetToPolyData source");
}
void FMvtkFullMontePacketPositionTraceSetToPolyData::update() {
    if (!traces_) throw ParameterError("vtkFullMontePacketPositionTraceSetToPolyData update: call source first");
    const fm::TraceSet& T = *traces_;
    vc::DataSet d;
    d.kind = vc::DataSet::Poly;
    const size_t np = T.steps.size();
    auto w = makeArray("Packet Weight", vc::Array::Float, np);
    auto lw = makeArray("log(Packet Weight)", vc::Array::Float, np);
    auto tm = makeArray("Time of flight", vc::Array::Float, np);
    auto len = makeArray("Path length", vc::Array::Float, np);
    auto st = makeArray("Step count", vc::Array::UnsignedShort, np);
    auto te = makeArray("Tetra", vc::Array::Int, np);
    auto ma = makeArray("Material", vc::Array::UnsignedShort, np);
    d.points.reserve(np);
    size_t p = 0;
    for (size_t i = 0; i < T.traceCount(); ++i) {
        std::vector<long long> line;
        for (size_t j = 0; j < T.length(i); ++j, ++p) {
            const fm::TraceStep& s = T.step(i, j);
            d.points.push_back({s.pos[0], s.pos[1], s.pos[2]});
            line.push_back((long long)p);
            w->values[p] = s.w;
            lw->values[p] = std::log10(double(s.w));
            tm->values[p] = s.time;
            len->values[p] = s.path;
            st->values[p] = double(std::min<size_t>(j + 1, 65535));
            te->values[p] = s.tetra;
            ma->values[p] = s.material;
        }
        d.lines.push_back(std::move(line));
    }
    if (weight_) d.pointData.add(w);
    if (logWeight_) d.pointData.add(lw);
    if (steps_) d.pointData.add(st);
    if (length_) d.pointData.add(len);
    if (time_) d.pointData.add(tm);
    if (material_) d.pointData.add(ma);
    if (tetra_) d.pointData.add(te);
    *out_ = std::move(d);  // the polydata handed out earlier sees the update, as in VTK
}
FMvtkPolyData* FMvtkFullMontePacketPositionTraceSetToPolyData::getPolyData() const { return new FMvtkPolyData(out_); }
void FMvtkFullMontePacketPositionTraceSetToPolyData::includeWeight(bool b) { weight_ = b; }
void FMvtkFullMontePacketPositionTraceSetToPolyData::includeLogWeight(bool b) { logWeight_ = b; }
void FMvtkFullMontePacketPositionTraceSetToPolyData::includeTime(bool b) { time_ = b; }
void FMvtkFullMontePacketPositionTraceSetToPolyData::includeLength(bool b) { length_ = b; }
void FMvtkFullMontePacketPositionTraceSetToPolyData::includeSteps(bool b) { steps_ = b; }
void FMvtkFullMontePacketPositionTraceSetToPolyData::includeTetra(bool b) { tetra_ = b; }
void FMvtkFullMontePacketPositionTraceSetToPolyData::includeMaterial(bool b) { material_ = b; }
void FMvtkFullMontePacketPositionTraceSetToPolyData::Delete() {}

// ---- VTKTraceWriter ----

void VTKTraceWriter::filename(const std::string& f) { file_ = f; }
std::string VTKTraceWriter::filename() const { return file_; }
void VTKTraceWriter::traces(OutputData* d) { traces_ = tracesArg(d, "VTKTraceWriter traces"); }
void VTKTraceWriter::addHeaderComment(const std::string& t) { comments_.push_back(t); }
void VTKTraceWriter::legacyVersion(const std::string& v) {
    fm::VTKTraceWriter().legacyVersion(v);  // checks it now
    legacy_ = v;
}
std::string VTKTraceWriter::legacyVersion() const { return legacy_; }
void VTKTraceWriter::write() {
    if (!traces_) throw ParameterError("VTKTraceWriter write: call traces with [$ODC getByName PacketTraces] first");
    if (file_.empty()) throw ParameterError("VTKTraceWriter write: call filename first");
    if (traces_->traceCount() == 0) throw ParameterError("VTKTraceWriter write: the trace set is empty");
    fm::VTKTraceWriter w(file_);
    w.traces(*traces_);
    w.legacyVersion(legacy_);
    for (const auto& c : comments_) w.addHeaderComment(c);
    w.write();
}
