// SPDX-License-Identifier: GPL-3.0-or-later
// One small interface to the linear-programming solvers the planner may use (COIN-OR CLP,
// GLPK): the problem as columns with bounds and costs and sparse rows with bounds, minimised.
// The optimiser builds a LinearProgram and never includes a solver's header.
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

namespace fm::planning {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct LinearProgram {
    // Columns (variables): lower <= x <= upper, objective sum cost * x (minimised).
    std::vector<double> colLower, colUpper, cost;
    std::vector<std::string> colName;
    // A column's or row's identity within a sequence of related LPs (0: none), by which a warm
    // start finds its status in the previous LP's basis (LpBasis).
    std::vector<uint64_t> colKey;
    // Rows: rowLower <= sum_k value[k] * x[index[k]] <= rowUpper (kInf / -kInf for a side left open).
    struct Row {
        std::vector<int> index;
        std::vector<double> value;
        double lower = -kInf, upper = kInf;
        uint64_t key = 0;
        // A column of this row alone (a hinge's or tail's slack), or -1: where the row is new to a
        // warm start and would start violated at the old values, that column starts basic and
        // takes up the difference (the row at its bound), so the start stays primal feasible.
        int pairedColumn = -1;
    };
    std::vector<Row> rows;

    int addColumn(double lower, double upper, double cost, std::string name = {}, uint64_t key = 0);
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
    bool warmStarted = false;    // solved from the basis of a previous LP (LpBasis)
};

// The simplex basis of the last optimal LP of a sequence, by row and column key: where a variable
// was basic or at which bound. A later LP of the sequence (rows and columns added, bounds, costs
// and coefficients changed) starts from it: its keyed rows and columns take their old status, new
// rows are basic and new columns at a bound. Only the starting point changes, not the optimum.
struct LpBasis {
    enum Status : uint8_t { Basic, AtLower, AtUpper, Free };
    std::unordered_map<uint64_t, uint8_t> column, row;
    std::unordered_map<uint64_t, double> value;  // the columns' values at that optimum
    bool empty() const { return column.empty() && row.empty(); }
    void clear() { column.clear(), row.clear(), value.clear(); }
    // The status of a keyed entry kept here, made consistent with its bounds now; fallback if unknown.
    Status find(bool isColumn, uint64_t key, double lower, double upper, Status fallback) const;
    // The nonbasic status a new variable with these bounds takes.
    static Status atBound(double lower, double upper);
    // Whether most of lp's rows (kMostRows) are known here: else a cold start (with presolve) is
    // the faster one.
    bool covers(const LinearProgram& lp) const;
    static constexpr double kMostRows = 0.75;
    // The starting statuses of lp's columns and rows from this basis (see Row::pairedColumn).
    void startOf(const LinearProgram& lp, std::vector<Status>& columns, std::vector<Status>& rows) const;
    // Keeps lp's optimal statuses and column values x.
    void keep(const LinearProgram& lp, const std::vector<Status>& columns, const std::vector<Status>& rows,
              const double* x);
};

// Solvers built into this FullMonte ("clp", "glpk"), the first being the default.
std::vector<std::string> availableSolvers();
// Solves with the named solver ("" = the default). Throws ParameterError for an unknown or
// unavailable solver; a problem without an optimum is a status, not an exception.
LpSolution solve(const LinearProgram& lp, const std::string& solver = "");
// The same, starting from warm's basis when it covers lp (else cold), and leaving the optimal
// basis in warm for the next LP. A warm start that ends without an optimum is solved again cold,
// so statuses (infeasible, unbounded) are the cold solver's.
LpSolution solve(const LinearProgram& lp, const std::string& solver, LpBasis* warm);

}  // namespace fm::planning
