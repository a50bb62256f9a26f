// SPDX-License-Identifier: GPL-3.0-or-later
// The optimiser against an independent computation: brute-force search of the same objective over
// a grid of energies, and the two LP solvers against each other; infeasible prescriptions named.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <random>

#include "Common/Errors.hpp"
#include "Geometry/MeshBuilder.hpp"
#include "Planning/LinearProgram.hpp"
#include "Planning/Optimizer.hpp"

using namespace fm;
using namespace fm::planning;

namespace {

// Three 1 mm cubes in a row (6 tetras each): cube 0 is the target (region 1), cube 1 an organ
// at risk (2), cube 2 other tissue (3). Two sources with fixed pseudo-random fluence per tetra.
struct TwoSourceCase {
    TetraMesh mesh = makeBoxMesh({0, 0, 0}, {3, 1, 1}, 3, 1, 1, [](const Point3& c) { return uint32_t(c[0]) + 1; });
    DoseMatrix m;
    std::vector<CandidateSource> sources{{"A", nullptr, 0, 20, 0}, {"B", nullptr, 0, 20, 0}};
    Prescription rx;
    std::map<uint32_t, std::string> names{{1, "tumour"}, {2, "organ"}, {3, "tissue"}};

    TwoSourceCase() {
        m.tetras = mesh.tetraCount(), m.sources = 2, m.batches = 1;
        m.fluence.resize(2 * m.tetras);
        std::mt19937 rng(7);
        std::uniform_real_distribution<double> u(0.5, 1.5);
        for (uint32_t t = 1; t <= m.tetras; ++t) {
            // Within the target, A falls and B rises along x (they complement each other);
            // B gives the organ four times what A gives it.
            double q = std::min(1.0, double(t - 1) / 5), organ = mesh.region(t) == 2 ? 1 : 0, other = mesh.region(t) == 3 ? 1 : 0;
            double a = mesh.region(t) == 1 ? 1.2 - q : 0.2 * organ + 0.05 * other;
            double b = mesh.region(t) == 1 ? 0.2 + q : 0.8 * organ + 0.05 * other;
            m.fluence[t - 1] = 0.02 * u(rng) * a;             // source A, mm^-2 per J
            m.fluence[m.tetras + t - 1] = 0.02 * u(rng) * b;  // source B
        }
        TargetSpec t;
        t.region = 1, t.threshold = 10;
        rx.targets.push_back(t);
        OrganSpec o;
        o.region = 2, o.threshold = 4, o.weight = 0.5;
        rx.organs.push_back(o);
        rx.dropBelow = 0;
    }
    PlanProblem problem() const { return {&mesh, &m, &sources, &rx, &names}; }

