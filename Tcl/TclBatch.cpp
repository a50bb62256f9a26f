// SPDX-License-Identifier: GPL-3.0-or-later
#include "Tcl/TclBatch.hpp"

#include <csignal>
#include <cstdio>
#include <map>
#include <sstream>
#include <unistd.h>

#include "Common/Text.hpp"
#include "Geometry/BatchModel.hpp"
#include "Geometry/Queries.hpp"
#include "Kernels/Batch.hpp"
#include "Storage/FluenceMatrix/FluenceMatrix.hpp"
#include "Tcl/TclGeometry.hpp"
#include "Tcl/TclMeshCheck.hpp"
#include "Tcl/TclOutputs.hpp"
#include "Tcl/TclSources.hpp"
#include "Kernels/RunWarnings.hpp"
#include "Tcl/TclUtil.hpp"
#ifdef FM_TCL_HDF5
#include "Storage/FluenceMatrix/FluenceMatrixHDF5.hpp"
#endif

using fm::ParameterError;

namespace {

std::atomic<bool> gBatchInterrupted{false};
extern "C" void onBatchInterrupt(int) { gBatchInterrupted = true; }

// Ctrl-C during runSync cancels the batch (a Tcl error) instead of killing the shell.
class BatchInterruptGuard {
public:
    BatchInterruptGuard() {
        gBatchInterrupted = false;
        struct sigaction sa {};
        sa.sa_handler = onBatchInterrupt;
        sigemptyset(&sa.sa_mask);
        installed_ = sigaction(SIGINT, &sa, &old_) == 0;
    }
    ~BatchInterruptGuard() {
        if (installed_) sigaction(SIGINT, &old_, nullptr);
    }

private:
    struct sigaction old_ {};
    bool installed_ = false;
};

MapPtr batchMap(const std::string& name, const std::string& spatialType, const std::vector<double>& values,
                const std::shared_ptr<const fm::TetraMesh>& mesh, const std::shared_ptr<const fm::MaterialSet>& mats,
                uint64_t packets) {
    auto d = std::make_shared<MapData>();
    d->name = name;
    d->spatialType = spatialType;
    d->quantity = "PhotonWeight";
    d->unit = "packet";
    d->values = values;
    d->mesh = mesh;
    d->materials = mats;
    d->packets = packets;
    return d;
}

}  // namespace

BatchRunner::BatchRunner() { opt_.outputs.directed = false; }
BatchRunner::~BatchRunner() = default;

void BatchRunner::notRun() const {
    if (results_.empty()) throw ParameterError("BatchRunner: no results (call runSync first)");
}

void BatchRunner::geometry(TetraMesh* m) { mesh_ = fmtcl::need(m, "BatchRunner geometry").ptr(); }
TetraMesh* BatchRunner::geometry() const {
    if (!mesh_) throw ParameterError("BatchRunner geometry: not set");
    return new TetraMesh(mesh_);
}
void BatchRunner::materials(MaterialSet* ms) {
    materials_.assign(1, std::make_shared<MaterialSet>(fmtcl::need(ms, "BatchRunner materials")));
}
MaterialSet* BatchRunner::materials() const {
    if (materials_.empty()) throw ParameterError("BatchRunner materials: not set");
    return new MaterialSet(*materials_[0]);
}
void BatchRunner::addMaterials(MaterialSet* ms) {
    materials_.push_back(std::make_shared<MaterialSet>(fmtcl::need(ms, "BatchRunner addMaterials")));
}
unsigned BatchRunner::materialSetCount() const { return unsigned(materials_.size()); }
void BatchRunner::source(Source* s) { sources_.push_back(fmtcl::need(s, "BatchRunner source").ptr()); }
unsigned BatchRunner::sourceCount() const { return unsigned(sources_.size()); }
void BatchRunner::clearSources() { sources_.clear(); }
void BatchRunner::packetCount(double n) {
    opt_.packets = fmtcl::wholeNumber(n, "BatchRunner packetCount", 1, double(fm::kMaxPackets));
}
unsigned long long BatchRunner::packetCount() const { return opt_.packets; }
void BatchRunner::threadCount(unsigned n) {
    if (n > 4096) throw ParameterError("BatchRunner threadCount: " + std::to_string(n) + " is unreasonable");
    opt_.threads = n;
}
unsigned BatchRunner::threadCount() const { return opt_.threads; }
void BatchRunner::randSeed(unsigned long long s) { opt_.params.seed = s; }
unsigned long long BatchRunner::randSeed() const { return opt_.params.seed; }
void BatchRunner::rouletteWMin(double w) {
    if (!(w >= 0 && w < 1)) throw ParameterError("BatchRunner rouletteWMin must be in [0, 1), got " + std::to_string(w));
    opt_.params.wmin = float(w);
    wmin_ = w;
}
double BatchRunner::rouletteWMin() const { return wmin_; }
void BatchRunner::roulettePrWin(double p) {
    if (!(p > 0 && p <= 1)) throw ParameterError("BatchRunner roulettePrWin must be in (0, 1], got " + std::to_string(p));
    opt_.params.prwin = float(p);
    prwin_ = p;
}
double BatchRunner::roulettePrWin() const { return prwin_; }
void BatchRunner::maxSteps(unsigned n) {
    if (!n) throw ParameterError("BatchRunner maxSteps must be >= 1");
    opt_.params.maxSteps = n;
}
unsigned BatchRunner::maxSteps() const { return opt_.params.maxSteps; }
void BatchRunner::maxHits(unsigned n) {
    if (!n) throw ParameterError("BatchRunner maxHits must be >= 1");
    opt_.params.maxHits = n;
}
unsigned BatchRunner::maxHits() const { return opt_.params.maxHits; }
void BatchRunner::kernel(const std::string& k) {
    std::string l = fmtcl::lower(k);
    if (l != "cpu" && l != "cuda") throw ParameterError("BatchRunner kernel: '" + k + "' is not cpu or cuda");
    kernel_ = l;
}
std::string BatchRunner::kernel() const { return kernel_; }
void BatchRunner::devices(const std::string& list) {
    opt_.devices = fmtcl::parseDeviceList(list, "BatchRunner devices");
}
std::string BatchRunner::devices() const { return fmtcl::formatDeviceList(opt_.devices); }
void BatchRunner::timeGates(double start, double stop, double step) {
    opt_.gates = (start == 0 && stop == 0 && step == 0) ? fm::TimeGates{}
                                                         : fm::makeTimeGates(start, stop, step, "BatchRunner timeGates");
}
std::string BatchRunner::timeGates() const { return fm::describeTimeGates(opt_.gates); }
void BatchRunner::timeGateRegions(const std::string& ids) {
    gateRegions_ = ids.find_first_not_of(" \t,") == std::string::npos
        ? std::vector<uint32_t>{}
        : fm::parseRegionList(ids, "BatchRunner timeGateRegions");
}
std::string BatchRunner::timeGateRegions() const {
    std::string s;
    for (uint32_t r : gateRegions_) s += (s.empty() ? "" : " ") + std::to_string(r);
    return s;
}
void BatchRunner::progress(bool on) { progress_ = on; }
bool BatchRunner::progress() const { return progress_; }

