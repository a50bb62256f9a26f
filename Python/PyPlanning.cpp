// SPDX-License-Identifier: GPL-3.0-or-later
// The plan optimiser (Planning/, fullmonte-plan, Tcl PlanOptimizer) and its cairo pictures
// (Tcl DoseSlicePicture): a Plan from a JSON plan file (docs/PLANNING.md), its per-source
// simulations (GIL released, Ctrl-C cancels), the LP optimisation, the evaluation with standard
// errors and the output folder. Doses are J/cm^2 throughout, as in Planning/. Without the planner
// (FM_USE_PLANNING=OFF) nothing is defined here; fullmonte/__init__.py says which option builds it.
#include "Python/PyCommon.hpp"
#ifdef FM_PY_PLANNING
#include "Planning/Figures.hpp"
#include "Planning/Optimizer.hpp"
#include "Planning/Report.hpp"
#include "Planning/Simulate.hpp"
#endif

namespace fmpy {
#ifdef FM_PY_PLANNING
namespace {

namespace pl = fm::planning;

struct Plan {
    pl::PlanSpec spec;
};

struct Matrix {
    pl::DoseMatrix m;
    std::string from;  // "simulated" or the file
    std::string check;  // loaded: what its model fingerprint check found (pl::loadPlanMatrix)
    pl::SimulationReport report;
};

struct Evaluation {
    pl::PlanEvaluation e;
};

py::dict estimate(const pl::Estimate& e) {
    py::dict d;
    d["value"] = e.value;
    d["se"] = e.se;
    return d;
}

py::dict metricsDict(const pl::RegionMetrics& r) {
    py::dict d;
    d["region"] = r.region;
    d["name"] = r.name;
    d["role"] = r.role;
    d["volume"] = r.volume;
    d["threshold"] = r.threshold;
    d["D90"] = estimate(r.D90);
    d["D50"] = estimate(r.D50);
    d["D10"] = estimate(r.D10);
    d["Dmax"] = estimate(r.Dmax);
    d["Dmean"] = estimate(r.Dmean);
    d["V100"] = estimate(r.V100);
    return d;
}

std::vector<double> energiesArg(const Plan& p, py::handle energies) {
    std::vector<double> e;
    try {
        e = energies.cast<std::vector<double>>();
    } catch (const py::cast_error&) {
        throw py::type_error("energies: expected a sequence of numbers (J per candidate source)");
    }
    if (e.size() != p.spec.sources.size())
        throw py::value_error("energies: expected " + std::to_string(p.spec.sources.size()) + " values (one per source), got " +
                              std::to_string(e.size()));
    for (double x : e)
        if (!std::isfinite(x) || x < 0) throw py::value_error("energies: must be finite and >= 0 (J)");
    return e;
}

void checkMatrix(const Plan& p, const Matrix& m) {
    if (m.m.tetras != p.spec.mesh->tetraCount() || m.m.sources != p.spec.sources.size())
        throw py::value_error("the dose matrix (" + std::to_string(m.m.tetras) + " tetras x " +
                              std::to_string(m.m.sources) + " sources) is not this plan's (" +
                              std::to_string(p.spec.mesh->tetraCount()) + " x " +
                              std::to_string(p.spec.sources.size()) + ")");
}

py::dict resultDict(const pl::PlanResult& r) {
    py::dict d;
    d["feasible"] = r.feasible;
    d["status"] = r.status;
    d["energies"] = r.energies;
    d["used"] = r.used;
    d["dropped"] = r.dropped;
    d["objective"] = r.objective;
    d["penalty"] = r.penalty;
    d["target_weights"] = r.targetWeights;
    d["goals_met"] = r.goalsMet;
    py::list checks;
    for (const auto& c : r.checks) {
        py::dict x;
        x["name"] = c.name;
        x["limit"] = c.limit;
        x["value"] = c.value;
        x["unit"] = c.unit;
        x["upper"] = c.upper;
        x["met"] = c.met;
        checks.append(x);
    }
    d["checks"] = checks;
    py::list conflicts;
    for (const auto& c : r.conflicts) {
        py::dict x;
        x["name"] = c.name;
        x["slack"] = c.slack;
        x["unit"] = c.unit;
        conflicts.append(x);
    }
    d["conflicts"] = conflicts;
    d["tight"] = r.tight;
    d["solver"] = r.solver;
    d["seconds"] = r.seconds;
    return d;
}

// What optimise() found (Python PlanSolution), kept whole for summary() and write().
struct Solution {
    pl::PlanResult r;
};

int axisArg(const std::string& axis) {
    if (axis == "x") return 0;
    if (axis == "y") return 1;
    if (axis == "z") return 2;
    throw py::value_error("axis: '" + axis + "' is not x, y or z");
}

void bindPlan(py::module_& m) {
    py::class_<Matrix, std::shared_ptr<Matrix>>(m, "DoseMatrix", R"doc(
Fluence per joule emitted (mm^-2) per tetra, candidate source and independent batch: the data the
optimiser works on. fluence is a read-only view shaped (batches, sources, tetras).)doc")
        .def_property_readonly("fluence", [](py::object self) {
            const auto& x = self.cast<const Matrix&>().m;
            py::array_t<double> a({py::ssize_t(x.batches), py::ssize_t(x.sources), py::ssize_t(x.tetras)},
                                  x.fluence.data(), self);
            py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
            return a;
        }, "(batches, sources, tetras) fluence per J emitted, mm^-2 (read-only view)")
        .def_property_readonly("tetras", [](const Matrix& x) { return x.m.tetras; }, "Rows: tetras")
        .def_property_readonly("sources", [](const Matrix& x) { return x.m.sources; }, "Candidate sources")
        .def_property_readonly("batches", [](const Matrix& x) { return x.m.batches; }, "Independent batches per source")
        .def_readonly("origin", &Matrix::from, "'simulated' or the file it was read from")
        .def_readonly("fingerprint_check", &Matrix::check,
                      "Loaded: what the model fingerprint check found ('matches the plan', 'none in the file: not "
                      "checked', 'differs (...): used unchecked'); '' when simulated")
        .def("dose", [](const Matrix& x, py::handle energies) {
            std::vector<double> e;
            try {
                e = energies.cast<std::vector<double>>();
            } catch (const py::cast_error&) {
                throw py::type_error("dose: energies must be a sequence of numbers (J per source)");
            }
            if (e.size() != x.m.sources)
                throw py::value_error("dose: expected " + std::to_string(x.m.sources) + " energies");
            return owned(x.m.dose(e), 1);
        }, py::arg("energies"), "Dose per tetra in J/cm^2 for these energies (J per source), from the batch mean")
        .def("write", [](const Matrix& x, const std::string& path) { fm::writeFluenceMatrix(path, pl::toFluenceMatrix(x.m)); },
             py::arg("path"), "Writes it as a fluence-matrix file (columns batch * sources + source)");

    py::class_<Solution, std::shared_ptr<Solution>>(m, "PlanSolution", "What optimise() found; as_dict() has every field")
        .def_property_readonly("feasible", [](const Solution& s) { return s.r.feasible; }, "Every hard limit can hold")
        .def_property_readonly("status", [](const Solution& s) { return s.r.status; }, "'optimal', 'infeasible', ...")
        .def_property_readonly("energies", [](const Solution& s) { return s.r.energies; }, "J per candidate source")
        .def_property_readonly("dropped", [](const Solution& s) { return s.r.dropped; }, "Sources dropped, in order")
        .def("as_dict", [](const Solution& s) { return resultDict(s.r); },
             "Every field: energies, used, objective, checks, conflicts, tight, solver, ...");

    py::class_<Evaluation, std::shared_ptr<Evaluation>>(m, "PlanEvaluation",
                                                        "A plan's dose (J/cm^2 per tetra) and region metrics")
        .def_property_readonly("dose", [](py::object self) {
            const auto& d = self.cast<const Evaluation&>().e.dose;
            return view(d.data() + 1, d.size() - 1, self);
        }, "J/cm^2 per tetra (read-only view)")
        .def_property_readonly("dose_se", [](py::object self) {
            const auto& d = self.cast<const Evaluation&>().e.doseSe;
            return view(d.data() + 1, d.size() - 1, self);
        }, "Batch-means standard error of the dose, J/cm^2 (NaN with one batch)")
        .def_property_readonly("regions", [](const Evaluation& e) {
            py::list l;
            for (const auto& r : e.e.regions) l.append(metricsDict(r));
            return l;
        }, "Per region: D90, D50, D10, Dmax, Dmean (J/cm^2) and V100 (fraction), each {value, se}");

    py::class_<Plan, std::shared_ptr<Plan>>(m, "Plan", R"doc(
A PDT plan (docs/PLANNING.md): Plan(path) reads a JSON plan file, Plan.from_json(text, name,
base_dir) the same from text. simulate() runs the candidate sources (or load_matrix reads a saved
matrix), optimise(matrix) finds the energies, evaluate(matrix, energies) the dose and metrics,
write(dir, ...) the folder fullmonte-plan writes. Errors name the file and JSON path.)doc")
        .def(py::init([](const std::string& path) {
                 auto p = std::make_shared<Plan>();
                 p->spec = pl::readPlanFile(path);
                 return p;
             }), py::arg("path"))
        .def_static("from_json", [](const std::string& text, const std::string& name, const std::string& baseDir) {
            auto p = std::make_shared<Plan>();
            p->spec = pl::parsePlan(text, name, baseDir);
            return p;
        }, py::arg("text"), py::arg("name") = "plan", py::arg("base_dir") = ".")
        .def_property_readonly("mesh", [](const Plan& p) { return p.spec.mesh; }, "The plan's mesh")
        .def_property_readonly("materials", [](const Plan& p) { return std::make_shared<fm::MaterialSet>(p.spec.materials); },
                               "A copy of the plan's materials")
        .def_property_readonly("region_names", [](const Plan& p) { return p.spec.regionNames; }, "{label: name}")
        .def_property_readonly("source_names", [](const Plan& p) {
            std::vector<std::string> n;
            for (const auto& s : p.spec.sources) n.push_back(s.name);
            return n;
        }, "Candidate source names, in matrix order")
        .def_property_readonly("sources", [](const Plan& p) {
            std::vector<fm::SourcePtr> s;
            for (const auto& c : p.spec.sources) s.push_back(c.source);
            return s;
        }, "Candidate sources, in matrix order")
        .def_property("solver", [](const Plan& p) { return p.spec.prescription.solver; },
                      [](Plan& p, const std::string& s) { p.spec.prescription.solver = s; }, "'clp', 'glpk' or '' (default)")
        .def("simulate", [](const Plan& p, py::object progress) {
            if (!progress.is_none() && !PyCallable_Check(progress.ptr()))
                throw py::type_error("simulate: progress must be callable (runs_done, runs_total) or None");
            auto out = std::make_shared<Matrix>();
            out->from = "simulated";
            pl::PlanSpec spec = p.spec;  // the run's FM_* tuning variables, read now (as every Python run)
            spec.simulation.tuning = fm::tuningFromEnvironment();
            std::atomic<bool> cancel{false};
            std::atomic<size_t> done{0}, total{0};
            size_t shown = size_t(-1);
            runCancellable([&] {
                out->m = pl::simulateSources(spec, out->report, [&](size_t d, size_t t) { done = d, total = t; },
                                             &cancel);
            }, cancel, [&] {
                if (progress.is_none() || done == shown) return;
                shown = done;
                progress(shown, size_t(total));
            });
            issueWarnings(out->report.warnings);  // sources partly outside the mesh, abnormal weight
            return out;
        }, py::kw_only(), py::arg("progress") = py::none(),
           "Simulates every candidate source (packets, batches, seed, kernel from the plan); GIL released, "
           "Ctrl-C cancels")
        .def("load_matrix", [](const Plan& p, const std::string& path, int64_t batches, bool unchecked) {
            if (batches < 1 || batches > 64) throw py::value_error("load_matrix: batches must be in 1..64");
            auto out = std::make_shared<Matrix>();
            out->from = path;
            pl::MatrixReuse r;
            r.file = path;
            r.batches = size_t(batches);
            r.unchecked = unchecked;
            r.uncheckedOption = "load_matrix(..., unchecked=True)";
            std::vector<std::string> warnings;
            {
                py::gil_scoped_release nogil;
                out->m = pl::loadPlanMatrix(p.spec, r, warnings, &out->check);
            }
            issueWarnings(warnings);  // no fingerprint in the file, or one that differs, used unchecked
            return out;
        }, py::arg("path"), py::arg("batches") = 1, py::kw_only(), py::arg("unchecked") = false,
           "A saved fluence matrix (a batch's, or a plan's fluence_matrix.fmm with its batches), checked against "
           "the plan's model: a model fingerprint that differs (mesh, materials, sources, packets) raises "
           "ValueError unless unchecked=True; a file without one loads with a warning")
        .def("optimise", [](const Plan& p, const Matrix& x) {
            checkMatrix(p, x);
            auto s = std::make_shared<Solution>();
            pl::PlanProblem prob{p.spec.mesh.get(), &x.m, &p.spec.sources, &p.spec.prescription, &p.spec.regionNames};
            py::gil_scoped_release nogil;
            s->r = pl::optimisePlan(prob);
            return s;
        }, py::arg("matrix"), "Source energies by linear programming (GIL released)")
        .def("evaluate", [](const Plan& p, const Matrix& x, py::handle energies) {
            checkMatrix(p, x);
            auto e = energiesArg(p, energies);
            auto out = std::make_shared<Evaluation>();
            py::gil_scoped_release nogil;
            out->e = pl::evaluatePlan(p.spec, x.m, e);
            return out;
        }, py::arg("matrix"), py::arg("energies"), "Dose and region metrics (with standard errors) of these energies")
        .def("summary", [](const Plan& p, const Solution& s, const Evaluation& e) {
            return pl::planSummary(p.spec, s.r, e.e);
        }, py::arg("solution"), py::arg("evaluation"), "The plan for people, as fullmonte-plan prints it")
        .def("write", [](const Plan& p, const std::string& dir, const Matrix& x, const Solution& s,
                         const Evaluation& e, bool overwrite) {
            checkMatrix(p, x);
            pl::PlanRecord rec;
            rec.plan = &p.spec;
            rec.matrix = &x.m;
            rec.result = &s.r;
            rec.evaluation = &e.e;
            rec.simulation = x.report;
            rec.matrixFrom = x.from;
            rec.matrixCheck = x.check;
            py::gil_scoped_release nogil;
            pl::checkOutputFolder(dir, overwrite);
            pl::writePlanOutputs(dir, rec, overwrite);
        }, py::arg("dir"), py::arg("matrix"), py::arg("solution"), py::arg("evaluation"), py::kw_only(),
           py::arg("overwrite") = false,
           "Writes fullmonte-plan's output folder (plan.json, tables, dose, DVH and slice pictures); whole or absent");
}

void bindPictures(py::module_& m) {
    m.def("render_dose_slice", [](const std::string& png, const fm::TetraMesh& mesh, py::handle dose,
                                  const std::string& axis, double at, const std::map<uint32_t, std::string>& names,
                                  const std::map<std::string, fm::SourcePtr>& sources,
                                  const std::vector<double>& isodose, bool logScale, int width, int height,
                                  const std::string& title) {
        pl::SlicePlane plane;
        plane.axis = axisArg(axis);
        if (!std::isfinite(at)) throw py::value_error("render_dose_slice: at must be finite (mm)");
        plane.at = at;
        if (width < 100 || width > 8000 || height < 100 || height > 8000)
            throw py::value_error("render_dose_slice: width and height must be in 100..8000 pixels");
        for (double l : isodose)
            if (!(l > 0) || !std::isfinite(l)) throw py::value_error("render_dose_slice: isodose levels must be > 0 (J/cm^2)");
        std::vector<pl::SourceMarker> markers;
        for (const auto& [n, s] : sources) {
            if (!s) throw py::value_error("render_dose_slice: source '" + n + "' is None");
            markers.push_back(pl::markerOf(n, *s));
        }
        pl::SliceStyle style;
        style.isodose = isodose;
        style.logScale = logScale;
        style.width = width;
        style.height = height;
        auto d = withDummy(dose, mesh.tetraCount(), "render_dose_slice dose");
        py::gil_scoped_release nogil;
        pl::renderDoseSlice(png, mesh, d, names, markers, plane, style, title);
    }, py::arg("png"), py::arg("mesh"), py::arg("dose"), py::kw_only(), py::arg("axis") = "z", py::arg("at") = 0.0,
       py::arg("region_names") = std::map<uint32_t, std::string>{},
       py::arg("sources") = std::map<std::string, fm::SourcePtr>{}, py::arg("isodose") = std::vector<double>{},
       py::arg("log_scale") = false, py::arg("width") = 900, py::arg("height") = 760,
       py::arg("title") = "Dose (J/cm^2)",
       "A PNG of the dose (J/cm^2 per tetra) on the plane axis = at (mm) with cairo, no display needed (Tcl "
       "DoseSlicePicture): region outlines and names, isodose lines (J/cm^2), source markers {name: Source}");
    m.def("render_dvh", [](const std::string& png, py::handle curves, const std::string& title, int width, int height) {
        std::vector<pl::DvhCurve> c;
        std::vector<std::tuple<std::string, std::vector<double>, std::vector<double>>> in;
        try {
            in = curves.cast<decltype(in)>();
        } catch (const py::cast_error&) {
            throw py::type_error("render_dvh: curves must be a list of (name, dose, fraction)");
        }
        for (auto& [n, d, f] : in) {
            if (d.size() != f.size() || d.empty())
                throw py::value_error("render_dvh: curve '" + n + "': dose and fraction must have the same, non-zero length");
            c.push_back({n, d, f});
        }
        if (width < 100 || width > 8000 || height < 100 || height > 8000)
            throw py::value_error("render_dvh: width and height must be in 100..8000 pixels");
        py::gil_scoped_release nogil;
        pl::renderDvh(png, c, {}, title, width, height);
    }, py::arg("png"), py::arg("curves"), py::kw_only(), py::arg("title") = "Dose-volume histograms",
       py::arg("width") = 900, py::arg("height") = 640,
       "A PNG of cumulative DVHs with cairo: curves [(name, dose J/cm^2 ascending, volume fraction)], e.g. "
       "(name, h.dose, h.cdf) of a DoseHistogram");
}

}  // namespace
#endif

void bindPlanning(py::module_& m) {
#ifdef FM_PY_PLANNING
    m.attr("has_planner") = true;
    bindPlan(m);
    bindPictures(m);
#else
    m.attr("has_planner") = false;
#endif
}

}  // namespace fmpy
