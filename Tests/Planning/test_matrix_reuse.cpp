// SPDX-License-Identifier: GPL-3.0-or-later
// A saved fluence matrix is reused only for the model it was simulated from: the same plan loads
// it; a moved source, another mu_a, a mesh with other points (same tetra count) or other packets
// are refused, naming the file, the part that differs and the override; the override loads it
// with a warning; a file without a fingerprint loads with a warning; and fullmonte-plan does the
// same with --matrix-unchecked or the plan's "matrix_unchecked".
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include "Common/Errors.hpp"
#include "Planning/Report.hpp"

using namespace fm;
using namespace fm::planning;
namespace fs = std::filesystem;

namespace {

struct Variant {
    double sourceX = 0, muA = 0.08, upper = 5;
    unsigned packets = 300;
};

// The plan file of a variant.
nlohmann::json variantJson(const Variant& v) {
    nlohmann::json j = nlohmann::json::parse(R"({
      "mesh": {"box": {"lower": [-5, -5, -5], "upper": [5, 5, 5], "divisions": [4, 4, 4],
               "shapes": [{"region": 2, "type": "sphere", "centre": [0, 0, 0], "radius": 3}]}},
      "regions": [{"id": 1, "name": "tissue", "mu_a": 0.05, "mu_s": 5, "g": 0.9, "n": 1.37},
                  {"id": 2, "name": "tumour", "mu_a": 0.08, "mu_s": 8, "g": 0.9, "n": 1.37}],
      "sources": [{"name": "D1", "type": "cylinder", "from": [0, 0, -2], "to": [0, 0, 2]},
                  {"name": "P1", "type": "point", "position": [1, 1, 1]}],
      "simulation": {"packets_per_source": 300, "batches": 2, "threads": 2},
      "prescription": {"targets": [{"region": "tumour", "threshold_J_cm2": 40}]}
    })");
    j["mesh"]["box"]["upper"] = {v.upper, 5, 5};
    j["regions"][1]["mu_a"] = v.muA;
    j["sources"][0]["from"] = {v.sourceX, 0, -2};
    j["sources"][0]["to"] = {v.sourceX, 0, 2};
    j["simulation"]["packets_per_source"] = v.packets;
    return j;
}

PlanSpec plan(const Variant& v) { return parsePlan(variantJson(v).dump(), "reuse.json", ""); }

