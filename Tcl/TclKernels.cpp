// SPDX-License-Identifier: GPL-3.0-or-later
#include "Tcl/TclKernels.hpp"

#include "Kernels/BatchMeans.hpp"

#include <chrono>
#include <csignal>
#include <set>
#include <system_error>

#include "Common/ProgressBar.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/BatchMeans.hpp"
#include "Kernels/Dispatch.hpp"
#include "Tcl/TclGeometry.hpp"
#include "Tcl/TclMeshCheck.hpp"
#include "Tcl/TclSources.hpp"
#include "Kernels/RunWarnings.hpp"
#include "Tcl/TclUtil.hpp"

using fm::ParameterError;

namespace {

std::atomic<bool> gInterrupted{false};
extern "C" void onInterrupt(int) { gInterrupted = true; }

// Ctrl-C during runSync stops the run (and raises a Tcl error) instead of killing the shell.
class InterruptGuard {
public:
    InterruptGuard() {
        gInterrupted = false;
        struct sigaction sa {};
        sa.sa_handler = onInterrupt;
        sigemptyset(&sa.sa_mask);
        installed_ = sigaction(SIGINT, &sa, &old_) == 0;
    }
    ~InterruptGuard() {
        if (installed_) sigaction(SIGINT, &old_, nullptr);
    }

private:
    struct sigaction old_ {};
    bool installed_ = false;
};

MapPtr makeMap(const std::string& name, const std::string& spatialType, std::vector<double> values,
               const Kernel::Prepared& p, uint64_t packets, std::vector<double> se = {}, uint64_t batches = 0) {
    auto d = std::make_shared<MapData>();
    d->standardError = std::move(se);
    d->batches = d->standardError.empty() ? 0 : batches;
    d->name = name;
    d->spatialType = spatialType;
    d->quantity = "PhotonWeight";
    d->unit = "packet";
    d->values = std::move(values);
    d->mesh = p.mesh;
    d->materials = p.mats;
    d->packets = packets;
    return d;
}

}  // namespace

// ---- Kernel: parameters ----

Kernel::Kernel(std::string className, std::string device, fm::OutputSelection outputs)
    : className_(std::move(className)), device_(std::move(device)), outputs_(outputs),
      results_(std::make_shared<OutputDataCollection::Items>()) {}

Kernel::~Kernel() {
    cancel_ = true;
    if (worker_.joinable()) worker_.join();
}

void Kernel::notRunning(const char* what) const {
    if (running_) throw ParameterError(className_ + " " + what + ": a run is in progress (call finishAsync first)");
}

