// SPDX-License-Identifier: GPL-3.0-or-later
#include "Tcl/TclMCML.hpp"

#include <cmath>
#include <tuple>

#include "Geometry/Layered.hpp"
#include "Kernels/McmlRecords.hpp"
#include "Storage/Detected/DetectedFile.hpp"
#include "Storage/Detected/MchFile.hpp"
#include "Storage/MCML/MCMLKernelRun.hpp"
#include "Storage/MCML/MCIReader.hpp"
#include "Storage/MCML/MCOReader.hpp"
#include "Storage/MCML/MCOWriter.hpp"
#include "Tcl/TclDetected.hpp"
#include "Tcl/TclGeometry.hpp"
#include "Kernels/RunWarnings.hpp"
#include "Tcl/TclMeshCheck.hpp"
#include "Tcl/TclUtil.hpp"

using fm::ParameterError;

namespace {

std::string pair(double a, double b) {
    return fmtcl::formatList({a, b});
}

MapPtr mcmlMap(const std::string& name, const std::string& type, const std::vector<double>& v,
               std::vector<unsigned> dims, const std::string& unit, uint64_t packets,
               const std::vector<double>* se = nullptr, uint64_t batches = 0) {
    auto d = std::make_shared<MapData>();
    if (se) d->standardError = *se;
    d->batches = se ? batches : 0;
    d->name = name;
    d->spatialType = type;
    d->quantity = "MCML";
    d->unit = unit;
    d->values = v;
    d->dims = std::move(dims);
    d->packets = packets;
    return d;
}

// MCML's arrays as output items, in MCML's units (cm).
void addMcmlMaps(OutputDataCollection::Items& items, const MCMLResult& r, uint64_t packets) {
    unsigned nr = r.run.nr, nz = r.run.nz, na = r.run.na;
    // Each array's standard errors (MCMLResult::standardError) travel with it.
    const MCMLResult* e = r.standardError.get();
    using Array = std::vector<double> MCMLResult::*;
    auto add = [&](const std::string& n, const std::string& t, Array a, std::vector<unsigned> dims,
                   const std::string& u) {
        items.push_back(std::make_shared<SpatialMap>(
            mcmlMap(n, t, r.*a, std::move(dims), u, packets, e ? &(e->*a) : nullptr, r.batches)));
    };
    add("Absorption_rz", "Cylindrical", &MCMLResult::A_rz, {nr, nz}, "1/cm^3");
    add("Absorption_z", "Depth", &MCMLResult::A_z, {}, "1/cm");
    add("Absorption_l", "Layer", &MCMLResult::A_l, {}, "-");
    add("DiffuseReflectance_ra", "RadialAngular", &MCMLResult::Rd_ra, {nr, na}, "1/(cm^2 sr)");
    add("Reflectance_r", "Radial", &MCMLResult::Rd_r, {}, "1/cm^2");
    add("Reflectance_a", "Angular", &MCMLResult::Rd_a, {}, "1/sr");
    add("Transmission_ra", "RadialAngular", &MCMLResult::Tt_ra, {nr, na}, "1/(cm^2 sr)");
    add("Transmission_r", "Radial", &MCMLResult::Tt_r, {}, "1/cm^2");
    add("Transmission_a", "Angular", &MCMLResult::Tt_a, {}, "1/sr");
}

}  // namespace

// ---- Layer, Layered ----

Layer::Layer() : t_(std::make_shared<double>(0.0)) {}
Layer::Layer(double t) : Layer() { thickness(t); }
double Layer::thickness() const { return *t_; }
void Layer::thickness(double t) { *t_ = fmtcl::positive(t, "Layer thickness"); }

