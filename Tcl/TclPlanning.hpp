// PlanOptimizer: source energies of a PDT plan by linear programming (Planning/Optimizer.hpp)
// over the runs of one or more BatchRunners, from Tcl. Each BatchRunner added is one independent
// batch of the same sources (another randSeed): with two or more, the dose metrics carry
// batch-means standard errors.
//
//   BatchRunner B1; ...; B1 randSeed 1; B1 runSync     ;# one run per candidate source
//   BatchRunner B2; ...; B2 randSeed 2; B2 runSync
//   PlanOptimizer P
//   P batch B1; P batch B2
//   P regionName 2 tumour; P regionName 3 rectum
//   P prescription {{"targets": [{"region": "tumour", "threshold_J_cm2": 40}], ...}}
//   P solve                  ;# "optimal", "optimal, coverage goal not met" or "infeasible"
//   P energies; P metric tumour D90; P metricError tumour D90; P conflicts
//   P write outdir           ;# plan.json, CSVs, dose, pictures, as fullmonte-plan
#pragma once
#include <string>

#ifndef SWIG
#include <map>
#include <memory>
#include <vector>

#include "Planning/Optimizer.hpp"
#include "Planning/Report.hpp"
#endif

class BatchRunner;
class SpatialMap;

class PlanOptimizer {
public:
    PlanOptimizer();
    ~PlanOptimizer();
    void batch(BatchRunner* b);            // one more independent batch of the same sources
    unsigned batchCount() const;
    void clearBatches();
    void regionName(unsigned region, const std::string& name);
    std::string regionName(unsigned region) const;
    void sourceName(unsigned source, const std::string& name);
    // The "prescription" object of a plan file (docs/PLANNING.md), JSON text; may hold
    // "sources": [{"max_energy_J": ...}, ...] with one entry per source for energy bounds.
    void prescription(const std::string& json);
    void slice(const std::string& axis, double atMM);  // a picture plane for write (default z, y, x = 0)
    std::string solve();
    std::string status() const;
    std::string energies() const;          // J per source, Tcl list
    double energy(unsigned source) const;
    double objective() const;              // J/cm^2
    double solveSeconds() const;
    // Metrics of the planned dose: D90 D50 D10 Dmax Dmean (J/cm^2), V100 (percent of the volume).
    double metric(const std::string& region, const std::string& which) const;
    double metricError(const std::string& region, const std::string& which) const;  // NaN: one batch
    std::string conflicts() const;         // infeasible: {constraint slack unit} ...
    std::string constraints() const;       // {constraint limit value unit met} ...
    std::string report() const;            // a table for people
    SpatialMap* dose() const;              // J/cm^2 per tetra
    void write(const std::string& dir);    // replaces dir if it exists
#ifndef SWIG
    PlanOptimizer(const PlanOptimizer&) = delete;
    PlanOptimizer& operator=(const PlanOptimizer&) = delete;

private:
    void needSolved() const;
    const fm::planning::RegionMetrics& regionMetrics(const std::string& region) const;
    std::vector<const BatchRunner*> batches_;
    std::map<uint32_t, std::string> names_;
    std::map<unsigned, std::string> sourceNames_;
    std::string prescriptionJson_;
    std::vector<fm::planning::SlicePlane> slices_;
    // After solve:
    std::unique_ptr<fm::planning::PlanSpec> plan_;
    std::unique_ptr<fm::planning::DoseMatrix> matrix_;
    std::unique_ptr<fm::planning::PlanResult> result_;
    std::unique_ptr<fm::planning::PlanEvaluation> eval_;
#endif
};
