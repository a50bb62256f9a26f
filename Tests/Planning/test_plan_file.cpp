// SPDX-License-Identifier: GPL-3.0-or-later
// Bad plan files: each error names the JSON path and what is wrong.
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include "Common/Errors.hpp"
#include "Planning/PlanSpec.hpp"

using namespace fm;
using namespace fm::planning;
using json = nlohmann::json;

namespace {

json goodPlan() {
    return json::parse(R"({
      "mesh": {"box": {"lower": [-5, -5, -5], "upper": [5, 5, 5], "divisions": [4, 4, 4],
               "shapes": [{"region": 2, "type": "sphere", "centre": [0, 0, 0], "radius": 3}]}},
      "regions": [{"id": 1, "name": "tissue", "mu_a": 0.05, "mu_s": 5, "g": 0.9, "n": 1.37},
                  {"id": 2, "name": "tumour", "mu_a": 0.08, "mu_s": 8, "g": 0.9, "n": 1.37}],
      "sources": [{"name": "D1", "type": "cylinder", "from": [0, 0, -2], "to": [0, 0, 2], "max_power_W": 1},
                  {"type": "point", "position": [1, 1, 1]}],
      "prescription": {"treatment_time_s": 100,
                       "targets": [{"region": "tumour", "threshold_J_cm2": 40}],
                       "organs_at_risk": [{"region": "tissue", "max_doses": [{"D_percent": 10, "max_J_cm2": 20}]}]}
    })");
}