void BatchRunner::runSync() {
    if (!mesh_) throw ParameterError("BatchRunner: no geometry (call geometry with a TetraMesh first)");
    if (materials_.empty()) throw ParameterError("BatchRunner: no materials (call materials with a MaterialSet first)");
    if (sources_.empty()) throw ParameterError("BatchRunner: no sources (call source once per run)");
    std::vector<fm::MaterialSet> sets;
    std::vector<std::shared_ptr<const fm::MaterialSet>> built;
    for (auto& m : materials_) {
        sets.push_back(m->build(mesh_->unitDimension));
        built.push_back(std::make_shared<fm::MaterialSet>(sets.back()));
    }
    fm::BatchModel bm = fm::packBatch(*mesh_, sets, sources_, {opt_.packets}, opt_.params.seed, {}, {}, &packed_);
    fmtcl::reportWarnings(bm.warnings);
    fm::BatchOptions bo;
    bo.kernel = kernel_;
    bo.params = opt_.params;
    bo.threads = opt_.threads;
    bo.devices = opt_.devices;
    bo.tuning = fm::tuningFromEnvironment();
    bo.outputs.volume = bo.outputs.surface = true;
    bo.outputs.directed = false;
    bo.outputs.gatedVolume = bo.outputs.gatedSurface = opt_.gates.on();
    bo.gates = opt_.gates;
    if (!gateRegions_.empty()) {
        if (!opt_.gates.on()) throw ParameterError("BatchRunner timeGateRegions: needs timeGates");
        std::vector<uint32_t> region(mesh_->tetraCount() + 1, 0);
        for (uint32_t t = 1; t <= mesh_->tetraCount(); ++t) region[t] = mesh_->region(t);
        bo.gates.tetras = fm::gatedTetras(region, gateRegions_, "BatchRunner timeGateRegions");
    }
    std::atomic<bool> cancel{false};
    bo.cancel = &cancel;
    const bool bar = progress_ && isatty(2);
    bo.progress = [&](size_t done, size_t total) {
        if (gBatchInterrupted) cancel = true;
        if (bar) std::fprintf(stderr, "\rBatchRunner: %zu/%zu runs", done, total), std::fflush(stderr);
    };
    std::vector<std::shared_ptr<const fm::RunResult>> results(bm.runs.size());
    BatchInterruptGuard guard;
    fm::BatchSummary s = fm::runBatch(bm.cells(), bm.runs, bo, [&](size_t i, fm::RunResult&& r) {
        results[i] = std::make_shared<fm::RunResult>(std::move(r));
    });
    if (bar) std::fprintf(stderr, "\n");
    bool complete = !s.cancelled;
    for (auto& r : results) complete = complete && r && !r->cancelled;
    if (!complete)
        throw fm::Error("BatchRunner: batch " + std::string(gBatchInterrupted ? "interrupted (Ctrl-C)" : "cancelled") +
                        " after " + std::to_string(s.delivered) + " of " + std::to_string(s.runs) +
                        " runs; no results kept");
    std::vector<std::string> abnormal;
    for (size_t j = 0; j < results.size(); ++j)
        if (std::string w = fm::abnormalWarning(results[j]->ledger); !w.empty())
            abnormal.push_back("BatchRunner run " + std::to_string(j) + ": " + w);
    fmtcl::reportWarnings(abnormal);
    // The fluence matrix's model fingerprint, taken now: the sources and materials may change after.
    std::vector<uint64_t> columnPackets;
    for (const fm::BatchRunSpec& r : bm.runs) columnPackets.push_back(r.packets);
    model_ = fm::modelFingerprint(*mesh_, sets, sources_, columnPackets, opt_.params);
    results_ = std::move(results);
    built_ = std::move(built);
    runMesh_ = mesh_;
    sourcesRun_ = sources_.size();
    ranSources_ = sources_;
    seconds_ = s.seconds;
    std::ostringstream split;
    split.precision(17);
    for (const auto& [k, v] : fm::batchTimeSplit(s)) split << (split.tellp() > 0 ? " " : "") << k << " " << v;
    timeSplit_ = split.str();
    perRank_ = s.runsPerRank;
}

