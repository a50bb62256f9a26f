// SPDX-License-Identifier: GPL-3.0-or-later
#include "Tcl/TclVTK.hpp"

#include "Storage/VTK/FluenceRenderer.hpp"
#include "Storage/VTK/VTKMeshReader.hpp"
#include "Storage/VTK/VTKMeshWriter.hpp"
#include "Storage/VTK/VTKSurfaceWriter.hpp"
#include "Tcl/TclGeometry.hpp"
#include "Tcl/TclMeshCheck.hpp"
#include "Tcl/TclUtil.hpp"

using fm::ParameterError;

namespace {

MapPtr mapArg(OutputData* d, const std::string& what, const std::vector<std::string>& spatialTypes) {
    MapPtr m = mapDataOf(fmtcl::need(d, what));
    if (!m) throw ParameterError(what + ": expected a spatial map, got " + d->type() + " '" + d->name() + "'");
    for (const auto& t : spatialTypes)
        if (m->spatialType == t) return m;
    std::string want;
    for (const auto& t : spatialTypes) want += (want.empty() ? "" : " or ") + t;
    throw ParameterError(what + ": expected a " + want + " map, '" + m->name + "' is " + m->spatialType);
}

// Renderer titles: "Fluence" -> "Fluence (J/mm^2)"; titles with a unit are kept.
std::string withUnit(const std::string& name, const MapData& d) {
    if (name.find('(') != std::string::npos || d.unit.empty()) return name;
    return name + " (" + d.unit + ")";
}

// Per-face entering/exiting values of a directed map over region r's boundary, indexed by face id
// (index 0 the dummy): "entering" is what crossed into region r (what a detector there collects).
std::pair<std::vector<double>, std::vector<double>> directedPerFace(const MapData& d, const fm::TetraMesh& m,
                                                                   uint32_t r, bool stderrValues = false) {
    const std::vector<double>& v = stderrValues ? d.standardError : d.values;
    std::vector<double> in(m.faceCount() + 1, 0.0), out(m.faceCount() + 1, 0.0);
    if (d.values.size() != 2 * (size_t(m.faceCount()) + 1))
        throw ParameterError("VTKSurfaceWriter: the DirectedSurface map '" + d.name + "' has " +
                             std::to_string(d.values.size()) + " entries, the mesh needs " +
                             std::to_string(2 * (size_t(m.faceCount()) + 1)));
    for (auto [f, inside] : m.regionBoundary(r)) {
        size_t i = enteringIndex(m, f, inside);
        in[f] = v[i];
        out[f] = v[i ^ 1u];
    }
    return {std::move(in), std::move(out)};
}

// A map's standard errors as the array NAME_stderr (none when the map has none).
template <class Writer>
void addStandardError(Writer& w, const std::string& name, const MapData& d) {
    if (d.standardError.empty()) return;
    w.addData(name + "_stderr", d.standardError);
    w.addUnit(name + "_stderr", d.unit + " (standard error, " + std::to_string(d.batches) + " batches)");
}

}  // namespace

// ---- VTKMeshReader ----

void VTKMeshReader::regionArrayName(const std::string& n) { regionName_ = n; }
std::string VTKMeshReader::regionArrayName() const { return regionName_; }

void VTKMeshReader::singleRegion(bool on) { single_ = on; }
void VTKMeshReader::allowDefects(bool on) { allow_ = on; }

void VTKMeshReader::read() {
    fm::VTKMeshReader r(need("VTKMeshReader read"));
    r.regionArrayName(regionName_);
    r.singleRegion(single_);
    fm::MeshCheckOptions check;
    check.allowDefects = allow_;
    r.checkOptions(check);
    r.read();
    fmtcl::reportWarnings(r.mesh().checkReport().warnings());
    cells_.clear();
    for (const std::string& n : r.cellArrayNames()) cells_.push_back({n, r.cellData(n)});
    used_ = r.regionArrayUsed();
    mesh_ = std::make_shared<fm::TetraMesh>(r.takeMesh());
}
TetraMesh* VTKMeshReader::mesh() const {
    if (!mesh_) throw ParameterError("VTKMeshReader mesh: call read first");
    return new TetraMesh(mesh_);
}
std::string VTKMeshReader::regionArrayUsed() const { return used_; }
std::string VTKMeshReader::cellArrayNames() const {
    std::string s;
    for (const auto& c : cells_) s += (s.empty() ? "{" : " {") + c.first + "}";
    return s;
}
SpatialMap* VTKMeshReader::cellData(const std::string& name) const {
    for (const auto& c : cells_)
        if (c.first == name) {
            auto d = std::make_shared<MapData>();
            d->name = name;
            d->spatialType = "Volume";
            d->quantity = "CellData";
            d->values = c.second;
            d->mesh = mesh_;
            return new SpatialMap(d);
        }
    throw ParameterError("VTKMeshReader cellData: no cell array '" + name + "' (arrays: " + cellArrayNames() + ")");
}

