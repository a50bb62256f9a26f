// SPDX-License-Identifier: GPL-3.0-or-later
// A plan's outputs: plan.json, CSV tables, dose per tetra, DVHs, pictures and (VTK builds) the
// dose as .vtu, written into a temporary folder beside the output folder and renamed into place
// when every file is complete, so an output folder is either whole or absent.
#pragma once
#include <string>
#include <vector>

#include "Planning/DoseMatrix.hpp"
#include "Planning/Metrics.hpp"
#include "Planning/Optimizer.hpp"
#include "Planning/PlanSpec.hpp"
#include "Planning/Simulate.hpp"

namespace fm::planning {

// The dose of a plan and its metrics with standard errors.
struct PlanEvaluation {
    std::vector<double> dose;    // J/cm^2 per tetra id (index 0 the dummy)
    std::vector<double> doseSe;  // its batch-means standard error (NaN with one batch)
    std::vector<std::vector<double>> batchDoses;
    std::vector<RegionMetrics> regions;  // every region of the mesh, prescribed ones first
};
PlanEvaluation evaluatePlan(const PlanSpec& plan, const DoseMatrix& m, const std::vector<double>& energies);

struct PlanRecord {
    const PlanSpec* plan = nullptr;
    const DoseMatrix* matrix = nullptr;
    const PlanResult* result = nullptr;
    const PlanEvaluation* evaluation = nullptr;
    SimulationReport simulation;     // when simulated
    std::string matrixFrom;          // "simulated" or the reused file
    std::string matrixCheck;         // reused: what its model fingerprint check found (loadPlanMatrix)
    bool writeMatrix = true;         // fluence_matrix.fmm, for a later run to reuse
};

// Throws fm::Error when a file cannot be written; the output folder is then left as it was.
// An existing folder is replaced only with overwrite (else ParameterError before anything runs:
// call checkOutputFolder first).
void checkOutputFolder(const std::string& dir, bool overwrite);
void writePlanOutputs(const std::string& dir, const PlanRecord& rec, bool overwrite);

// The plan for people: status, energies, metrics with standard errors, hard limits met or not,
// or the conflicting constraints.
std::string planSummary(const PlanSpec& plan, const PlanResult& r, const PlanEvaluation& e);
// Picture planes: the plan's, else the three through the centre of the first target's bounding box.
std::vector<SlicePlane> slicePlanes(const PlanSpec& plan);

// The machine-readable report (plan.json's text).
std::string planJson(const PlanRecord& rec);

}  // namespace fm::planning