unsigned BatchRunner::runCount() const { return unsigned(results_.size()); }
double BatchRunner::seconds() const { return seconds_; }
std::string BatchRunner::timeSplit() const { return timeSplit_; }
unsigned long long BatchRunner::meshPacks() const { return packed_.cellPacks(); }
std::string BatchRunner::runsPerRank() const {
    std::ostringstream o;
    for (size_t i = 0; i < perRank_.size(); ++i) o << (i ? " " : "") << perRank_[i];
    return o.str();
}

OutputDataCollection* BatchRunner::result(unsigned run) const {
    notRun();
    if (run >= results_.size())
        throw ParameterError("BatchRunner result: run " + std::to_string(run) + " does not exist (" +
                             std::to_string(results_.size()) + " runs: 0.." + std::to_string(results_.size() - 1) + ")");
    const fm::RunResult& r = *results_[run];
    const auto& mats = built_[run / sourcesRun_];
    auto items = std::make_shared<OutputDataCollection::Items>();
    items->push_back(std::make_shared<MCEventCounts>(r.events));
    items->push_back(std::make_shared<ConservationCounts>(r.ledger));
    items->push_back(std::make_shared<SpatialMap>(batchMap("VolumeEnergy", "Volume", r.volume, runMesh_, mats, r.packetsDone)));
    items->push_back(std::make_shared<SpatialMap>(batchMap("SurfaceExitEnergy", "Surface", r.surface, runMesh_, mats, r.packetsDone)));
    // Time gates: one map per bin, named as a Kernel's (<name>Gate<k>, <name>GateEarly, <name>GateLate).
    // Per-region gating: each volume bin spread over every cell (0 outside the regions).
    auto gated = [&](const std::string& name, const std::string& type, const std::vector<double>& v) {
        if (v.empty() || !r.gates.on()) return;
        for (uint32_t b = 0; b < r.gates.bins(); ++b) {
            const std::string suffix = b < r.gates.count ? std::to_string(b) : b == r.gates.earlyBin() ? "Early" : "Late";
            items->push_back(std::make_shared<SpatialMap>(batchMap(name + "Gate" + suffix, type,
                                                                   fmtcl::gatedBin(v, r.gates, b, type == "Volume"),
                                                                   runMesh_, mats, r.packetsDone)));
        }
    };
    gated("VolumeEnergy", "Volume", r.gatedVolume);
    gated("SurfaceExitEnergy", "Surface", r.gatedSurface);
    return new OutputDataCollection(items);
}

void BatchRunner::fluenceMatrix(const std::string& file) const {
    notRun();
    fm::FluenceMatrixHeader h;
    h.rows = runMesh_->tetraCount();
    h.cols = results_.size();
    h.sources = sourcesRun_;
    h.materialSets = results_.size() / sourcesRun_;
    h.model = model_;
    h.units = fmtcl::lower(runMesh_->unitDimension) == "mm" ? "mm^-2 per J emitted"
                                                           : runMesh_->unitDimension + "^-2 per J emitted";
    auto column = [&](size_t j) {
        const fm::RunResult& r = *results_[j];
        return fm::matrixColumn(fm::volumeFluence(*runMesh_, *built_[j / sourcesRun_], r.volume, 1.0 / double(r.packetsDone)));
    };
    if (fm::endsWithIgnoringCase(file, ".h5")) {
#ifdef FM_TCL_HDF5
        fm::FluenceMatrixHDF5Writer w(file, h);
        for (size_t j = 0; j < results_.size(); ++j) w.writeColumn(j, column(j));
        w.commit();
        return;
#else
        throw ParameterError("BatchRunner fluenceMatrix " + file + ": this build has no HDF5 (FM_USE_HDF5); "
                             "write the binary format (any other extension, e.g. .fmm)");
#endif
    }
    fm::FluenceMatrixWriter w(file, h);
    for (size_t j = 0; j < results_.size(); ++j) w.writeColumn(j, column(j));
    w.commit();
}
