// SPDX-License-Identifier: GPL-3.0-or-later
#include "Tcl/TclQueries.hpp"

#include <cmath>
#include <limits>

#include "Tcl/TclGeometry.hpp"
#include "Tcl/TclKernels.hpp"
#include "Tcl/TclMeshCheck.hpp"
#include "Tcl/TclUtil.hpp"

using fm::ParameterError;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// A SpatialMap, or a DirectedSurface output (its directed map), as FullMonte's queries took both.
MapPtr mapOf(OutputData* d, const std::string& what) {
    MapPtr m = mapDataOf(fmtcl::need(d, what));
    if (!m) throw ParameterError(what + ": expected a spatial map, got " + d->type() + " '" + d->name() + "'");
    return m;
}

// Size of element i of a map: tetra volume, face area, or the face area of a directed entry.
double measureOf(const MapData& d, const fm::TetraMesh& m, size_t i) {
    if (d.spatialType == "Volume") return i >= 1 && i <= m.tetraCount() ? m.volume(uint32_t(i)) : 0.0;
    size_t f = d.spatialType == "DirectedSurface" ? i / 2 : i;
    return f >= 1 && f <= m.faceCount() ? m.face(uint32_t(f)).area : 0.0;
}

void checkDims(const MapData& d, const fm::TetraMesh& m) {
    size_t want = d.spatialType == "Volume" ? m.tetraCount() + 1
                  : d.spatialType == "Surface" ? m.faceCount() + 1 : 2 * (m.faceCount() + 1);
    if (d.values.size() != want)
        throw ParameterError("EnergyToFluence: the " + d.spatialType + " map '" + d.name + "' has " +
                             std::to_string(d.values.size()) + " entries, the mesh needs " + std::to_string(want));
}

std::string unitSuffix(const std::string& quantity, const std::string& spatialType, const std::string& L) {
    if (quantity == "Fluence") return "/" + L + "^2";
    if (quantity == "EnergyPerVolume") return spatialType == "Volume" ? "/" + L + "^3" : "/" + L + "^2";
    return "";
}

}  // namespace

// ---- EnergyToFluence ----

EnergyToFluence::EnergyToFluence() = default;
void EnergyToFluence::mesh(TetraMesh* m) { mesh_ = fmtcl::need(m, "EnergyToFluence mesh").ptr(); }
void EnergyToFluence::geometry(TetraMesh* m) { mesh_ = fmtcl::need(m, "EnergyToFluence geometry").ptr(); }
void EnergyToFluence::materials(MaterialSet* ms) {
    mats_ = std::make_shared<MaterialSet>(fmtcl::need(ms, "EnergyToFluence materials"));
}
void EnergyToFluence::source(OutputData* d) { data_ = mapOf(d, "EnergyToFluence source"); }
void EnergyToFluence::data(OutputData* d) { data_ = mapOf(d, "EnergyToFluence data"); }
void EnergyToFluence::kernel(Kernel* k) {
    Kernel& K = fmtcl::need(k, "EnergyToFluence kernel");
    haveKernel_ = true;
    kernelMesh_ = K.meshPtr();
    kernelMats_ = K.materialsPtr();
    kernelEnergy_ = K.energyPowerValue();
    kernelUnit_ = K.isEnergy_or_Power();
}
void EnergyToFluence::energy(double e) { energy_ = fmtcl::positive(e, "EnergyToFluence energy"); }
void EnergyToFluence::inputPhotonWeight() { in_ = "PhotonWeight"; }
void EnergyToFluence::inputEnergy() { in_ = "Energy"; }
void EnergyToFluence::inputFluence() { in_ = "Fluence"; }
void EnergyToFluence::inputEnergyPerVolume() { in_ = "EnergyPerVolume"; }
void EnergyToFluence::outputPhotonWeight() { out_ = "PhotonWeight"; }
void EnergyToFluence::outputEnergy() { out_ = "Energy"; }
void EnergyToFluence::outputFluence() { out_ = "Fluence"; }
void EnergyToFluence::outputEnergyPerVolume() { out_ = "EnergyPerVolume"; }