void Kernel::geometry(TetraMesh* m) {
    notRunning("geometry");
    mesh_ = fmtcl::need(m, className_ + " geometry").ptr();
}
TetraMesh* Kernel::geometry() const {
    if (!mesh_) throw ParameterError(className_ + " geometry: not set");
    return new TetraMesh(mesh_);
}
void Kernel::materials(MaterialSet* ms) {
    notRunning("materials");
    materials_ = std::make_shared<MaterialSet>(fmtcl::need(ms, className_ + " materials"));
}
MaterialSet* Kernel::materials() const {
    if (!materials_) throw ParameterError(className_ + " materials: not set");
    return new MaterialSet(*materials_);
}
void Kernel::source(Source* s) {
    notRunning("source");
    source_ = fmtcl::need(s, className_ + " source").ptr();
}
Source* Kernel::source() const {
    if (!source_) throw ParameterError(className_ + " source: not set");
    return Source::wrap(source_);
}
void Kernel::packetCount(double n) {
    notRunning("packetCount");
    opt_.packets = fmtcl::wholeNumber(n, className_ + " packetCount", 1, double(fm::kMaxPackets));
}
unsigned long long Kernel::packetCount() const { return opt_.packets; }
void Kernel::batchCount(double n) {
    notRunning("batchCount");
    opt_.batches = fmtcl::wholeNumber(n, className_ + " batchCount", 1, 9007199254740992.0);
}
void Kernel::timeGates(double start, double stop, double step) {
    notRunning("timeGates");
    if (className_.rfind("TetraTrace", 0) == 0 || className_ == "MCMLKernelWithTraces")
        throw ParameterError(className_ + " timeGates: only the tetra kernels (TetraVolumeKernel, TetraSVKernel, "
                             "...) and MCMLKernel keep time-resolved tallies");
    opt_.gates = (start == 0 && stop == 0 && step == 0) ? fm::TimeGates{}
                                                         : fm::makeTimeGates(start, stop, step, className_ + " timeGates");
}
std::string Kernel::timeGates() const { return fm::describeTimeGates(opt_.gates); }
unsigned Kernel::timeGateCount() const { return opt_.gates.count; }
void Kernel::timeGateRegions(const std::string& ids) {
    notRunning("timeGateRegions");
    gateRegions_ = ids.find_first_not_of(" \t,") == std::string::npos
        ? std::vector<uint32_t>{}
        : fm::parseRegionList(ids, className_ + " timeGateRegions");
}
std::string Kernel::timeGateRegions() const {
    std::string s;
    for (uint32_t r : gateRegions_) s += (s.empty() ? "" : " ") + std::to_string(r);
    return s;
}
unsigned long long Kernel::batchCount() const { return fm::effectiveBatches(opt_, device_ == "cuda"); }
void Kernel::threadCount(unsigned n) {
    notRunning("threadCount");
    if (n > 4096) throw ParameterError(className_ + " threadCount: " + std::to_string(n) + " is unreasonable");
    opt_.threads = n;
}
unsigned Kernel::threadCount() const { return opt_.threads ? opt_.threads : FullMonte_hardwareThreads(); }
void Kernel::randSeed(unsigned long long s) {
    notRunning("randSeed");
    opt_.params.seed = s;
}
unsigned long long Kernel::randSeed() const { return opt_.params.seed; }
void Kernel::rouletteWMin(double w) {
    notRunning("rouletteWMin");
    if (!(w >= 0 && w < 1)) throw ParameterError(className_ + " rouletteWMin must be in [0, 1), got " + std::to_string(w));
    opt_.params.wmin = float(w);
    wmin_ = w;
}
double Kernel::rouletteWMin() const { return wmin_; }
void Kernel::roulettePrWin(double p) {
    notRunning("roulettePrWin");
    if (!(p > 0 && p <= 1)) throw ParameterError(className_ + " roulettePrWin must be in (0, 1], got " + std::to_string(p));
    opt_.params.prwin = float(p);
    prwin_ = p;
}
double Kernel::roulettePrWin() const { return prwin_; }
void Kernel::maxSteps(unsigned n) {
    notRunning("maxSteps");
    if (!n) throw ParameterError(className_ + " maxSteps must be >= 1");
    opt_.params.maxSteps = n;
}
unsigned Kernel::maxSteps() const { return opt_.params.maxSteps; }
void Kernel::maxHits(unsigned n) {
    notRunning("maxHits");
    if (!n) throw ParameterError(className_ + " maxHits must be >= 1");
    opt_.params.maxHits = n;
}
unsigned Kernel::maxHits() const { return opt_.params.maxHits; }
void Kernel::isEnergy_or_Power(const std::string& jw) {
    std::string u = fmtcl::lower(jw);
    if (u == "j" || u == "energy") energyUnit_ = "J";
    else if (u == "w" || u == "power") energyUnit_ = "W";
    else throw ParameterError(className_ + " isEnergy_or_Power: '" + jw + "' is not J (energy) or W (power)");
}
std::string Kernel::isEnergy_or_Power() const { return energyUnit_; }
void Kernel::energyPowerValue(double e) { energyValue_ = fmtcl::positive(e, className_ + " energyPowerValue"); }
double Kernel::energyPowerValue() const { return energyValue_; }
void Kernel::progress(bool on) { progress_ = on; }
bool Kernel::progress() const { return progress_; }
void Kernel::cancel() { cancel_ = true; }
bool Kernel::running() const { return running_; }
double Kernel::seconds() const { return seconds_; }
unsigned long long Kernel::packetsDone() const { return packetsDone_; }
std::string Kernel::device() const { return device_; }
void Kernel::devices(const std::string& list) {
    notRunning("devices");
    if (device_ != "cuda")
        throw ParameterError(className_ + " devices: only the TetraCUDA* kernels run on GPUs (this one runs on the CPU)");
    opt_.devices = fmtcl::parseDeviceList(list, className_ + " devices");
}
std::string Kernel::devices() const { return device_ == "cuda" ? fmtcl::formatDeviceList(opt_.devices) : ""; }
void Kernel::hybrid(bool on) {
    notRunning("hybrid");
    if (on && device_ != "cuda")
        throw ParameterError(className_ + " hybrid: only the TetraCUDA* kernels run on GPUs and CPU threads together");
    hybrid_ = on;
}
bool Kernel::hybrid() const { return hybrid_; }
unsigned long long Kernel::cpuPacketsDone() const { return cpuPackets_.load(); }

