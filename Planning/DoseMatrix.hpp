// SPDX-License-Identifier: GPL-3.0-or-later
// Fluence per joule emitted, per tetra, per candidate source and per independent batch (sub-run
// with its own seed): the data the optimiser and the uncertainty estimates work on. A plan with
// energies E_j (J) gives the dose d_i = 100 * sum_j E_j * phi_ij in J/cm^2 (phi in J/mm^2 per J).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "Storage/FluenceMatrix/FluenceMatrix.hpp"

namespace fm::planning {

struct DoseMatrix {
    size_t tetras = 0, sources = 0, batches = 1;
    // Column (batch * sources + source), tetras values each; row i is tetra i + 1. mm^-2.
    std::vector<double> fluence;
    // The model it was simulated from (planFingerprint), or a saved matrix's; none() when unknown.
    ModelFingerprint model;

    const double* column(size_t source, size_t batch) const { return &fluence[(batch * sources + source) * tetras]; }
    // Mean over batches of one source's fluence per J (mm^-2) at tetra id t (1-based).
    double meanFluence(size_t source, uint32_t t) const;
    // Dose in J/cm^2 per tetra id (index 0 the dummy, 0): from the mean over batches, or from one
    // batch alone (its own estimate, with 1/batches of the packets).
    std::vector<double> dose(const std::vector<double>& energies) const;
    std::vector<double> batchDose(const std::vector<double>& energies, size_t batch) const;
};

// A saved matrix whose columns are batch * sources + source (batches = 1 for a plain batch run).
// Throws ParameterError naming the file when its shape does not fit. Its model fingerprint comes
// along unchecked (loadPlanMatrix checks it against a plan).
DoseMatrix doseMatrixFrom(const FluenceMatrix& m, size_t tetras, size_t sources, size_t batches, const std::string& file);
FluenceMatrix toFluenceMatrix(const DoseMatrix& d);

}  // namespace fm::planning
