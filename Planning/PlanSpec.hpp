// SPDX-License-Identifier: GPL-3.0-or-later
// A PDT plan: the model (mesh, regions, optical properties), candidate sources with energy
// bounds, how to simulate them, the prescription and the outputs wanted. Read from a JSON plan
// file (docs/PLANNING.md gives the schema) or filled in from C++/Tcl. Doses are J/cm^2
// throughout this folder; the engine's fluence is J/mm^2 per J emitted, and 1 J/mm^2 = 100 J/cm^2.
#pragma once
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "Geometry/MaterialSet.hpp"
#include "Geometry/Sources.hpp"
#include "Geometry/TetraMesh.hpp"
#include "Kernels/Tuning.hpp"

namespace fm::planning {

constexpr double kJcm2PerJmm2 = 100.0;  // 1 J/mm^2 = 100 J/cm^2

struct CandidateSource {
    std::string name;
    SourcePtr source;
    double minEnergy = 0;          // J delivered over the treatment
    double maxEnergy = INFINITY;   // J
    uint64_t packets = 0;          // 0: the plan's packets per source
};

// A target region (tumour): tetras under its threshold are penalised by their volume-weighted
// shortfall; optional hard minimum doses D_x >= X; an optional V100 goal reached by raising the
// target's weight (as PDT-SPACE tunes its tumour weight).
struct TargetSpec {
    uint32_t region = 0;
    double threshold = 0;          // J/cm^2: the dose that kills this tissue
    double weight = 1;
    double v100Goal = NAN;         // fraction of the volume at >= threshold (0..1), NaN: none
    struct MinDose {
        double fraction = 0.9;     // D90: dose received by at least 90% of the volume
        double dose = 0;           // J/cm^2
    };
    std::vector<MinDose> minDoses; // hard: D_fraction >= dose
};

// An organ at risk: tetras over its damage threshold are penalised; hard limits D_x <= Y
// (fraction x of the volume; x = 0 is the maximum dose).
struct OrganSpec {
    uint32_t region = 0;
    double threshold = INFINITY;   // J/cm^2 damage threshold (penalty above it); inf: no penalty
    double weight = 1;
    struct MaxDose {
        double fraction = 0;       // 0: maximum dose over the whole organ
        double dose = 0;           // J/cm^2
    };
    std::vector<MaxDose> maxDoses;
};

struct Prescription {
    std::vector<TargetSpec> targets;
    std::vector<OrganSpec> organs;
    double maxTotalEnergy = INFINITY;  // J, all sources together
    double treatmentTime = NAN;        // s, when powers are given (energy = power x time)
    unsigned maxSources = 0;           // 0: no cap on the number of sources used
    double dropBelow = 1e-3;           // sources under this fraction of the largest energy are dropped
    std::string solver;                // "clp", "glpk" or "" (default)
};

struct SlicePlane {
    int axis = 1;    // 0 = x, 1 = y, 2 = z: the plane axis = at
    double at = 0;   // mm
};

struct SimulationSpec {
    uint64_t packetsPerSource = 100000;
    unsigned batches = 4;          // independent sub-runs per source (spread -> standard errors)
    uint64_t seed = 1;
    std::string kernel = "cpu";
    std::vector<int> devices;
    unsigned threads = 0;
    std::string matrixFile;        // reuse a saved matrix instead of simulating
    unsigned matrixBatches = 0;    // its columns: batch * sources + source (0: the columns / the sources)
    bool matrixUnchecked = false;  // use it even where its model fingerprint differs from the plan's
    TuningKnobs tuning;            // speed only (Kernels/Tuning.hpp): the caller's FM_* variables
};

struct PlanSpec {
    std::string file;                          // the plan file, for messages
    std::shared_ptr<TetraMesh> mesh;
    MaterialSet materials;
    std::map<uint32_t, std::string> regionNames;
    // PDT threshold model: the photosensitizer's absorption coefficient per region (1/mm); with
    // the prescription's photodynamic threshold it sets the region's threshold dose.
    std::map<uint32_t, double> photosensitizerMuA;
    std::vector<CandidateSource> sources;
    SimulationSpec simulation;
    Prescription prescription;
    std::vector<SlicePlane> slices;            // empty: through the first target's centre
    std::string regionName(uint32_t r) const;
};

// Reads and checks a plan file. Errors (fm::ParameterError) name the file and the JSON path,
// e.g. "plan.json: /prescription/targets/0/region: unknown region 'tumor' (regions: ...)".
PlanSpec readPlanFile(const std::string& path);
// The same from JSON text; `name` stands for the file in messages and relative paths resolve
// against `baseDir`.
PlanSpec parsePlan(const std::string& jsonText, const std::string& name, const std::string& baseDir);
// The "prescription" object alone, against a known mesh and region names (Tcl PlanOptimizer).
Prescription parsePrescription(const std::string& jsonText, const std::string& name,
                               const std::map<uint32_t, std::string>& regionNames, const TetraMesh& mesh,
                               std::vector<CandidateSource>& sources, const std::map<uint32_t, double>& psMuA = {});

}  // namespace fm::planning