Layered::Layered() : d_(std::make_shared<Data>()) {}
void Layered::resolution(double dr, double dz) {
    d_->dr = fmtcl::positive(dr, "Layered resolution dr");
    d_->dz = fmtcl::positive(dz, "Layered resolution dz");
}
std::string Layered::resolution() const { return pair(d_->dr, d_->dz); }
void Layered::extent(double R, double Z) {
    d_->dr = fmtcl::positive(R, "Layered extent R") / d_->nr;
    d_->dz = fmtcl::positive(Z, "Layered extent Z") / d_->nz;
}
std::string Layered::extent() const { return pair(d_->dr * d_->nr, d_->dz * d_->nz); }
void Layered::dims(unsigned nr, unsigned nz) {
    if (!nr || !nz) throw ParameterError("Layered dims must be >= 1");
    d_->nr = nr;
    d_->nz = nz;
}
std::string Layered::dims() const { return std::to_string(d_->nr) + " " + std::to_string(d_->nz); }
void Layered::angularBins(unsigned na) {
    if (!na) throw ParameterError("Layered angularBins must be >= 1");
    d_->na = na;
}
unsigned Layered::angularBins() const { return d_->na; }
unsigned Layered::layerCount() const { return unsigned(d_->layers.size()); }
Layer* Layered::layer(unsigned i) const {
    if (i < 1 || i > d_->layers.size())
        throw ParameterError("Layered layer: index " + std::to_string(i) + " out of range (layers are 1.." +
                             std::to_string(d_->layers.size()) + ")");
    return new Layer(d_->layers[i - 1]);
}
void Layered::addLayer(Layer* l) { d_->layers.push_back(fmtcl::need(l, "Layered addLayer").data()); }

// ---- MCMLCase, MCMLInputReader ----

unsigned long long MCMLCase::packets() const { return r_->photons; }
double MCMLCase::rouletteThreshold() const { return r_->wth; }
std::string MCMLCase::outputFilename() const { return r_->outName; }

Layered* MCMLCase::geometry() const {
    auto d = std::make_shared<Layered::Data>();
    for (const MCMLLayer& l : r_->layers) d->layers.push_back(std::make_shared<double>(l.d * 10));  // cm -> mm
    d->dr = r_->dr * 10;
    d->dz = r_->dz * 10;
    d->nr = r_->nr;
    d->nz = r_->nz;
    d->na = r_->na;
    return new Layered(d);
}

MaterialSet* MCMLCase::materials() const {
    fm::MaterialSet ms;
    ms.exterior(fm::Material(0, 0, 0, r_->nAbove));
    for (const MCMLLayer& l : r_->layers) ms.append(fm::Material(l.mua / 10, l.mus / 10, l.g, l.n));  // 1/cm -> 1/mm
    ms.append(fm::Material(0, 0, 0, r_->nBelow));
    return new MaterialSet(ms);
}

void MCMLInputReader::read() {
    MCMLInput in = readMCI(need("MCMLInputReader read"));
    runs_.clear();
    for (auto& r : in.runs) runs_.push_back(std::make_shared<const MCMLRun>(r));
    cursor_ = 0;
}
unsigned MCMLInputReader::cases() const { return unsigned(runs_.size()); }
MCMLCase* MCMLInputReader::get(unsigned i) const {
    if (i >= runs_.size())
        throw ParameterError("MCMLInputReader get: case " + std::to_string(i) + " out of range (" +
                             std::to_string(runs_.size()) + " cases, 0-based; call read first)");
    return new MCMLCase(runs_[i]);
}
void MCMLInputReader::start() { cursor_ = 0; }
void MCMLInputReader::next() { ++cursor_; }
bool MCMLInputReader::done() const { return cursor_ >= runs_.size(); }
MCMLCase* MCMLInputReader::current() const { return get(cursor_); }

// ---- MCMLOutput and its reader and writer ----

std::string MCMLOutput::name() const { return "MCMLOutput"; }
std::string MCMLOutput::type() const { return "MCMLOutput"; }
double MCMLOutput::Rsp() const { return r_->Rsp; }
double MCMLOutput::Rd() const { return r_->Rd; }
double MCMLOutput::A() const { return r_->A; }
double MCMLOutput::Tt() const { return r_->Tt; }
double MCMLOutput::standardError(const std::string& what) const {
    const MCMLResult* e = r_->standardError.get();
    if (!e)
        throw ParameterError("MCMLOutput standardError: the run had no standard errors (batchCount 1); "
                             "run with batchCount >= 2");
    if (what == "Rd") return e->Rd;
    if (what == "A") return e->A;
    if (what == "Tt") return e->Tt;
    throw ParameterError("MCMLOutput standardError: '" + what + "' is not Rd, A or Tt (arrays: their maps' standardError)");
}
unsigned long long MCMLOutput::batchCount() const { return r_->standardError ? r_->batches : 0; }
unsigned MCMLOutput::layerCount() const { return unsigned(r_->A_l.size()); }
double MCMLOutput::layerAbsorption(unsigned i) const {
    if (i < 1 || i > r_->A_l.size())
        throw ParameterError("MCMLOutput layerAbsorption: layers are 1.." + std::to_string(r_->A_l.size()));
    return r_->A_l[i - 1];
}

