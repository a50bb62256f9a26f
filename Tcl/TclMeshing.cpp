// SPDX-License-Identifier: GPL-3.0-or-later
#include "Tcl/TclMeshing.hpp"

#include <filesystem>
#include <functional>
#include <iostream>
#include <sstream>

#include "Common/Errors.hpp"
#include "Common/Text.hpp"
#include "Geometry/Meshing/MeshQuality.hpp"
#include "Common/ResourceLimits.hpp"
#include "Tcl/TclMeshCheck.hpp"
#ifdef FM_TCL_VTK
#include "Storage/VTK/VTKImageReader.hpp"
#endif

using fm::endsWith;
using fm::ParameterError;

namespace {

std::string triple(double a, double b, double c) {
    std::ostringstream s;
    s.precision(10);
    s << a << " " << b << " " << c;
    return s.str();
}

}  // namespace

// ---- MesherSettings ----

// A setter changes a copy of the options and keeps it only when the meshers' own check
// (validateMeshingOptions, as for fullmonte-mesh and Python) passes: a bad value is refused where
// the script sets it, naming the method, not at update.
void MesherSettings::set(const char* method, const std::function<void(fm::MeshingOptions&)>& change) {
    fm::MeshingOptions o = o_;
    change(o);
    try {
        fm::validateMeshingOptions(o);
    } catch (const ParameterError& e) {
        throw ParameterError(std::string(method) + ": " + e.what());
    }
    o_ = std::move(o);
}

double MesherSettings::cellSize() const { return o_.cellSize; }
void MesherSettings::cellSize(double mm) { set("cellSize", [=](fm::MeshingOptions& o) { o.cellSize = mm; }); }
double MesherSettings::facetSize() const { return o_.facetSize; }
void MesherSettings::facetSize(double mm) { set("facetSize", [=](fm::MeshingOptions& o) { o.facetSize = mm; }); }
double MesherSettings::facetDistance() const { return o_.facetDistance; }
void MesherSettings::facetDistance(double mm) {
    set("facetDistance", [=](fm::MeshingOptions& o) { o.facetDistance = mm; });
}
double MesherSettings::facetAngle() const { return o_.facetAngle; }
void MesherSettings::facetAngle(double d) { set("facetAngle", [=](fm::MeshingOptions& o) { o.facetAngle = d; }); }
double MesherSettings::radiusEdgeRatio() const { return o_.cellRadiusEdgeRatio; }
void MesherSettings::radiusEdgeRatio(double r) {
    set("radiusEdgeRatio", [=](fm::MeshingOptions& o) { o.cellRadiusEdgeRatio = r; });
}
void MesherSettings::labelCellSize(unsigned label, double mm) {
    set("labelCellSize", [=](fm::MeshingOptions& o) { o.cellSizeByLabel[int32_t(label)] = mm; });
}
void MesherSettings::labelFacetSize(unsigned label, double mm) {
    set("labelFacetSize", [=](fm::MeshingOptions& o) { o.facetSizeByLabel[int32_t(label)] = mm; });
}
unsigned MesherSettings::seed() const { return o_.seed; }
void MesherSettings::seed(unsigned s) { o_.seed = s; }
bool MesherSettings::perturb() const { return o_.perturb; }
void MesherSettings::perturb(bool on) { o_.perturb = on; }
bool MesherSettings::exude() const { return o_.exude; }
void MesherSettings::exude(bool on) { o_.exude = on; }
double MesherSettings::sliverBound() const { return o_.sliverBound; }
void MesherSettings::sliverBound(double d) { set("sliverBound", [=](fm::MeshingOptions& o) { o.sliverBound = d; }); }
double MesherSettings::timeLimit() const { return o_.optimiserTimeLimit; }
void MesherSettings::timeLimit(double s) {
    set("timeLimit", [=](fm::MeshingOptions& o) { o.optimiserTimeLimit = s; });
}
bool MesherSettings::progress() const { return progress_; }
void MesherSettings::progress(bool on) { progress_ = on; }

TetraMesh* MesherSettings::mesh() const {
    if (!mesh_) throw ParameterError("mesh: call update first");
    return new TetraMesh(mesh_);
}

std::string MesherSettings::report() const {
    if (!mesh_) throw ParameterError("report: call update first");
    return report_;
}

double MesherSettings::meshVolume(unsigned label) const {
    if (!mesh_) throw ParameterError("meshVolume: call update first");
    return label < mesh_->regionCount() ? mesh_->regionVolume(label) : 0.0;
}

fm::MeshingOptions MesherSettings::options() const {
    fm::MeshingOptions o = o_;
    if (progress_) o.progress = [](const std::string& s) { std::cerr << "meshing: " << s << std::endl; };
    return o;
}

void MesherSettings::finish(fm::TetraMesh m, const fm::LabelImage* image) {
    const std::vector<fm::RegionVolume> volumes = fm::regionVolumes(m, image);
    report_ = fm::formatMeshReport(m, volumes, fm::meshQuality(m));
    fmtcl::reportWarnings(fm::regionVolumeWarnings(volumes));  // labels lost or badly resolved
    mesh_ = std::make_shared<fm::TetraMesh>(std::move(m));
}

