// SPDX-License-Identifier: GPL-3.0-or-later
#include "Kernels/TimeGates.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <set>
#include <vector>

#include "Common/Errors.hpp"
#include "Kernels/KernelInput.hpp"
#include "Common/ResourceLimits.hpp"

namespace fm {
namespace {

std::string num(double x) {
    std::ostringstream o;
    o.precision(10);
    o << x;
    return o.str();
}

}  // namespace

TimeGates makeTimeGates(double startNs, double stopNs, double stepNs, const std::string& what) {
    const std::string p = what + ": ";
    if (!std::isfinite(startNs) || !std::isfinite(stopNs) || !std::isfinite(stepNs))
        throw ParameterError(p + "start, stop and step (ns) must be finite numbers");
    if (startNs < 0) throw ParameterError(p + "start must be >= 0 ns, got " + num(startNs));
    if (!(stepNs > 0)) throw ParameterError(p + "step must be > 0 ns, got " + num(stepNs));
    if (!(stopNs > startNs))
        throw ParameterError(p + "stop (" + num(stopNs) + " ns) must be after start (" + num(startNs) + " ns)");
    const double n = (stopNs - startNs) / stepNs;
    if (!(n <= kMaxTimeGates + 0.5))
        throw ParameterError(p + "(stop - start) / step = " + num(n) + " gates, more than the " +
                             std::to_string(kMaxTimeGates) + " allowed; use a larger step");
    const double k = std::round(n);
    if (k < 1 || std::fabs(n - k) > 1e-9 * std::max(1.0, k))
        throw ParameterError(p + "(stop - start) / step = " + num(n) +
                             " is not a whole number of gates; choose stop = start + a multiple of step");
    TimeGates g;
    g.startNs = startNs;
    g.stopNs = stopNs;
    g.stepNs = stepNs;
    g.count = uint32_t(k);
    return g;
}

TimeGates parseTimeGates(const std::string& text, const std::string& what) {
    std::string s = text;
    for (char& c : s)
        if (c == ',' || c == ':' || c == '\t') c = ' ';
    std::istringstream in(s);
    std::vector<double> v;
    for (std::string item; in >> item;) {
        char* end = nullptr;
        const double x = std::strtod(item.c_str(), &end);
        if (end == item.c_str() || *end)
            throw ParameterError(what + ": '" + item + "' is not a number (give START,STOP,STEP in ns)");
        v.push_back(x);
    }
    if (v.size() != 3)
        throw ParameterError(what + ": needs three numbers START,STOP,STEP (ns), got '" + text + "'");
    return makeTimeGates(v[0], v[1], v[2], what);
}

std::string describeTimeGates(const TimeGates& g) {
    if (!g.on()) return "off";
    return num(g.startNs) + ":" + num(g.stopNs) + ":" + num(g.stepNs) + " ns (" + std::to_string(g.count) +
           " gates)";
}

double gatedArrayBytes(const TimeGates& g, uint64_t elements) { return 8.0 * double(g.bins()) * double(elements); }

void checkGatedSize(const TimeGates& g, uint64_t elements, const std::string& what, const std::string& advice) {
    const double bytes = gatedArrayBytes(g, elements);
    if (bytes > kMaxGatedArrayBytes)
        throw ParameterError("time gates: " + what + " with " + std::to_string(g.count) + " gates (+2 bins before and after) needs " +
                             bytesText(bytes) + ", more than the " + bytesText(kMaxGatedArrayBytes) + " allowed; " + advice);
}

std::vector<double> gateBinTotals(const TimeGates& g, const std::vector<double>& gated) {
    if (gated.empty() || !g.on()) return {};
    const size_t stride = gated.size() / g.bins();
    std::vector<double> t(g.bins(), 0.0);
    for (uint32_t b = 0; b < g.bins(); ++b)
        for (size_t i = 0; i < stride; ++i) t[b] += gated[b * stride + i];
    return t;
}

std::vector<uint32_t> parseRegionList(const std::string& text, const std::string& what) {
    std::string t = text;
    for (char& c : t)
        if (c == ',') c = ' ';
    std::istringstream in(t);
    std::vector<uint32_t> v;
    for (std::string item; in >> item;) {
        char* end = nullptr;
        const unsigned long long x = std::strtoull(item.c_str(), &end, 10);
        if (end == item.c_str() || *end || item[0] == '-' || x > 0xffffffffull)
            throw ParameterError(what + ": '" + item + "' is not a region id (a whole number >= 0)");
        v.push_back(uint32_t(x));
    }
    if (v.empty()) throw ParameterError(what + ": needs at least one region id, got '" + text + "'");
    return v;
}

std::shared_ptr<const GatedTetras> gatedTetras(const std::vector<uint32_t>& cellRegion, std::vector<uint32_t> regions,
                                               const std::string& what) {
    if (regions.empty()) throw ParameterError(what + ": needs at least one region id");
    std::sort(regions.begin(), regions.end());
    for (size_t i = 1; i < regions.size(); ++i)
        if (regions[i] == regions[i - 1]) throw ParameterError(what + ": region " + std::to_string(regions[i]) + " is given twice");
    std::set<uint32_t> present(cellRegion.begin() + (cellRegion.empty() ? 0 : 1), cellRegion.end());
    for (uint32_t r : regions)
        if (!present.count(r)) {
            std::string ids;
            for (uint32_t p : present) ids += (ids.empty() ? "" : " ") + std::to_string(p);
            throw ParameterError(what + ": region " + std::to_string(r) + " has no tetras (the model's regions: " + ids + ")");
        }
    auto g = std::make_shared<GatedTetras>();
    g->regions = regions;
    g->slot.assign(cellRegion.size(), -1);
    g->cells.push_back(0);  // element 0: the dummy, as cell 0 of a full array
    for (size_t c = 1; c < cellRegion.size(); ++c)
        if (std::binary_search(regions.begin(), regions.end(), cellRegion[c])) {
            g->slot[c] = int32_t(g->cells.size());
            g->cells.push_back(uint32_t(c));
        }
    return g;
}

std::shared_ptr<const GatedTetras> gatedTetras(const KernelInput& in, std::vector<uint32_t> regions, const std::string& what) {
    std::vector<uint32_t> region(in.cells.size(), 0);
    for (size_t c = 1; c < in.cells.size(); ++c) region[c] = in.cells[c].material;
    return gatedTetras(region, std::move(regions), what);
}

std::shared_ptr<const GatedFaces> gatedExitFaces(const KernelInput& in) {
    auto g = std::make_shared<GatedFaces>();
    g->slot.assign(std::max<size_t>(in.faceCount, 1), -1);
    for (size_t c = 1; c < in.cells.size(); ++c)
        for (int i = 0; i < 4; ++i)
            if (isExterior(in.cells[c].adj[i])) {
                const uint32_t f = in.cells[c].face[i] & ~kFaceSideBit;
                if (f == 0 || f >= g->slot.size())
                    throw ModelError("cell " + std::to_string(c) + " face " + std::to_string(i) + ": face id " +
                                     std::to_string(f) + " outside the model's " + std::to_string(in.faceCount) +
                                     " face ids (a packed model whose face count does not match its cells)");
                g->slot[f] = 0;
            }
    g->faces.push_back(0);  // element 0: the dummy, as face 0 of a full array
    for (size_t f = 1; f < g->slot.size(); ++f)
        if (g->slot[f] == 0) {
            g->slot[f] = int32_t(g->faces.size());
            g->faces.push_back(uint32_t(f));
        }
    g->cellsIdentity = in.cellsIdentity;
    return g;
}

TimeGates withExitFaces(const KernelInput& in, TimeGates g) {
    const bool same = g.faces && g.faces->cellsIdentity != 0 && g.faces->cellsIdentity == in.cellsIdentity &&
                      g.faces->slot.size() == std::max<size_t>(in.faceCount, 1);
    if (!same) g.faces = gatedExitFaces(in);
    return g;
}

void checkGatedRun(const KernelInput& in, const RunOptions& opt) {
    const OutputSelection& o = opt.outputs;
    if (!o.gated()) return;
    if (!opt.gates.on())
        throw ParameterError("time-gated outputs need time gates: give the gates' start, stop and step in ns");
    if (opt.gates.tetras && opt.gates.tetras->slot.size() != in.cells.size())
        throw ParameterError("time gate regions: the map covers " + std::to_string(opt.gates.tetras->slot.size()) +
                             " cells, the model has " + std::to_string(in.cells.size()) + " (made for another mesh)");
    if (opt.gates.tetras && !o.gatedVolume)
        throw ParameterError("time gate regions choose the tetras of the gated volume tally, which this run does not keep");
    if (o.gatedVolume)
        checkGatedSize(opt.gates, gatedVolumeStride(opt.gates, in.cells.size()),
                       "the gated volume tally over " + std::to_string(gatedVolumeStride(opt.gates, in.cells.size()) - 1) +
                           " tetras",
                       opt.gates.tetras ? "use fewer gates (a larger step or a shorter window), fewer regions, or gate only the exit tally"
                                        : "use fewer gates (a larger step or a shorter window), gate only the chosen regions' tetras "
                                          "(--time-gate-regions), or gate only the exit tally");
    if (o.gatedSurface) {
        const TimeGates g = withExitFaces(in, opt.gates);
        checkGatedSize(g, gatedSurfaceStride(g),
                       "the gated exit tally over " + std::to_string(gatedSurfaceStride(g) - 1) + " exit faces",
                       "use fewer gates (a larger step or a shorter window)");
    }
}

}  // namespace fm