// The plan with one change must fail with a message holding every `expect` string.
void expectError(const std::function<void(json&)>& change, std::vector<std::string> expect) {
    json j = goodPlan();
    change(j);
    try {
        parsePlan(j.dump(), "plan.json", "");
        BOOST_ERROR("no error for a plan expected to fail with: " + expect[0]);
    } catch (const ParameterError& e) {
        std::string m = e.what();
        BOOST_TEST_MESSAGE(m);
        for (const auto& s : expect) BOOST_TEST((m.find(s) != std::string::npos), "'" << s << "' not in: " << m);
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(planning_plan_file)

BOOST_AUTO_TEST_CASE(good_plan_reads) {
    PlanSpec p = parsePlan(goodPlan().dump(), "plan.json", "");
    BOOST_TEST(p.sources.size() == 2u);
    BOOST_TEST(p.sources[0].maxEnergy == 100.0);  // 1 W x 100 s
    BOOST_TEST(p.sources[1].name == "S2");
    BOOST_TEST(p.prescription.targets[0].region == 2u);
    BOOST_TEST(p.prescription.organs[0].maxDoses[0].fraction == 0.1);
}

BOOST_AUTO_TEST_CASE(missing_fields) {
    expectError([](json& j) { j.erase("mesh"); }, {"plan.json: /: missing field 'mesh'"});
    expectError([](json& j) { j["prescription"]["targets"][0].erase("threshold_J_cm2"); },
                {"/prescription/targets/0", "threshold_J_cm2"});
    expectError([](json& j) { j["sources"][0].erase("to"); }, {"/sources/0", "missing field 'to'"});
    expectError([](json& j) { j["regions"][1].erase("mu_s"); }, {"/regions/1", "mu_s"});
}

BOOST_AUTO_TEST_CASE(unknown_regions) {
    expectError([](json& j) { j["prescription"]["targets"][0]["region"] = "tumor"; },
                {"/prescription/targets/0/region", "unknown region 'tumor'", "tissue, tumour"});
    expectError([](json& j) { j["prescription"]["organs_at_risk"][0]["region"] = 7; },
                {"/prescription/organs_at_risk/0/region", "region 7 has no tetras"});
    expectError([](json& j) { j["regions"].erase(1); }, {"/regions", "region 2", "no entry gives its optical properties"});
}

BOOST_AUTO_TEST_CASE(negative_and_bad_values) {
    expectError([](json& j) { j["sources"][0]["max_power_W"] = -1; }, {"/sources/0/max_power_W", "must not be negative"});
    expectError([](json& j) { j["prescription"]["targets"][0]["threshold_J_cm2"] = -4; },
                {"/prescription/targets/0/threshold_J_cm2", "must not be negative"});
    expectError([](json& j) { j["regions"][0]["g"] = 1.2; }, {"/regions/0/g", "|g| < 1"});
    expectError([](json& j) { j["sources"][1]["type"] = "laser"; }, {"/sources/1/type", "unknown source type 'laser'"});
    expectError([](json& j) { j["sources"][0]["min_energy_J"] = 500; }, {"/sources/0", "minimum energy exceeds maximum"});
    expectError([](json& j) { j["prescription"]["organs_at_risk"][0]["max_doses"][0]["D_percent"] = 140; },
                {"/prescription/organs_at_risk/0/max_doses/0/D_percent", "[0, 100]"});
}

BOOST_AUTO_TEST_CASE(slices_outside_the_mesh) {
    expectError([](json& j) { j["outputs"] = json::parse(R"({"slices": [{"axis": "z", "at_mm": 1000}]})"); },
                {"/outputs/slices/0/at_mm", "1000 mm is outside the mesh (z -5 .. 5 mm)"});
    json j = goodPlan();
    j["outputs"] = json::parse(R"({"slices": [{"axis": "x", "at_mm": 5}]})");  // on the boundary: kept
    BOOST_TEST(parsePlan(j.dump(), "plan.json", "").slices.size() == 1u);
}

BOOST_AUTO_TEST_CASE(conflicting_units) {
    expectError([](json& j) { j["prescription"]["targets"][0]["threshold_J_mm2"] = 0.4; },
                {"/prescription/targets/0/threshold_J_mm2", "conflicting units"});
    expectError([](json& j) { j["sources"][0]["max_energy_J"] = 100; }, {"/sources/0/max_power_W", "conflicting units"});
    expectError([](json& j) { j["prescription"]["targets"][0]["threshold"] = 40; },
                {"/prescription/targets/0/threshold", "give the unit in the key"});
    expectError([](json& j) { j["prescription"].erase("treatment_time_s"); },
                {"/sources/0/max_power_W", "treatment_time_s"});
}

BOOST_AUTO_TEST_CASE(misspelt_and_malformed) {
    expectError([](json& j) { j["prescription"]["targets"][0]["V100_goal"] = 98; },
                {"/prescription/targets/0/V100_goal", "unknown field"});
    try {
        parsePlan("{\"mesh\": ", "plan.json", "");
        BOOST_ERROR("no error for truncated JSON");
    } catch (const ParameterError& e) {
        BOOST_TEST((std::string(e.what()).find("plan.json: not valid JSON") != std::string::npos));
    }
    BOOST_CHECK_THROW(readPlanFile("/nonexistent/plan.json"), ParameterError);
}

BOOST_AUTO_TEST_CASE(pdt_threshold_model) {
    // Threshold = photodynamic threshold dose / photosensitizer absorption: 8.6e17 photons/cm^3 of
    // 635 nm light (E = h c / lambda each) over mu_a,PS = 0.01/mm = 0.1/cm.
    json j = goodPlan();
    j["regions"][1]["photosensitizer_mu_a_per_mm"] = 0.01;
    j["regions"][0]["photosensitizer_mu_a_per_mm"] = 0.002;
    j["prescription"]["pdt_threshold_photons_cm3"] = 8.6e17;
    j["prescription"]["wavelength_nm"] = 635;
    j["prescription"]["targets"][0].erase("threshold_J_cm2");
    PlanSpec p = parsePlan(j.dump(), "plan.json", "");
    const double expected = 8.6e17 * 6.62607015e-34 * 299792458.0 / 635e-9 / 0.1;
    BOOST_TEST(std::fabs(p.prescription.targets[0].threshold - expected) < 1e-12 * expected);
    BOOST_TEST(std::fabs(p.prescription.organs[0].threshold - 5 * expected) < 1e-12 * expected);  // 5x less drug
    expectError([](json& j) {
        j["regions"][1]["photosensitizer_mu_a_per_mm"] = 0.01;
        j["prescription"]["pdt_threshold_J_cm3"] = 0.3;
    }, {"/prescription/targets/0/threshold_J_cm2", "PDT threshold model", "one or the other"});
    expectError([](json& j) { j["prescription"]["pdt_threshold_photons_cm3"] = 8.6e17; },
                {"/prescription/pdt_threshold_photons_cm3", "wavelength_nm"});
    expectError([](json& j) {
        j["prescription"]["pdt_threshold_photons_cm3"] = 8.6e17;
        j["prescription"]["pdt_threshold_J_cm3"] = 0.3;
    }, {"/prescription/pdt_threshold_photons_cm3", "conflicting units"});
}

BOOST_AUTO_TEST_SUITE_END()
