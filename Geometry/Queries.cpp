// SPDX-License-Identifier: GPL-3.0-or-later
#include "Geometry/Queries.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "Common/Errors.hpp"
#include "Common/ParallelFor.hpp"

namespace fm {

std::vector<double> volumeFluence(const TetraMesh& mesh, const MaterialSet& mats,
                                  const std::vector<double>& energy, double scale) {
    if (energy.size() != mesh.tetraCount() + 1)
        throw ParameterError("volume energy has " + std::to_string(energy.size()) +
                             " entries, the mesh needs " + std::to_string(mesh.tetraCount() + 1));
    std::vector<double> phi(energy.size(), 0.0);
    parallelChunks(1, energy.size(), chunkCount(energy.size()), [&](unsigned, size_t lo, size_t hi) {
        for (size_t t = lo; t < hi; ++t) {
            const double d = fluenceDivisor(mesh, mats, uint32_t(t));
            phi[t] = d > 0 ? energy[t] * scale / d : std::numeric_limits<double>::quiet_NaN();
        }
    });
    return phi;
}

std::vector<double> surfaceFluence(const TetraMesh& mesh, const std::vector<double>& energy,
                                   double scale) {
    if (energy.size() != mesh.faceCount() + 1)
        throw ParameterError("surface energy has " + std::to_string(energy.size()) +
                             " entries, the mesh needs " + std::to_string(mesh.faceCount() + 1));
    std::vector<double> phi(energy.size(), 0.0);
    parallelChunks(1, energy.size(), chunkCount(energy.size()), [&](unsigned, size_t lo, size_t hi) {
        for (size_t f = lo; f < hi; ++f) phi[f] = energy[f] * scale / mesh.face(uint32_t(f)).area;
    });
    return phi;
}

double regionSum(const TetraMesh& mesh, const std::vector<double>& v, uint32_t region) {
    double s = 0;
    for (uint32_t t = 1; t < v.size() && t <= mesh.tetraCount(); ++t)
        if (region == 0 || mesh.region(t) == region) s += v[t];
    return s;
}

double DoseHistogram::doseAtFraction(double f) const {
    // Outside [0, 1] (or NaN) no element qualifies and the loop below would answer 0 or the
    // highest dose as if it were a D-value.
    if (!(f >= 0 && f <= 1))
        throw ParameterError("DoseHistogram doseAtFraction: fraction must be in [0, 1], got " + std::to_string(f));
    for (size_t i = dose.size(); i-- > 0;)
        if (cdf[i] >= f) return dose[i];
    return dose.empty() ? 0.0 : dose.front();
}

double DoseHistogram::meanDose() const {
    double s = 0;
    for (size_t i = 0; i < dose.size(); ++i) s += dose[i] * measure[i];
    return totalVolume > 0 ? s / totalVolume : std::numeric_limits<double>::quiet_NaN();
}

double DoseHistogram::maxDose() const {
    return dose.empty() ? std::numeric_limits<double>::quiet_NaN() : dose.back();
}

DoseHistogram doseHistogramOf(uint32_t region, const std::vector<double>& dose, const std::vector<double>& measure) {
    DoseHistogram h;
    h.region = region;
    std::vector<size_t> idx;
    for (size_t i = 0; i < dose.size() && i < measure.size(); ++i) {
        if (std::isnan(dose[i])) { ++h.undefined; continue; }
        idx.push_back(i);
    }
    std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return dose[a] < dose[b]; });
    for (size_t i : idx) {
        h.dose.push_back(dose[i]);
        h.measure.push_back(measure[i]);
        h.totalVolume += measure[i];
    }
    h.cmeasure.resize(idx.size());
    h.cdf.resize(idx.size());
    double acc = 0;
    for (size_t i = idx.size(); i-- > 0;) {
        acc += h.measure[i];
        h.cmeasure[i] = acc;
        h.cdf[i] = h.totalVolume > 0 ? acc / h.totalVolume : 0;
    }
    return h;
}

DoseHistogram doseHistogram(const TetraMesh& mesh, const std::vector<double>& dose, uint32_t region) {
    std::vector<double> d, v;
    for (uint32_t t = 1; t <= mesh.tetraCount() && t < dose.size(); ++t) {
        if (mesh.region(t) != region) continue;
        d.push_back(dose[t]);
        v.push_back(mesh.volume(t));
    }
    return doseHistogramOf(region, d, v);
}

std::vector<DoseHistogram> doseHistograms(const TetraMesh& mesh, const std::vector<double>& dose) {
    std::vector<DoseHistogram> out;
    for (uint32_t r = 1; r < mesh.regionCount(); ++r) {
        DoseHistogram h = doseHistogram(mesh, dose, r);
        if (!h.dose.empty()) out.push_back(std::move(h));
    }
    return out;
}

double valueAt(const TetraMesh& mesh, const std::vector<double>& v, const Point3& p) {
    uint32_t t = mesh.locate(p);
    return t && t < v.size() ? v[t] : std::numeric_limits<double>::quiet_NaN();
}

std::vector<double> valuesAlong(const TetraMesh& mesh, const std::vector<double>& v,
                                const Point3& a, const Point3& b, size_t samples) {
    if (samples > kMaxLineSamples)
        throw ParameterError("valuesAlong: " + std::to_string(samples) + " samples requested, at most " +
                             std::to_string(kMaxLineSamples));
    std::vector<double> out;
    out.reserve(samples);
    for (size_t i = 0; i < samples; ++i) {
        double s = samples > 1 ? double(i) / double(samples - 1) : 0.5;
        out.push_back(valueAt(mesh, v, {a[0] + s * (b[0] - a[0]), a[1] + s * (b[1] - a[1]),
                                        a[2] + s * (b[2] - a[2])}));
    }
    return out;
}

}  // namespace fm
