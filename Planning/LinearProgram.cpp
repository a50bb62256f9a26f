// SPDX-License-Identifier: GPL-3.0-or-later
#include "Planning/LinearProgram.hpp"

#include <algorithm>
#include <cmath>

#include "Common/Errors.hpp"

namespace fm::planning {

#if FM_PLANNING_HAVE_CLP
LpSolution solveClp(const LinearProgram& lp, const LpBasis* start, LpBasis* end);
#endif
#if FM_PLANNING_HAVE_GLPK
LpSolution solveGlpk(const LinearProgram& lp, const LpBasis* start, LpBasis* end);
#endif

int LinearProgram::addColumn(double lower, double upper, double c, std::string name, uint64_t key) {
    colKey.resize(cost.size(), 0);
    colKey.push_back(key);
    colLower.push_back(lower);
    colUpper.push_back(upper);
    cost.push_back(c);
    colName.push_back(std::move(name));
    return int(cost.size() - 1);
}

int LinearProgram::addRow(Row r) {
    rows.push_back(std::move(r));
    return int(rows.size() - 1);
}

std::string toString(LpStatus s) {
    switch (s) {
    case LpStatus::Optimal: return "optimal";
    case LpStatus::Infeasible: return "infeasible";
    case LpStatus::Unbounded: return "unbounded";
    default: return "failed";
    }
}

std::vector<std::string> availableSolvers() {
    std::vector<std::string> s;
#if FM_PLANNING_HAVE_CLP
    s.push_back("clp");
#endif
#if FM_PLANNING_HAVE_GLPK
    s.push_back("glpk");
#endif
    return s;
}

LpBasis::Status LpBasis::atBound(double lower, double upper) {
    return lower != -kInf ? AtLower : upper != kInf ? AtUpper : Free;
}

LpBasis::Status LpBasis::find(bool isColumn, uint64_t key, double lower, double upper, Status fallback) const {
    const auto& m = isColumn ? column : row;
    auto it = key ? m.find(key) : m.end();
    if (it == m.end()) return fallback;
    Status s = Status(it->second);
    if ((s == AtLower && lower == -kInf) || (s == AtUpper && upper == kInf) || (s == Free && lower != -kInf))
        return atBound(lower, upper);
    return s;
}

namespace {
uint64_t colKey(const LinearProgram& lp, size_t j) { return j < lp.colKey.size() ? lp.colKey[j] : 0; }
}  // namespace

void LpBasis::startOf(const LinearProgram& lp, std::vector<Status>& cols, std::vector<Status>& rws) const {
    const size_t n = lp.columns();
    cols.resize(n);
    std::vector<double> x(n);
    std::vector<bool> known(n);
    for (size_t j = 0; j < n; ++j) {
        double lo = lp.colLower[j], hi = lp.colUpper[j];
        cols[j] = find(true, colKey(lp, j), lo, hi, atBound(lo, hi));
        auto it = value.find(colKey(lp, j));
        known[j] = colKey(lp, j) && column.count(colKey(lp, j));
        x[j] = it != value.end() ? std::min(hi, std::max(lo, it->second)) : lo != -kInf ? lo : hi != kInf ? hi : 0;
    }
    rws.resize(lp.rows.size());
    for (size_t i = 0; i < lp.rows.size(); ++i) {
        const auto& r = lp.rows[i];
        rws[i] = find(false, r.key, r.lower, r.upper, Basic);
        const int p = r.pairedColumn;
        if (p < 0 || known[p] || (r.key && row.count(r.key))) continue;
        double a = 0;
        for (size_t k = 0; k < r.index.size(); ++k)
            if (r.index[k] != p) a += r.value[k] * x[r.index[k]];
        const double tol = 1e-9 * std::max(1.0, std::fabs(a));
        if (a < r.lower - tol || a > r.upper + tol) rws[i] = a < r.lower - tol ? AtLower : AtUpper, cols[p] = Basic;
    }
}

bool LpBasis::covers(const LinearProgram& lp) const {
    size_t known = 0;
    for (const auto& r : lp.rows) known += r.key && row.count(r.key);
    return double(known) >= kMostRows * double(lp.rows.size());
}

void LpBasis::keep(const LinearProgram& lp, const std::vector<Status>& cols, const std::vector<Status>& rws,
                   const double* x) {
    clear();
    for (size_t j = 0; j < lp.columns(); ++j)
        if (colKey(lp, j)) column[colKey(lp, j)] = cols[j], value[colKey(lp, j)] = x[j];
    for (size_t i = 0; i < lp.rows.size(); ++i)
        if (lp.rows[i].key) row[lp.rows[i].key] = rws[i];
}

LpSolution solve(const LinearProgram& lp, const std::string& solver) { return solve(lp, solver, nullptr); }

LpSolution solve(const LinearProgram& lp, const std::string& solver, LpBasis* warm) {
    std::vector<std::string> have = availableSolvers();
    std::string name = solver.empty() && !have.empty() ? have.front() : solver;
    const bool fromBasis = warm && !warm->empty() && warm->covers(lp);
    auto run = [&](const LpBasis* start) -> LpSolution {
#if FM_PLANNING_HAVE_CLP
        if (name == "clp") return solveClp(lp, start, warm);
#endif
#if FM_PLANNING_HAVE_GLPK
        if (name == "glpk") return solveGlpk(lp, start, warm);
#endif
        return {};
    };
    if (std::find(have.begin(), have.end(), name) != have.end()) {
        LpSolution s = run(fromBasis ? warm : nullptr);
        s.warmStarted = fromBasis;
        if (fromBasis && s.status != LpStatus::Optimal) s = run(nullptr);
        if (s.status != LpStatus::Optimal && warm) warm->clear();
        return s;
    }
    std::string list;
    for (auto& h : have) list += (list.empty() ? "" : ", ") + h;
    throw ParameterError("LP solver '" + name + "' is not built into this FullMonte (available: " +
                         (list.empty() ? "none" : list) + ")");
}

}  // namespace fm::planning
