// SPDX-License-Identifier: GPL-3.0-or-later
// MCML's time-resolved output (docs/TIME_DOMAIN.md "MCML"): fullmonte-mcml --time-gates writes
// NAME_time.txt beside each NAME.mco, holding per time bin the total Rd, Tt and A, and Rd(r, t),
// Tt(r, t) and A(z, t), each integrated over its bin and normalised per launched photon as the
// .mco's grids are (per cm^2 of annulus, per cm of depth).
#pragma once
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "Common/Errors.hpp"
#include "Kernels/McmlKernel.hpp"
#include "Storage/MCML/MCMLTypes.hpp"

namespace fm {

namespace mcmltime {

// The label, start and stop (ns) of time bin b: a gate's number, or early / late.
inline void binColumns(std::ostream& o, const TimeGates& g, uint32_t b) {
    if (b < g.count) o << b << ' ' << g.gateStart(b) << ' ' << g.gateStop(b);
    else if (b == g.earlyBin()) o << "early 0 " << g.startNs;
    else o << "late " << g.stopNs << " inf";
}

// One grid section: `rows` rows (radius or depth bins), one column per time bin, each value of
// the bin-major array `a` ([bin * rows + row]) times scale(row).
template <class Scale>
void gridSection(std::ostream& o, const char* title, const std::vector<double>& a, const TimeGates& g, size_t rows,
                 Scale scale) {
    o << "\n" << title << "\n";
    for (size_t i = 0; i < rows; ++i) {
        for (uint32_t b = 0; b < g.bins(); ++b) o << (b ? " " : "") << a[b * rows + i] * scale(i);
        o << "\n";
    }
}

}  // namespace mcmltime

// Writes t's time-resolved tallies (t.gates on) for `run`'s grid. Throws Error where t has none.
inline void writeMcmlTimeResolved(std::ostream& o, const McmlTallies& t, const MCMLRun& run) {
    using namespace mcmltime;
    const TimeGates& g = t.gates;
    const size_t nr = run.nr, nz = run.nz;
    if (!g.on() || t.reflectedRT.size() != g.bins() * nr || t.transmittedRT.size() != g.bins() * nr ||
        t.absorbedZT.size() != g.bins() * nz)
        throw Error("MCML time-resolved output: the run kept no time-resolved tallies for its grid");
    const double N = double(t.packetsDone ? t.packetsDone : 1);
    o.precision(9);
    o << "# FullMonte MCML time-resolved output (docs/TIME_DOMAIN.md \"MCML\")\n"
      << "# gates " << g.startNs << " " << g.stopNs << " " << g.stepNs << " ns: " << g.count
      << " gates, then the early bin (t < start) and the late bin (t >= stop)\n"
      << "# photons " << t.packetsDone << "; nr " << nr << " dr " << run.dr << " cm; nz " << nz << " dz "
      << run.dz << " cm\n"
      << "# every value is integrated over its time bin (divide by the step for per ns)\n"
      << "\nRAT_t  # bin t_start_ns t_stop_ns Rd Tt A: fractions of the launched photons\n";
    for (uint32_t b = 0; b < g.bins(); ++b) {
        double rd = 0, tt = 0, a = 0;
        for (size_t i = 0; i < nr; ++i) rd += t.reflectedRT[b * nr + i], tt += t.transmittedRT[b * nr + i];
        for (size_t i = 0; i < nz; ++i) a += t.absorbedZT[b * nz + i];
        binColumns(o, g, b);
        o << ' ' << rd / N << ' ' << tt / N << ' ' << a / N << "\n";
    }
    const double pi = 3.14159265358979323846;
    auto perArea = [&](size_t ir) { return 1.0 / (N * 2 * pi * (ir + 0.5) * run.dr * run.dr); };
    gridSection(o, "Rd_rt  # [1/cm2] nr rows (r = (ir + 0.5) dr), one column per time bin", t.reflectedRT, g, nr, perArea);
    gridSection(o, "Tt_rt  # [1/cm2] nr rows, one column per time bin", t.transmittedRT, g, nr, perArea);
    gridSection(o, "A_zt  # [1/cm] nz rows (z = (iz + 0.5) dz), one column per time bin", t.absorbedZT, g, nz,
                [&](size_t) { return 1.0 / (N * run.dz); });
}

}  // namespace fm
