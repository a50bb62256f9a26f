// SPDX-License-Identifier: GPL-3.0-or-later
#include "Planning/DoseMatrix.hpp"

#include <cmath>
#include <sstream>

#include "Common/Errors.hpp"
#include "Planning/PlanSpec.hpp"

namespace fm::planning {

double DoseMatrix::meanFluence(size_t j, uint32_t t) const {
    double s = 0;
    for (size_t k = 0; k < batches; ++k) s += column(j, k)[t - 1];
    return s / double(batches);
}

std::vector<double> DoseMatrix::batchDose(const std::vector<double>& e, size_t k) const {
    std::vector<double> d(tetras + 1, 0.0);
    for (size_t j = 0; j < sources; ++j) {
        if (e[j] == 0) continue;
        const double* c = column(j, k);
        for (size_t i = 0; i < tetras; ++i) d[i + 1] += kJcm2PerJmm2 * e[j] * c[i];
    }
    for (size_t i = 0; i < tetras; ++i)  // NaN (mu_a = 0) stays NaN even where no energy goes
        if (std::isnan(column(0, k)[i])) d[i + 1] = NAN;
    return d;
}

std::vector<double> DoseMatrix::dose(const std::vector<double>& e) const {
    std::vector<double> d(tetras + 1, 0.0);
    for (size_t k = 0; k < batches; ++k) {
        std::vector<double> b = batchDose(e, k);
        for (size_t i = 1; i <= tetras; ++i) d[i] += b[i] / double(batches);
    }
    return d;
}

namespace {
// Each tetra's fluence per J is finite and >= 0 in every column, or NaN in every column (mu_a = 0:
// no dose defined there, the tetra left out of the plan). Anything else (a NaN in some columns
// only, an infinity, a negative value) would give doses the optimiser and the report disagree on.
void checkFluenceValues(const std::vector<double>& v, size_t tetras, const std::string& file) {
    const size_t cols = tetras ? v.size() / tetras : 0;
    for (size_t c = 0; c < cols; ++c)
        for (size_t i = 0; i < tetras; ++i) {
            double x = v[c * tetras + i];
            bool undefined = std::isnan(v[i]);
            if (std::isnan(x) == undefined && (undefined || (x >= 0 && std::isfinite(x)))) continue;
            std::ostringstream o;
            o << file << ": tetra " << i + 1 << ", column " << c << ": fluence " << x
              << " (expected a finite value >= 0, or NaN in every column where mu_a = 0)";
            throw ParameterError(o.str());
        }
}
}  // namespace

DoseMatrix doseMatrixFrom(const FluenceMatrix& m, size_t tetras, size_t sources, size_t batches, const std::string& file) {
    const auto& h = m.header;
    if (h.quantity != MatrixQuantity::Fluence) throw ParameterError(file + ": the matrix does not hold fluence");
    if (h.rows != tetras)
        throw ParameterError(file + ": the matrix has " + std::to_string(h.rows) + " rows, the plan's mesh " +
                             std::to_string(tetras) + " tetras (a matrix of another mesh?)");
    if (batches == 0 && sources && h.cols % sources == 0 && h.cols / sources >= 1 && h.cols / sources <= 64)
        batches = h.cols / sources;  // each batch a column per source
    if (batches == 0)
        throw ParameterError(file + ": the matrix has " + std::to_string(h.cols) + " columns, not 1 to 64 batches of the plan's " +
                             std::to_string(sources) + " sources (a matrix of other sources?)");
    if (h.cols != sources * batches)
        throw ParameterError(file + ": the matrix has " + std::to_string(h.cols) + " columns, the plan needs " +
                             std::to_string(sources) + " sources x " + std::to_string(batches) + " batches = " +
                             std::to_string(sources * batches) +
                             (sources && h.cols % sources == 0 ? " (a matrix of " + std::to_string(h.cols / sources) +
                                                                      " batches? --matrix-batches " + std::to_string(h.cols / sources) + ")"
                                                                : std::string(" (a matrix of other sources?)")));
    if (h.units.rfind("mm^-2", 0) != 0)
        throw ParameterError(file + ": the matrix is in '" + h.units + "', the planner needs mm^-2 per J emitted");
    checkFluenceValues(m.values, tetras, file);
    DoseMatrix d;
    d.tetras = tetras, d.sources = sources, d.batches = batches;
    d.fluence = m.values;
    d.model = h.model;
    return d;
}

FluenceMatrix toFluenceMatrix(const DoseMatrix& d) {
    FluenceMatrix m;
    m.header.rows = d.tetras;
    m.header.cols = d.sources * d.batches;
    m.header.sources = d.sources * d.batches;  // columns are batch * sources + source (plan.json says so)
    m.header.materialSets = 1;
    m.header.model = d.model;
    m.values = d.fluence;
    return m;
}

}  // namespace fm::planning
