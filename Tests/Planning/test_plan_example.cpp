// SPDX-License-Identifier: GPL-3.0-or-later
// The 10-diffuser, 3-organ example end to end (fewer packets): the solve time once the matrix
// exists, every hard limit on the evaluated dose, the written metrics against metrics recomputed
// from the written dose, and fullmonte-plan's errors, matrix reuse and whole-or-absent outputs.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include "Planning/Report.hpp"
#include "Tests/TestUtil.hpp"
#if FM_PLANNING_HAVE_VTK
#include "Storage/VTK/VTKMeshReader.hpp"
#endif
#include "fm_config.h"

using namespace fm;
using namespace fm::planning;
namespace fs = std::filesystem;

namespace {

std::vector<std::vector<std::string>> readCsv(const fs::path& p) {
    std::ifstream in(p);
    BOOST_REQUIRE(in);
    std::vector<std::vector<std::string>> rows;
    std::string line;
    while (std::getline(in, line)) {
        std::vector<std::string> cells;
        std::stringstream ss(line);
        std::string c;
        while (std::getline(ss, c, ',')) cells.push_back(c);
        if (!line.empty() && line.back() == ',') cells.push_back("");
        rows.push_back(cells);
    }
    return rows;
}

double num(const std::string& s) { return s.empty() ? NAN : std::stod(s); }

bool close(double a, double b) { return std::isnan(a) ? std::isnan(b) : std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(b)); }

