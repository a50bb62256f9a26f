// SPDX-License-Identifier: GPL-3.0-or-later
#include "Tcl/TclPlanning.hpp"

#include <cmath>
#include <sstream>

#include "Common/Errors.hpp"
#include "Geometry/Queries.hpp"
#include "Planning/Optimizer.hpp"
#include "Planning/Report.hpp"
#include "Tcl/TclBatch.hpp"
#include "Tcl/TclGeometry.hpp"
#include "Tcl/TclOutputs.hpp"
#include "Tcl/TclSources.hpp"
#include "Tcl/TclUtil.hpp"

using fm::ParameterError;
using namespace fm::planning;

namespace {

// One run's VolumeEnergy map of a BatchRunner.
MapPtr volumeEnergy(const BatchRunner& b, unsigned run) {
    std::unique_ptr<OutputDataCollection> odc(b.result(run));
    std::unique_ptr<OutputData> d(odc->getByName("VolumeEnergy"));
    auto* m = dynamic_cast<SpatialMap*>(d.get());
    if (!m) throw fm::Error("PlanOptimizer: run " + std::to_string(run) + " has no VolumeEnergy map");
    return m->data();
}

std::string tclList(const std::vector<std::string>& items) {
    std::string o;
    for (const auto& s : items) o += (o.empty() ? "{" : " {") + s + "}";
    return o;
}

}  // namespace

PlanOptimizer::PlanOptimizer() = default;
PlanOptimizer::~PlanOptimizer() = default;

void PlanOptimizer::batch(BatchRunner* b) {
    const BatchRunner& B = fmtcl::need(b, "PlanOptimizer batch");
    if (B.runCount() == 0) throw ParameterError("PlanOptimizer batch: the BatchRunner has no results (runSync first)");
    batches_.push_back(&B);
}
unsigned PlanOptimizer::batchCount() const { return unsigned(batches_.size()); }
void PlanOptimizer::clearBatches() { batches_.clear(); }
void PlanOptimizer::regionName(unsigned r, const std::string& n) {
    if (r == 0) throw ParameterError("PlanOptimizer regionName: region 0 is the exterior");
    if (n.empty()) throw ParameterError("PlanOptimizer regionName: empty name for region " + std::to_string(r));
    names_[r] = n;
}
std::string PlanOptimizer::regionName(unsigned r) const {
    auto it = names_.find(r);
    return it == names_.end() ? "" : it->second;
}
void PlanOptimizer::sourceName(unsigned s, const std::string& n) { sourceNames_[s] = n; }
void PlanOptimizer::photosensitizer(unsigned r, double muA) {
    psMuA_[r] = fmtcl::nonNegative(muA, "PlanOptimizer photosensitizer: mu_a (1/mm)");
}
void PlanOptimizer::prescription(const std::string& json) { prescriptionJson_ = json; }
void PlanOptimizer::slice(const std::string& axis, double at) {
    std::string a = fmtcl::lower(axis);
    if (a != "x" && a != "y" && a != "z") throw ParameterError("PlanOptimizer slice: axis '" + axis + "' is not x, y or z");
    slices_.push_back({a[0] - 'x', fmtcl::finite(at, "PlanOptimizer slice: the plane's position (mm)")});
}