// 2018 form (no kernel, no energy): no normalisation, values stay in packet-weight units.
// Later forms: energy per packet = E / N, E from `energy` or the kernel's energyPowerValue.
EnergyToFluence::Norm EnergyToFluence::normalisation(const MapData& in) const {
    if (!haveKernel_ && energy_ <= 0) return {1.0, "packet"};
    if (in.packets == 0) throw ParameterError("EnergyToFluence: the map has no packet count to normalise by");
    double E = energy_ > 0 ? energy_ : kernelEnergy_;
    std::string unit = energy_ > 0 && !haveKernel_ ? "J" : kernelUnit_;
    return {E / double(in.packets), unit};
}

std::shared_ptr<const fm::TetraMesh> EnergyToFluence::pickMesh(const MapData& in) const {
    if (mesh_) return mesh_;
    if (kernelMesh_) return kernelMesh_;
    if (in.mesh) return in.mesh;
    throw ParameterError("EnergyToFluence: no mesh (call mesh/geometry or kernel)");
}

std::shared_ptr<const fm::MaterialSet> EnergyToFluence::pickMaterials(const MapData& in, const fm::TetraMesh& m) const {
    if (mats_) return std::make_shared<fm::MaterialSet>(mats_->build(m.unitDimension));
    if (kernelMats_) return std::make_shared<fm::MaterialSet>(kernelMats_->build(m.unitDimension));
    if (in.materials) return in.materials;
    throw ParameterError("EnergyToFluence: no materials (call materials or kernel)");
}

// The input quantity is the map's own unless input* names one (then they must agree: converting
// a map as if it held something else is the classic normalisation bug).
void EnergyToFluence::update() {
    if (!data_) throw ParameterError("EnergyToFluence update: no input map (call data or source first)");
    const MapData& in = *data_;
    std::string inQ = in_.empty() ? in.quantity : in_;
    // FullMonte's 2020-21 scripts call the raw tally "energy" (inputEnergy, before
    // inputPhotonWeight existed): that is the packet-weight map.
    if (inQ == "Energy" && in.quantity == "PhotonWeight") inQ = "PhotonWeight";
    if (inQ != in.quantity)
        throw ParameterError("EnergyToFluence: input" + inQ + " was requested but the map '" + in.name + "' holds " +
                             in.quantity + " (" + in.unit + ")");
    auto mesh = pickMesh(in);
    checkDims(in, *mesh);
    bool volume = in.spatialType == "Volume";
    bool needMu = volume && (inQ == "Fluence" || out_ == "Fluence");
    std::shared_ptr<const fm::MaterialSet> mats = needMu ? pickMaterials(in, *mesh) : in.materials;
    if (needMu && mesh->regionCount() > mats->size())
        throw ParameterError("EnergyToFluence: the materials do not cover region " + std::to_string(mesh->regionCount() - 1));
    bool photon = inQ == "PhotonWeight" || out_ == "PhotonWeight";
    Norm n = photon ? normalisation(in) : Norm{1.0, ""};
    std::string energyUnit = inQ == "PhotonWeight" ? n.unit : in.unit.substr(0, in.unit.find('/'));
    auto out = std::make_shared<MapData>(in);
    out->name = out_;
    out->quantity = out_;
    out->mesh = mesh;
    if (mats) out->materials = mats;
    // The conversion is linear per element, so a standard error converts as its value does.
    for (size_t i = 0; i < in.values.size(); ++i) {
        const double meas = measureOf(in, *mesh, i);
        const double mu = needMu && i >= 1 ? mats->material(mesh->region(uint32_t(i))).mu_a : 1.0;
        out->values[i] = convert(in.values[i], inQ, meas, mu, volume, n.scale);
        if (i < in.standardError.size())
            out->standardError[i] = convert(in.standardError[i], inQ, meas, mu, volume, n.scale);
    }
    std::string base = out_ == "PhotonWeight" ? "packet" : energyUnit;
    out->unit = base + unitSuffix(out_, in.spatialType, mesh->unitDimension);
    result_ = out;
}