int runPlan(const std::string& args) {
    int rc = std::system((std::string(FM_PLAN_EXE) + " " + args + " > /dev/null 2>&1").c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(planning_example)

BOOST_AUTO_TEST_CASE(example_plan_end_to_end) {
    const std::string example = std::string(FM_SOURCE_DIR) + "/Examples/pdt_plan.json";
    PlanSpec plan = readPlanFile(example);
    BOOST_TEST(plan.sources.size() == 10u);
    BOOST_TEST(plan.prescription.organs.size() == 3u);
    plan.simulation.packetsPerSource = 3000;  // the example's limits hold at any packet count
    plan.simulation.batches = 3;
    plan.simulation.threads = 2;
    SimulationReport sim;
    DoseMatrix m = simulateSources(plan, sim);
    PlanProblem prob{plan.mesh.get(), &m, &plan.sources, &plan.prescription, &plan.regionNames};
    PlanResult r = optimisePlan(prob);
    BOOST_TEST_MESSAGE("solve: " << r.solves << " LPs, " << r.seconds << " s wall, " << r.cpuSeconds << " s CPU");
    BOOST_REQUIRE(r.feasible);
    BOOST_TEST(r.cpuSeconds < 1.0);
    BOOST_TEST(r.checks.size() == 4u);
    for (const auto& c : r.checks) BOOST_TEST(c.met, c.name << ": " << c.value);

    PlanEvaluation e = evaluatePlan(plan, m, r.energies);
    PlanRecord rec;
    rec.plan = &plan, rec.matrix = &m, rec.result = &r, rec.evaluation = &e, rec.simulation = sim;
    rec.matrixFrom = "simulated";
    fs::path dir = fs::temp_directory_path() / ("fm_plan_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    writePlanOutputs(dir.string(), rec, false);
    for (const char* f : {"plan.json", "sources.csv", "metrics.csv", "constraints.csv", "dose.csv", "dvh.csv", "dvh.png",
                          "slice_z+0.png", "slice_y+0.png", "slice_x+0.png", "fluence_matrix.fmm"})
        BOOST_TEST(fs::exists(dir / f), f);

    // Metrics recomputed from the written dose equal the written metrics.
    auto dose = readCsv(dir / "dose.csv");
    std::vector<double> d(plan.mesh->tetraCount() + 1, 0.0);
    for (size_t i = 1; i < dose.size(); ++i) d[std::stoul(dose[i][0])] = num(dose[i][3]);
    auto metrics = readCsv(dir / "metrics.csv");
    BOOST_REQUIRE(metrics.size() == 6u);  // header + 5 regions
    for (size_t i = 1; i < metrics.size(); ++i) {
        uint32_t region = uint32_t(std::stoul(metrics[i][0]));
        DoseHistogram h = doseHistogram(*plan.mesh, d, region);
        double th = num(metrics[i][4]);
        BOOST_TEST(close(num(metrics[i][5]), h.doseAtFraction(0.9)), metrics[i][1] << " D90");
        BOOST_TEST(close(num(metrics[i][7]), h.doseAtFraction(0.5)), metrics[i][1] << " D50");
        BOOST_TEST(close(num(metrics[i][11]), h.dose.back()), metrics[i][1] << " Dmax");
        if (std::isfinite(th)) BOOST_TEST(close(num(metrics[i][15]) / 100, volumeAtLeast(h, th)), metrics[i][1] << " V100");
        BOOST_TEST(num(metrics[i][6]) > 0);  // D90's standard error from 3 batches
    }
    // Every hard limit, on the written dose.
    for (const auto& o : plan.prescription.organs) {
        DoseHistogram h = doseHistogram(*plan.mesh, d, o.region);
        for (const auto& lim : o.maxDoses) {
            double v = lim.fraction > 0 ? h.doseAtFraction(lim.fraction) : h.dose.back();
            BOOST_TEST(v <= lim.dose * (1 + 1e-6), plan.regionName(o.region) << ": " << v << " > " << lim.dose);
        }
    }
    double total = 0;
    for (const auto& row : readCsv(dir / "sources.csv"))
        if (row[0] != "source") total += num(row[3]);
    BOOST_TEST(total <= plan.prescription.maxTotalEnergy * (1 + 1e-9));

#if FM_PLANNING_HAVE_VTK
    {  // The .vtu holds the same dose under a name with its unit.
        VTKMeshReader vr((dir / "dose.vtu").string());
        vr.read();
        const std::vector<double>& vd = vr.cellData("Dose (J/cm^2)");
        BOOST_REQUIRE(vd.size() >= plan.mesh->tetraCount());
        size_t off = vd.size() - plan.mesh->tetraCount();  // with or without the dummy
        double maxDiff = 0;
        for (uint32_t t = 1; t <= plan.mesh->tetraCount(); ++t) maxDiff = std::max(maxDiff, std::fabs(vd[t - 1 + off] - d[t]));
        BOOST_TEST(maxDiff <= 1e-9);
        BOOST_TEST(vr.cellData("Dose standard error (J/cm^2)").size() == vd.size());
    }
#endif
    // fullmonte-plan reusing the written matrix finds the same plan: a plan file with the packets
    // it was simulated with (the matrix's model fingerprint holds them).
    auto reuseJson = nlohmann::json::parse(std::ifstream(example));
    reuseJson["simulation"]["packets_per_source"] = 3000;
    reuseJson["simulation"]["batches"] = 3;
    const std::string reusePlan = dir.string() + "_reuse.json", fmm = (dir / "fluence_matrix.fmm").string();
    std::ofstream(reusePlan) << reuseJson.dump();
    fs::path again = dir.string() + "_again";
    fs::remove_all(again);
    BOOST_TEST(runPlan(reusePlan + " -o " + again.string() + " --quiet --matrix " + fmm + " --matrix-batches 3") == 0);
    auto j = nlohmann::json::parse(std::ifstream(again / "plan.json"));
    for (size_t k = 0; k < r.energies.size(); ++k)
        BOOST_TEST(std::fabs(j["sources"][k]["energy_J"].get<double>() - r.energies[k]) <= 1e-6 * (1 + r.energies[k]));
    BOOST_TEST(j["matrix"]["fingerprint_check"].get<std::string>() == "matches the plan");
    // The example itself has other packets: its matrix is refused, naming the part that differs.
    {
        fs::path other = dir.string() + "_other", log = dir.string() + "_other.log";
        const int rc = std::system((std::string(FM_PLAN_EXE) + " " + example + " -o " + other.string() +
                                    " --quiet --matrix " + fmm + " > " + log.string() + " 2>&1").c_str());
        BOOST_TEST((WIFEXITED(rc) && WEXITSTATUS(rc) == 1));
        std::stringstream text;
        text << std::ifstream(log).rdbuf();
        BOOST_TEST(text.str().find("(different packets or kernel settings;") != std::string::npos, text.str());
        BOOST_TEST(text.str().find("--matrix-unchecked") != std::string::npos, text.str());
        BOOST_TEST(!fs::exists(other));
        fs::remove(log);
    }
    // An infeasible prescription: exit status 2, and plan.json names the conflict.
    {
        auto bad = reuseJson;
        bad["prescription"]["targets"][0]["min_doses"] = {{{"D_percent", 90}, {"min_J_cm2", 500}}};
        fs::path badPlan = dir.string() + "_infeasible.json", badOut = dir.string() + "_infeasible";
        std::ofstream(badPlan) << bad.dump();
        // Without --matrix-batches: the matrix's columns / the plan's sources (3 batches here).
        BOOST_TEST(runPlan(badPlan.string() + " -o " + badOut.string() + " --quiet --matrix " +
                           (dir / "fluence_matrix.fmm").string()) == 2);
        auto pj = nlohmann::json::parse(std::ifstream(badOut / "plan.json"));
        BOOST_TEST(pj["status"].get<std::string>() == "infeasible");
        BOOST_REQUIRE(pj["infeasibility"]["conflicting"].size() >= 1u);
        BOOST_TEST(pj["infeasibility"]["conflicting"][0]["constraint"].get<std::string>() == "tumour D90 >= 500 J/cm^2");
        fs::remove_all(badOut);
        fs::remove(badPlan);
    }
    // An existing folder is kept unless --overwrite; a wrong matrix shape is an error, and nothing is written.
    BOOST_TEST(runPlan(reusePlan + " -o " + again.string() + " --quiet --matrix " + fmm) == 1);
    BOOST_TEST(fs::exists(again / "plan.json"));
    fs::path none = dir.string() + "_none";
    // 2 batches of the plan's sources: not its columns.
    BOOST_TEST(runPlan(reusePlan + " -o " + none.string() + " --quiet --matrix " + fmm + " --matrix-batches 2") == 1);
    BOOST_TEST(!fs::exists(none));
    BOOST_TEST(runPlan("/nonexistent.json -o " + none.string()) == 1);
    BOOST_TEST(!fs::exists(none));
    // The simulations take the FM_* tuning variables, as fullmonte-run does: a bad one is an
    // error naming it, before any run, and nothing is written.
    const fs::path log = dir.string() + "_tuning.log";
    const int rc = std::system(("FM_CPU_ISA=sse " + std::string(FM_PLAN_EXE) + " " + example + " -o " + none.string() +
                                " --quiet > " + log.string() + " 2>&1").c_str());
    BOOST_TEST((WIFEXITED(rc) && WEXITSTATUS(rc) != 0));
    std::stringstream text;
    text << std::ifstream(log).rdbuf();
    BOOST_TEST(text.str().find("FM_CPU_ISA=sse") != std::string::npos, text.str());
    BOOST_TEST(!fs::exists(none));
    fs::remove(log);
    fs::remove_all(dir);
    fs::remove_all(again);
    fs::remove(reusePlan);
}

BOOST_AUTO_TEST_CASE(every_source_kind_runs_in_a_plan_batch) {
    PlanSpec plan = parsePlan(R"({
      "mesh": {"box": {"lower": [-5, -5, -5], "upper": [5, 5, 5], "divisions": [5, 5, 5],
               "shapes": [{"region": 2, "type": "sphere", "centre": [0, 0, 0], "radius": 3}]}},
      "regions": [{"id": 1, "name": "tissue", "mu_a": 0.05, "mu_s": 5, "g": 0.9, "n": 1.37},
                  {"id": 2, "name": "tumour", "mu_a": 0.08, "mu_s": 8, "g": 0.9, "n": 1.37}],
      "sources": [{"type": "cylinder", "from": [0, 0, -2], "to": [0, 0, 2], "emit": "volume"},
                  {"type": "cylinder", "from": [1, 0, -2], "to": [1, 0, 2]},
                  {"type": "line", "from": [-1, 0, -2], "to": [-1, 0, 2]},
                  {"type": "point", "position": [0, 1, 1]},
                  {"type": "pencil", "position": [0, 0, -9], "direction": [0, 0, 1]},
                  {"type": "fiber", "position": [0, 0, 4.9], "direction": [0, 0, -1], "na": 0.3},
                  {"type": "ball", "centre": [0, -1, 0], "radius": 1},
                  {"type": "volume", "region": "tumour"},
                  {"type": "surface", "region": "tumour"}],
      "simulation": {"packets_per_source": 400, "batches": 2, "threads": 2},
      "prescription": {"targets": [{"region": "tumour", "threshold_J_cm2": 40}]}
    })", "kinds.json", "");
    SimulationReport sim;
    DoseMatrix m = simulateSources(plan, sim);
    BOOST_TEST(sim.runs == 18u);
    for (size_t k = 0; k < m.batches; ++k)
        for (size_t j = 0; j < m.sources; ++j) {
            double sum = 0;
            for (size_t i = 0; i < m.tetras; ++i) sum += m.column(j, k)[i];
            BOOST_TEST((std::isfinite(sum) && sum > 0), plan.sources[j].source->typeName() << " batch " << k);
        }
    // The two batches are independent estimates (different seeds), not copies.
    BOOST_TEST(std::vector<double>(m.column(0, 0), m.column(0, 0) + m.tetras) !=
               std::vector<double>(m.column(0, 1), m.column(0, 1) + m.tetras));
}

// A diffuser partly outside the mesh is warned about once, by its name (not once per batch); a
// thin volume diffuser loses no packets (it is drawn in its cylinder), so nothing is booked
// abnormal and no abnormal warning comes.
BOOST_AUTO_TEST_CASE(plan_source_warnings_once_per_candidate) {
    PlanSpec plan = parsePlan(R"({
      "mesh": {"box": {"lower": [-5, -5, -5], "upper": [5, 5, 5], "divisions": [5, 5, 5],
               "shapes": [{"region": 2, "type": "sphere", "centre": [0, 0, 0], "radius": 3}]}},
      "regions": [{"id": 1, "name": "tissue", "mu_a": 0.05, "mu_s": 5, "g": 0.9, "n": 1.37},
                  {"id": 2, "name": "tumour", "mu_a": 0.08, "mu_s": 8, "g": 0.9, "n": 1.37}],
      "sources": [{"name": "D1", "type": "cylinder", "from": [0.3, 0.2, -2], "to": [0.3, 0.2, 10]},
                  {"name": "D2", "type": "cylinder", "from": [1, 0, -2], "to": [1, 0, 2], "emit": "volume", "radius": 0.02}],
      "simulation": {"packets_per_source": 400, "batches": 3, "threads": 2},
      "prescription": {"targets": [{"region": "tumour", "threshold_J_cm2": 40}]}
    })", "warn.json", "");
    SimulationReport sim;
    simulateSources(plan, sim);
    BOOST_REQUIRE_EQUAL(sim.warnings.size(), 1u);
    BOOST_TEST(sim.warnings[0].rfind("source 'D1': Cylinder source axis from (0.3 0.2 -2) to (0.3 0.2 10): 41.7% of its length", 0) == 0u,
               sim.warnings[0]);
}

// The batch-means standard errors describe the real spread: for one plan, the per-tetra doses of
// two independent simulations (seeds 1 and 101) differ by z = (a - b) / sqrt(se_a^2 + se_b^2) whose
// median |z| is near the normal's 0.674 (a little above with SEs estimated from 8 batches). An SE
// off by sqrt(batches), the usual slip, would put it near 0.24 or 1.9.
BOOST_AUTO_TEST_CASE(standard_errors_match_the_spread_between_seeds) {
    const char* text = R"({
      "mesh": {"box": {"lower": [-6, -6, -6], "upper": [6, 6, 6], "divisions": [6, 6, 6],
               "shapes": [{"region": 2, "type": "sphere", "centre": [0, 0, 0], "radius": 3}]}},
      "regions": [{"id": 1, "name": "tissue", "mu_a": 0.05, "mu_s": 5, "g": 0.8, "n": 1.37},
                  {"id": 2, "name": "tumour", "mu_a": 0.08, "mu_s": 8, "g": 0.9, "n": 1.37}],
      "sources": [{"type": "cylinder", "from": [0, 0, -2], "to": [0, 0, 2]}],
      "simulation": {"packets_per_source": 16000, "batches": 8, "threads": 2},
      "prescription": {"targets": [{"region": "tumour", "threshold_J_cm2": 40}]}
    })";
    std::vector<PlanEvaluation> e;
    for (uint64_t seed : {1, 101}) {
        PlanSpec plan = parsePlan(text, "se.json", "");
        plan.simulation.seed = seed;
        SimulationReport sim;
        DoseMatrix m = simulateSources(plan, sim);
        e.push_back(evaluatePlan(plan, m, {10.0}));
    }
    std::vector<double> z;
    for (size_t t = 1; t < e[0].dose.size(); ++t) {
        double s2 = e[0].doseSe[t] * e[0].doseSe[t] + e[1].doseSe[t] * e[1].doseSe[t];
        if (s2 > 0 && std::isfinite(s2)) z.push_back(std::fabs(e[0].dose[t] - e[1].dose[t]) / std::sqrt(s2));
    }
    BOOST_REQUIRE(z.size() > 500u);
    std::nth_element(z.begin(), z.begin() + z.size() / 2, z.end());
    double median = z[z.size() / 2];
    BOOST_TEST_MESSAGE("median |z| over " << z.size() << " tetras: " << median);
    BOOST_TEST(median > 0.55);
    BOOST_TEST(median < 0.90);
}