fs::path tmpDir() {
    fs::path d = fs::temp_directory_path() / ("fm_matrix_reuse_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
}

MatrixReuse reuse(const std::string& file, bool unchecked = false) {
    MatrixReuse r;
    r.file = file;
    r.unchecked = unchecked;
    r.uncheckedOption = "--matrix-unchecked";
    return r;
}

// The ParameterError loadPlanMatrix throws for this plan, or "" when it loads.
std::string refusal(const PlanSpec& p, const std::string& file) {
    std::vector<std::string> warnings;
    try {
        loadPlanMatrix(p, reuse(file), warnings);
    } catch (const ParameterError& e) {
        return e.what();
    }
    return "";
}

std::string run(const std::string& args, const fs::path& log, int& status) {
    const int rc = std::system((std::string(FM_PLAN_EXE) + " " + args + " > " + log.string() + " 2>&1").c_str());
    status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    std::stringstream text;
    text << std::ifstream(log).rdbuf();
    return text.str();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(planning_matrix_reuse)

BOOST_AUTO_TEST_CASE(reuse_is_checked_against_the_plans_model) {
    const fs::path dir = tmpDir();
    const std::string file = (dir / "m.fmm").string();
    SimulationReport sim;
    const PlanSpec original = plan({});
    const DoseMatrix m = simulateSources(original, sim);
    BOOST_TEST((m.model == planFingerprint(original, 2)));
    writeFluenceMatrix(file, toFluenceMatrix(m));
    BOOST_TEST((readFluenceMatrixHeader(file).model == m.model));

    // The same model, parsed again: loads, nothing to warn about.
    {
        std::vector<std::string> warnings;
        std::string check;
        const DoseMatrix back = loadPlanMatrix(plan({}), reuse(file), warnings, &check);
        BOOST_TEST(back.fluence == m.fluence);
        BOOST_TEST(warnings.empty());
        BOOST_TEST(check == "matches the plan");
    }
    // Each other model is refused, naming the file, the part and the override.
    struct Case {
        Variant v;
        std::string part;
    };
    Variant moved, muA, mesh, packets;
    moved.sourceX = 0.5;
    muA.muA = 0.09;
    mesh.upper = 6;  // the same 4 x 4 x 4 boxes (same tetra count), other points
    packets.packets = 400;
    for (const Case& c : {Case{moved, "(different sources;"}, Case{muA, "(different materials;"},
                          Case{mesh, "(different mesh;"}, Case{packets, "(different packets or kernel settings;"}}) {
        const std::string e = refusal(plan(c.v), file);
        BOOST_TEST(e.rfind(file + ": ", 0) == 0u, e);
        BOOST_TEST(e.find(c.part) != std::string::npos, e);
        BOOST_TEST(e.find("--matrix-unchecked") != std::string::npos, e);
    }
    // The override: loads, with a warning naming what differs.
    {
        std::vector<std::string> warnings;
        std::string check;
        const DoseMatrix back = loadPlanMatrix(plan(moved), reuse(file, true), warnings, &check);
        BOOST_TEST(back.fluence == m.fluence);
        BOOST_REQUIRE_EQUAL(warnings.size(), 1u);
        BOOST_TEST(warnings[0].find("different sources") != std::string::npos, warnings[0]);
        BOOST_TEST(check == "differs (sources): used unchecked");
    }
    // A file without a fingerprint (as written before there was one): loads, with a warning.
    {
        FluenceMatrix old = toFluenceMatrix(m);
        old.header.model = {};
        const std::string oldFile = (dir / "old.fmm").string();
        writeFluenceMatrix(oldFile, old);
        std::vector<std::string> warnings;
        std::string check;
        const DoseMatrix back = loadPlanMatrix(plan(moved), reuse(oldFile), warnings, &check);
        BOOST_TEST(back.fluence == m.fluence);
        BOOST_REQUIRE_EQUAL(warnings.size(), 1u);
        BOOST_TEST(warnings[0].rfind(oldFile + ": the matrix carries no model fingerprint", 0) == 0u, warnings[0]);
        BOOST_TEST(check == "none in the file: not checked");
    }
    // The batch count is taken from the matrix: the same packets in 1 batch are another matrix.
    BOOST_TEST((planFingerprint(original, 1).runs != m.model.runs));
    fs::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(fullmonte_plan_refuses_or_overrides) {
    const fs::path dir = tmpDir();
    const fs::path planFile = dir / "plan.json", movedFile = dir / "moved.json", log = dir / "log";
    std::ofstream(planFile) << variantJson({}).dump();
    Variant moved;
    moved.sourceX = 0.5;
    std::ofstream(movedFile) << variantJson(moved).dump();
    int status = -1;
    std::string out = run(planFile.string() + " -o " + (dir / "a").string() + " --quiet", log, status);
    BOOST_REQUIRE_MESSAGE(status == 0, out);
    const std::string matrix = (dir / "a" / "fluence_matrix.fmm").string();
    auto a = nlohmann::json::parse(std::ifstream(dir / "a" / "plan.json"));
    BOOST_TEST(a["matrix"]["model_fingerprint"].get<std::string>() == fingerprintText(readFluenceMatrixHeader(matrix).model));

    out = run(movedFile.string() + " -o " + (dir / "b").string() + " --quiet --matrix " + matrix, log, status);
    BOOST_TEST(status == 1, out);
    BOOST_TEST(out.find(matrix + ": the matrix was simulated from another model") != std::string::npos, out);
    BOOST_TEST(out.find("different sources") != std::string::npos, out);
    BOOST_TEST(out.find("--matrix-unchecked") != std::string::npos, out);
    BOOST_TEST(!fs::exists(dir / "b"));

    out = run(movedFile.string() + " -o " + (dir / "c").string() + " --quiet --matrix-unchecked --matrix " + matrix, log,
              status);
    BOOST_TEST(status == 0, out);
    BOOST_TEST(out.find("warning: " + matrix + ": the matrix was simulated from another model") != std::string::npos, out);
    auto c = nlohmann::json::parse(std::ifstream(dir / "c" / "plan.json"));
    BOOST_TEST(c["matrix"]["fingerprint_check"].get<std::string>() == "differs (sources): used unchecked");

    // The same from the plan file: "matrix" and "matrix_unchecked" in its simulation.
    auto viaPlan = variantJson(moved);
    viaPlan["simulation"]["matrix"] = matrix;
    std::ofstream(movedFile) << viaPlan.dump();
    run(movedFile.string() + " -o " + (dir / "d").string() + " --quiet", log, status);
    BOOST_TEST(status == 1);
    viaPlan["simulation"]["matrix_unchecked"] = true;
    std::ofstream(movedFile) << viaPlan.dump();
    out = run(movedFile.string() + " -o " + (dir / "d").string() + " --quiet", log, status);
    BOOST_TEST(status == 0, out);
    fs::remove_all(dir);
}

BOOST_AUTO_TEST_SUITE_END()
