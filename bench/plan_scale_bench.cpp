// SPDX-License-Identifier: GPL-3.0-or-later
// The planner's LP at clinical size (bench/SyntheticPlan.hpp: 6 n^3 tetras, S point sources, a
// target and an organ at risk with D10 and maximum-dose limits): builds the case, then solves it
// once by row generation (the planner's default) and, unless skipped, as the full LP with one row
// per tetra and purpose, and checks the two optima agree. Mode plan: a whole plan instead (a V100
// goal of GOAL on the target, so weight rounds and source drops follow the first solve), once with
// each LP started from the previous basis and once with every LP from scratch, compared. Prints
// "key value" lines: tetras, the full LP's rows and columns, the rows of the largest LP solved,
// rounds (warm-started ones), seconds per stage.
// Usage: plan_scale_bench N [SOURCES] [full|nofull|plan] [clp|glpk] [GOAL]
//        (N 60: 1.3M tetras, ~2e5 rows; GOAL default 0.98)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/SyntheticPlan.hpp"

using namespace fm::planning;

namespace {
double since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
void print(const char* tag, const PlanResult& r, double s) {
    std::printf("%s_status %s\n%s_seconds %.3f\n%s_lp_rows %zu\n%s_lp_columns %zu\n%s_lp_rows_solved %zu\n"
                "%s_lp_rounds %zu\n%s_lp_warm_rounds %zu\n%s_solves %zu\n%s_objective_J_cm2 %.9g\n",
                tag, r.status.c_str(), tag, s, tag, r.lpRows, tag, r.lpColumns, tag, r.lpSolvedRows, tag, r.lpRounds,
                tag, r.lpWarmRounds, tag, r.solves, tag, r.objective);
    std::printf("%s_energies_J", tag);
    for (double e : r.energies) std::printf(" %.6g", e);
    std::printf("\n");
}
}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: plan_scale_bench N [SOURCES] [full|nofull|plan] [clp|glpk] [GOAL]\n");
        return 1;
    }
    const unsigned n = unsigned(std::atoi(argv[1]));
    const size_t S = argc > 2 ? size_t(std::atoi(argv[2])) : 10;
    const std::string mode = argc > 3 ? argv[3] : "full";
    const bool full = mode == "full";
    auto t0 = std::chrono::steady_clock::now();
    SyntheticPlan c(n, S);
    if (argc > 4) c.rx.solver = argv[4];
    std::printf("tetras %zu\nsources %zu\ncase_seconds %.3f\n", c.mesh.tetraCount(), S, since(t0));
    if (mode == "plan") {
        c.rx.targets[0].v100Goal = argc > 5 ? std::atof(argv[5]) : 0.98;
        PlanProblem warm = c.problem(true), cold = c.problem(true);
        cold.warmStart = false;
        PlanResult r[2];
        for (int k = 0; k < 2; ++k) {
            t0 = std::chrono::steady_clock::now();
            r[k] = optimisePlan(k ? cold : warm);
            print(k ? "cold" : "warm", r[k], since(t0));
            std::printf("%s_weight_rounds %d\n%s_dropped %zu\n", k ? "cold" : "warm", r[k].weightRounds, k ? "cold" : "warm",
                        r[k].dropped.size());
        }
        double de = 0;
        for (size_t j = 0; j < S; ++j) de = std::max(de, std::fabs(r[0].energies[j] - r[1].energies[j]));
        std::printf("objective_difference %.3g\nmax_energy_difference_J %.3g\n", r[0].objective - r[1].objective, de);
        return 0;
    }
    std::vector<double> w{1.0};
    std::vector<bool> none(S, false);
    t0 = std::chrono::steady_clock::now();
    PlanResult red = solvePlanOnce(c.problem(true), w, none);
    print("reduced", red, since(t0));
    if (!full) return 0;
    t0 = std::chrono::steady_clock::now();
    PlanResult all = solvePlanOnce(c.problem(false), w, none);
    print("full", all, since(t0));
    double de = 0;
    for (size_t j = 0; j < S; ++j) de = std::max(de, std::fabs(red.energies[j] - all.energies[j]));
    std::printf("objective_difference %.3g\nmax_energy_difference_J %.3g\n", red.objective - all.objective, de);
    return 0;
}
