// SPDX-License-Identifier: GPL-3.0-or-later
#include "Tcl/TclOutputs.hpp"

#include <cmath>
#include <limits>

#include "Common/Errors.hpp"
#include "Geometry/Queries.hpp"
#include "Kernels/BatchMeans.hpp"
#include "Tcl/TclGeometry.hpp"
#include "Tcl/TclUtil.hpp"

using fm::ParameterError;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

void checkIndex(unsigned i, size_t n, const std::string& what) {
    if (i >= n)
        throw ParameterError(what + ": index " + std::to_string(i) + " is out of range (size " + std::to_string(n) + ")");
}

// a > b, where NaN a never wins and any number beats a NaN b (NaN marks undefined entries).
bool greater(double a, double b) { return !std::isnan(a) && (std::isnan(b) || a > b); }

}  // namespace

OutputData::~OutputData() = default;
bool OutputData::isType(const std::string& t) const { return t == type(); }

// ---- MCEventCounts ----

std::string MCEventCounts::name() const { return "EventCounts"; }
std::string MCEventCounts::type() const { return "MCEventCounts"; }
bool MCEventCounts::isType(const std::string& t) const { return t == "MCEventCounts" || t == "EventCounts"; }
unsigned long long MCEventCounts::Nlaunch() const { return e_.launch; }
unsigned long long MCEventCounts::Nabsorb() const { return e_.absorb; }
unsigned long long MCEventCounts::Nscatter() const { return e_.scatter; }
unsigned long long MCEventCounts::Nbound() const { return e_.boundary; }
unsigned long long MCEventCounts::Ntir() const { return e_.tir; }
unsigned long long MCEventCounts::Nfresnel() const { return e_.fresnel; }
unsigned long long MCEventCounts::Nrefr() const { return e_.refract; }
unsigned long long MCEventCounts::Ninterface() const { return e_.interface; }
unsigned long long MCEventCounts::Nexit() const { return e_.exit; }
unsigned long long MCEventCounts::Ndie() const { return e_.die; }
unsigned long long MCEventCounts::Nwin() const { return e_.win; }
unsigned long long MCEventCounts::Nabnormal() const { return e_.abnormal; }
unsigned long long MCEventCounts::Ntime() const { return 0; }
unsigned long long MCEventCounts::Nnohit() const { return 0; }

// ---- ConservationCounts ----

std::string ConservationCounts::name() const { return "ConservationCounts"; }
std::string ConservationCounts::type() const { return "ConservationCounts"; }
double ConservationCounts::w_launch() const { return l_.launched; }
double ConservationCounts::w_absorb() const { return l_.absorbed; }
double ConservationCounts::w_die() const { return l_.rouletteLost; }
double ConservationCounts::w_exit() const { return l_.exited; }
double ConservationCounts::w_roulette() const { return l_.rouletteGained; }
double ConservationCounts::w_abnormal() const { return l_.abnormal; }
double ConservationCounts::w_time() const { return 0; }
double ConservationCounts::w_nohit() const { return 0; }
double ConservationCounts::w_specular() const { return l_.specular; }
double ConservationCounts::imbalance() const { return l_.imbalance(); }
double ConservationCounts::standardError(const std::string& field) const {
    if (!se_.available())
        throw ParameterError("ConservationCounts standardError: the run had no standard errors (batchCount 1); "
                             "run with batchCount >= 2");
    const fm::Ledger& e = se_.ledger;
    const std::pair<const char*, double> fields[] = {
        {"w_launch", e.launched}, {"w_absorb", e.absorbed},  {"w_die", e.rouletteLost}, {"w_exit", e.exited},
        {"w_roulette", e.rouletteGained}, {"w_abnormal", e.abnormal}, {"w_specular", e.specular}};
    std::string names;
    for (const auto& [n, v] : fields) {
        if (field == n) return v;
        names += std::string(names.empty() ? "" : ", ") + n;
    }
    throw ParameterError("ConservationCounts standardError: unknown field '" + field + "' (" + names + ")");
}
unsigned long long ConservationCounts::batchCount() const { return se_.batches; }

// ---- SpatialMap ----

std::string SpatialMap::name() const { return d_->name; }
std::string SpatialMap::type() const { return "AbstractSpatialMap"; }
bool SpatialMap::isType(const std::string& t) const {
    return t == "AbstractSpatialMap" || t == "SpatialMap" || t == "SpatialMap<float>" || t == "SpatialMap<double>" ||
           t == d_->spatialType + "Map";
}
unsigned SpatialMap::dim() const { return unsigned(d_->values.size()); }
std::string SpatialMap::dims() const {
    if (d_->dims.empty()) return std::to_string(d_->values.size());
    std::string s;
    for (unsigned n : d_->dims) s += (s.empty() ? "" : " ") + std::to_string(n);
    return s;
}
std::string SpatialMap::spatialType() const { return d_->spatialType; }
std::string SpatialMap::quantity() const { return d_->quantity; }
std::string SpatialMap::unit() const { return d_->unit; }
unsigned long long SpatialMap::packetCount() const { return d_->packets; }

