// SPDX-License-Identifier: GPL-3.0-or-later
// COIN-OR CLP behind LinearProgram (Planning/LinearProgram.hpp).
#include <CoinPackedMatrix.hpp>
#include <ClpSimplex.hpp>

#include <algorithm>
#include <cmath>

#include "Planning/LinearProgram.hpp"

namespace fm::planning {

namespace {
double clpBound(double v) { return v == kInf ? COIN_DBL_MAX : v == -kInf ? -COIN_DBL_MAX : v; }

ClpSimplex::Status toClp(LpBasis::Status s, double lower, double upper) {
    switch (s) {
    case LpBasis::Basic: return ClpSimplex::basic;
    case LpBasis::AtUpper: return lower == upper ? ClpSimplex::isFixed : ClpSimplex::atUpperBound;
    case LpBasis::AtLower: return lower == upper ? ClpSimplex::isFixed : ClpSimplex::atLowerBound;
    default: return ClpSimplex::isFree;
    }
}
LpBasis::Status fromClp(ClpSimplex::Status s) {
    switch (s) {
    case ClpSimplex::basic: return LpBasis::Basic;
    case ClpSimplex::atUpperBound: return LpBasis::AtUpper;
    case ClpSimplex::atLowerBound:
    case ClpSimplex::isFixed: return LpBasis::AtLower;
    default: return LpBasis::Free;
    }
}
// Gives the model the starting statuses from basis (LpBasis::startOf).
void setBasis(ClpSimplex& model, const LinearProgram& lp, const LpBasis& basis) {
    std::vector<LpBasis::Status> cols, rows;
    basis.startOf(lp, cols, rows);
    model.createStatus();
    for (size_t j = 0; j < cols.size(); ++j) model.setColumnStatus(int(j), toClp(cols[j], lp.colLower[j], lp.colUpper[j]));
    for (size_t i = 0; i < rows.size(); ++i) model.setRowStatus(int(i), toClp(rows[i], lp.rows[i].lower, lp.rows[i].upper));
}

void keepBasis(const ClpSimplex& model, const LinearProgram& lp, LpBasis& basis) {
    std::vector<LpBasis::Status> cols(lp.columns()), rows(lp.rows.size());
    for (size_t j = 0; j < cols.size(); ++j) cols[j] = fromClp(model.getColumnStatus(int(j)));
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = fromClp(model.getRowStatus(int(i)));
    basis.keep(lp, cols, rows, model.primalColumnSolution());
}
}  // namespace

// Cold (from null): presolve, then the simplex variant CLP picks. Warm: the primal simplex from
// from's basis (kept primal feasible for new hinge rows, see LpBasis::startOf; costs change
// between the LPs of a plan, so the dual start is rarely feasible). end, if given, receives the
// optimal basis.
LpSolution solveClp(const LinearProgram& lp, const LpBasis* from, LpBasis* end) {
    const int n = int(lp.columns());
    // The rows in one row-ordered array, handed over at once (appending row by row copies the
    // matrix as it grows: quadratic in the rows).
    std::vector<CoinBigIndex> start{0};
    std::vector<int> length, index;
    std::vector<double> value, rl, ru;
    for (const auto& r : lp.rows) {
        index.insert(index.end(), r.index.begin(), r.index.end());
        value.insert(value.end(), r.value.begin(), r.value.end());
        start.push_back(CoinBigIndex(index.size()));
        length.push_back(int(r.index.size()));
        rl.push_back(clpBound(r.lower));
        ru.push_back(clpBound(r.upper));
    }
    CoinPackedMatrix m(false, n, int(lp.rows.size()), CoinBigIndex(index.size()), value.data(), index.data(), start.data(),
                       length.data());
    std::vector<double> cl(n), cu(n);
    for (int j = 0; j < n; ++j) cl[j] = clpBound(lp.colLower[j]), cu[j] = clpBound(lp.colUpper[j]);
    // Costs scaled to a largest of 1: the planner's are volume fractions (~1 / tetras), which
    // CLP's absolute dual tolerance would otherwise treat as nearly zero and stop short.
    double cmax = 0;
    for (double c : lp.cost) cmax = std::max(cmax, std::fabs(c));
    const double scale = cmax > 0 ? 1 / cmax : 1;
    std::vector<double> cost(lp.cost);
    for (double& c : cost) c *= scale;
    ClpSimplex model;
    model.setLogLevel(0);
    model.loadProblem(m, cl.data(), cu.data(), cost.data(), rl.data(), ru.data());
    model.setOptimizationDirection(1);
    if (from) {
        setBasis(model, lp, *from);
        model.primal();
        // Optimal in the scaled problem only (secondary status 2-4): once more from that basis.
        if (model.status() == 0 && model.secondaryStatus() >= 2 && model.secondaryStatus() <= 4) model.primal();
    } else {
        model.initialSolve();
    }
    LpSolution s;
    s.solver = "clp";
    switch (model.status()) {
    case 0: s.status = LpStatus::Optimal; break;
    case 1: s.status = LpStatus::Infeasible; break;
    case 2: s.status = LpStatus::Unbounded; break;
    default: s.status = LpStatus::Failed; s.message = "CLP status " + std::to_string(model.status()); break;
    }
    // A warm start ending optimal only in the scaled problem with primal infeasibilities left in
    // the unscaled one (secondary status 2, 4), or giving up (5, 7), counts as failed, so that
    // solve() confirms it cold. Dual infeasibilities alone (3) are accepted, as from a cold start.
    const int second = model.secondaryStatus();
    if (from && s.status == LpStatus::Optimal && (second == 2 || second == 4 || second == 5 || second == 7))
        s.status = LpStatus::Failed, s.message = "CLP secondary status " + std::to_string(second);
    if (s.status == LpStatus::Optimal) {
        s.x.assign(model.primalColumnSolution(), model.primalColumnSolution() + n);
        s.objective = model.objectiveValue() / scale;
        if (end) keepBasis(model, lp, *end);
    }
    return s;
}

}  // namespace fm::planning