// One element: input quantity -> energy (scale = energy per packet weight) -> output quantity.
double EnergyToFluence::convert(double x, const std::string& inQ, double meas, double mu, bool volume,
                                double scale) const {
    double e = x;
    if (inQ == "PhotonWeight") e *= scale;
    else if (inQ == "EnergyPerVolume") e *= meas;
    else if (inQ == "Fluence") e *= meas * (volume ? mu : 1.0);
    if (out_ == "PhotonWeight") return e / scale;
    if (out_ == "EnergyPerVolume") return meas > 0 ? e / meas : 0.0;
    if (out_ == "Fluence") return meas <= 0 ? 0.0 : !volume ? e / meas : mu > 0 ? e / (meas * mu) : kNaN;
    return e;
}

SpatialMap* EnergyToFluence::result() const {
    if (!result_) throw ParameterError("EnergyToFluence result: call update first");
    return new SpatialMap(result_);
}

// ---- DoseHistogram ----

namespace {
void checkBin(unsigned i, size_t n) {
    if (i >= n) throw ParameterError("DoseHistogram: index " + std::to_string(i) + " out of range (" + std::to_string(n) + " entries)");
}
}  // namespace

std::string DoseHistogram::name() const { return "DoseHistogram"; }
std::string DoseHistogram::type() const { return "DoseHistogram"; }
unsigned DoseHistogram::dim() const { return unsigned(h_->dose.size()); }
unsigned DoseHistogram::region() const { return h_->region; }
double DoseHistogram::totalMeasure() const { return h_->totalVolume; }
double DoseHistogram::dose(unsigned i) const { checkBin(i, h_->dose.size()); return h_->dose[i]; }
double DoseHistogram::measure(unsigned i) const { checkBin(i, h_->measure.size()); return h_->measure[i]; }
double DoseHistogram::cmeasure(unsigned i) const { checkBin(i, h_->cmeasure.size()); return h_->cmeasure[i]; }
double DoseHistogram::cdf(unsigned i) const { checkBin(i, h_->cdf.size()); return h_->cdf[i]; }
double DoseHistogram::doseAtFraction(double f) const {
    if (!(f >= 0 && f <= 1)) throw ParameterError("DoseHistogram doseAtFraction: fraction must be in [0, 1], got " + std::to_string(f));
    return h_->doseAtFraction(f);
}
double DoseHistogram::volumeFractionAbove(double d) const {
    fmtcl::finite(d, "DoseHistogram volumeFractionAbove: the dose");
    double v = 0;
    for (size_t i = 0; i < h_->dose.size(); ++i)
        if (h_->dose[i] >= d) v += h_->measure[i];
    return h_->totalVolume > 0 ? v / h_->totalVolume : 0.0;
}
double DoseHistogram::minDose() const { return h_->dose.empty() ? kNaN : h_->dose.front(); }
double DoseHistogram::maxDose() const { return h_->maxDose(); }
double DoseHistogram::meanDose() const { return h_->meanDose(); }
unsigned DoseHistogram::undefinedCount() const { return unsigned(h_->undefined); }

// ---- DoseHistogramCollection, DoseVolumeHistogramGenerator ----

DoseHistogram* DoseHistogramCollection::get(unsigned i) const {
    if (i >= l_->size())
        throw ParameterError("DoseHistogramCollection get: index " + std::to_string(i) + " out of range (" +
                             std::to_string(l_->size()) + " histograms; index != region, see forRegion)");
    return new DoseHistogram((*l_)[i]);
}
unsigned DoseHistogramCollection::count() const { return unsigned(l_->size()); }
DoseHistogram* DoseHistogramCollection::forRegion(unsigned r) const {
    for (const auto& h : *l_)
        if (h->region == r) return new DoseHistogram(h);
    throw ParameterError("DoseHistogramCollection forRegion: no histogram for region " + std::to_string(r) +
                         " (regions: " + regions() + ")");
}
std::string DoseHistogramCollection::regions() const {
    std::string s;
    for (const auto& h : *l_) s += (s.empty() ? "" : " ") + std::to_string(h->region);
    return s;
}