const fm::TetraMesh& SpatialMap::needMesh(const char* what) const {
    if (!d_->mesh) throw ParameterError(std::string("SpatialMap ") + what + ": this map has no mesh");
    if (d_->spatialType != "Volume")
        throw ParameterError(std::string("SpatialMap ") + what + ": needs a per-tetra (Volume) map, this one is " +
                             d_->spatialType);
    return *d_->mesh;
}

TetraMesh* SpatialMap::mesh() const {
    if (!d_->mesh) throw ParameterError("SpatialMap mesh: this map has no mesh");
    return new TetraMesh(std::const_pointer_cast<fm::TetraMesh>(d_->mesh));
}

double SpatialMap::get(unsigned i) const {
    checkIndex(i, d_->values.size(), "SpatialMap get");
    return d_->values[i];
}
unsigned SpatialMap::size() const { return dim(); }

double SpatialMap::sum() const {
    double s = 0;
    for (double v : d_->values)
        if (!std::isnan(v)) s += v;
    return s;
}

double SpatialMap::regionSum(unsigned r) const {
    const fm::TetraMesh& m = needMesh("regionSum");
    double s = 0;
    for (uint32_t t = 1; t < d_->values.size() && t <= m.tetraCount(); ++t)
        if ((r == 0 || m.region(t) == r) && !std::isnan(d_->values[t])) s += d_->values[t];
    return s;
}

bool SpatialMap::hasStandardError() const { return !d_->standardError.empty(); }
unsigned long long SpatialMap::batchCount() const { return hasStandardError() ? d_->batches : 0; }
SpatialMap* SpatialMap::standardError() const {
    if (!hasStandardError())
        throw ParameterError("SpatialMap standardError: '" + d_->name +
                             "' has no standard error (the run had one batch: set the kernel's batchCount >= 2)");
    auto d = std::make_shared<MapData>(*d_);
    d->name = d_->name + "_stderr";
    d->values = d_->standardError;
    d->standardError.clear();
    d->batches = 0;
    return new SpatialMap(d);
}
double SpatialMap::relativeError(unsigned r) const {
    const fm::TetraMesh& m = needMesh("relativeError");
    if (!hasStandardError()) standardError();  // throws, saying why
    return fm::weightedRelativeError(d_->values, d_->standardError, [&](size_t t) {
        return t <= m.tetraCount() && (r == 0 || m.region(uint32_t(t)) == r);
    });
}

double SpatialMap::regionMean(unsigned r) const {
    const fm::TetraMesh& m = needMesh("regionMean");
    double s = 0, v = 0;
    for (uint32_t t = 1; t < d_->values.size() && t <= m.tetraCount(); ++t)
        if ((r == 0 || m.region(t) == r) && !std::isnan(d_->values[t])) {
            s += d_->values[t] * m.volume(t);
            v += m.volume(t);
        }
    return v > 0 ? s / v : kNaN;
}

double SpatialMap::regionMax(unsigned r) const {
    const fm::TetraMesh& m = needMesh("regionMax");
    double best = kNaN;
    for (uint32_t t = 1; t < d_->values.size() && t <= m.tetraCount(); ++t)
        if ((r == 0 || m.region(t) == r) && greater(d_->values[t], best)) best = d_->values[t];
    return best;
}

double SpatialMap::min() const {
    double best = kNaN;
    for (size_t i = 1; i < d_->values.size(); ++i)
        if (greater(-d_->values[i], -best)) best = d_->values[i];  // smaller, NaN skipped
    return best;
}

double SpatialMap::max() const {
    unsigned i = argmax();
    return i ? d_->values[i] : kNaN;
}

unsigned SpatialMap::argmax() const {
    unsigned best = 0;
    for (size_t i = 1; i < d_->values.size(); ++i)
        if (greater(d_->values[i], best ? d_->values[best] : kNaN)) best = unsigned(i);
    return best;
}

std::string SpatialMap::values() const { return fmtcl::formatList(d_->values); }

std::string SpatialMap::values(unsigned first, unsigned count) const {
    if (first > d_->values.size()) checkIndex(first, d_->values.size(), "SpatialMap values");
    size_t end = std::min(d_->values.size(), size_t(first) + count);
    return fmtcl::formatList(std::vector<double>(d_->values.begin() + first, d_->values.begin() + end));
}