    // The LP's objective evaluated directly from its definition.
    double objective(double a, double b) const {
        std::vector<double> d = m.dose({a, b});
        double f = 0;
        for (uint32_t t = 1; t <= m.tetras; ++t) {
            for (const auto& g : rx.targets)
                if (mesh.region(t) == g.region)
                    f += g.weight * std::max(0.0, g.threshold - d[t]) * mesh.volume(t) / mesh.regionVolume(g.region);
            for (const auto& o : rx.organs)
                if (mesh.region(t) == o.region)
                    f += o.weight * std::max(0.0, d[t] - o.threshold) * mesh.volume(t) / mesh.regionVolume(o.region);
        }
        return f;
    }
    bool feasible(double a, double b) const {
        std::vector<double> d = m.dose({a, b});
        for (uint32_t t = 1; t <= m.tetras; ++t)
            for (const auto& o : rx.organs)
                for (const auto& lim : o.maxDoses)
                    if (mesh.region(t) == o.region && d[t] > lim.dose) return false;
        return a + b <= rx.maxTotalEnergy + 1e-9;
    }
    // Grid search, then a finer grid around the best point.
    std::array<double, 3> bruteForce() const {
        double best = 1e300, ba = 0, bb = 0;
        auto scan = [&](double a0, double a1, double b0, double b1, double h) {
            a0 = std::max(0.0, a0), b0 = std::max(0.0, b0);
            int na = int(std::round((std::min(20.0, a1) - a0) / h)), nb = int(std::round((std::min(20.0, b1) - b0) / h));
            for (int i = 0; i <= na; ++i)
                for (int k = 0; k <= nb; ++k)
                    if (double a = a0 + i * h, b = b0 + k * h; feasible(a, b)) {
                        double f = objective(a, b);
                        if (f < best) best = f, ba = a, bb = b;
                    }
        };
        scan(0, 20, 0, 20, 0.05);
        double ca = ba, cb = bb;
        scan(ca - 0.1, ca + 0.1, cb - 0.1, cb + 0.1, 0.0005);
        return {ba, bb, best};
    }
};

void checkAgainstBruteForce(const TwoSourceCase& c) {
    auto bf = c.bruteForce();
    for (const std::string& solver : availableSolvers()) {
        Prescription rx = c.rx;
        rx.solver = solver;
        PlanProblem p = c.problem();
        p.prescription = &rx;
        PlanResult r = optimisePlan(p);
        BOOST_TEST_MESSAGE(solver << ": E = " << r.energies[0] << ", " << r.energies[1] << " objective " << r.objective
                                  << "; grid: " << bf[0] << ", " << bf[1] << " objective " << bf[2]);
        BOOST_REQUIRE(r.feasible);
        // The LP optimum is at most the grid's best, and the objective (Lipschitz, slope < 50 per
        // J here) differs from the grid's by less than the grid step allows.
        BOOST_TEST(r.objective <= bf[2] + 1e-9);
        BOOST_TEST(r.objective >= bf[2] - 50 * 0.0005);
        BOOST_TEST(std::fabs(r.objective - c.objective(r.energies[0], r.energies[1])) < 1e-7);
        BOOST_TEST(std::fabs(r.energies[0] - bf[0]) < 0.01);
        BOOST_TEST(std::fabs(r.energies[1] - bf[1]) < 0.01);
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(planning_optimizer)

BOOST_AUTO_TEST_CASE(two_sources_one_target_match_brute_force) {
    TwoSourceCase c;
    c.rx.organs.clear();
    c.rx.maxTotalEnergy = 5;  // binding: the threshold needs more than the budget allows
    checkAgainstBruteForce(c);
}

// An organ at risk whose fluence is undefined everywhere (mu_a = 0: NaN in the matrix) cannot
// carry a dose limit: refused, not dropped from the plan; without a limit it is left out.
BOOST_AUTO_TEST_CASE(organ_without_defined_dose_refused_when_limited) {
    TwoSourceCase c;
    for (uint32_t t = 1; t <= c.m.tetras; ++t)
        if (c.mesh.region(t) == 2) c.m.fluence[t - 1] = c.m.fluence[c.m.tetras + t - 1] = NAN;
    c.rx.organs[0].maxDoses.push_back({0.1, 6.0});
    try {
        optimisePlan(c.problem());
        BOOST_ERROR("an organ at risk with no defined dose and a dose limit was planned");
    } catch (const ParameterError& e) {
        BOOST_TEST((std::string(e.what()).find("organ at risk organ has no tetras with a defined dose") !=
                    std::string::npos), e.what());
    }
    c.rx.organs[0].maxDoses.clear();
    c.rx.organs[0].threshold = INFINITY;
    BOOST_TEST(optimisePlan(c.problem()).feasible);
    c.rx.targets[0].region = 2;  // a target likewise
    BOOST_CHECK_THROW(optimisePlan(c.problem()), ParameterError);
}

BOOST_AUTO_TEST_CASE(organ_limit_binds_and_matches_brute_force) {
    TwoSourceCase c;
    c.rx.organs[0].maxDoses.push_back({0.0, 6.0});  // max dose in the organ <= 6 J/cm^2
    checkAgainstBruteForce(c);
    PlanResult r = optimisePlan(c.problem());
    BOOST_REQUIRE(r.feasible);
    bool found = false;
    for (const auto& k : r.checks)
        if (k.name.find("organ max dose <= 6") != std::string::npos) {
            found = true;
            BOOST_TEST(k.met);
            BOOST_TEST(std::fabs(k.value - 6.0) < 1e-6);  // binding at the optimum
        }
    BOOST_TEST(found);
}

BOOST_AUTO_TEST_CASE(solvers_agree) {
    if (availableSolvers().size() < 2) {
        BOOST_TEST_MESSAGE("one LP solver built: nothing to compare");
        return;
    }
    TwoSourceCase c;
    c.rx.organs[0].maxDoses.push_back({0.5, 7.0});  // D50 <= 7 through its CVaR
    c.rx.targets[0].minDoses.push_back({0.9, 3.0});
    std::vector<PlanResult> r;
    for (const char* s : {"clp", "glpk"}) {
        c.rx.solver = s;
        r.push_back(optimisePlan(c.problem()));
        BOOST_REQUIRE(r.back().feasible);
    }
    BOOST_TEST(std::fabs(r[0].objective - r[1].objective) < 1e-7 * std::max(1.0, r[0].objective));
    for (const auto& k : r[0].checks) BOOST_TEST(k.met, k.name << " = " << k.value);
}

BOOST_AUTO_TEST_CASE(infeasible_prescription_names_conflicts) {
    TwoSourceCase c;
    c.rx.targets[0].minDoses.push_back({0.9, 12.0});  // tumour D90 >= 12 J/cm^2 ...
    c.rx.organs[0].maxDoses.push_back({0.0, 3.0});    // ... with the organ's max dose <= 3
    for (const std::string& solver : availableSolvers()) {
        c.rx.solver = solver;
        PlanResult r = optimisePlan(c.problem());
        BOOST_TEST(!r.feasible);
        BOOST_TEST(r.status == "infeasible");
        std::string all;
        for (const auto& k : r.conflicts) all += k.name + " (" + std::to_string(k.slack) + ") ";
        for (const auto& t : r.tight) all += "[tight] " + t + " ";
        BOOST_TEST_MESSAGE(solver << ": " << all);
        BOOST_TEST(!r.conflicts.empty());
        BOOST_TEST((all.find("tumour D90 >= 12") != std::string::npos));
        BOOST_TEST((all.find("organ max dose <= 3") != std::string::npos));
        BOOST_TEST((all.find("tissue") == std::string::npos));
    }
}

BOOST_AUTO_TEST_CASE(source_cap_drops_the_weakest) {
    TwoSourceCase c;
    c.rx.maxSources = 1;
    PlanResult r = optimisePlan(c.problem());
    BOOST_REQUIRE(r.feasible);
    BOOST_TEST(r.dropped.size() == 1u);
    BOOST_TEST((int(r.used[0]) + int(r.used[1])) == 1);
    for (size_t j = 0; j < 2; ++j)
        if (!r.used[j]) BOOST_TEST(r.energies[j] == 0.0);
}

BOOST_AUTO_TEST_CASE(unknown_solver_is_an_error) {
    BOOST_CHECK_THROW(solve(LinearProgram{}, "cplex"), ParameterError);
}

BOOST_AUTO_TEST_SUITE_END()
