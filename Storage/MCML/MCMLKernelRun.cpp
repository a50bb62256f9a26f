// SPDX-License-Identifier: GPL-3.0-or-later
// MCML's files through the MCML kernels: a .mci run as the kernels' input (the layered model,
// the grid, the roulette constants) and their raw tallies as MCML's outputs (.mco content, cm
// units). The kernels and the geometry never see the file types.
#include "Storage/MCML/MCMLKernelRun.hpp"

#include <cmath>

#include "Common/Errors.hpp"
#include "Kernels/BatchMeans.hpp"
#include "Kernels/Dispatch.hpp"
#include "Kernels/McmlRecords.hpp"

namespace fm {
namespace {

constexpr double kPi = 3.14159265358979323846;

// MCML's grid as cm and counts (the normalisations work in the .mco's units).
struct GridCm {
    double dz, dr, da;
    size_t nz, nr, na;
    explicit GridCm(const MCMLRun& r)
        : dz(r.dz), dr(r.dr), da(kPi / (2.0 * r.na)), nz(r.nz), nr(r.nr), na(r.na) {}
    double annulus(size_t ir) const { return 2 * kPi * (ir + 0.5) * dr * dr; }  // exact ring area
    double angle(size_t ia) const { return (ia + 0.5) * da; }
    // Exact solid angle of the ring of exit angles [a - da/2, a + da/2]: MCML 1.2's Rd_ra and
    // Tt_ra divide by it (its 4 pi^2 dr^2 (ir+0.5) sin(2a) sin(da/2) is 2 pi r dr cos(a) times it).
    double solidAngle(size_t ia) const { return 4 * kPi * std::sin(angle(ia)) * std::sin(da / 2); }
    // The solid angle MCML 1.2 divides Rd_a and Tt_a by, 2 pi sin(a) da: with one bin 11% more
    // than the exact one, with 30 bins 1.1e-4 more. Kept so that the files match MCML's.
    double mcmlSolidAngle(size_t ia) const { return 2 * kPi * std::sin(angle(ia)) * da; }
};

// Rd_ra or Tt_ra and their marginals as MCML 1.2 scales them: the 2-D array per area, solid angle
// and cos(a) (radiance-like), r per annulus area, a per MCML's solid angle, total per photon.
void exitOutputs(const std::vector<double>& raw, const GridCm& g, double N, std::vector<double>& ra,
                 std::vector<double>& r, std::vector<double>& a, double& total) {
    ra.assign(g.nr * g.na, 0.0);
    r.assign(g.nr, 0.0);
    a.assign(g.na, 0.0);
    total = 0;
    for (size_t ir = 0; ir < g.nr; ++ir)
        for (size_t ia = 0; ia < g.na; ++ia) {
            double w = raw[ir * g.na + ia];
            ra[ir * g.na + ia] = w / (g.annulus(ir) * g.solidAngle(ia) * std::cos(g.angle(ia)) * N);
            r[ir] += w;
            a[ia] += w;
            total += w;
        }
    for (size_t ir = 0; ir < g.nr; ++ir) r[ir] /= g.annulus(ir) * N;
    for (size_t ia = 0; ia < g.na; ++ia) a[ia] /= g.mcmlSolidAngle(ia) * N;
    total /= N;
}

// A_rz per volume of its ring, A_z per dz, A per photon. A_l comes from the exact per-layer
// (per-cell) absorption, so it is right even where the grid does not reach or a bin straddles
// two layers; where MCML's grid resolves the layers the two agree.
void absorptionOutputs(const McmlTallies& t, const GridCm& g, double N, MCMLResult& res) {
    res.A_rz.assign(g.nr * g.nz, 0.0);
    res.A_z.assign(g.nz, 0.0);
    res.A = 0;
    for (size_t ir = 0; ir < g.nr; ++ir)
        for (size_t iz = 0; iz < g.nz; ++iz) {
            double w = t.absorbedRZ[ir * g.nz + iz];
            res.A_rz[ir * g.nz + iz] = w / (g.annulus(ir) * g.dz * N);
            res.A_z[iz] += w;
            res.A += w;
        }
    for (double& v : res.A_z) v /= g.dz * N;
    res.A /= N;
    res.A_l.assign(res.run.layers.size(), 0.0);
    for (size_t l = 0; l < res.A_l.size(); ++l) res.A_l[l] = t.absorbedCell.at(layerCell(l)) / N;
}


// Every value of an MCML result in one list (MCMLResult's order), and back: the batch means
// treat them alike.
template <class Result, class Visit>
void forEachValue(Result& r, Visit visit) {
    for (auto* x : {&r.Rd, &r.A, &r.Tt}) visit(*x);
    for (auto* v : {&r.A_l, &r.A_z, &r.Rd_r, &r.Rd_a, &r.Tt_r, &r.Tt_a, &r.A_rz, &r.Rd_ra, &r.Tt_ra})
        for (auto& x : *v) visit(x);
}
std::vector<double> valuesOf(const MCMLResult& r) {
    std::vector<double> v;
    forEachValue(r, [&](const double& x) { v.push_back(x); });
    return v;
}

void addTallies(McmlTallies& into, const McmlTallies& t) {
    auto add = [](std::vector<double>& a, const std::vector<double>& b) {
        if (a.empty()) a = b;
        else for (size_t i = 0; i < a.size(); ++i) a[i] += b[i];
    };
    add(into.absorbedRZ, t.absorbedRZ);
    add(into.reflectedRA, t.reflectedRA);
    add(into.transmittedRA, t.transmittedRA);
    add(into.absorbedCell, t.absorbedCell);
    add(into.reflectedRT, t.reflectedRT);
    add(into.transmittedRT, t.transmittedRT);
    add(into.absorbedZT, t.absorbedZT);
    into.gates = t.gates;
    into.ledger.add(t.ledger);
    into.events.add(t.events);
    into.packetsDone += t.packetsDone;
    into.seconds += t.seconds;
    into.kernelSeconds += t.kernelSeconds;
    into.cancelled = into.cancelled || t.cancelled;
    into.kernel = t.kernel;
}

// A batch's detected weight per record detector W_j (n_j packets) into the batch means' sums
// of W_j^2 / n_j (Kernels/BatchMeans.hpp).
void addRecordSquares(std::vector<double>& q, const McmlTallies& t) {
    const std::vector<double>& W = t.records.detectedWeight;
    if (t.packetsDone == 0) return;
    q.resize(W.size(), 0.0);
    for (size_t d = 0; d < W.size(); ++d) q[d] += W[d] * W[d] / double(t.packetsDone);
}

// MCML's batches: on the GPU each is a whole kernel run with its set-up and drain
// (docs/PERFORMANCE.md), so the GPU batches only when asked.
uint64_t mcmlBatches(const RunOptions& opt, const std::string& kernel) {
    if (kernel == "cuda" && opt.batches == 0) return 1;
    return effectiveBatches(opt);
}

}  // namespace

LayeredModel layeredFromMcml(const MCMLRun& run) {
    LayeredModel m;
    m.nAbove = run.nAbove;
    m.nBelow = run.nBelow;
    for (const MCMLLayer& l : run.layers)  // cm -> mm: lengths x10, coefficients /10
        m.layers.push_back(Layer{l.n, l.mua / 10, l.mus / 10, l.g, l.d * 10});
    return m;
}

McmlGrid mcmlGrid(const MCMLRun& run) {
    if (!(run.dz > 0 && run.dr > 0 && run.nz >= 1 && run.nr >= 1 && run.na >= 1))
        throw ParameterError("MCML grid needs dz, dr > 0 and nz, nr, na >= 1");
    McmlGrid g;
    g.invDz = float(1.0 / (run.dz * 10));  // cm -> mm
    g.invDr = float(1.0 / (run.dr * 10));
    g.invDa = float(2.0 * run.na / kPi);
    g.nz = run.nz;
    g.nr = run.nr;
    g.na = run.na;
    g.topFace = kLayeredTopFace;
    return g;
}

RunOptions mcmlRunOptions(const MCMLRun& run) {
    RunOptions o;
    o.packets = run.photons;
    o.params.wmin = float(run.wth);
    o.params.prwin = float(run.chance);
    return o;
}

double mcoFileBytes(const MCMLRun& run) {
    const double values = double(run.nr) * run.nz + 2.0 * double(run.nr) * run.na + run.nz + 2.0 * (run.nr + run.na) +
                          double(run.layers.size());
    return 14.0 * values + 4096.0;
}

MCMLResult mcmlResult(const McmlTallies& t, const MCMLRun& run, double Rsp) {
    if (t.packetsDone == 0) throw ParameterError("MCML result: no packets were run");
    MCMLResult res;
    res.run = run;
    res.run.photons = t.packetsDone;  // the .mco echoes the photons actually behind the numbers
    res.userTime = t.seconds;
    res.Rsp = Rsp;
    const GridCm g(run);
    const double N = double(t.packetsDone);
    absorptionOutputs(t, g, N, res);
    exitOutputs(t.reflectedRA, g, N, res.Rd_ra, res.Rd_r, res.Rd_a, res.Rd);
    exitOutputs(t.transmittedRA, g, N, res.Tt_ra, res.Tt_r, res.Tt_a, res.Tt);
    return res;
}

MCMLResult runMcml(const std::string& kernel, const LayeredModel& model, const MCMLRun& run,
                   const RunOptions& opt, McmlTallies* raw) {
    if (model.layers.size() != run.layers.size())
        throw ParameterError("MCML run has " + std::to_string(run.layers.size()) +
                             " layers but the model has " + std::to_string(model.layers.size()));
    KernelInput in = packLayered(model);
    const double Rsp = specularReflectance(model);
    if (mcmlBatches(opt, kernel) > 1) return runMcmlBatches(kernel, in, run, Rsp, opt, raw);
    McmlTallies t = runMcmlKernel(kernel, in, mcmlGrid(run), opt);
    MCMLResult res = mcmlResult(t, run, Rsp);
    if (raw) *raw = std::move(t);
    return res;
}

// The run as B contiguous packet-index batches, each a kernel run whose MCML result (every value
// a linear function of its tallies, divided by its packets n_j) is folded as n_j * value: the
// batch means of Kernels/BatchMeans.hpp over every output, marginals and totals included. The
// result is that of the summed tallies.
MCMLResult runMcmlBatches(const std::string& kernel, const KernelInput& in, const MCMLRun& run, double Rsp,
                          const RunOptions& opt, McmlTallies* raw) {
    validateRunOptions(opt);  // names a batch count above the packets
    const uint64_t B = mcmlBatches(opt, kernel), N = opt.packets;
    const McmlGrid grid = mcmlGrid(run);
    McmlTallies total;
    std::vector<double> q, qRecords;  // qRecords: of the detected weight per record detector
    for (uint64_t j = 0; j < B && !total.cancelled; ++j) {
        auto at = [&](uint64_t k) { return uint64_t((unsigned __int128)N * k / B); };
        RunOptions part = opt;
        part.firstPacket = opt.firstPacket + at(j);
        part.packets = at(j + 1) - at(j);
        part.batches = 1;
        const uint64_t before = total.packetsDone;
        if (opt.progress) part.progress = [&, before](uint64_t d, uint64_t) { opt.progress(before + d, N); };
        McmlTallies t = runMcmlKernel(kernel, in, grid, part);
        if (t.packetsDone == part.packets) {
            const double n = double(t.packetsDone);
            const std::vector<double> y = valuesOf(mcmlResult(t, run, Rsp));
            q.resize(y.size(), 0.0);
            for (size_t i = 0; i < y.size(); ++i) q[i] += n * y[i] * y[i];  // (n y)^2 / n
        }
        if (opt.detection && opt.detection->active()) {
            addRecordSquares(qRecords, t);
            appendRecords(total.records, t.records, opt.detection->maxRecords);
        }
        addTallies(total, t);
    }
    total.packetsRequested = N;
    MCMLResult res = mcmlResult(total, run, Rsp);
    if (!total.cancelled && total.packetsDone == N) {
        auto se = std::make_shared<MCMLResult>(res);
        se->Rsp = 0;
        size_t i = 0;
        forEachValue(*se, [&](double& x) {
            x = batchTotalError(q[i++], double(N) * x, N, B) / double(N);
        });
        res.standardError = se;
        res.batches = B;
        if (!qRecords.empty())
            total.records.detectedWeightError = batchTotalErrors(qRecords, total.records.detectedWeight, N, B);
    }
    if (raw) *raw = std::move(total);
    return res;
}

}  // namespace fm
