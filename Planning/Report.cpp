// SPDX-License-Identifier: GPL-3.0-or-later
#include "Planning/Report.hpp"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "Common/Errors.hpp"
#include "Planning/Figures.hpp"
#if FM_PLANNING_HAVE_VTK
#include "Storage/VTK/VTKMeshWriter.hpp"
#endif

namespace fm::planning {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string roleOf(const PlanSpec& p, uint32_t r, double& threshold) {
    threshold = NAN;
    for (const auto& t : p.prescription.targets)
        if (t.region == r) return threshold = t.threshold, "target";
    for (const auto& o : p.prescription.organs)
        if (o.region == r) return threshold = o.threshold, "organ at risk";
    return "other";
}

json estimate(const Estimate& e) { return {{"value", e.value}, {"se", e.se}}; }

std::string csvNum(double v) {
    if (!std::isfinite(v)) return "";
    char b[40];
    std::snprintf(b, sizeof b, "%.10g", v);
    return b;
}

std::string csvText(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string o = "\"";
    for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
    return o + "\"";
}

std::ofstream openOut(const fs::path& p) {
    std::ofstream o(p);
    if (!o) throw Error(p.string() + ": cannot write");
    return o;
}

void closeOut(std::ofstream& o, const fs::path& p) {
    o.close();
    if (!o) throw Error(p.string() + ": write failed (disk full?)");
}

void writeSourcesCsv(const fs::path& dir, const PlanRecord& rec) {
    fs::path p = dir / "sources.csv";
    auto o = openOut(p);
    const double T = rec.plan->prescription.treatmentTime;
    o << "source,type,used,energy_J,power_W,min_energy_J,max_energy_J\n";
    for (size_t j = 0; j < rec.plan->sources.size(); ++j) {
        const auto& s = rec.plan->sources[j];
        double e = rec.result->energies[j];
        o << csvText(s.name) << "," << s.source->typeName() << "," << (rec.result->used[j] ? "yes" : "no") << ","
          << csvNum(e) << "," << csvNum(std::isfinite(T) ? e / T : NAN) << "," << csvNum(s.minEnergy) << ","
          << csvNum(s.maxEnergy) << "\n";
    }
    closeOut(o, p);
}

void writeMetricsCsv(const fs::path& dir, const PlanRecord& rec) {
    fs::path p = dir / "metrics.csv";
    auto o = openOut(p);
    o << "region_id,region,role,volume_mm3,threshold_J_cm2,D90_J_cm2,D90_se,D50_J_cm2,D50_se,D10_J_cm2,D10_se,"
         "Dmax_J_cm2,Dmax_se,Dmean_J_cm2,Dmean_se,V100_percent,V100_se_percent\n";
    for (const RegionMetrics& m : rec.evaluation->regions) {
        o << m.region << "," << csvText(m.name) << "," << m.role << "," << csvNum(m.volume) << "," << csvNum(m.threshold);
        for (const Estimate* e : {&m.D90, &m.D50, &m.D10, &m.Dmax, &m.Dmean}) o << "," << csvNum(e->value) << "," << csvNum(e->se);
        o << "," << csvNum(100 * m.V100.value) << "," << csvNum(100 * m.V100.se) << "\n";
    }
    closeOut(o, p);
}

void writeConstraintsCsv(const fs::path& dir, const PlanRecord& rec) {
    fs::path p = dir / "constraints.csv";
    auto o = openOut(p);
    o << "constraint,limit,value,unit,met\n";
    for (const auto& c : rec.result->checks)
        o << csvText(c.name) << "," << csvNum(c.limit) << "," << csvNum(c.value) << "," << c.unit << "," << (c.met ? "yes" : "no") << "\n";
    closeOut(o, p);
}

void writeDoseCsv(const fs::path& dir, const PlanRecord& rec) {
    fs::path p = dir / "dose.csv";
    auto o = openOut(p);
    const TetraMesh& m = *rec.plan->mesh;
    o << "tetra,region,volume_mm3,dose_J_cm2,dose_se_J_cm2\n";
    char b[160];
    for (uint32_t t = 1; t <= m.tetraCount(); ++t) {
        std::snprintf(b, sizeof b, "%u,%u,%.17g,%.17g,%s\n", t, m.region(t), m.volume(t), rec.evaluation->dose[t],
                      csvNum(rec.evaluation->doseSe[t]).c_str());
        o << b;
    }
    closeOut(o, p);
}

void writeDvhCsv(const fs::path& dir, const PlanRecord& rec) {
    fs::path p = dir / "dvh.csv";
    auto o = openOut(p);
    o << "region,dose_J_cm2,volume_percent_at_least\n";
    for (const RegionMetrics& m : rec.evaluation->regions) {
        DoseHistogram h = doseHistogram(*rec.plan->mesh, rec.evaluation->dose, m.region);
        for (size_t i = 0; i < h.dose.size(); ++i) o << csvText(m.name) << "," << csvNum(h.dose[i]) << "," << csvNum(100 * h.cdf[i]) << "\n";
    }
    closeOut(o, p);
}

std::vector<double> isodoseLevels(const PlanSpec& p) {
    std::vector<double> l;
    for (const auto& t : p.prescription.targets) l.push_back(t.threshold);
    for (const auto& o : p.prescription.organs)
        if (std::isfinite(o.threshold)) l.push_back(o.threshold);
    std::sort(l.begin(), l.end());
    l.erase(std::unique(l.begin(), l.end()), l.end());
    return l;
}

std::vector<std::string> writeFigures(const fs::path& dir, const PlanRecord& rec) {
    const PlanSpec& p = *rec.plan;
    std::vector<SourceMarker> markers;
    for (size_t j = 0; j < p.sources.size(); ++j)
        if (rec.result->used[j] && rec.result->energies[j] > 0) markers.push_back(markerOf(p.sources[j].name, *p.sources[j].source));
    SliceStyle style;
    style.isodose = isodoseLevels(p);
    std::vector<std::string> files;
    for (const SlicePlane& s : slicePlanes(p)) {
        char name[64];
        std::snprintf(name, sizeof name, "slice_%c%+g.png", char('x' + s.axis), s.at);
        renderDoseSlice((dir / name).string(), *p.mesh, rec.evaluation->dose, p.regionNames, markers, s, style,
                        "Planned dose (J/cm^2)");
        files.push_back(name);
    }
    std::vector<DvhCurve> curves;
    std::vector<DvhMark> marks;
    for (const RegionMetrics& m : rec.evaluation->regions) {
        DoseHistogram h = doseHistogram(*p.mesh, rec.evaluation->dose, m.region);
        size_t k = curves.size();
        curves.push_back({m.name, h.dose, h.cdf});
        for (const auto& t : p.prescription.targets)
            if (t.region == m.region) {
                marks.push_back({"goal " + m.name + " V" + csvNum(t.threshold) + (std::isfinite(t.v100Goal) ? " >= " + csvNum(100 * t.v100Goal) + "%" : ""),
                                 t.threshold, std::isfinite(t.v100Goal) ? t.v100Goal : 1.0, false, k});
                for (const auto& d : t.minDoses)
                    marks.push_back({"goal " + m.name + " D" + csvNum(100 * d.fraction) + " >= " + csvNum(d.dose) + " J/cm^2", d.dose, d.fraction, false, k});
            }
        for (const auto& o : p.prescription.organs)
            if (o.region == m.region)
                for (const auto& d : o.maxDoses)
                    marks.push_back({"limit " + m.name + (d.fraction > 0 ? " D" + csvNum(100 * d.fraction) : std::string(" max")) +
                                         " <= " + csvNum(d.dose) + " J/cm^2",
                                     d.dose, d.fraction, true, k});
    }
    renderDvh((dir / "dvh.png").string(), curves, marks, "Dose-volume histograms");
    files.push_back("dvh.png");
    return files;
}

std::string line(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string line(const char* f, ...) {
    char b[512];
    va_list ap;
    va_start(ap, f);
    std::vsnprintf(b, sizeof b, f, ap);
    va_end(ap);
    return b;
}

}  // namespace

std::string planSummary(const PlanSpec& p, const PlanResult& r, const PlanEvaluation& e) {
    std::string o = line("plan: %s (%s, %zu LP solves, %.3f s, CPU %.3f s)\n", r.feasible ? "found" : r.status.c_str(),
                         r.solver.c_str(), r.solves, r.seconds, r.cpuSeconds);
    if (!r.feasible) {
        o += "  the prescription cannot be met; conflicting hard constraints:\n";
        for (const auto& c : r.conflicts) o += line("    %s  (needs %.4g %s of slack)\n", c.name.c_str(), c.slack, c.unit.c_str());
        for (const auto& t : r.tight) o += line("    %s  (at its limit)\n", t.c_str());
        return o;
    }
    const double T = p.prescription.treatmentTime;
    for (size_t j = 0; j < p.sources.size(); ++j)
        if (r.used[j])
            o += std::isfinite(T) ? line("  %-12s %10.4g J  %8.4g W\n", p.sources[j].name.c_str(), r.energies[j], r.energies[j] / T)
                                  : line("  %-12s %10.4g J\n", p.sources[j].name.c_str(), r.energies[j]);
    if (!r.dropped.empty()) o += line("  dropped: %zu sources (energy ~0, or over the source cap)\n", r.dropped.size());
    o += line("  %-12s %-14s %18s %18s %18s %16s\n", "region", "role", "D90 (J/cm^2)", "D50 (J/cm^2)", "Dmax (J/cm^2)", "V100 (%)");
    for (const auto& m : e.regions)
        o += line("  %-12s %-14s %9.4g +- %-6.2g %9.4g +- %-6.2g %9.4g +- %-6.2g ", m.name.c_str(), m.role.c_str(), m.D90.value,
                  m.D90.se, m.D50.value, m.D50.se, m.Dmax.value, m.Dmax.se) +
             (std::isfinite(m.V100.value) ? line("%7.2f +- %-6.2g\n", 100 * m.V100.value, 100 * m.V100.se) : std::string("      -\n"));
    for (const auto& c : r.checks) o += line("  %s: %.4g %s  %s\n", c.name.c_str(), c.value, c.unit.c_str(), c.met ? "met" : "NOT MET");
    if (!r.goalsMet) o += "  a V100 coverage goal is not met\n";
    return o;
}

std::vector<SlicePlane> slicePlanes(const PlanSpec& p) {
    if (!p.slices.empty()) return p.slices;
    Point3 lo{1e300, 1e300, 1e300}, hi{-1e300, -1e300, -1e300};
    uint32_t target = p.prescription.targets.empty() ? 0 : p.prescription.targets[0].region;
    for (uint32_t t = 1; t <= p.mesh->tetraCount(); ++t)
        if (!target || p.mesh->region(t) == target)
            for (uint32_t v : p.mesh->tetra(t))
                for (int a = 0; a < 3; ++a) lo[a] = std::min(lo[a], p.mesh->point(v)[a]), hi[a] = std::max(hi[a], p.mesh->point(v)[a]);
    return {{2, (lo[2] + hi[2]) / 2}, {1, (lo[1] + hi[1]) / 2}, {0, (lo[0] + hi[0]) / 2}};
}

PlanEvaluation evaluatePlan(const PlanSpec& plan, const DoseMatrix& m, const std::vector<double>& energies) {
    PlanEvaluation e;
    e.dose = m.dose(energies);
    for (size_t k = 0; k < m.batches && m.batches > 1; ++k) e.batchDoses.push_back(m.batchDose(energies, k));
    e.doseSe.assign(e.dose.size(), NAN);
    for (size_t t = 1; t < e.dose.size(); ++t) {
        std::vector<double> x;
        for (const auto& b : e.batchDoses) x.push_back(b[t]);
        e.doseSe[t] = batchStandardError(x);
    }
    std::vector<uint32_t> order;
    for (const auto& t : plan.prescription.targets) order.push_back(t.region);
    for (const auto& o : plan.prescription.organs) order.push_back(o.region);
    for (auto& [r, name] : plan.regionNames)
        if (std::find(order.begin(), order.end(), r) == order.end() && r < plan.mesh->regionCount() &&
            plan.mesh->regionVolume(r) > 0)
            order.push_back(r);
    for (uint32_t r : order) {
        double th;
        std::string role = roleOf(plan, r, th);
        RegionMetrics rm = regionMetrics(*plan.mesh, e.dose, e.batchDoses, r, th);
        rm.name = plan.regionName(r);
        rm.role = role;
        e.regions.push_back(std::move(rm));
    }
    return e;
}

std::string planJson(const PlanRecord& rec) {
    const PlanSpec& p = *rec.plan;
    const PlanResult& r = *rec.result;
    json j;
    j["plan_file"] = p.file;
    j["status"] = r.feasible ? (r.goalsMet ? "optimal" : "optimal, coverage goal not met") : r.status;
    j["dose_unit"] = "J/cm^2 (fluence J/mm^2 x 100)";
    j["energy_unit"] = "J";
    j["mesh"] = {{"tetras", p.mesh->tetraCount()}, {"unit", "mm"}};
    j["matrix"] = {{"from", rec.matrixFrom}, {"sources", rec.matrix->sources}, {"batches", rec.matrix->batches},
                   {"column", "batch * sources + source"}, {"model_fingerprint", fingerprintText(rec.matrix->model)}};
    if (!rec.matrixCheck.empty()) j["matrix"]["fingerprint_check"] = rec.matrixCheck;
    if (rec.matrixFrom == "simulated")
        j["simulation"] = {{"seconds", rec.simulation.seconds}, {"kernel", rec.simulation.kernel},
                           {"packets", rec.simulation.packets}, {"runs", rec.simulation.runs}, {"ranks", rec.simulation.ranks},
                           {"seeds", "seed + batch (seed " + std::to_string(p.simulation.seed) + ")"},
                           {"warnings", rec.simulation.warnings}};
    j["optimiser"] = {{"solver", r.solver}, {"objective_J_cm2", r.objective}, {"penalty_unweighted_J_cm2", r.penalty},
                      {"target_weights", r.targetWeights}, {"weight_rounds", r.weightRounds},
                      {"coverage_goals_met", r.goalsMet}, {"lp_columns", r.lpColumns}, {"lp_rows", r.lpRows},
                      {"lp_rows_solved", r.lpSolvedRows}, {"lp_rounds", r.lpRounds}, {"lp_warm_rounds", r.lpWarmRounds}, {"solves", r.solves}, {"seconds", r.seconds}, {"cpu_seconds", r.cpuSeconds}, {"dropped_sources", r.dropped}};
    const double T = p.prescription.treatmentTime;
    json src = json::array();
    for (size_t k = 0; k < p.sources.size(); ++k)
        src.push_back({{"name", p.sources[k].name}, {"type", p.sources[k].source->typeName()}, {"used", bool(r.used[k])},
                       {"energy_J", r.energies[k]}, {"power_W", std::isfinite(T) ? json(r.energies[k] / T) : json(nullptr)}});
    j["sources"] = src;
    double total = 0;
    for (double e : r.energies) total += e;
    j["total_energy_J"] = total;
    if (std::isfinite(T)) j["treatment_time_s"] = T;
    json regions = json::array();  // the dose of a plan that was found; none when infeasible
    for (const RegionMetrics& m : r.feasible ? rec.evaluation->regions : std::vector<RegionMetrics>{})
        regions.push_back({{"region", m.region}, {"name", m.name}, {"role", m.role}, {"volume_mm3", m.volume},
                           {"threshold_J_cm2", m.threshold}, {"D90", estimate(m.D90)}, {"D50", estimate(m.D50)},
                           {"D10", estimate(m.D10)}, {"Dmax", estimate(m.Dmax)}, {"Dmean", estimate(m.Dmean)},
                           {"V100_percent", {{"value", 100 * m.V100.value}, {"se", 100 * m.V100.se}}}});
    j["regions"] = regions;
    json checks = json::array();
    for (const auto& c : r.checks)
        checks.push_back({{"constraint", c.name}, {"limit", c.limit}, {"value", c.value}, {"unit", c.unit}, {"met", c.met}});
    j["hard_constraints"] = checks;
    if (!r.feasible) {
        json conf = json::array();
        for (const auto& c : r.conflicts) conf.push_back({{"constraint", c.name}, {"needs_slack", c.slack}, {"unit", c.unit}});
        j["infeasibility"] = {{"conflicting", conf}, {"at_their_limit", r.tight}};
    }
    j["standard_errors"] = rec.matrix->batches > 1
                               ? "batch means over " + std::to_string(rec.matrix->batches) + " independent sub-runs per source"
                               : std::string("not available (one batch per source)");
    return j.dump(2) + "\n";
}

void checkOutputFolder(const std::string& dir, bool overwrite) {
    std::error_code ec;
    if (fs::exists(dir, ec) && !overwrite)
        throw ParameterError(dir + ": the output folder exists (remove it, or pass --overwrite to replace it)");
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) throw ParameterError(dir + ": exists and is not a folder");
}