// ---- ImageMesher ----

std::string ImageMesher::filename() const { return file_; }
void ImageMesher::filename(const std::string& path) { file_ = path; }
std::string ImageMesher::labelMap() const { return labelMap_; }
void ImageMesher::labelMap(const std::string& spec) {
    if (!spec.empty() && !std::filesystem::exists(spec)) fm::parseLabelMap(spec);  // checked now
    labelMap_ = spec;
}
bool ImageMesher::compactLabels() const { return prepare_.compactLabels; }
void ImageMesher::compactLabels(bool on) { prepare_.compactLabels = on; }
unsigned ImageMesher::downsample() const { return prepare_.downsample; }
void ImageMesher::downsample(double n) { prepare_.downsample = fm::downsampleFactor(n, "ImageMesher downsample"); }
std::string ImageMesher::compactTable() const {
    if (!image_) throw ParameterError("ImageMesher compactTable: call update first");
    std::string s;
    for (const auto& [from, to] : table_) s += (s.empty() ? "" : " ") + std::to_string(from) + " " + std::to_string(to);
    return s;
}

void ImageMesher::update() {
    if (file_.empty()) throw ParameterError("ImageMesher update: no filename");
    auto image = std::make_shared<fm::LabelImage>();
#ifdef FM_TCL_VTK
    if (endsWith(file_, ".vti")) *image = fm::readVTKLabelImage(file_);
    else
#endif
    {
        fm::requireMemory(fm::labelImageReadBytes(file_), file_ + ": reading its voxels", fm::kImageTooLargeAdvice);
        *image = fm::readLabelImage(file_);
    }
    if (!labelMap_.empty())
        fm::applyLabelMap(*image, std::filesystem::exists(labelMap_) ? fm::readLabelMapFile(labelMap_)
                                                                     : fm::parseLabelMap(labelMap_));
    // As fullmonte-mesh: the border-label warning, then the compact table and the downsampled image.
    fmtcl::reportWarnings(fm::labelImageWarnings(*image));
    fm::LabelMap table;
    for (const std::string& line : fm::prepareLabelImage(*image, prepare_, &table)) std::cout << line << std::endl;
    const fm::MeshingEstimate least = fm::estimateImageMeshing(*image, options());
    fm::requireMemory(least.bytes, "ImageMesher update: meshing: " + least.detail + ",", fm::kMeshTooLargeAdvice);
    finish(fm::meshLabelImage(*image, options()), image.get());
    image_ = image;
    table_ = std::move(table);
}

std::string ImageMesher::dims() const {
    if (!image_) throw ParameterError("ImageMesher dims: call update first");
    return triple(double(image_->dims[0]), double(image_->dims[1]), double(image_->dims[2]));
}
std::string ImageMesher::spacing() const {
    if (!image_) throw ParameterError("ImageMesher spacing: call update first");
    return triple(image_->spacing[0], image_->spacing[1], image_->spacing[2]);
}
std::string ImageMesher::origin() const {
    if (!image_) throw ParameterError("ImageMesher origin: call update first");
    return triple(image_->origin[0], image_->origin[1], image_->origin[2]);
}
double ImageMesher::voxelVolume(unsigned label) const {
    if (!image_) throw ParameterError("ImageMesher voxelVolume: call update first");
    auto counts = image_->labelCounts();
    auto it = counts.find(int32_t(label));
    return it == counts.end() ? 0.0 : double(it->second) * image_->voxelVolume();
}

// ---- SurfaceMesher ----

void SurfaceMesher::addSurface(const std::string& file, unsigned label) {
    if (label == 0) throw ParameterError("SurfaceMesher addSurface " + file + ": label 0 is the outside");
    fm::RegionSurface s{file, int32_t(label), {}};
    if (endsWith(file, ".vtp")) {
#ifdef FM_TCL_VTK
        s.surface = fm::readVTKSurface(file);
#else
        throw ParameterError(file + ": .vtp surfaces are read in VTK builds only");
#endif
    }
    surfaces_.push_back(std::move(s));
}
void SurfaceMesher::addLabelledSurface(const std::string& file) {
#ifdef FM_TCL_VTK
    if (!endsWith(file, ".vtp")) throw ParameterError("SurfaceMesher addLabelledSurface " + file + ": a .vtp file expected");
    surfaces_.push_back({file, 0, fm::readVTKSurface(file)});
#else
    throw ParameterError(file + ": labelled .vtp surfaces are read in VTK builds only");
#endif
}
void SurfaceMesher::clearSurfaces() { surfaces_.clear(); }
unsigned SurfaceMesher::surfaceCount() const { return unsigned(surfaces_.size()); }
void SurfaceMesher::update() {
    if (surfaces_.empty()) throw ParameterError("SurfaceMesher update: no surfaces (addSurface file label)");
    finish(fm::meshSurfaces(surfaces_, options()), nullptr);
}