// ---- Kernel: running ----

std::vector<uint32_t> Kernel::directedFaces(const fm::TetraMesh&) const { return {}; }

void Kernel::checkDevice() const {
    std::string why;
    if (device_ == "cuda" && !fm::cudaAvailable(&why))
        throw ParameterError(className_ + ": CUDA is not available: " + why);
}

std::shared_ptr<Kernel::Prepared> Kernel::prepare() const {
    checkRunnable();
    checkDevice();
    if (!mesh_) throw ParameterError(className_ + ": no geometry (call geometry with a TetraMesh first)");
    if (!materials_) throw ParameterError(className_ + ": no materials (call materials with a MaterialSet first)");
    if (!source_) throw ParameterError(className_ + ": no source (call source first)");
    auto p = std::make_shared<Prepared>();
    p->mesh = mesh_;
    p->mats = std::make_shared<fm::MaterialSet>(materials_->build(mesh_->unitDimension));
    std::vector<uint32_t> directed = directedFaces(*mesh_);
    p->in = packed_.pack(*mesh_, *p->mats, *source_, directed);
    fmtcl::reportWarnings(p->in->warnings);
    p->opt = opt_;
    p->opt.outputs = outputs_;
    p->opt.outputs.directed = !directed.empty();
    p->opt.outputs.gatedVolume = p->opt.gates.on() && outputs_.volume;
    p->opt.outputs.gatedSurface = p->opt.gates.on() && outputs_.surface;
    if (!gateRegions_.empty()) {
        if (!p->opt.outputs.gatedVolume)
            throw ParameterError(className_ + " timeGateRegions: needs timeGates and a volume tally");
        p->opt.gates.tetras = fm::gatedTetras(*p->in, gateRegions_, className_ + " timeGateRegions");
    }
    fm::validateRunOptions(p->opt);
    fm::checkGatedRun(*p->in, p->opt);
    return p;
}

// The tetra-mesh run. The raw result is collected into output items later, on the Tcl thread.
Kernel::Job Kernel::makeJob() const {
    std::shared_ptr<Prepared> p = prepare();
    const std::string kind = hybrid_ ? "hybrid" : device_;
    return [this, p, kind](const fm::RunOptions& o) {
        fm::RunOptions opt = p->opt;
        opt.progress = o.progress;
        opt.cancel = o.cancel;
        opt.tuning = o.tuning;
        auto r = std::make_shared<fm::RunResult>(fm::runKernel(kind, *p->in, opt));
        cpuPackets_ = r->cpuPackets;
        Outcome out;
        out.cancelled = r->cancelled;
        out.done = r->packetsDone;
        out.requested = r->packetsRequested;
        out.seconds = r->seconds;
        out.collect = [this, p, r] { return collect(*r, *p); };
        return out;
    };
}

