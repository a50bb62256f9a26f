// SPDX-License-Identifier: GPL-3.0-or-later
// Source energies by linear programming over the per-tetra dose matrix (as PDT-SPACE, with a free
// solver): minimise the volume-weighted mean shortfall under each target's threshold plus the
// mean excess over each organ's damage threshold, weighted per region, subject to the hard limits
// (D_x <= Y, maximum dose, D_x >= X on targets, energy bounds, total budget). A dose-volume limit
// D_x <= Y is imposed through its conditional value at risk (the mean dose of the hottest x of
// the volume <= Y), which is linear and implies D_x <= Y; likewise D_x >= X through the coldest
// (1 - x). Then sources whose energy goes to ~0 are dropped (and a cap on their number applied)
// with a re-solve after each drop, and V100 goals are met by raising the target weight.
// Each LP is solved by row generation: only the tetras whose rows can bind at the optimum are
// rows; the others' hinges enter as the linear piece (or zero) that holds there, checked after
// each solve (see solveReduced in Optimizer.cpp). The optimum is the full LP's. Each LP after a
// plan's first starts from the previous one's simplex basis (PlanProblem::warmStart).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "Planning/DoseMatrix.hpp"
#include "Planning/PlanSpec.hpp"

namespace fm::planning {

// One hard constraint, checked on the mean dose of the plan found.
struct ConstraintCheck {
    std::string name;     // e.g. "urethra D10 <= 60 J/cm^2", "total energy <= 900 J"
    double limit = 0;
    double value = 0;     // the evaluated value (D_x from the DVH, max dose, total energy)
    std::string unit;     // "J/cm^2" or "J"
    bool upper = true;    // value <= limit (else >=)
    bool met = false;
};

// A hard constraint that cannot hold together with the others: how much it must give way.
struct Conflict {
    std::string name;
    double slack = 0;     // the least relaxation (in unit) that makes the prescription feasible
    std::string unit;
};

struct PlanResult {
    bool feasible = false;
    std::string status;                  // "optimal", "infeasible", ...
    std::vector<double> energies;        // J per candidate source (0 for dropped ones)
    std::vector<bool> used;
    std::vector<std::string> dropped;    // names, in the order they were dropped
    double objective = 0;                // sum of weights x mean shortfall/excess, J/cm^2
    double penalty = 0;                  // the same with all weights 1
    std::vector<double> targetWeights;   // as used in the last solve
    int weightRounds = 0;
    bool goalsMet = true;                // every V100 goal
    std::vector<ConstraintCheck> checks;
    std::vector<Conflict> conflicts;     // when infeasible
    std::vector<std::string> tight;      // when infeasible: hard constraints at their limit
    std::string solver;
    size_t lpColumns = 0, lpRows = 0, solves = 0;  // the full LP's size; plan solves
    size_t lpSolvedRows = 0;  // rows of the largest LP solved (the reduced one, see optimisePlan)
    size_t lpRounds = 0;      // LPs solved in all (row generation rounds of every solve)
    size_t lpWarmRounds = 0;  // of which started from the previous LP's basis
    double seconds = 0;     // wall clock
    double cpuSeconds = 0;  // process CPU time (the wall clock counts other load too)
};

struct PlanProblem {
    const TetraMesh* mesh = nullptr;
    const DoseMatrix* matrix = nullptr;
    const std::vector<CandidateSource>* sources = nullptr;
    const Prescription* prescription = nullptr;
    const std::map<uint32_t, std::string>* regionNames = nullptr;
    // Solve each LP by row generation over the tetras (exact: the same optimum as the full LP,
    // far fewer rows); false solves the full LP, one row per tetra and purpose.
    bool reduceLp = true;
    // Start each LP of a plan (row generation rounds, V100 rounds, source drops) from the previous
    // LP's simplex basis; false solves each from scratch. The optimum is the same either way.
    bool warmStart = true;
};

PlanResult optimisePlan(const PlanProblem& p);

// One solve with given target weights and sources fixed at zero (no selection, no weight
// rounds): for tests and for the steps above. solver "" = default.
PlanResult solvePlanOnce(const PlanProblem& p, const std::vector<double>& targetWeights,
                         const std::vector<bool>& fixedZero);

}  // namespace fm::planning