void writePlanOutputs(const std::string& dir, const PlanRecord& rec, bool overwrite) {
    checkOutputFolder(dir, overwrite);
    fs::path target = fs::absolute(dir);
    fs::path tmp = target.string() + ".partial-" + std::to_string(::getpid());
    fs::remove_all(tmp);
    fs::create_directories(tmp);
    try {
        std::ofstream o = openOut(tmp / "plan.json");
        o << planJson(rec);
        closeOut(o, tmp / "plan.json");
        writeSourcesCsv(tmp, rec);
        writeConstraintsCsv(tmp, rec);
        if (rec.result->feasible) {
            writeMetricsCsv(tmp, rec);
            writeDoseCsv(tmp, rec);
            writeDvhCsv(tmp, rec);
            writeFigures(tmp, rec);
#if FM_PLANNING_HAVE_VTK
            VTKMeshWriter w((tmp / "dose.vtu").string());
            w.mesh(*rec.plan->mesh);
            w.addData("Dose (J/cm^2)", rec.evaluation->dose);
            w.addData("Dose standard error (J/cm^2)", rec.evaluation->doseSe);
            w.addHeaderComment("FullMonte plan " + rec.plan->file);
            w.write();
#endif
        }
        if (rec.writeMatrix && rec.matrixFrom == "simulated") writeFluenceMatrix((tmp / "fluence_matrix.fmm").string(), toFluenceMatrix(*rec.matrix));
    } catch (...) {
        fs::remove_all(tmp);
        throw;
    }
    // Swap in: the old folder (with --overwrite) moves aside first and goes once the new one is in place.
    fs::path old = target.string() + ".old-" + std::to_string(::getpid());
    bool hadOld = fs::exists(target);
    if (hadOld) fs::rename(target, old);
    fs::rename(tmp, target);
    if (hadOld) fs::remove_all(old);
}

}  // namespace fm::planning