void Kernel::launch(Job job) {
    if (worker_.joinable()) worker_.join();  // a finished run whose results were never fetched
    done_ = 0;
    total_ = opt_.packets;
    cancel_ = false;
    finished_ = false;
    error_ = nullptr;
    fm::RunOptions o = opt_;
    o.tuning = fm::tuningFromEnvironment();
    o.progress = [this](uint64_t d, uint64_t t) {
        done_ = d;
        total_ = t;
    };
    o.cancel = &cancel_;
    running_ = true;
    try {
        worker_ = std::thread([this, job, o] {
            try {
                outcome_ = job(o);
            } catch (...) {
                error_ = std::current_exception();
            }
            std::lock_guard<std::mutex> g(endMutex_);  // a runSync waiting on ended_ wakes now
            finished_ = true;
            running_ = false;
            ended_.notify_all();
        });
    } catch (const std::system_error& e) {  // process limits: no run, and the kernel stays usable
        running_ = false;
        throw fm::Error(std::string("cannot start the kernel's thread (") + e.what() +
                        "); the process may not have more threads (ulimit -u, ulimit -v or a container "
                        "limit)");
    }
}

void Kernel::startAsync() {
    notRunning("startAsync");
    launch(makeJob());  // model errors are raised here, before any thread starts
}

bool Kernel::done() const { return finished_ && !running_; }

double Kernel::progressFraction() const {
    if (done()) return 1.0;
    uint64_t t = total_;
    return t ? double(done_.load()) / double(t) : 0.0;
}

void Kernel::finishAsync() {
    if (!worker_.joinable()) throw ParameterError(className_ + " finishAsync: no run to finish (call startAsync first)");
    worker_.join();
    if (error_) {
        auto e = error_;
        error_ = nullptr;
        std::rethrow_exception(e);
    }
    Outcome out = std::move(outcome_);
    outcome_ = Outcome{};
    if (out.cancelled) {
        bool ctrlC = gInterrupted.exchange(false);
        throw fm::Error(className_ + ": run " + (ctrlC ? "interrupted (Ctrl-C)" : "cancelled") + " after " +
                        std::to_string(out.done) + " of " + std::to_string(out.requested) +
                        " packets; no results kept");
    }
    results_ = out.collect();
    seconds_ = out.seconds;
    packetsDone_ = out.done;
}

// Shows fm::ProgressBar on a terminal once a run has taken more than a second (short runs stay
// quiet), and turns Ctrl-C into a cancel.
void Kernel::waitWithProgress() {
    InterruptGuard guard;
    fm::ProgressBar bar(progress_);
    auto t0 = std::chrono::steady_clock::now();
    bool shown = false;
    std::unique_lock<std::mutex> lock(endMutex_);
    while (running_) {
        // Woken when the run ends (a short run returns at once), else every 50 ms for Ctrl-C and
        // the progress bar.
        ended_.wait_for(lock, std::chrono::milliseconds(50), [this] { return !running_; });
        if (gInterrupted) cancel_ = true;
        if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(1) && running_) {
            bar(done_, total_);
            shown = true;
        }
    }
    if (shown && !cancel_) bar(total_, total_);
}

void Kernel::runSync() {
    startAsync();
    waitWithProgress();
    finishAsync();
}

std::shared_ptr<const OutputDataCollection::Items> Kernel::collect(const fm::RunResult& r, const Prepared& p) const {
    if (std::string w = fm::abnormalWarning(r.ledger); !w.empty()) fmtcl::reportWarnings({className_ + ": " + w});
    auto items = std::make_shared<OutputDataCollection::Items>();
    items->push_back(std::make_shared<MCEventCounts>(r.events));
    items->push_back(std::make_shared<ConservationCounts>(r.ledger, r.standardError));
    addMaps(*items, r, p);
    return items;
}

