// SPDX-License-Identifier: GPL-3.0-or-later
#include "Kernels/TimeGates.hpp"

#include <cmath>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "Common/Errors.hpp"
#include "Kernels/KernelInput.hpp"
#include "Kernels/ResourceLimits.hpp"

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

void checkGatedRun(const KernelInput& in, const RunOptions& opt) {
    const OutputSelection& o = opt.outputs;
    if (!o.gated()) return;
    if (!opt.gates.on())
        throw ParameterError("time-gated outputs need time gates: give the gates' start, stop and step in ns");
    if (o.gatedVolume)
        checkGatedSize(opt.gates, in.cells.size(),
                       "the gated volume tally over " + std::to_string(in.cells.size() - 1) + " tetras",
                       "use fewer gates (a larger step or a shorter window), or gate only the exit tally");
    if (o.gatedSurface)
        checkGatedSize(opt.gates, in.faceCount, "the gated exit tally over " + std::to_string(in.faceCount) + " faces",
                       "use fewer gates (a larger step or a shorter window)");
}

}  // namespace fm