std::string PlanOptimizer::solve() {
    if (batches_.empty()) throw ParameterError("PlanOptimizer: no batches (call batch with a BatchRunner after its runSync)");
    if (prescriptionJson_.empty()) throw ParameterError("PlanOptimizer: no prescription (call prescription with its JSON)");
    const BatchRunner& B0 = *batches_[0];
    const size_t S = B0.sourcesRun().size(), K = batches_.size();
    MapPtr first = volumeEnergy(B0, 0);
    auto plan = std::make_unique<PlanSpec>();
    plan->file = "PlanOptimizer";
    plan->mesh = std::const_pointer_cast<fm::TetraMesh>(first->mesh);
    if (fmtcl::lower(plan->mesh->unitDimension) != "mm")
        throw ParameterError("PlanOptimizer: the mesh is in " + plan->mesh->unitDimension + "; plans need mm");
    plan->materials = *first->materials;
    plan->regionNames = names_;
    auto m = std::make_unique<DoseMatrix>();
    m->tetras = plan->mesh->tetraCount(), m->sources = S, m->batches = K;
    m->fluence.resize(m->tetras * S * K);
    for (size_t k = 0; k < K; ++k) {
        const BatchRunner& B = *batches_[k];
        if (B.runCount() != S || B.sourcesRun().size() != S)
            throw ParameterError("PlanOptimizer: batch " + std::to_string(k) + " has " + std::to_string(B.runCount()) +
                                 " runs, batch 0 has " + std::to_string(S) + " sources (one material set, same sources)");
        for (size_t j = 0; j < S; ++j) {
            if (B.sourcesRun()[j] != B0.sourcesRun()[j])
                throw ParameterError("PlanOptimizer: batch " + std::to_string(k) + " source " + std::to_string(j) +
                                     " is not batch 0's (every batch runs the same sources)");
            MapPtr d = volumeEnergy(B, unsigned(j));
            if (d->mesh != first->mesh) throw ParameterError("PlanOptimizer: batch " + std::to_string(k) + " ran another mesh");
            std::vector<double> col = fm::matrixColumn(fm::volumeFluence(*d->mesh, *d->materials, d->values, 1.0 / double(d->packets)));
            std::copy(col.begin(), col.end(), m->fluence.begin() + (k * S + j) * m->tetras);
        }
    }
    for (size_t j = 0; j < S; ++j) {
        auto it = sourceNames_.find(unsigned(j));
        plan->sources.push_back({it != sourceNames_.end() ? it->second : "S" + std::to_string(j + 1), B0.sourcesRun()[j], 0, INFINITY, 0});
    }
    plan->photosensitizerMuA = psMuA_;
    plan->prescription =
        parsePrescription(prescriptionJson_, "PlanOptimizer prescription", names_, *plan->mesh, plan->sources, psMuA_);
    plan->slices = slices_;
    PlanProblem prob{plan->mesh.get(), m.get(), &plan->sources, &plan->prescription, &plan->regionNames};
    auto r = std::make_unique<PlanResult>(optimisePlan(prob));
    eval_ = std::make_unique<PlanEvaluation>(evaluatePlan(*plan, *m, r->energies));
    plan_ = std::move(plan), matrix_ = std::move(m), result_ = std::move(r);
    return status();
}

void PlanOptimizer::needSolved() const {
    if (!result_) throw ParameterError("PlanOptimizer: not solved yet (call solve)");
}
std::string PlanOptimizer::status() const {
    if (!result_) return "not solved";
    return result_->feasible ? (result_->goalsMet ? "optimal" : "optimal, coverage goal not met") : result_->status;
}
std::string PlanOptimizer::energies() const {
    needSolved();
    return fmtcl::formatList(result_->energies);
}
double PlanOptimizer::energy(unsigned s) const {
    needSolved();
    if (s >= result_->energies.size())
        throw ParameterError("PlanOptimizer energy: source " + std::to_string(s) + " does not exist (" +
                             std::to_string(result_->energies.size()) + " sources)");
    return result_->energies[s];
}
double PlanOptimizer::objective() const {
    needSolved();
    return result_->objective;
}
double PlanOptimizer::solveSeconds() const {
    needSolved();
    return result_->seconds;
}

const RegionMetrics& PlanOptimizer::regionMetrics(const std::string& region) const {
    needSolved();
    std::string known;
    for (const auto& m : eval_->regions) {
        if (m.name == region || std::to_string(m.region) == region) return m;
        known += (known.empty() ? "" : ", ") + m.name;
    }
    throw ParameterError("PlanOptimizer: unknown region '" + region + "' (regions: " + known + ")");
}

namespace {
const Estimate& pick(const RegionMetrics& m, const std::string& w) {
    if (w == "D90") return m.D90;
    if (w == "D50") return m.D50;
    if (w == "D10") return m.D10;
    if (w == "Dmax") return m.Dmax;
    if (w == "Dmean") return m.Dmean;
    if (w == "V100") return m.V100;
    throw ParameterError("PlanOptimizer metric: '" + w + "' is not D90, D50, D10, Dmax, Dmean or V100");
}
}  // namespace

double PlanOptimizer::metric(const std::string& region, const std::string& which) const {
    const Estimate& e = pick(regionMetrics(region), which);
    return which == "V100" ? 100 * e.value : e.value;
}
double PlanOptimizer::metricError(const std::string& region, const std::string& which) const {
    const Estimate& e = pick(regionMetrics(region), which);
    return which == "V100" ? 100 * e.se : e.se;
}

std::string PlanOptimizer::conflicts() const {
    needSolved();
    std::vector<std::string> items;
    for (const auto& c : result_->conflicts) {
        std::ostringstream o;
        o << "{" << c.name << "} " << c.slack << " " << c.unit;
        items.push_back(o.str());
    }
    return tclList(items);
}

