// SPDX-License-Identifier: GPL-3.0-or-later
// Dose-volume metrics of a plan with their Monte Carlo standard errors. Each source was simulated
// as K independent batches; the plan's dose from batch k alone is an estimate with 1/K of the
// packets, and the standard error of a metric of the mean dose is the batch-means estimate
// sd_k(metric of batch k's dose) / sqrt(K) (NaN when K = 1).
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "Geometry/Queries.hpp"

namespace fm::planning {

struct Estimate {
    double value = NAN, se = NAN;
};

struct RegionMetrics {
    uint32_t region = 0;
    std::string name, role;   // role: "target", "organ at risk", "other"
    double volume = 0;        // mm^3 (tetras with a defined dose)
    double threshold = NAN;   // J/cm^2 (targets and organs with one)
    Estimate D90, D50, D10, Dmax, Dmean, V100;  // J/cm^2; V100 as a fraction of the volume
};

// Volume fraction of a histogram at or above `dose`.
double volumeAtLeast(const DoseHistogram& h, double dose);
double meanDose(const DoseHistogram& h);
// The batch-means standard error of f over the batch doses (NaN for fewer than 2).
double batchStandardError(const std::vector<double>& perBatch);

RegionMetrics regionMetrics(const TetraMesh& mesh, const std::vector<double>& dose,
                            const std::vector<std::vector<double>>& batchDoses, uint32_t region, double threshold);

}  // namespace fm::planning