// ---- VTKMeshWriter ----

void VTKMeshWriter::mesh(TetraMesh* m) { mesh_ = fmtcl::need(m, "VTKMeshWriter mesh").ptr(); }
void VTKMeshWriter::addData(const std::string& name, OutputData* d) {
    data_.push_back({name, mapArg(d, "VTKMeshWriter addData", {"Volume"})});
}
void VTKMeshWriter::addHeaderComment(const std::string& t) { comments_.push_back(t); }
void VTKMeshWriter::clearData() { data_.clear(); }
void VTKMeshWriter::legacyVersion(const std::string& v) {
    fm::VTKMeshWriter().legacyVersion(v);  // checks it now
    legacy_ = v;
}
std::string VTKMeshWriter::legacyVersion() const { return legacy_; }
void VTKMeshWriter::standardErrors(bool on) { errors_ = on; }
bool VTKMeshWriter::standardErrors() const { return errors_; }
void VTKMeshWriter::write() {
    if (!mesh_) throw ParameterError("VTKMeshWriter write: call mesh first");
    fm::VTKMeshWriter w(need("VTKMeshWriter write"));
    w.mesh(*mesh_);
    w.legacyVersion(legacy_);
    for (const auto& [name, d] : data_) {
        w.addData(name, d->values);
        w.addUnit(name, d->unit);
    }
    // The maps' standard errors, after every value array (a script's array indices stay).
    if (errors_)
        for (const auto& [name, d] : data_) addStandardError(w, name, *d);
    for (const auto& c : comments_) w.addHeaderComment(c);
    w.write();
}

// ---- VTKSurfaceWriter ----

void VTKSurfaceWriter::mesh(TetraMesh* m) { mesh_ = fmtcl::need(m, "VTKSurfaceWriter mesh").ptr(); }
void VTKSurfaceWriter::region(unsigned r) { region_ = r; }
unsigned VTKSurfaceWriter::region() const { return region_; }
void VTKSurfaceWriter::addData(const std::string& name, OutputData* d) {
    data_.push_back({name, mapArg(d, "VTKSurfaceWriter addData", {"Surface", "DirectedSurface"})});
}
void VTKSurfaceWriter::addHeaderComment(const std::string& t) { comments_.push_back(t); }
void VTKSurfaceWriter::clearData() { data_.clear(); }
void VTKSurfaceWriter::legacyVersion(const std::string& v) {
    fm::VTKSurfaceWriter().legacyVersion(v);  // checks it now
    legacy_ = v;
}
std::string VTKSurfaceWriter::legacyVersion() const { return legacy_; }
void VTKSurfaceWriter::standardErrors(bool on) { errors_ = on; }
bool VTKSurfaceWriter::standardErrors() const { return errors_; }
void VTKSurfaceWriter::write() {
    if (!mesh_) throw ParameterError("VTKSurfaceWriter write: call mesh first");
    fm::VTKSurfaceWriter w(need("VTKSurfaceWriter write"));
    w.mesh(*mesh_);
    w.legacyVersion(legacy_);
    // A DirectedSurface map of one scored boundary (TetraInternalKernel) selects that region's
    // surface unless `region` says otherwise.
    unsigned r = region_;
    for (const auto& [name, d] : data_)
        if (!r && d->spatialType == "DirectedSurface") r = d->region;
    w.region(r);
    for (const auto& [name, d] : data_) {
        if (d->spatialType != "DirectedSurface") {
            w.addData(name, d->values);
            w.addUnit(name, d->unit);
            continue;
        }
        if (!r)
            throw ParameterError("VTKSurfaceWriter write: the DirectedSurface map '" + name +
                                 "' covers every internal face; call region r to choose the surface");
        auto [in, out] = directedPerFace(*d, *mesh_, r);
        w.addData(name, in);
        w.addUnit(name, d->unit + " (into region " + std::to_string(r) + ")");
        w.addData(name + " exiting", out);
        w.addUnit(name + " exiting", d->unit + " (out of region " + std::to_string(r) + ")");
    }
    for (const auto& [name, d] : data_) {  // the standard errors, after every value array
        if (!errors_) break;
        if (d->spatialType != "DirectedSurface") {
            addStandardError(w, name, *d);
            continue;
        }
        if (d->standardError.empty()) continue;
        auto [seIn, seOut] = directedPerFace(*d, *mesh_, r, true);
        w.addData(name + "_stderr", seIn);
        w.addUnit(name + "_stderr", d->unit + " (into region " + std::to_string(r) + ", standard error)");
        w.addData(name + " exiting_stderr", seOut);
        w.addUnit(name + " exiting_stderr", d->unit + " (out of region " + std::to_string(r) + ", standard error)");
    }
    for (const auto& c : comments_) w.addHeaderComment(c);
    w.write();
}

