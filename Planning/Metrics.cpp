// SPDX-License-Identifier: GPL-3.0-or-later
#include "Planning/Metrics.hpp"

#include "Kernels/BatchMeans.hpp"

namespace fm::planning {

double volumeAtLeast(const DoseHistogram& h, double dose) {
    double v = 0;
    for (size_t i = 0; i < h.dose.size(); ++i)
        if (h.dose[i] >= dose) v += h.measure[i];
    return h.totalVolume > 0 ? v / h.totalVolume : NAN;
}

double meanDose(const DoseHistogram& h) {
    double s = 0;
    for (size_t i = 0; i < h.dose.size(); ++i) s += h.dose[i] * h.measure[i];
    return h.totalVolume > 0 ? s / h.totalVolume : NAN;
}

double batchStandardError(const std::vector<double>& x) { return batchMeanError(x); }

namespace {
struct Values {
    double D90, D50, D10, Dmax, Dmean, V100;
};
Values valuesOf(const DoseHistogram& h, double threshold) {
    if (h.dose.empty()) return {NAN, NAN, NAN, NAN, NAN, NAN};
    return {h.doseAtFraction(0.9), h.doseAtFraction(0.5), h.doseAtFraction(0.1), h.dose.back(), meanDose(h),
            std::isfinite(threshold) ? volumeAtLeast(h, threshold) : NAN};
}
}  // namespace

RegionMetrics regionMetrics(const TetraMesh& mesh, const std::vector<double>& dose,
                            const std::vector<std::vector<double>>& batchDoses, uint32_t region, double threshold) {
    RegionMetrics m;
    m.region = region;
    m.threshold = threshold;
    DoseHistogram h = doseHistogram(mesh, dose, region);
    m.volume = h.totalVolume;
    Values v = valuesOf(h, threshold);
    std::vector<Values> b;
    for (const auto& d : batchDoses) b.push_back(valuesOf(doseHistogram(mesh, d, region), threshold));
    auto est = [&](double value, double Values::*f) {
        std::vector<double> x;
        for (const Values& bv : b) x.push_back(bv.*f);
        return Estimate{value, batchStandardError(x)};
    };
    m.D90 = est(v.D90, &Values::D90);
    m.D50 = est(v.D50, &Values::D50);
    m.D10 = est(v.D10, &Values::D10);
    m.Dmax = est(v.Dmax, &Values::Dmax);
    m.Dmean = est(v.Dmean, &Values::Dmean);
    m.V100 = est(v.V100, &Values::V100);
    return m;
}

}  // namespace fm::planning
