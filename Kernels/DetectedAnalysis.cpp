// SPDX-License-Identifier: GPL-3.0-or-later
// What detected-packet records give without a rerun: the detector TPSF, reweighting to other
// absorption coefficients, and the per-region mu_a Jacobian.
//
// Why reweighting is exact in expectation (mu_s, g and n held): a packet's history is a path
// of k interaction points with segment lengths l_i in regions of mu_t = mu_a + mu_s. The loop
// draws each segment with density mu_t exp(-mu_t l) (the last, to the exit, with probability
// exp(-mu_t l)) and multiplies the weight by mu_s / mu_t at each interaction (the implicit
// capture drop of 1 - mu_a/mu_t). Density times weight is then prod_i mu_s exp(-mu_t l_i) =
// mu_s^k exp(-mu_s L) exp(-sum_r mu_a,r L_r): mu_a enters only through the last factor, so
// changing mu_a to mu_a' multiplies each path's contribution by exp(-sum_r (mu_a'_r - mu_a_r)
// L_r), whatever path was drawn. Fresnel choices depend on n and direction only, and Russian
// roulette multiplies the weight by a factor of mean 1 drawn independently of what follows, so
// neither changes the expectation. The reweighted estimate is unbiased for the new mu_a; its
// variance grows with |mu_a' - mu_a| (paths the old mu_a made rare carry large factors).
#include <cmath>

#include "Common/Errors.hpp"
#include "Kernels/Detection.hpp"

namespace fm {

std::vector<double> detectorTpsf(const DetectedPackets& dp, uint32_t d, const TimeGates& gates) {
    if (!gates.on()) throw ParameterError("detector TPSF: no time gates given");
    if (d >= dp.detectors.size())
        throw ParameterError("detector " + std::to_string(d) + " does not exist (" +
                             std::to_string(dp.detectors.size()) + " detectors)");
    std::vector<double> h(gates.count, 0.0);
    for (const DetectedRecord& rec : dp.records) {
        if (rec.detector != d || !(rec.time >= gates.startNs) || !(rec.time < gates.stopNs)) continue;
        const size_t i = std::min<size_t>(size_t((rec.time - gates.startNs) / gates.stepNs), h.size() - 1);
        h[i] += rec.weight;
    }
    return h;
}

std::vector<double> reweightedWeights(const DetectedPackets& dp, const std::vector<double>& muaNew) {
    if (muaNew.size() != dp.regions || dp.mua.size() != dp.regions)
        throw ParameterError("reweighting: " + std::to_string(muaNew.size()) + " absorption coefficients given, the records have " +
                             std::to_string(dp.regions) + " regions");
    std::vector<double> delta(dp.regions);
    for (uint32_t r = 0; r < dp.regions; ++r) {
        if (!(muaNew[r] >= 0 && std::isfinite(muaNew[r])))
            throw ParameterError("reweighting: mu_a of region " + std::to_string(r + 1) +
                                 " must be finite and >= 0 /mm, got " + std::to_string(muaNew[r]));
        delta[r] = muaNew[r] - dp.mua[r];
    }
    std::vector<double> w(dp.records.size());
    for (size_t k = 0; k < w.size(); ++k) {
        const float* L = dp.path(k);
        double e = 0;
        for (uint32_t r = 0; r < dp.regions; ++r) e += delta[r] * L[r];
        w[k] = dp.records[k].weight * std::exp(-e);
    }
    return w;
}

std::vector<double> detectedSignal(const DetectedPackets& dp, const std::vector<double>* weights) {
    if (weights && weights->size() != dp.records.size())
        throw ParameterError("detected signal: " + std::to_string(weights->size()) + " weights for " +
                             std::to_string(dp.records.size()) + " records");
    std::vector<double> s(dp.detectors.size(), 0.0);
    for (size_t k = 0; k < dp.records.size(); ++k) {
        const uint32_t d = dp.records[k].detector;
        if (d < s.size()) s[d] += weights ? (*weights)[k] : dp.records[k].weight;
    }
    return s;
}

std::vector<double> regionJacobian(const DetectedPackets& dp) {
    std::vector<double> J(dp.detectors.size() * dp.regions, 0.0);
    for (size_t k = 0; k < dp.records.size(); ++k) {
        const uint32_t d = dp.records[k].detector;
        if (d >= dp.detectors.size()) continue;
        const float* L = dp.path(k);
        for (uint32_t r = 0; r < dp.regions; ++r) J[d * dp.regions + r] -= double(dp.records[k].weight) * L[r];
    }
    return J;
}

}  // namespace fm
