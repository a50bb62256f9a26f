// SPDX-License-Identifier: GPL-3.0-or-later
#include "Tcl/TclStorage.hpp"

#include <cmath>
#include <iomanip>

#include "Storage/AtomicFile.hpp"
#include "Storage/Binary/BinaryMesh.hpp"
#include "Storage/TIMOS/TIMOS.hpp"
#include "Tcl/TclGeometry.hpp"
#include "Tcl/TclMeshCheck.hpp"
#include "Tcl/TclQueries.hpp"
#include "Tcl/TclSources.hpp"
#include "Tcl/TclUtil.hpp"

using fm::ParameterError;

FileIO::~FileIO() = default;
void FileIO::filename(const std::string& f) { filename_ = f; }
std::string FileIO::filename() const { return filename_; }
const std::string& FileIO::need(const char* cls) const {
    if (filename_.empty()) throw ParameterError(std::string(cls) + ": no filename (call filename first)");
    return filename_;
}

// ---- TIM-OS ----

void CheckedMeshReader::read() {
    fm::MeshCheckOptions check;
    check.allowDefects = allow_;
    mesh_ = std::make_shared<fm::TetraMesh>(load_(need((std::string(cls_) + " read").c_str()), check));
    fmtcl::reportWarnings(mesh_->checkReport().warnings());
}
void CheckedMeshReader::allowDefects(bool on) { allow_ = on; }
bool CheckedMeshReader::allowDefects() const { return allow_; }
TetraMesh* CheckedMeshReader::mesh() const {
    if (!mesh_) throw ParameterError(std::string(cls_) + " mesh: call read first");
    return new TetraMesh(mesh_);
}

TIMOSMeshReader::TIMOSMeshReader()
    : CheckedMeshReader("TIMOSMeshReader", [](const std::string& path, const fm::MeshCheckOptions& check) {
          return fm::readTIMOSMesh(path, check);
      }) {}

void TIMOSMaterialReader::read() {
    mats_ = std::make_shared<fm::MaterialSet>(fm::readTIMOSMaterials(need("TIMOSMaterialReader read")));
}
MaterialSet* TIMOSMaterialReader::materials() const {
    if (!mats_) throw ParameterError("TIMOSMaterialReader materials: call read first");
    return new MaterialSet(*mats_);
}

void TIMOSSourceReader::read() {
    fm::TIMOSSources s = fm::readTIMOSSource(need("TIMOSSourceReader read"));
    src_ = s.source;
    packets_ = s.totalPackets;
}
Source* TIMOSSourceReader::source() const {
    if (!src_) throw ParameterError("TIMOSSourceReader source: call read first");
    return Source::wrap(src_);
}
unsigned long long TIMOSSourceReader::packetCount() const {
    if (!src_) throw ParameterError("TIMOSSourceReader packetCount: call read first");
    return (unsigned long long)std::llround(packets_);
}

void TIMOSMeshWriter::mesh(TetraMesh* m) { mesh_ = fmtcl::need(m, "TIMOSMeshWriter mesh").ptr(); }
void TIMOSMeshWriter::write() {
    if (!mesh_) throw ParameterError("TIMOSMeshWriter write: call mesh first");
    fm::writeTIMOSMesh(need("TIMOSMeshWriter write"), *mesh_);
}

// ---- FullMonte binary mesh ----

BinaryMeshReader::BinaryMeshReader()
    : CheckedMeshReader("BinaryMeshReader", [](const std::string& path, const fm::MeshCheckOptions& check) {
          return fm::readBinaryMesh(path, check);
      }) {}

void BinaryMeshWriter::mesh(TetraMesh* m) { mesh_ = fmtcl::need(m, "BinaryMeshWriter mesh").ptr(); }
void BinaryMeshWriter::write() {
    if (!mesh_) throw ParameterError("BinaryMeshWriter write: call mesh first");
    fm::writeBinaryMesh(need("BinaryMeshWriter write"), *mesh_);
}

