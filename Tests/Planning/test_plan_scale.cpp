// SPDX-License-Identifier: GPL-3.0-or-later
// The optimiser's row generation (Planning/Optimizer.cpp solveReduced) against the full LP with one
// row per tetra and purpose: the same optimum on a case both can solve, with either solver, when
// infeasible (the same conflicts) and when energies are unbounded (the fallback); warm-started
// LPs (each from the previous basis) against cold ones, alone and in whole plans; hostile fluence
// matrices; and a plan of ~1e5 full-LP rows solved in seconds, its objective checked against its
// definition.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <random>

#include "Common/Errors.hpp"

#include "Planning/LinearProgram.hpp"
#include "bench/SyntheticPlan.hpp"

using namespace fm;
using namespace fm::planning;

namespace {

// The objective of SyntheticPlan's prescription evaluated from its definition at energies e
// (with these target weights, else the prescription's).
double objectiveOf(const SyntheticPlan& c, const std::vector<double>& e, std::vector<double> targetWeights = {}) {
    for (size_t t = targetWeights.size(); t < c.rx.targets.size(); ++t) targetWeights.push_back(c.rx.targets[t].weight);
    std::vector<double> d = c.matrix.dose(e);
    std::map<uint32_t, double> regionVolume;
    for (uint32_t t = 1; t <= c.mesh.tetraCount(); ++t) regionVolume[c.mesh.region(t)] += c.mesh.volume(t);
    double f = 0;
    for (uint32_t t = 1; t <= c.mesh.tetraCount(); ++t) {
        double share = c.mesh.volume(t) / regionVolume[c.mesh.region(t)];
        for (size_t k = 0; k < c.rx.targets.size(); ++k) {
            const auto& g = c.rx.targets[k];
            if (c.mesh.region(t) == g.region) f += targetWeights[k] * std::max(0.0, g.threshold - d[t]) * share;
        }
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
    BOOST_TEST(red.lpWarmRounds == red.lpRounds - 1);  // every LP after the first from a basis
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

// A sequence of random LPs as row generation makes them (rows added, costs, bounds and
// coefficients changed, a column fixed at zero, a row removed, then infeasible and unbounded
// ones), each solved warm from the previous basis and cold: the same status and optimum.
BOOST_AUTO_TEST_CASE(warm_started_lp_sequence_has_the_cold_optima) {
    for (const std::string& solver : availableSolvers()) {
        std::mt19937 rng(7);
        std::uniform_real_distribution<double> u(0, 1);
        const int n = 12;
        LinearProgram lp;
        for (int j = 0; j < n; ++j) lp.addColumn(0, 10, -u(rng), {}, 100 + j);
        uint64_t nextKey = 1;
        auto addRandomRow = [&](double upper) {
            LinearProgram::Row r;
            for (int j = 0; j < n; ++j)
                if (u(rng) < 0.6) r.index.push_back(j), r.value.push_back(u(rng));
            r.upper = upper, r.key = nextKey++;
            lp.addRow(r);
        };
        LpBasis basis;
        size_t warm = 0;
        auto check = [&](const std::string& step, LpStatus expected) {
            LpSolution w = solve(lp, solver, &basis), c = solve(lp, solver);
            warm += w.warmStarted;
            BOOST_TEST_MESSAGE(solver << " " << step << ": " << toString(w.status) << (w.warmStarted ? " (warm)" : ""));
            BOOST_TEST(toString(w.status) == toString(expected), solver << " " << step);
            BOOST_TEST(toString(c.status) == toString(expected), solver << " " << step);
            if (w.status != LpStatus::Optimal || c.status != LpStatus::Optimal) return;
            BOOST_TEST(std::fabs(w.objective - c.objective) <= 1e-9 * std::max(1.0, std::fabs(c.objective)), solver << " " << step);
            for (int j = 0; j < n; ++j) BOOST_TEST(std::fabs(w.x[j] - c.x[j]) <= 1e-7, solver << " " << step << " x" << j);
        };

        for (int k = 0; k < 8; ++k) addRandomRow(2 + 3 * u(rng));
        check("first", LpStatus::Optimal);
        for (int round = 0; round < 4; ++round) {
            for (int k = 0; k < 2; ++k) addRandomRow(1 + 2 * u(rng));  // most rows known: warm
            for (int j = 0; j < n; ++j) lp.cost[j] += 0.2 * (u(rng) - 0.5);
            lp.rows[round].value[0] *= 1.5;
            check("rows added, costs changed", LpStatus::Optimal);
        }
        lp.colUpper[3] = 0;  // a source dropped
        check("column fixed", LpStatus::Optimal);
        lp.rows.erase(lp.rows.begin() + 2);
        check("row removed", LpStatus::Optimal);
        LinearProgram::Row atLeast;
        for (int j = 0; j < n; ++j) atLeast.index.push_back(j), atLeast.value.push_back(1.0);
        atLeast.lower = 1e3, atLeast.key = nextKey++;  // beyond the columns' bounds
        lp.addRow(atLeast);
        check("infeasible", LpStatus::Infeasible);
        lp.rows.pop_back();
        check("feasible again", LpStatus::Optimal);
        const size_t warmBefore = warm;
        for (int k = 0; k < 12; ++k) addRandomRow(1 + 2 * u(rng));
        check("most rows new: cold", LpStatus::Optimal);
        BOOST_TEST(warm == warmBefore, solver);
        for (int j = 0; j < n; ++j) lp.colUpper[j] = kInf;
        lp.rows.clear();
        lp.cost[0] = -1;
        check("unbounded", LpStatus::Unbounded);
        BOOST_TEST(warm == 6u, solver);  // the infeasible and unbounded ones confirmed cold
    }
}

// Whole plans (V100 weight rounds and source drops after the first solve) with every LP started
// from the previous one's basis and with every LP from scratch: the same plan.
BOOST_AUTO_TEST_CASE(warm_started_plan_is_the_cold_plan) {
    SyntheticPlan c(16, 8);
    c.rx.targets[0].v100Goal = 0.98;
    c.rx.maxSources = 5;
    for (const std::string& solver : availableSolvers()) {
        c.rx.solver = solver;
        PlanProblem warm = c.problem(), cold = c.problem();
        cold.warmStart = false;
        PlanResult w = optimisePlan(warm), k = optimisePlan(cold);
        BOOST_TEST_MESSAGE(solver << ": " << w.solves << " solves, " << w.lpRounds << " LPs (" << w.lpWarmRounds
                                  << " warm), " << w.weightRounds << " weight rounds, " << w.dropped.size()
                                  << " dropped; objective " << w.objective << " (cold " << k.objective << ")");
        BOOST_REQUIRE(w.feasible);
        BOOST_REQUIRE(k.feasible);
        BOOST_TEST(w.solves > 2u);  // the plan had weight rounds or drops to warm-start
        BOOST_TEST(!w.dropped.empty());
        BOOST_TEST(w.lpWarmRounds == w.lpRounds - 1);
        BOOST_TEST(k.lpWarmRounds == 0u);
        BOOST_TEST(w.dropped == k.dropped);
        BOOST_TEST(w.weightRounds == k.weightRounds);
        BOOST_TEST(std::fabs(w.objective - k.objective) <= 1e-6 * std::max(1.0, k.objective));
        double emax = *std::max_element(k.energies.begin(), k.energies.end());
        for (size_t j = 0; j < k.energies.size(); ++j)
            BOOST_TEST(std::fabs(w.energies[j] - k.energies[j]) <= 1e-4 * emax, solver << " source " << j);
        BOOST_TEST(std::fabs(w.objective - objectiveOf(c, w.energies, w.targetWeights)) <= 1e-6 * std::max(1.0, w.objective));
    }
}

// Hostile prescriptions and matrices, by row generation with warm starts and as the full LP
// solved cold: tetras without a defined dose (NaN, mu_a = 0) in the target, target tetras no
// source reaches (zero-dose rows) under a hard minimum, an organ every source reaches held at
// zero dose (every organ row binds), and a target without any defined dose.
BOOST_AUTO_TEST_CASE(hostile_plans_by_row_generation_are_the_full_lps) {
    auto fullOf = [](const SyntheticPlan& c) {
        PlanProblem p = c.problem(false);
        p.warmStart = false;
        return solvePlanOnce(p, {1.0}, std::vector<bool>(c.sources.size(), false));
    };
    auto sameOptimum = [](const PlanResult& red, const PlanResult& full) {
        BOOST_TEST(red.status == full.status);
        BOOST_REQUIRE(red.feasible == full.feasible);
        if (!red.feasible) {
            BOOST_REQUIRE(red.conflicts.size() == full.conflicts.size());
            for (size_t k = 0; k < red.conflicts.size(); ++k) {
                BOOST_TEST(red.conflicts[k].name == full.conflicts[k].name);
                BOOST_TEST(std::fabs(red.conflicts[k].slack - full.conflicts[k].slack) <= 1e-5 * std::max(1.0, full.conflicts[k].slack));
            }
            return;
        }
        BOOST_TEST(std::fabs(red.objective - full.objective) <= 1e-6 * std::max(1.0, full.objective));
        for (size_t j = 0; j < full.energies.size(); ++j) BOOST_TEST(std::fabs(red.energies[j] - full.energies[j]) <= 1e-3);
        for (size_t k = 0; k < red.checks.size() && k < full.checks.size(); ++k) BOOST_TEST(red.checks[k].met == full.checks[k].met);
    };
    SyntheticPlan c(16, 6);
    const size_t T = c.matrix.tetras;
    size_t nan = 0, zero = 0;
    for (uint32_t t = 1; t <= T; ++t) {
        if (c.mesh.region(t) != 2) continue;
        bool undefined = t % 7 == 0, unreached = t % 11 == 0;
        nan += undefined, zero += unreached && !undefined;
        for (size_t j = 0; j < c.sources.size(); ++j)
            if (undefined || unreached) c.matrix.fluence[j * T + t - 1] = undefined ? NAN : 0.0;
    }
    BOOST_TEST_MESSAGE(nan << " target tetras without a defined dose, " << zero << " unreached");
    sameOptimum(once(c, true), fullOf(c));
    c.rx.targets[0].minDoses.push_back({1.0, 5.0});  // every target tetra >= 5 J/cm^2: the unreached cannot
    PlanResult red = once(c, true);
    BOOST_TEST(!red.feasible);
    sameOptimum(red, fullOf(c));
    c.rx.targets[0].minDoses.clear();
    c.rx.organs[0].maxDoses = {{0, 0.0}};  // the organ's maximum dose 0: every organ row binds
    red = once(c, true);
    BOOST_TEST_MESSAGE("organ held at zero: " << red.status << ", objective " << red.objective);
    sameOptimum(red, fullOf(c));
    for (uint32_t t = 1; t <= T; ++t)
        if (c.mesh.region(t) == 2)
            for (size_t j = 0; j < c.sources.size(); ++j) c.matrix.fluence[j * T + t - 1] = NAN;
    BOOST_CHECK_THROW(once(c, true), ParameterError);  // a target without any defined dose
}

// A saved matrix whose values give no dose the planner could trust is refused, naming the place.
BOOST_AUTO_TEST_CASE(hostile_fluence_matrix_is_refused) {
    FluenceMatrix m;
    m.header.rows = 3, m.header.cols = 2;
    auto load = [&](std::vector<double> v) {
        m.values = v;
        return doseMatrixFrom(m, 3, 2, 1, "m.fmm");
    };
    BOOST_CHECK_NO_THROW(load({1, 2, NAN, 3, 4, NAN}));  // NaN in every column: mu_a = 0
    auto refused = [&](std::vector<double> v, const std::string& where) {
        try {
            load(v);
        } catch (const ParameterError& e) {
            BOOST_TEST_MESSAGE(e.what());
            BOOST_TEST(std::string(e.what()).find(where) != std::string::npos, e.what());
            return true;
        }
        return false;
    };
    BOOST_TEST(refused({1, 2, 3, 3, NAN, 4}, "m.fmm: tetra 2, column 1"));   // NaN in one column only
    BOOST_TEST(refused({1, NAN, 3, 3, 5, 4}, "m.fmm: tetra 2, column 1"));   // ... or missing from one
    BOOST_TEST(refused({1, 2, INFINITY, 3, 4, 5}, "m.fmm: tetra 3, column 0"));
    BOOST_TEST(refused({1, 2, 3, -1e-3, 4, 5}, "m.fmm: tetra 1, column 1"));
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