void DoseVolumeHistogramGenerator::mesh(TetraMesh* m) { mesh_ = fmtcl::need(m, "DoseVolumeHistogramGenerator mesh").ptr(); }
void DoseVolumeHistogramGenerator::dose(OutputData* d) { dose_ = mapOf(d, "DoseVolumeHistogramGenerator dose"); }
void DoseVolumeHistogramGenerator::update() {
    if (!dose_) throw ParameterError("DoseVolumeHistogramGenerator update: call dose first");
    std::shared_ptr<const fm::TetraMesh> m = mesh_ ? mesh_ : dose_->mesh;
    if (!m) throw ParameterError("DoseVolumeHistogramGenerator update: call mesh first");
    auto list = std::make_shared<DoseHistogramCollection::List>();
    if (dose_->spatialType == "Surface" || dose_->spatialType == "DirectedSurface") {
        updateSurface(*m, *list);
        result_ = list;
        return;
    }
    if (dose_->spatialType != "Volume")
        throw ParameterError("DoseVolumeHistogramGenerator: the dose must be a per-tetra or per-face map, got " +
                             dose_->spatialType);
    if (dose_->values.size() != m->tetraCount() + 1)
        throw ParameterError("DoseVolumeHistogramGenerator: the dose has " + std::to_string(dose_->values.size()) +
                             " entries, the mesh needs " + std::to_string(m->tetraCount() + 1));
    for (auto& h : fm::doseHistograms(*m, dose_->values))
        list->push_back(std::make_shared<const fm::DoseHistogram>(std::move(h)));
    // A region whose dose is undefined everywhere (mu_a 0) gets no histogram: the collection's
    // (and a TextFileDoseHistogramWriter file's, which numbers them 1..N) are then not regions
    // 1..N, which a reader cannot see.
    std::vector<bool> has(m->regionCount(), false);
    for (const auto& h : *list) has[h->region] = true;
    std::string missing, present;
    for (uint32_t r = 1; r < m->regionCount(); ++r)
        if (m->regionVolume(r) > 0) {
            std::string& s = has[r] ? present : missing;
            s += (s.empty() ? "" : " ") + std::to_string(r);
        }
    if (!missing.empty())
        fmtcl::reportWarnings({"DoseVolumeHistogramGenerator: region(s) " + missing +
                               " have no defined dose (mu_a 0: fluence is undefined there) and no histogram; the "
                               "collection holds regions " + present + ", in that order"});
    result_ = list;
}

void DoseVolumeHistogramGenerator::updateSurface(const fm::TetraMesh& m, DoseHistogramCollection::List& out) const {
    const MapData& d = *dose_;
    const bool directed = d.spatialType == "DirectedSurface";
    const size_t want = directed ? 2 * (size_t(m.faceCount()) + 1) : size_t(m.faceCount()) + 1;
    if (d.values.size() != want)
        throw ParameterError("DoseVolumeHistogramGenerator: the " + d.spatialType + " dose has " +
                             std::to_string(d.values.size()) + " entries, the mesh needs " + std::to_string(want));
    for (uint32_t r = directed && d.region ? d.region : 1; r < m.regionCount(); ++r) {
        std::vector<double> dose, area;
        for (auto [f, inside] : m.regionBoundary(r)) {
            // Directed: the side leaving the tetra outside region r, i.e. entering r.
            dose.push_back(directed ? d.values[enteringIndex(m, f, inside)] : d.values[f]);
            area.push_back(m.face(f).area);
        }
        fm::DoseHistogram h = fm::doseHistogramOf(r, dose, area);
        if (!h.dose.empty()) out.push_back(std::make_shared<const fm::DoseHistogram>(std::move(h)));
        if (directed && d.region) break;
    }
}