void MCMLOutputReader::read() {
    auto r = std::make_shared<const MCMLResult>(readMCO(need("MCMLOutputReader read")));
    auto items = std::make_shared<OutputDataCollection::Items>();
    items->push_back(std::make_shared<MCMLOutput>(r));
    addMcmlMaps(*items, *r, r->run.photons);
    items_ = items;
}
OutputDataCollection* MCMLOutputReader::result() const {
    if (!items_) throw ParameterError("MCMLOutputReader result: call read first");
    return new OutputDataCollection(items_);
}

void MCMLOutputWriter::source(OutputData* d) {
    auto* o = dynamic_cast<MCMLOutput*>(&fmtcl::need(d, "MCMLOutputWriter source"));
    if (!o) throw ParameterError("MCMLOutputWriter source: expected the MCMLOutput item, got " + d->type());
    r_ = std::make_shared<const MCMLResult>(o->result());
}
void MCMLOutputWriter::write() {
    if (!r_) throw ParameterError("MCMLOutputWriter write: call source first");
    const std::string& path = need("MCMLOutputWriter write");
    if (r_->run.outName.empty()) {  // a run set up in Tcl has no .mci name: echo the file's own
        MCMLResult r = *r_;
        r.run.outName = path.substr(path.find_last_of('/') + 1);
        writeMCO(path, r);
    } else {
        writeMCO(path, *r_);
    }
}

// ---- MCMLKernel ----

MCMLKernel::MCMLKernel() : Kernel("MCMLKernel", "cpu", fm::OutputSelection{}) {
    rouletteWMin(1e-4);  // MCML's constants
    roulettePrWin(0.1);
}
void MCMLKernel::geometry(Layered* l) {
    notRunning("geometry");
    layered_ = fmtcl::need(l, "MCMLKernel geometry").data();
}
Layered* MCMLKernel::geometry() const {
    if (!layered_) throw ParameterError("MCMLKernel geometry: not set");
    return new Layered(layered_);
}

// The kernel's settings as an MCML run (cm, as the file format and MCML's normalisation use).
MCMLRun MCMLKernel::buildRun() const {
    if (!layered_) throw ParameterError("MCMLKernel: no geometry (call geometry with a Layered first)");
    if (!materialsPtr()) throw ParameterError("MCMLKernel: no materials (call materials with a MaterialSet first)");
    const Layered::Data& g = *layered_;
    fm::MaterialSet ms = materialsPtr()->build("mm");
    size_t L = g.layers.size();
    if (L == 0) throw fm::ModelError("MCMLKernel: the Layered geometry has no layers");
    if (ms.size() < L + 1)
        throw fm::ModelError("MCMLKernel: layer " + std::to_string(ms.size()) + " has no material (" +
                             std::to_string(ms.size() - 1) + " materials besides the exterior for " +
                             std::to_string(L) + " layers)");
    MCMLRun r;
    r.photons = options().packets;
    r.wth = rouletteWMin();
    r.chance = roulettePrWin();
    r.dr = g.dr / 10;
    r.dz = g.dz / 10;
    r.nr = g.nr;
    r.nz = g.nz;
    r.na = g.na;
    r.nAbove = ms.exterior().n;
    r.nBelow = ms.size() > L + 1 ? ms.material(L + 1).n : r.nAbove;
    for (size_t i = 1; i <= L; ++i) {
        const fm::Material& m = ms.material(i);
        r.layers.push_back(MCMLLayer{m.n, m.mu_a * 10, m.mu_s * 10, m.g, *g.layers[i - 1] / 10});
    }
    return r;
}