void Kernel::addMaps(OutputDataCollection::Items& items, const fm::RunResult& r, const Prepared& p) const {
    const fm::TallyErrors& se = r.standardError;
    if (outputs_.volume)
        items.push_back(std::make_shared<SpatialMap>(
            makeMap("VolumeEnergy", "Volume", r.volume, p, r.packetsDone, se.volume, se.batches)));
    if (outputs_.surface)
        items.push_back(std::make_shared<SpatialMap>(
            makeMap("SurfaceExitEnergy", "Surface", r.surface, p, r.packetsDone, se.surface, se.batches)));
    addGatedMaps(items, "VolumeEnergy", "Volume", r.gatedVolume, se.gatedVolume, r, p);
    addGatedMaps(items, "SurfaceExitEnergy", "Surface", r.gatedSurface, se.gatedSurface, r, p);
}

// A gated tally as one map per bin: <name>Gate<k> for gate k, <name>GateEarly and
// <name>GateLate for what arrived before the first and after the last gate.
void Kernel::addGatedMaps(OutputDataCollection::Items& items, const std::string& name, const std::string& type,
                          const std::vector<double>& gated, const std::vector<double>& se, const fm::RunResult& r,
                          const Prepared& p) const {
    if (gated.empty() || !r.gates.on()) return;
    const fm::TimeGates& g = r.gates;
    // Per-region gating of the volume tally: each bin spread over every cell (0 outside the regions).
    auto slice = [&](const std::vector<double>& v, uint32_t b) { return fmtcl::gatedBin(v, g, b, type == "Volume"); };
    for (uint32_t b = 0; b < g.bins(); ++b) {
        const std::string suffix = b < g.count ? std::to_string(b) : b == g.earlyBin() ? "Early" : "Late";
        items.push_back(std::make_shared<SpatialMap>(makeMap(name + "Gate" + suffix, type, slice(gated, b), p,
                                                             r.packetsDone, slice(se, b), r.standardError.batches)));
    }
}

OutputDataCollection* Kernel::results() const { return new OutputDataCollection(results_); }

// ---- the kernel classes ----

namespace {
fm::OutputSelection sel(bool v, bool s) {
    fm::OutputSelection o;
    o.volume = v;
    o.surface = s;
    o.directed = false;
    return o;
}
}  // namespace

TetraVolumeKernel::TetraVolumeKernel() : TetraVolumeKernel("TetraVolumeKernel", "cpu") {}
TetraVolumeKernel::TetraVolumeKernel(std::string n, std::string d) : Kernel(std::move(n), std::move(d), sel(true, false)) {}
TetraSurfaceKernel::TetraSurfaceKernel() : TetraSurfaceKernel("TetraSurfaceKernel", "cpu") {}
TetraSurfaceKernel::TetraSurfaceKernel(std::string n, std::string d) : Kernel(std::move(n), std::move(d), sel(false, true)) {}
TetraSVKernel::TetraSVKernel() : TetraSVKernel("TetraSVKernel", "cpu") {}
TetraSVKernel::TetraSVKernel(std::string n, std::string d) : Kernel(std::move(n), std::move(d), sel(true, true)) {}
TetraInternalKernel::TetraInternalKernel() : TetraInternalKernel("TetraInternalKernel", "cpu") {}
TetraInternalKernel::TetraInternalKernel(std::string n, std::string d)
    : Kernel(std::move(n), std::move(d), sel(true, true)), regions_(std::make_shared<std::vector<unsigned>>()) {}

TetraCUDAVolumeKernel::TetraCUDAVolumeKernel() : TetraVolumeKernel("TetraCUDAVolumeKernel", "cuda") {}
TetraCUDASurfaceKernel::TetraCUDASurfaceKernel() : TetraSurfaceKernel("TetraCUDASurfaceKernel", "cuda") {}
TetraCUDASVKernel::TetraCUDASVKernel() : TetraSVKernel("TetraCUDASVKernel", "cuda") {}
TetraCUDAInternalKernel::TetraCUDAInternalKernel() : TetraInternalKernel("TetraCUDAInternalKernel", "cuda") {}