void TIMOSMaterialWriter::materials(MaterialSet* ms) {
    mats_ = std::make_shared<MaterialSet>(fmtcl::need(ms, "TIMOSMaterialWriter materials"));
}
void TIMOSMaterialWriter::write() {
    if (!mats_) throw ParameterError("TIMOSMaterialWriter write: call materials first");
    fm::writeTIMOSMaterials(need("TIMOSMaterialWriter write"), mats_->build("mm"));  // TIM-OS is 1/mm
}

void TIMOSSourceWriter::mesh(TetraMesh* m) { mesh_ = fmtcl::need(m, "TIMOSSourceWriter mesh").ptr(); }
void TIMOSSourceWriter::source(Source* s) { src_ = fmtcl::need(s, "TIMOSSourceWriter source").ptr(); }
void TIMOSSourceWriter::write() {
    if (!mesh_ || !src_) throw ParameterError("TIMOSSourceWriter write: call mesh and source first");
    fm::writeTIMOSSource(need("TIMOSSourceWriter write"), *src_, *mesh_);
}

// ---- text writers ----

namespace {

void putValue(std::ostream& o, double v, unsigned width) {
    o << std::setw(int(width));
    if (std::isnan(v)) o << "nan";
    else o << v;
}

void writeMap(std::ostream& o, const MapData& d, unsigned width) {
    const unsigned kColumns = 10;
    if (d.dims.size() == 2) o << "2 " << d.dims[0] << ' ' << d.dims[1] << '\n';
    else o << "1 " << d.values.size() << '\n';
    for (size_t i = 0; i < d.values.size(); ++i) {
        putValue(o, d.values[i], width);
        o << ((i % kColumns) == kColumns - 1 || i + 1 == d.values.size() ? '\n' : ' ');
    }
}

void writeHistogramRows(std::ostream& o, const fm::DoseHistogram& h, unsigned width) {
    for (size_t i = 0; i < h.dose.size(); ++i) {
        putValue(o, h.cmeasure[i], width);
        o << ' ';
        putValue(o, h.cdf[i], width);
        o << ' ';
        putValue(o, h.dose[i], width);
        o << '\n';
    }
}

}  // namespace

void TextFileMatrixWriter::source(OutputData* d) {
    data_.reset(fmtcl::need(d, "TextFileMatrixWriter source").clone());
}
void TextFileMatrixWriter::precision(unsigned p) { precision_ = p; }
void TextFileMatrixWriter::width(unsigned w) { width_ = w; }

void TextFileMatrixWriter::write() {
    const std::string& path = need("TextFileMatrixWriter write");
    if (!data_) throw ParameterError("TextFileMatrixWriter write: call source first");
    fm::AtomicFile f(path);
    if (precision_) f.out << std::scientific << std::setprecision(int(precision_));
    else f.out.precision(9);
    if (auto m = dynamic_cast<SpatialMap*>(data_.get())) {
        writeMap(f.out, *m->data(), width_);
    } else if (auto h = dynamic_cast<DoseHistogram*>(data_.get())) {
        f.out << "2 " << h->dim() << " 3\n";
        writeHistogramRows(f.out, h->hist(), width_);
    } else {
        throw ParameterError("TextFileMatrixWriter: cannot write " + data_->type() + " '" + data_->name() +
                             "' (a spatial map or a DoseHistogram is needed)");
    }
    f.commit();
}

void TextFileDoseHistogramWriter::collection(DoseHistogramCollection* c) {
    c_ = std::make_shared<DoseHistogramCollection>(fmtcl::need(c, "TextFileDoseHistogramWriter collection"));
}
void TextFileDoseHistogramWriter::write() {
    const std::string& path = need("TextFileDoseHistogramWriter write");
    if (!c_) throw ParameterError("TextFileDoseHistogramWriter write: call collection first");
    fm::AtomicFile f(path);
    f.out.precision(9);
    f.out << c_->list().size() << '\n';
    for (const auto& h : c_->list()) {
        f.out << h->dose.size() << '\n';
        writeHistogramRows(f.out, *h, 0);
    }
    f.commit();
}