// ---- FluenceRenderer ----

struct FluenceRenderer::Impl {
    fm::FluenceRenderer r;
    MapPtr data, faces;  // kept alive: the core renderer copies values, this keeps titles simple
};

FluenceRenderer::FluenceRenderer() : impl_(std::make_unique<Impl>()) {}
FluenceRenderer::~FluenceRenderer() = default;
void FluenceRenderer::mesh(TetraMesh* m) {
    mesh_ = fmtcl::need(m, "FluenceRenderer mesh").ptr();
    impl_->r.mesh(*mesh_);
}
void FluenceRenderer::data(OutputData* map) {
    impl_->data = mapArg(map, "FluenceRenderer data", {"Volume"});
    impl_->r.data(impl_->data->values, withUnit(impl_->data->name, *impl_->data));
}
void FluenceRenderer::data(OutputData* map, const std::string& title) {
    impl_->data = mapArg(map, "FluenceRenderer data", {"Volume"});
    impl_->r.data(impl_->data->values, title);
}
void FluenceRenderer::faceData(OutputData* map) {
    impl_->faces = mapArg(map, "FluenceRenderer faceData", {"Surface"});
    impl_->r.faceData(impl_->faces->values, withUnit(impl_->faces->name, *impl_->faces));
}
void FluenceRenderer::faceData(OutputData* map, const std::string& title) {
    impl_->faces = mapArg(map, "FluenceRenderer faceData", {"Surface"});
    impl_->r.faceData(impl_->faces->values, title);
}
void FluenceRenderer::slice(const std::string& o, const std::string& n) {
    impl_->r.slice(fmtcl::parseVec3(o, "FluenceRenderer slice origin"), fmtcl::parseVec3(n, "FluenceRenderer slice normal"));
}
void FluenceRenderer::sliceThroughCentre(const std::string& n) {
    impl_->r.sliceThroughCentre(fmtcl::parseVec3(n, "FluenceRenderer sliceThroughCentre"));
}
void FluenceRenderer::surface() { impl_->r.surface(0); }
void FluenceRenderer::surface(unsigned region) { impl_->r.surface(region); }
void FluenceRenderer::size(unsigned w, unsigned h) { impl_->r.size(w, h); }
void FluenceRenderer::logScale(bool on) { impl_->r.logScale(on); }
void FluenceRenderer::range(double lo, double hi) { impl_->r.range(lo, hi); }
void FluenceRenderer::showRegionOutlines(bool on) { impl_->r.showRegionOutlines(on); }
void FluenceRenderer::write() {
    if (!mesh_) throw ParameterError("FluenceRenderer write: call mesh first");
    impl_->r.filename(need("FluenceRenderer write"));
    impl_->r.write();
}
double FluenceRenderer::usedMin() const { return impl_->r.usedMin(); }
double FluenceRenderer::usedMax() const { return impl_->r.usedMax(); }