std::string PlanOptimizer::constraints() const {
    needSolved();
    std::vector<std::string> items;
    for (const auto& c : result_->checks) {
        std::ostringstream o;
        o << "{" << c.name << "} " << c.limit << " " << c.value << " " << c.unit << " " << (c.met ? 1 : 0);
        items.push_back(o.str());
    }
    return tclList(items);
}

std::string PlanOptimizer::report() const {
    needSolved();
    return planSummary(*plan_, *result_, *eval_);
}

SpatialMap* PlanOptimizer::dose() const {
    needSolved();
    auto d = std::make_shared<MapData>();
    d->name = "Dose";
    d->spatialType = "Volume";
    d->quantity = "Fluence";
    d->unit = "J/cm^2";
    d->values = eval_->dose;
    d->mesh = plan_->mesh;
    d->materials = std::make_shared<fm::MaterialSet>(plan_->materials);
    return new SpatialMap(d);
}

void PlanOptimizer::write(const std::string& dir) {
    needSolved();
    PlanRecord rec;
    rec.plan = plan_.get(), rec.matrix = matrix_.get(), rec.result = result_.get(), rec.evaluation = eval_.get();
    rec.matrixFrom = "BatchRunner x " + std::to_string(batches_.size());
    rec.writeMatrix = false;
    writePlanOutputs(dir, rec, true);
}

// ---- DoseSlicePicture ----

DoseSlicePicture::DoseSlicePicture() = default;
DoseSlicePicture::~DoseSlicePicture() = default;
void DoseSlicePicture::mesh(TetraMesh* m) { mesh_ = fmtcl::need(m, "DoseSlicePicture mesh").ptr(); }
void DoseSlicePicture::dose(OutputData* map, double toJcm2) {
    auto* m = dynamic_cast<SpatialMap*>(&fmtcl::need(map, "DoseSlicePicture dose"));
    if (!m || m->data()->spatialType != "Volume") throw ParameterError("DoseSlicePicture dose: expected a volume map");
    fmtcl::positive(toJcm2, "DoseSlicePicture dose: the factor to J/cm^2");
    dose_ = m->data()->values;
    for (double& v : dose_) v *= toJcm2;
    if (!mesh_ && m->data()->mesh) mesh_ = std::const_pointer_cast<fm::TetraMesh>(m->data()->mesh);
}
void DoseSlicePicture::regionName(unsigned r, const std::string& n) { names_[r] = n; }
void DoseSlicePicture::source(Source* s, const std::string& name) {
    SourceMarker mk = markerOf(name, *fmtcl::need(s, "DoseSlicePicture source").ptr());
    if (mk.name.empty()) throw ParameterError("DoseSlicePicture source: volume and surface sources have no marker");
    sources_.push_back(mk);
}
void DoseSlicePicture::plane(const std::string& axis, double at) {
    std::string a = fmtcl::lower(axis);
    if (a != "x" && a != "y" && a != "z") throw ParameterError("DoseSlicePicture plane: axis '" + axis + "' is not x, y or z");
    plane_ = {a[0] - 'x', fmtcl::finite(at, "DoseSlicePicture plane: the plane's position (mm)")};
}
void DoseSlicePicture::isodose(const std::string& levels) {
    std::istringstream in(levels);
    std::vector<double> v;
    std::string w;
    while (in >> w) {
        char* end = nullptr;
        double x = std::strtod(w.c_str(), &end);
        if (*end || !(x > 0)) throw ParameterError("DoseSlicePicture isodose: '" + w + "' is not a positive dose in J/cm^2");
        v.push_back(x);
    }
    isodose_ = v;
}
void DoseSlicePicture::scale(const std::string& s) {
    std::string l = fmtcl::lower(s);
    if (l != "linear" && l != "log") throw ParameterError("DoseSlicePicture scale: '" + s + "' is not linear or log");
    log_ = l == "log";
}
void DoseSlicePicture::title(const std::string& t) { title_ = t; }
void DoseSlicePicture::write(const std::string& png) const {
    if (!mesh_) throw ParameterError("DoseSlicePicture: no mesh");
    if (dose_.size() != mesh_->tetraCount() + 1)
        throw ParameterError("DoseSlicePicture: the dose map has " + std::to_string(dose_.size()) + " entries, the mesh " +
                             std::to_string(mesh_->tetraCount() + 1));
    SliceStyle style;
    style.isodose = isodose_;
    style.logScale = log_;
    renderDoseSlice(png, *mesh_, dose_, names_, sources_, plane_, style, title_);
}
