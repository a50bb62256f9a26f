// SPDX-License-Identifier: GPL-3.0-or-later
// MCML's time-resolved tallies on the GPU (Kernels/CUDA/McmlCuda.cu with McmlTimeTally): the
// time bins sum to the GPU's CW MCML tallies, gating changes no history, and the per-bin Rd, Tt
// and A equal the CPU kernel's within statistics. Skips (with a message) when no GPU is present.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "Geometry/Layered.hpp"
#include "Kernels/McmlKernel.hpp"
#include "Storage/MCML/MCMLKernelRun.hpp"
#include "Tests/Kernels/McmlThreeLayers.hpp"
#include "Tests/TestUtil.hpp"

using namespace fm;
using fmtest::haveGpu;

namespace {

MCMLRun threeLayers() { return fmtest::threeMismatchedLayers(); }

RunOptions options(const MCMLRun& run, uint64_t packets, bool gated) {
    RunOptions o = mcmlRunOptions(run);
    o.packets = packets;
    o.params.seed = 17;
    if (gated) o.gates = makeTimeGates(0.002, 0.02, 0.002, "gates");
    return o;
}

// Per time bin, the sum over rows of a bin-major array [bin * rows + row].
std::vector<double> binTotals(const std::vector<double>& a, uint32_t bins) {
    const size_t rows = a.size() / bins;
    std::vector<double> t(bins, 0.0);
    for (uint32_t b = 0; b < bins; ++b)
        for (size_t i = 0; i < rows; ++i) t[b] += a[b * rows + i];
    return t;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cuda_mcml_time)

// The GPU's time bins hold its CW tallies (summed over angles / radii) to the rounding of the
// adds; the CW tallies with gates equal those without (same histories, atomics' order only).
BOOST_AUTO_TEST_CASE(gpu_bins_sum_to_cw_and_gating_changes_no_history) {
    if (!haveGpu()) return;
    const MCMLRun run = threeLayers();
    const KernelInput in = packLayered(layeredFromMcml(run));
    const McmlGrid grid = mcmlGrid(run);
    const McmlTallies g = runMcmlKernel("cuda", in, grid, options(run, 1000000, true));
    const McmlTallies cw = runMcmlKernel("cuda", in, grid, options(run, 1000000, false));
    BOOST_REQUIRE(g.gates.on());
    BOOST_REQUIRE_EQUAL(g.reflectedRT.size(), g.gates.bins() * run.nr);
    BOOST_REQUIRE_EQUAL(g.absorbedZT.size(), g.gates.bins() * run.nz);
    fmtest::checkSameEvents(g.events, cw.events);
    BOOST_CHECK_SMALL(fmtest::l1(g.reflectedRA, cw.reflectedRA), 1e-9);
    BOOST_CHECK_SMALL(fmtest::l1(g.absorbedRZ, cw.absorbedRZ), 1e-9);
    const double bound = 2.0 * double(g.events.absorb + g.events.exit) * DBL_EPSILON;
    size_t bad = 0;
    for (size_t ir = 0; ir < run.nr; ++ir) {
        double s = 0, c = 0, st = 0, ct = 0;
        for (uint32_t b = 0; b < g.gates.bins(); ++b) s += g.reflectedRT[b * run.nr + ir], st += g.transmittedRT[b * run.nr + ir];
        for (size_t a = 0; a < run.na; ++a) c += g.reflectedRA[ir * run.na + a], ct += g.transmittedRA[ir * run.na + a];
        if (std::fabs(s - c) > bound * c || std::fabs(st - ct) > bound * ct) ++bad;
    }
    for (size_t iz = 0; iz < run.nz; ++iz) {
        double s = 0, c = 0;
        for (uint32_t b = 0; b < g.gates.bins(); ++b) s += g.absorbedZT[b * run.nz + iz];
        for (size_t ir = 0; ir < run.nr; ++ir) c += g.absorbedRZ[ir * run.nz + iz];
        if (std::fabs(s - c) > bound * c) ++bad;
    }
    BOOST_CHECK_EQUAL(bad, 0u);
}

// Per time bin, Rd, Tt and A per photon of the GPU (1e6 photons) and the CPU (2e5, another seed)
// within 4 combined standard deviations. A photon's contribution x to a bin lies in [0, 1] (to
// roulette gains of about 1e-3), so its variance is at most E[x] = p: the bound sqrt(p / N) per
// kernel, with p the larger of the two estimates.
BOOST_AUTO_TEST_CASE(gpu_time_bins_equal_cpu) {
    if (!haveGpu()) return;
    const MCMLRun run = threeLayers();
    const KernelInput in = packLayered(layeredFromMcml(run));
    const McmlGrid grid = mcmlGrid(run);
    const double Ng = 1e6, Nc = 2e5;
    const McmlTallies g = runMcmlKernel("cuda", in, grid, options(run, uint64_t(Ng), true));
    RunOptions oc = options(run, uint64_t(Nc), true);
    oc.params.seed = 23;
    const McmlTallies c = runMcmlKernel("cpu", in, grid, oc);
    const uint32_t bins = g.gates.bins();
    auto check = [&](const std::vector<double>& ga, const std::vector<double>& ca, const char* what) {
        const std::vector<double> gt = binTotals(ga, bins), ct = binTotals(ca, bins);
        for (uint32_t b = 0; b < bins; ++b) {
            const double pg = gt[b] / Ng, pc = ct[b] / Nc;
            const double p = std::max(pg, pc), sd = std::sqrt(p / Ng + p / Nc) + 1e-12;
            BOOST_TEST_MESSAGE(what << " bin " << b << ": gpu " << pg << ", cpu " << pc << " (sd <= " << sd << ")");
            BOOST_CHECK_MESSAGE(std::fabs(pg - pc) <= 4 * sd, what << " bin " << b << ": gpu " << pg << " cpu " << pc);
        }
    };
    check(g.reflectedRT, c.reflectedRT, "Rd");
    check(g.transmittedRT, c.transmittedRT, "Tt");
    check(g.absorbedZT, c.absorbedZT, "A");
    double early = 0;
    for (size_t ir = 0; ir < run.nr; ++ir) early += g.reflectedRT[g.gates.earlyBin() * run.nr + ir];
    BOOST_CHECK_GT(early, 0);  // the bins are in use on both sides of the gates
}

BOOST_AUTO_TEST_SUITE_END()