DoseHistogramCollection* DoseVolumeHistogramGenerator::result() const {
    if (!result_) throw ParameterError("DoseVolumeHistogramGenerator result: call update first");
    return new DoseHistogramCollection(result_);
}

// ---- DirectedSurfaceSum ----

void DirectedSurfaceSum::input(OutputDataCollection* c) {
    OutputDataCollection& C = fmtcl::need(c, "DirectedSurfaceSum input");
    in_.clear();
    for (unsigned i = 0; i < C.size(); ++i) {
        std::shared_ptr<OutputData> d(C.getByIndex(i));
        if (auto s = std::dynamic_pointer_cast<DirectedSurface>(d)) in_.push_back(s);
    }
}
void DirectedSurfaceSum::update() {
    entering_.clear();
    exiting_.clear();
    for (const auto& s : in_) {
        entering_.push_back(s->totalEntering());
        exiting_.push_back(s->totalExiting());
    }
}
unsigned DirectedSurfaceSum::count() const { return unsigned(entering_.size()); }
double DirectedSurfaceSum::totalEnteringWeight(unsigned i) const {
    if (i >= entering_.size())
        throw ParameterError("DirectedSurfaceSum: no scored boundary " + std::to_string(i) + " (" +
                             std::to_string(entering_.size()) + " after update; did you call update?)");
    return entering_[i];
}
double DirectedSurfaceSum::totalExitingWeight(unsigned i) const {
    totalEnteringWeight(i);  // same range check
    return exiting_[i];
}

// ---- WeightedMapSum ----

void WeightedMapSum::add(OutputData* map, double w) {
    MapPtr m = mapOf(map, "WeightedMapSum add");
    if (!std::isfinite(w)) throw ParameterError("WeightedMapSum add: weight must be finite");
    if (!terms_.empty()) {
        const MapData& f = *terms_.front().first;
        if (m->values.size() != f.values.size() || m->spatialType != f.spatialType || m->unit != f.unit)
            throw ParameterError("WeightedMapSum add: '" + m->name + "' (" + m->spatialType + ", " + m->unit + ", " +
                                 std::to_string(m->values.size()) + " entries) does not match '" + f.name + "' (" +
                                 f.spatialType + ", " + f.unit + ", " + std::to_string(f.values.size()) + ")");
    }
    terms_.push_back({m, w});
}
void WeightedMapSum::clear() {
    terms_.clear();
    result_.reset();
}
unsigned WeightedMapSum::count() const { return unsigned(terms_.size()); }
void WeightedMapSum::update() {
    if (terms_.empty()) throw ParameterError("WeightedMapSum update: add at least one map first");
    auto out = std::make_shared<MapData>(*terms_.front().first);
    std::fill(out->values.begin(), out->values.end(), 0.0);
    for (const auto& [m, w] : terms_)
        for (size_t i = 0; i < out->values.size(); ++i) out->values[i] += w * m->values[i];
    // The terms come from separate runs (independent packets): their variances add. Where a
    // term has no standard error, neither has the sum.
    bool allHaveErrors = true;
    for (const auto& [m, w] : terms_) allHaveErrors = allHaveErrors && m->standardError.size() == out->values.size();
    out->standardError.assign(allHaveErrors ? out->values.size() : 0, 0.0);
    out->batches = 0;
    for (const auto& [m, w] : terms_) {
        if (!allHaveErrors) break;
        out->batches += m->batches;
        for (size_t i = 0; i < out->values.size(); ++i) out->standardError[i] += w * w * m->standardError[i] * m->standardError[i];
    }
    for (double& e : out->standardError) e = std::sqrt(e);
    out->name = "WeightedSum";
    result_ = out;
}
SpatialMap* WeightedMapSum::result() const {
    if (!result_) throw ParameterError("WeightedMapSum result: call update first");
    return new SpatialMap(result_);
}