double SpatialMap::valueAt(const std::string& xyz) const {
    return fm::valueAt(needMesh("valueAt"), d_->values, fmtcl::parseVec3(xyz, "SpatialMap valueAt"));
}

std::string SpatialMap::valuesAlong(const std::string& a, const std::string& b, unsigned samples) const {
    if (samples < 1) throw ParameterError("SpatialMap valuesAlong: samples must be >= 1");
    return fmtcl::formatList(fm::valuesAlong(needMesh("valuesAlong"), d_->values,
                                             fmtcl::parseVec3(a, "valuesAlong start"),
                                             fmtcl::parseVec3(b, "valuesAlong end"), samples));
}

// ---- DirectedSurface ----

MapPtr mapDataOf(OutputData& d) {
    if (auto* m = dynamic_cast<SpatialMap*>(&d)) return m->data();
    if (auto* s = dynamic_cast<DirectedSurface*>(&d)) return s->data().map;
    return nullptr;
}

std::string DirectedSurface::name() const { return "DirectedSurfaceEnergy"; }
std::string DirectedSurface::type() const { return "DirectedSurface"; }
unsigned DirectedSurface::dim() const { return unsigned(d_->faces.size()); }
unsigned DirectedSurface::region() const { return d_->region; }
unsigned DirectedSurface::faceID(unsigned i) const {
    checkIndex(i, d_->faces.size(), "DirectedSurface faceID");
    return d_->faces[i];
}
double DirectedSurface::entering(unsigned i) const {
    checkIndex(i, d_->in.size(), "DirectedSurface entering");
    return d_->in[i];
}
double DirectedSurface::exiting(unsigned i) const {
    checkIndex(i, d_->out.size(), "DirectedSurface exiting");
    return d_->out[i];
}
double DirectedSurface::totalEntering() const {
    double s = 0;
    for (double v : d_->in) s += v;
    return s;
}
double DirectedSurface::totalExiting() const {
    double s = 0;
    for (double v : d_->out) s += v;
    return s;
}

// ---- OutputDataCollection ----

OutputDataCollection::OutputDataCollection() : items_(std::make_shared<Items>()) {}
OutputDataCollection::OutputDataCollection(std::shared_ptr<const Items> items) : items_(std::move(items)) {}

namespace {

std::string available(const OutputDataCollection::Items& items, bool byName) {
    std::string s;
    for (const auto& d : items) s += (s.empty() ? "" : ", ") + (byName ? d->name() : d->type());
    return s.empty() ? "none: the collection is empty" : s;
}

}  // namespace

OutputData* OutputDataCollection::getByName(const std::string& n) const { return getByName(n, 0); }
OutputData* OutputDataCollection::getByName(const std::string& n, unsigned i) const {
    unsigned seen = 0;
    for (const auto& d : *items_)
        if (d->name() == n && seen++ == i) return d->clone();
    throw ParameterError("OutputDataCollection getByName: no output named '" + n + "'" +
                         (i ? " with index " + std::to_string(i) : std::string()) +
                         " (available: " + available(*items_, true) + ")");
}

OutputData* OutputDataCollection::getByType(const std::string& t) const { return getByType(t, 0); }
OutputData* OutputDataCollection::getByType(const std::string& t, unsigned i) const {
    unsigned seen = 0;
    for (const auto& d : *items_)
        if (d->isType(t) && seen++ == i) return d->clone();
    throw ParameterError("OutputDataCollection getByType: no output of type '" + t + "'" +
                         (i ? " with index " + std::to_string(i) : std::string()) +
                         " (available: " + available(*items_, false) + ")");
}

OutputData* OutputDataCollection::getByIndex(unsigned i) const {
    checkIndex(i, items_->size(), "OutputDataCollection getByIndex");
    return (*items_)[i]->clone();
}
unsigned OutputDataCollection::size() const { return unsigned(items_->size()); }
void OutputDataCollection::start() { cursor_ = 0; }
void OutputDataCollection::next() { ++cursor_; }
bool OutputDataCollection::done() const { return cursor_ >= items_->size(); }
OutputData* OutputDataCollection::current() const {
    if (done()) throw ParameterError("OutputDataCollection current: past the end (check done)");
    return (*items_)[cursor_]->clone();
}
void OutputDataCollection::clear() {
    items_ = std::make_shared<Items>();
    cursor_ = 0;
}
void OutputDataCollection::add(OutputData* d) {
    auto copy = std::make_shared<Items>(*items_);
    copy->push_back(std::shared_ptr<OutputData>(fmtcl::need(d, "OutputDataCollection add").clone()));
    items_ = copy;
}
std::string OutputDataCollection::names() const {
    std::string s;
    for (const auto& d : *items_) s += (s.empty() ? "" : " ") + d->name();
    return s;
}