// On a GPU the same plan draws the same random streams: the matrix agrees with the CPU's to float
// rounding, and so does the plan. Skips with a message where there is no GPU.
BOOST_AUTO_TEST_CASE(plan_on_gpu_matches_cpu) {
    if (!fmtest::haveGpu()) return;
    const std::string text = R"({
      "mesh": {"box": {"lower": [-6, -6, -6], "upper": [6, 6, 6], "divisions": [6, 6, 6],
               "shapes": [{"region": 2, "type": "sphere", "centre": [0, 0, 0], "radius": 3.5}]}},
      "regions": [{"id": 1, "name": "tissue", "mu_a": 0.05, "mu_s": 5, "g": 0.8, "n": 1.37},
                  {"id": 2, "name": "tumour", "mu_a": 0.08, "mu_s": 8, "g": 0.9, "n": 1.37}],
      "sources": [{"type": "cylinder", "from": [-1, 0, -2], "to": [-1, 0, 2]},
                  {"type": "cylinder", "from": [1, 0, -2], "to": [1, 0, 2]}],
      "simulation": {"packets_per_source": 200000, "batches": 2, "devices": "all"},
      "prescription": {"targets": [{"region": "tumour", "threshold_J_cm2": 30}],
                       "organs_at_risk": [{"region": "tissue", "threshold_J_cm2": 10}]}})";
    std::vector<DoseMatrix> m;
    std::vector<PlanResult> r;
    std::vector<PlanSpec> plans;
    for (const char* kernel : {"cpu", "cuda"}) {
        plans.push_back(parsePlan(text, "gpu.json", ""));
        plans.back().simulation.kernel = kernel;
        SimulationReport sim;
        m.push_back(simulateSources(plans.back(), sim));
    }
    BOOST_TEST(fmtest::l1(m[0].fluence, m[1].fluence) < 1e-3);
    for (size_t k = 0; k < 2; ++k) {
        PlanProblem p{plans[k].mesh.get(), &m[k], &plans[k].sources, &plans[k].prescription, &plans[k].regionNames};
        r.push_back(optimisePlan(p));
        BOOST_REQUIRE(r.back().feasible);
    }
    BOOST_TEST(std::fabs(r[0].objective - r[1].objective) <= 1e-2 * r[0].objective);
}

BOOST_AUTO_TEST_SUITE_END()
