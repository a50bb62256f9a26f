// SPDX-License-Identifier: GPL-3.0-or-later
#include "Planning/LinearProgram.hpp"

#include "Common/Errors.hpp"

namespace fm::planning {

#if FM_PLANNING_HAVE_CLP
LpSolution solveClp(const LinearProgram& lp);
#endif
#if FM_PLANNING_HAVE_GLPK
LpSolution solveGlpk(const LinearProgram& lp);
#endif

int LinearProgram::addColumn(double lower, double upper, double c, std::string name) {
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

LpSolution solve(const LinearProgram& lp, const std::string& solver) {
    std::vector<std::string> have = availableSolvers();
    std::string name = solver.empty() && !have.empty() ? have.front() : solver;
#if FM_PLANNING_HAVE_CLP
    if (name == "clp") return solveClp(lp);
#endif
#if FM_PLANNING_HAVE_GLPK
    if (name == "glpk") return solveGlpk(lp);
#endif
    std::string list;
    for (auto& h : have) list += (list.empty() ? "" : ", ") + h;
    throw ParameterError("LP solver '" + name + "' is not built into this FullMonte (available: " +
                         (list.empty() ? "none" : list) + ")");
}

}  // namespace fm::planning
