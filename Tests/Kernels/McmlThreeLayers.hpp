// SPDX-License-Identifier: GPL-3.0-or-later
// The three index-mismatched layers the MCML kernel tests run (time gates, records, CPU and GPU),
// in MCML's units (1/cm, cm): 0.25 cm of tissue between n = 1.0 above and 1.2 below.
#pragma once
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <vector>

#include "Kernels/Detection.hpp"
#include "Kernels/McmlKernel.hpp"
#include "Storage/MCML/MCMLKernelRun.hpp"
#include "Storage/MCML/MCMLTypes.hpp"

namespace fmtest {

inline MCMLRun threeMismatchedLayers() {
    MCMLRun r;
    r.outName = "t.mco";
    r.photons = 20000;
    r.dz = 0.01;
    r.dr = 0.02;
    r.nz = 30;
    r.nr = 25;
    r.na = 5;
    r.nAbove = 1.0;
    r.nBelow = 1.2;
    r.layers = {{1.4, 1, 100, 0.8, 0.05}, {1.33, 0.5, 50, 0.9, 0.1}, {1.45, 2, 80, 0.7, 0.1}};
    return r;
}

// The options of a records test's run: `packets` photons, 2 CPU threads, one batch, `seed`.
inline fm::RunOptions recordRunOptions(const MCMLRun& run, uint64_t packets, uint64_t seed) {
    fm::RunOptions o = fm::mcmlRunOptions(run);
    o.packets = packets;
    o.threads = 2;
    o.batches = 1;
    o.params.seed = seed;
    return o;
}

inline double sum(const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s;
}

// Per record detector of an MCML run (0 top, 1 bottom): the total of the records' weights w (or
// their own) and the variance of that total over photons (each photon gives at most one record
// per detector): sum w^2 - (sum w)^2 / N.
struct RecordSignal {
    double total[2] = {0, 0}, variance[2] = {0, 0};
};
inline RecordSignal signalOf(const fm::DetectedPackets& dp, const std::vector<double>* w = nullptr) {
    RecordSignal s;
    double s2[2] = {0, 0};
    for (size_t k = 0; k < dp.records.size(); ++k) {
        const double x = w ? (*w)[k] : dp.records[k].weight;
        s.total[dp.records[k].detector] += x;
        s2[dp.records[k].detector] += x * x;
    }
    for (int d = 0; d < 2; ++d) s.variance[d] = s2[d] - s.total[d] * s.total[d] / double(dp.packets);
    return s;
}

// The records of `base` reweighted to layer absorptions `mua` (1/mm) against those of `fresh`, a
// run at those mu_a with another seed: per surface within 4 combined standard deviations, and the
// change resolved (the unweighted base more than 5 away).
inline void checkReweightedMatchesFresh(const fm::DetectedPackets& base, const fm::DetectedPackets& fresh,
                                        const std::vector<double>& mua) {
    const std::vector<double> w = fm::reweightedWeights(base, mua);
    const RecordSignal a = signalOf(base, &w), b = signalOf(fresh), old = signalOf(base);
    for (int d = 0; d < 2; ++d) {
        const double z = (a.total[d] - b.total[d]) / std::sqrt(a.variance[d] + b.variance[d]);
        BOOST_TEST_MESSAGE("detector " << d << ": reweighted " << a.total[d] << ", fresh " << b.total[d] << ", z " << z);
        BOOST_CHECK_LT(std::fabs(z), 4.0);
        BOOST_CHECK_GT(std::fabs(old.total[d] - b.total[d]), 5.0 * std::sqrt(old.variance[d] + b.variance[d]));
    }
}

// The records' TPSF of the top surface (detectorTpsf) against the run's Rd(r, t) summed over its
// nr radii, gate by gate: equal up to the weight of the records whose time rounds across a gate
// edge; the gates hold more than half the top records' weight.
inline void checkTpsfMatchesGates(const fm::McmlTallies& t, size_t nr, const fm::TimeGates& gates) {
    const fm::DetectedPackets& dp = t.records;
    const std::vector<double> tpsf = fm::detectorTpsf(dp, 0, gates);
    for (uint32_t g = 0; g < gates.count; ++g) {
        double gated = 0, edge = 0;
        for (size_t ir = 0; ir < nr; ++ir) gated += t.reflectedRT[g * nr + ir];
        for (const fm::DetectedRecord& rec : dp.records)
            for (double x : {gates.startNs + g * gates.stepNs, gates.startNs + (g + 1) * gates.stepNs})
                if (rec.detector == 0 && std::fabs(rec.time - x) <= 1e-5 * x) edge += rec.weight;
        BOOST_CHECK_LE(std::fabs(tpsf[g] - gated), edge + 1e-12 * gated);
    }
    BOOST_CHECK_GT(sum(tpsf), 0.5 * signalOf(dp).total[0]);
}

}  // namespace fmtest