void MCMLKernel::keepRecords(bool on) {
    notRunning("keepRecords");
    keepRecords_ = on;
}
bool MCMLKernel::keepRecords() const { return keepRecords_; }
void MCMLKernel::maxDetected(double n) {
    notRunning("maxDetected");
    if (!(n >= 1 && n <= 1e12) || n != std::floor(n))
        throw ParameterError(className_ + " maxDetected: must be a whole number in [1, 1e12], got " + std::to_string(n));
    maxRecords_ = uint64_t(n);
}
unsigned long long MCMLKernel::maxDetected() const { return maxRecords_; }
void MCMLKernel::recordsRadius(double mm) {
    notRunning("recordsRadius");
    if (!(mm >= 0) || !std::isfinite(mm))
        throw ParameterError(className_ + " recordsRadius: must be finite and >= 0 mm (0: whole surfaces), got " +
                             std::to_string(mm));
    recordsRadius_ = mm;
}
const fm::DetectedPackets& MCMLKernel::records(const char* what) const {
    if (!*detected_)
        throw ParameterError(className_ + " " + what + ": no records (call keepRecords 1 and run the kernel first)");
    return **detected_;
}
DetectedPackets* MCMLKernel::detected() const {
    records("detected");
    return new DetectedPackets(*detected_);
}
unsigned long long MCMLKernel::detectedRecords() const { return records("detectedRecords").records.size(); }
unsigned long long MCMLKernel::detectedTotal() const { return records("detectedTotal").detected; }
void MCMLKernel::writeDetected(const std::string& path) const { fm::writeDetected(path, records("writeDetected")); }
void MCMLKernel::writeMch(const std::string& path) const { fm::writeMch(path, records("writeMch")); }

Kernel::Job MCMLKernel::makeJob() const {
    checkDevice();
    auto run = std::make_shared<const MCMLRun>(buildRun());
    auto model = std::make_shared<const fm::LayeredModel>(fm::layeredFromMcml(*run));
    model->validate();
    std::string dev = device_;
    std::shared_ptr<const fm::DetectionSpec> spec;
    if (keepRecords_) {
        spec = std::make_shared<const fm::DetectionSpec>(
            fm::layeredDetection(fm::packLayered(*model), maxRecords_, recordsRadius_));
    }
    *detected_ = nullptr;
    auto slot = detected_;
    return [run, model, dev, spec, slot](const fm::RunOptions& o) {
        fm::RunOptions opt = fm::mcmlRunOptions(*run);
        opt.params.seed = o.params.seed;
        opt.params.maxSteps = o.params.maxSteps;
        opt.params.maxHits = o.params.maxHits;
        opt.threads = o.threads;
        opt.batches = o.batches;
        opt.gates = o.gates;
        opt.progress = o.progress;
        opt.cancel = o.cancel;
        opt.tuning = o.tuning;
        opt.detection = spec.get();
        auto raw = std::make_shared<fm::McmlTallies>();
        auto res = std::make_shared<const MCMLResult>(fm::runMcml(dev, *model, *run, opt, raw.get()));
        if (spec && !raw->cancelled) *slot = std::make_shared<const fm::DetectedPackets>(std::move(raw->records));
        Outcome out;
        out.cancelled = raw->cancelled;
        out.done = raw->packetsDone;
        out.requested = raw->packetsRequested;
        out.seconds = raw->seconds;
        out.collect = [raw, res, run] {
            if (std::string w = fm::abnormalWarning(raw->ledger); !w.empty()) fmtcl::reportWarnings({"MCMLKernel: " + w});
            auto items = std::make_shared<OutputDataCollection::Items>();
            items->push_back(std::make_shared<MCEventCounts>(raw->events));
            items->push_back(std::make_shared<ConservationCounts>(raw->ledger));
            auto a = mcmlMap("CylAbsorbedEnergy", "Cylindrical", raw->absorbedRZ, {run->nr, run->nz}, "packet",
                             raw->packetsDone);
            items->push_back(std::make_shared<SpatialMap>(a));
            items->push_back(std::make_shared<MCMLOutput>(res));
            addMcmlMaps(*items, *res, raw->packetsDone);
            if (raw->gates.on()) {  // raw weights per time bin (gates, early, late) and radius / depth bin
                const unsigned bins = raw->gates.bins();
                for (auto [name, type, v, n] :
                     {std::tuple{"ReflectanceTime_rt", "RadialTime", &raw->reflectedRT, run->nr},
                      std::tuple{"TransmissionTime_rt", "RadialTime", &raw->transmittedRT, run->nr},
                      std::tuple{"AbsorptionTime_zt", "DepthTime", &raw->absorbedZT, run->nz}})
                    items->push_back(std::make_shared<SpatialMap>(mcmlMap(name, type, *v, {bins, n}, "packet", raw->packetsDone)));
            }
            return std::shared_ptr<const OutputDataCollection::Items>(items);
        };
        return out;
    };
}