// SV: the directed tally on every face between two different regions (FullMonte's faces "for
// fluence counting"), as one map indexed 2*face + side (side 0: leaving the face's owner tetra).
std::vector<uint32_t> TetraSVKernel::directedFaces(const fm::TetraMesh& m) const {
    if (directedMesh_ != m.identity()) {
        directed_.clear();
        for (uint32_t i = 1; i <= m.faceCount(); ++i) {
            const fm::MeshFace& F = m.face(i);
            if (F.other && m.region(F.owner) != m.region(F.other)) directed_.push_back(i);
        }
        directedMesh_ = m.identity();
    }
    return directed_;
}

void TetraSVKernel::addMaps(OutputDataCollection::Items& items, const fm::RunResult& r, const Prepared& p) const {
    Kernel::addMaps(items, r, p);
    std::vector<double> d = r.directed;
    if (d.empty()) d.assign(2 * (p.mesh->faceCount() + 1), 0.0);
    items.push_back(std::make_shared<SpatialMap>(makeMap("DirectedSurfaceEnergy", "DirectedSurface", d, p, r.packetsDone,
                                                         r.standardError.directed, r.standardError.batches)));
}

DirectedSurfaceScorer* TetraInternalKernel::directedSurfaceScorer() const { return new DirectedSurfaceScorer(regions_); }
void TetraInternalKernel::addScoringRegionBoundary(VolumeCellInRegionPredicate* p) {
    DirectedSurfaceScorer(regions_).addScoringRegionBoundary(p);
}
void TetraInternalKernel::clearScoringRegionBoundaries() { regions_->clear(); }

std::vector<uint32_t> TetraInternalKernel::directedFaces(const fm::TetraMesh& m) const {
    std::set<uint32_t> f;
    for (unsigned r : *regions_)
        for (auto [face, tetra] : m.regionBoundary(r)) f.insert(face);
    return {f.begin(), f.end()};
}

void TetraInternalKernel::addMaps(OutputDataCollection::Items& items, const fm::RunResult& r, const Prepared& p) const {
    Kernel::addMaps(items, r, p);
    for (unsigned reg : *regions_) {
        auto d = std::make_shared<DirectedSurface::Data>();
        d->region = reg;
        std::vector<double> directed(2 * (size_t(p.mesh->faceCount()) + 1), 0.0);
        const std::vector<double>& seAll = r.standardError.directed;
        std::vector<double> se(seAll.empty() ? 0 : directed.size(), 0.0);
        for (auto [f, inside] : p.mesh->regionBoundary(reg)) {
            // The tally's side bit is that of the tetra being left: entering the region leaves
            // the tetra outside it.
            size_t in = enteringIndex(*p.mesh, f, inside);
            size_t out = in ^ 1u;
            d->faces.push_back(f);
            d->in.push_back(in < r.directed.size() ? r.directed[in] : 0.0);
            d->out.push_back(out < r.directed.size() ? r.directed[out] : 0.0);
            directed[in] = d->in.back();
            directed[out] = d->out.back();
            if (!se.empty()) {
                se[in] = in < seAll.size() ? seAll[in] : 0.0;
                se[out] = out < seAll.size() ? seAll[out] : 0.0;
            }
        }
        auto m = std::make_shared<MapData>(*makeMap("DirectedSurfaceEnergy", "DirectedSurface", std::move(directed), p,
                                                    r.packetsDone, std::move(se), r.standardError.batches));
        m->region = reg;
        d->map = m;
        items.push_back(std::make_shared<DirectedSurface>(d));
    }
}

void DirectedSurfaceScorer::addScoringRegionBoundary(VolumeCellInRegionPredicate* p) {
    unsigned r = fmtcl::need(p, "addScoringRegionBoundary").region();
    if (!r) throw ParameterError("addScoringRegionBoundary: the predicate's region is 0 (call setRegion first)");
    r_->push_back(r);
}
unsigned DirectedSurfaceScorer::count() const { return unsigned(r_->size()); }

bool FullMonte_cudaAvailable() { return fm::cudaAvailable(); }
std::string FullMonte_cudaStatus() {
    std::string why;
    return fm::cudaAvailable(&why) ? "available" : why;
}
unsigned FullMonte_hardwareThreads() {
    unsigned n = std::thread::hardware_concurrency();
    return n ? n : 1;
}
