// SPDX-License-Identifier: GPL-3.0-or-later
// The optimiser's row generation (Planning/Optimizer.cpp solveReduced) against the full LP with one
// row per tetra and purpose: the same optimum on a case both can solve, with either solver, when
// infeasible (the same conflicts) and when energies are unbounded (the fallback); and a plan of
// ~1e5 full-LP rows solved in seconds, its objective checked against its definition.
#include <boost/test/unit_test.hpp>

#include <chrono>

#include "Planning/LinearProgram.hpp"
#include "bench/SyntheticPlan.hpp"

using namespace fm;
using namespace fm::planning;

namespace {

// The objective of SyntheticPlan's prescription evaluated from its definition at energies e.
double objectiveOf(const SyntheticPlan& c, const std::vector<double>& e) {
    std::vector<double> d = c.matrix.dose(e);
    std::map<uint32_t, double> regionVolume;
    for (uint32_t t = 1; t <= c.mesh.tetraCount(); ++t) regionVolume[c.mesh.region(t)] += c.mesh.volume(t);
    double f = 0;
    for (uint32_t t = 1; t <= c.mesh.tetraCount(); ++t) {
        double share = c.mesh.volume(t) / regionVolume[c.mesh.region(t)];
        for (const auto& g : c.rx.targets)
            if (c.mesh.region(t) == g.region) f += g.weight * std::max(0.0, g.threshold - d[t]) * share;
        for (const auto& o : c.rx.organs)
            if (c.mesh.region(t) == o.region) f += o.weight * std::max(0.0, d[t] - o.threshold) * share;
    }
    return f;
}

void checkSameOptimum(const PlanResult& red, const PlanResult& full) {
    BOOST_REQUIRE(red.feasible);
    BOOST_REQUIRE(full.feasible);
    BOOST_TEST_MESSAGE("full LP " << full.lpRows << " rows: objective " << full.objective << "; reduced: "
                                  << red.lpSolvedRows << " rows, " << red.lpRounds << " LPs, objective " << red.objective);
    BOOST_TEST(red.lpRows == full.lpRows);
    BOOST_TEST(full.lpSolvedRows == full.lpRows);
    BOOST_TEST(red.lpSolvedRows < full.lpRows);  // the reduction took place
    BOOST_TEST(red.lpRounds > 1u);
    BOOST_TEST(std::fabs(red.objective - full.objective) <= 1e-6 * std::max(1.0, full.objective));
    double emax = *std::max_element(full.energies.begin(), full.energies.end());
    for (size_t j = 0; j < full.energies.size(); ++j)
        BOOST_TEST(std::fabs(red.energies[j] - full.energies[j]) <= 1e-4 * emax, "source " << j);
    BOOST_REQUIRE(red.checks.size() == full.checks.size());
    for (size_t k = 0; k < red.checks.size(); ++k) {
        BOOST_TEST(red.checks[k].met == full.checks[k].met, red.checks[k].name);
        BOOST_TEST(std::fabs(red.checks[k].value - full.checks[k].value) <= 1e-4 * std::max(1.0, full.checks[k].limit));
    }
}

PlanResult once(const SyntheticPlan& c, bool reduce) {
    return solvePlanOnce(c.problem(reduce), {1.0}, std::vector<bool>(c.sources.size(), false));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(planning_scale)

BOOST_AUTO_TEST_CASE(reduced_lp_has_the_full_lps_optimum) {
    SyntheticPlan c(18, 8);
    for (const std::string& solver : availableSolvers()) {
        c.rx.solver = solver;
        BOOST_TEST_MESSAGE(solver);
        PlanResult red = once(c, true), full = once(c, false);
        checkSameOptimum(red, full);
        BOOST_TEST(std::fabs(red.objective - objectiveOf(c, red.energies)) <= 1e-6 * std::max(1.0, red.objective));
    }
}

BOOST_AUTO_TEST_CASE(reduced_lp_with_unbounded_energies_has_the_same_optimum) {
    // No energy bounds: substituted shortfalls pay in proportion to the energies, so a reduced LP
    // is bounded only by the organ's excess; without the organ it is unbounded and the planner
    // falls back to the full LP.
    SyntheticPlan c(16, 6);
    for (auto& s : c.sources) s.maxEnergy = INFINITY;
    c.rx.maxTotalEnergy = INFINITY;
    c.rx.organs[0].maxDoses.clear();
    checkSameOptimum(once(c, true), once(c, false));
    c.rx.organs.clear();
    PlanResult red = once(c, true);
    BOOST_REQUIRE(red.feasible);
    BOOST_TEST(red.lpSolvedRows == red.lpRows);  // the full LP solved at last
    BOOST_TEST(std::fabs(red.objective - once(c, false).objective) <= 1e-9);
    BOOST_TEST(std::fabs(red.objective - objectiveOf(c, red.energies)) <= 1e-9);
}

BOOST_AUTO_TEST_CASE(reduced_elastic_lp_names_the_same_conflicts) {
    SyntheticPlan c(16, 6);
    c.rx.targets[0].minDoses.push_back({0.9, 60.0});  // tumour D90 >= 60 J/cm^2 with the organ's max <= 5
    c.rx.organs[0].maxDoses = {{0, 5.0}};
    PlanResult red = once(c, true), full = once(c, false);
    BOOST_TEST(!red.feasible);
    BOOST_TEST(red.status == "infeasible");
    BOOST_REQUIRE(red.conflicts.size() == full.conflicts.size());
    BOOST_TEST(!red.conflicts.empty());
    for (size_t k = 0; k < red.conflicts.size(); ++k) {
        BOOST_TEST_MESSAGE(red.conflicts[k].name << ": " << red.conflicts[k].slack << " (full LP " << full.conflicts[k].slack << ")");
        BOOST_TEST(red.conflicts[k].name == full.conflicts[k].name);
        BOOST_TEST(std::fabs(red.conflicts[k].slack - full.conflicts[k].slack) <= 1e-5 * std::max(1.0, full.conflicts[k].slack));
    }
    BOOST_TEST(red.tight == full.tight, "tight constraints differ");
}

BOOST_AUTO_TEST_CASE(plan_of_1e5_rows_in_seconds) {
    SyntheticPlan c(48, 10);
    auto t0 = std::chrono::steady_clock::now();
    PlanResult r = optimisePlan(c.problem());
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    BOOST_TEST_MESSAGE(c.mesh.tetraCount() << " tetras, full LP " << r.lpRows << " rows x " << r.lpColumns << " columns; "
                                           << r.lpRounds << " LPs of at most " << r.lpSolvedRows << " rows, " << s << " s");
    BOOST_REQUIRE(r.feasible);
    BOOST_TEST(r.lpRows >= 100000u);
    BOOST_TEST(r.lpSolvedRows <= r.lpRows / 5);
    BOOST_TEST(std::fabs(r.objective - objectiveOf(c, r.energies)) <= 1e-6 * std::max(1.0, r.objective));
    for (const auto& k : r.checks) BOOST_TEST(k.met, k.name << " = " << k.value);
}

BOOST_AUTO_TEST_SUITE_END()
