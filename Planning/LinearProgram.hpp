// SPDX-License-Identifier: GPL-3.0-or-later
// One small interface to the linear-programming solvers the planner may use (COIN-OR CLP,
// GLPK): the problem as columns with bounds and costs and sparse rows with bounds, minimised.
// The optimiser builds a LinearProgram and never includes a solver's header.
#pragma once
#include <limits>
#include <string>
#include <vector>

namespace fm::planning {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct LinearProgram {
    // Columns (variables): lower <= x <= upper, objective sum cost * x (minimised).
    std::vector<double> colLower, colUpper, cost;
    std::vector<std::string> colName;
    // Rows: rowLower <= sum_k value[k] * x[index[k]] <= rowUpper (kInf / -kInf for a side left open).
    struct Row {
        std::vector<int> index;
        std::vector<double> value;
        double lower = -kInf, upper = kInf;
    };
    std::vector<Row> rows;

    int addColumn(double lower, double upper, double cost, std::string name = {});
    int addRow(Row r);
    size_t columns() const { return cost.size(); }
};

enum class LpStatus { Optimal, Infeasible, Unbounded, Failed };
std::string toString(LpStatus s);

struct LpSolution {
    LpStatus status = LpStatus::Failed;
    std::vector<double> x;       // column values (empty unless Optimal)
    double objective = 0;
    std::string solver;          // "clp" or "glpk"
    std::string message;         // the solver's word when not Optimal
};

// Solvers built into this FullMonte ("clp", "glpk"), the first being the default.
std::vector<std::string> availableSolvers();
// Solves with the named solver ("" = the default). Throws ParameterError for an unknown or
// unavailable solver; a problem without an optimum is a status, not an exception.
LpSolution solve(const LinearProgram& lp, const std::string& solver = "");

}  // namespace fm::planning
