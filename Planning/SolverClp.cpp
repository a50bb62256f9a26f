// SPDX-License-Identifier: GPL-3.0-or-later
// COIN-OR CLP behind LinearProgram (Planning/LinearProgram.hpp).
#include <CoinPackedMatrix.hpp>
#include <ClpSimplex.hpp>

#include "Planning/LinearProgram.hpp"

namespace fm::planning {

namespace {
double clpBound(double v) { return v == kInf ? COIN_DBL_MAX : v == -kInf ? -COIN_DBL_MAX : v; }
}  // namespace

LpSolution solveClp(const LinearProgram& lp) {
    const int n = int(lp.columns());
    CoinPackedMatrix m(false, 0, 0);  // row-ordered
    m.setDimensions(0, n);
    std::vector<double> rl, ru;
    for (const auto& r : lp.rows) {
        m.appendRow(int(r.index.size()), r.index.data(), r.value.data());
        rl.push_back(clpBound(r.lower));
        ru.push_back(clpBound(r.upper));
    }
    std::vector<double> cl(n), cu(n);
    for (int j = 0; j < n; ++j) cl[j] = clpBound(lp.colLower[j]), cu[j] = clpBound(lp.colUpper[j]);
    ClpSimplex model;
    model.setLogLevel(0);
    model.loadProblem(m, cl.data(), cu.data(), lp.cost.data(), rl.data(), ru.data());
    model.setOptimizationDirection(1);
    model.initialSolve();  // presolve, then the simplex variant CLP picks
    LpSolution s;
    s.solver = "clp";
    switch (model.status()) {
    case 0: s.status = LpStatus::Optimal; break;
    case 1: s.status = LpStatus::Infeasible; break;
    case 2: s.status = LpStatus::Unbounded; break;
    default: s.status = LpStatus::Failed; s.message = "CLP status " + std::to_string(model.status()); break;
    }
    if (s.status == LpStatus::Optimal) {
        s.x.assign(model.primalColumnSolution(), model.primalColumnSolution() + n);
        s.objective = model.objectiveValue();
    }
    return s;
}

}  // namespace fm::planning
