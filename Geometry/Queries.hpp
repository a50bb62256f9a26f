// SPDX-License-Identifier: GPL-3.0-or-later
// Derived quantities from raw tallies. Raw energy is in units of launched packet weight; every
// function here states its unit. scale = source power (W) or energy (J) per packet = P / N.
#pragma once
#include <limits>
#include <vector>

#include "Geometry/MaterialSet.hpp"
#include "Geometry/TetraMesh.hpp"

namespace fm {

// What tetra t's absorbed energy is divided by for its fluence: V mu_a (mm^3/mm), or 0 where
// mu_a = 0 (fluence undefined there).
inline double fluenceDivisor(const TetraMesh& mesh, const MaterialSet& mats, uint32_t t) {
    const double mu_a = mats.material(mesh.region(t)).mu_a;
    return mu_a > 0 ? mesh.volume(t) * mu_a : 0.0;
}
// Fluence per tetra: E / (V mu_a) * scale, in [scale unit]/mm^2. NaN where mu_a = 0 (undefined:
// nothing is absorbed there, so absorbed energy says nothing about the fluence). Index 0 = 0.
std::vector<double> volumeFluence(const TetraMesh& mesh, const MaterialSet& mats,
                                  const std::vector<double>& energy, double scale);
// Exit fluence per face: E / area * scale, in [scale unit]/mm^2.
std::vector<double> surfaceFluence(const TetraMesh& mesh, const std::vector<double>& energy,
                                   double scale);

// Sum of a per-tetra quantity over a region (0 = all), optionally volume-weighted.
double regionSum(const TetraMesh& mesh, const std::vector<double>& perTetra, uint32_t region);

// Dose-volume histogram of one region: tetras sorted by dose, cumulative volume fraction that
// receives at least that dose. Undefined (NaN) doses are skipped and counted in `undefined`.
struct DoseHistogram {
    uint32_t region = 0;
    double totalVolume = 0;
    std::vector<double> dose;       // ascending
    std::vector<double> measure;    // volume of each element, same order
    std::vector<double> cmeasure;   // volume receiving >= dose[i]
    std::vector<double> cdf;        // cmeasure / totalVolume, non-increasing from 1
    size_t undefined = 0;
    // Dose received by at least fraction f of the volume (e.g. D90: f = 0.9); f outside [0, 1] is a
    // ParameterError.
    double doseAtFraction(double f) const;
    double meanDose() const;  // volume-weighted over defined doses (NaN for an empty region)
    double maxDose() const;   // NaN for an empty region
};
DoseHistogram doseHistogram(const TetraMesh& mesh, const std::vector<double>& dose, uint32_t region);
// The histogram of any elements given their dose and measure (volume, area); NaN doses are counted
// as undefined and left out.
DoseHistogram doseHistogramOf(uint32_t region, const std::vector<double>& dose, const std::vector<double>& measure);
std::vector<DoseHistogram> doseHistograms(const TetraMesh& mesh, const std::vector<double>& dose);

// Value of a per-tetra quantity at a point (NaN outside the mesh), and sampled along a segment
// (at most kMaxLineSamples samples: a larger count is a ParameterError, not minutes of point
// location and a list of gigabytes).
constexpr size_t kMaxLineSamples = 1000000;
double valueAt(const TetraMesh& mesh, const std::vector<double>& perTetra, const Point3& p);
std::vector<double> valuesAlong(const TetraMesh& mesh, const std::vector<double>& perTetra,
                                const Point3& a, const Point3& b, size_t samples);

}  // namespace fm
