// SPDX-License-Identifier: GPL-3.0-or-later
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

#include "Planning/Figures.hpp"
#include "Planning/Optimizer.hpp"
#include "Planning/Report.hpp"
#endif

class BatchRunner;
class SpatialMap;
class OutputData;
class TetraMesh;
class Source;

// DoseSlicePicture: the planner's slice picture (Planning/Figures.hpp: mm axes, orientation
// labels, colour bar in J/cm^2, isodose lines, region outlines and names, source markers) of any
// volume map, drawn headless with cairo.
//
//   DoseSlicePicture D
//   D mesh $M; D dose $phi 100      ;# the map and its factor to J/cm^2 (J/mm^2 fluence: 100)
//   D regionName 2 tumour; D source $cyl D1; D plane y 0; D isodose "40 100"
//   D write fluence.png
class DoseSlicePicture {
public:
    DoseSlicePicture();
    ~DoseSlicePicture();
    void mesh(TetraMesh* m);
    void dose(OutputData* map, double toJcm2);
    void regionName(unsigned region, const std::string& name);
    void source(Source* s, const std::string& name);
    void plane(const std::string& axis, double atMM);
    void isodose(const std::string& levelsJcm2);
    void scale(const std::string& linearOrLog);  // colours: "linear" (default) or "log"
    void title(const std::string& t);
    void write(const std::string& png) const;
#ifndef SWIG
    DoseSlicePicture(const DoseSlicePicture&) = delete;
    DoseSlicePicture& operator=(const DoseSlicePicture&) = delete;

private:
    std::shared_ptr<fm::TetraMesh> mesh_;
    std::vector<double> dose_;
    std::map<uint32_t, std::string> names_;
    std::vector<fm::planning::SourceMarker> sources_;
    fm::planning::SlicePlane plane_{1, 0};
    std::vector<double> isodose_;
    bool log_ = false;
    std::string title_ = "Dose (J/cm^2)";
#endif
};

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
    // PDT threshold model: the photosensitizer's absorption coefficient in a region (1/mm); with
    // the prescription's pdt_threshold_J_cm3 it sets the region's threshold (docs/PLANNING.md).
    void photosensitizer(unsigned region, double muAPerMM);
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
    std::map<uint32_t, double> psMuA_;
    std::string prescriptionJson_;
    std::vector<fm::planning::SlicePlane> slices_;
    // After solve:
    std::unique_ptr<fm::planning::PlanSpec> plan_;
    std::unique_ptr<fm::planning::DoseMatrix> matrix_;
    std::unique_ptr<fm::planning::PlanResult> result_;
    std::unique_ptr<fm::planning::PlanEvaluation> eval_;
#endif
};
