// SPDX-License-Identifier: GPL-3.0-or-later
// Readers and writers (TIM-OS, MMC, text, VTK where built) and MCML runs with their grids.
#include <cstring>
#include <fstream>

#include "Geometry/Layered.hpp"
#include "Geometry/MeshCheck.hpp"
#include "Storage/MCML/MCMLKernelRun.hpp"
#include "Kernels/McmlRecords.hpp"
#include "Kernels/Tuning.hpp"
#include "Python/PyCommon.hpp"
#include "Storage/COMSOL/COMSOLMesh.hpp"
#include "Storage/MCML/MCIReader.hpp"
#include "Storage/MCML/MCOReader.hpp"
#include "Storage/MCML/MCOWriter.hpp"
#include "Storage/MMC/MMC.hpp"
#include "Storage/MMC/MMCInput.hpp"
#include "Storage/TIMOS/TIMOS.hpp"
#include "Storage/Text/TextFile.hpp"
#include "Storage/TimeGated/TimeGatedFile.hpp"
#ifdef FM_PY_VTK
#include "Storage/VTK/FluenceRenderer.hpp"
#include "Storage/VTK/VTKMeshReader.hpp"
#include "Storage/VTK/VTKMeshWriter.hpp"
#endif

namespace fmpy {
namespace {

using MeshPtr = std::shared_ptr<fm::TetraMesh>;

fm::MeshCheckOptions checkOptions(bool allowDefects) {
    fm::MeshCheckOptions o;
    o.allowDefects = allowDefects;
    return o;
}

std::vector<double> perTetraCopy(const fm::TetraMesh& mesh, py::handle v, const std::string& what) {
    return withDummy(v, mesh.tetraCount(), what);
}

// An MCML run's options from Python's seed and threads (`what` names the function in errors).
fm::RunOptions mcmlOptions(const MCMLRun& run, py::handle seed, unsigned threads, const std::string& what) {
    fm::RunOptions opt = fm::mcmlRunOptions(run);
    opt.params.seed = countArg(seed, what + " seed", 0);
    opt.threads = threads;
    opt.tuning = fm::tuningFromEnvironment();
    return opt;
}

// runMcml with the GIL released and Ctrl-C cancelling; its raw tallies into `raw`.
MCMLResult runMcmlCancellable(const MCMLRun& run, fm::RunOptions opt, const std::string& kernel, fm::McmlTallies& raw,
                              const std::string& what) {
    const fm::LayeredModel model = fm::layeredFromMcml(run);
    std::atomic<bool> cancel{false};
    opt.cancel = &cancel;
    MCMLResult res;
    runCancellable([&] { res = fm::runMcml(kernel, model, run, opt, &raw); }, cancel);
    if (raw.cancelled) throw fm::Error(what + ": cancelled; no results kept");
    return res;
}

// MCML results: arrays as numpy views shaped as MCML lays them out (r outermost).
void bindMcml(py::module_& m) {
    py::class_<MCMLRun>(m, "MCMLRun", "One run of an .mci file (MCML's units: cm, 1/cm)")
        .def_readonly("out_name", &MCMLRun::outName, "The .mco file name the run names")
        .def_readwrite("photons", &MCMLRun::photons, "Photons to run (set it to change the count)")
        .def_readonly("dz", &MCMLRun::dz, "Grid step in z (cm)")
        .def_readonly("dr", &MCMLRun::dr, "Grid step in r (cm)")
        .def_readonly("nz", &MCMLRun::nz, "Grid cells in z")
        .def_readonly("nr", &MCMLRun::nr, "Grid cells in r")
        .def_readonly("na", &MCMLRun::na, "Grid cells in the exit angle")
        .def_property_readonly("layer_count", [](const MCMLRun& r) { return r.layers.size(); }, "Tissue layers")
        .def_property_readonly("layers", [](const MCMLRun& r) {
            py::list l;
            for (const MCMLLayer& x : r.layers) {
                py::dict d;
                d["n"] = x.n;
                d["mua"] = x.mua;
                d["mus"] = x.mus;
                d["g"] = x.g;
                d["d"] = x.d;
                l.append(d);
            }
            return l;
        }, "The layers, top first: {n, mua, mus (1/cm), g, d (thickness, cm)}")
        .def_readonly("n_above", &MCMLRun::nAbove, "Refractive index above the layers")
        .def_readonly("n_below", &MCMLRun::nBelow, "Refractive index below the layers");

    m.def("read_mci", [](const std::string& path) { return ::readMCI(path).runs; }, py::arg("path"),
          "The runs of an MCML .mci file");

    using R = MCMLResult;
    auto arr = [](const std::vector<double> R::*f) {
        return [f](py::object self) {
            const auto& v = self.cast<const R&>().*f;
            return view(v.data(), v.size(), self);
        };
    };
    auto arr2 = [](const std::vector<double> R::*f, unsigned MCMLRun::*cols) {
        return [f, cols](py::object self) {
            const auto& r = self.cast<const R&>();
            const auto& v = r.*f;
            size_t k = r.run.*cols;
            return view2(v.data(), k ? v.size() / k : 0, k, self);
        };
    };
    py::class_<R>(m, "MCMLResult", "MCML's outputs (.mco content, MCML's units: cm, sr)")
        .def_readonly("run", &R::run, "The MCMLRun it came from")
        .def_readonly("specular", &R::Rsp, "Specular reflectance (fraction)")
        .def_readonly("diffuse_reflectance", &R::Rd, "Diffuse reflectance (fraction)")
        .def_readonly("absorbed", &R::A, "Absorbed fraction")
        .def_readonly("transmittance", &R::Tt, "Total transmittance (fraction)")
        .def_property_readonly("A_l", arr(&R::A_l), "Absorbed fraction per layer")
        .def_property_readonly("A_z", arr(&R::A_z), "Absorption per depth, 1/cm")
        .def_property_readonly("Rd_r", arr(&R::Rd_r), "Diffuse reflectance per radius, 1/cm^2")
        .def_property_readonly("Rd_a", arr(&R::Rd_a), "Diffuse reflectance per exit angle, 1/sr")
        .def_property_readonly("Tt_r", arr(&R::Tt_r), "Transmittance per radius, 1/cm^2")
        .def_property_readonly("Tt_a", arr(&R::Tt_a), "Transmittance per exit angle, 1/sr")
        .def_property_readonly("A_rz", arr2(&R::A_rz, &MCMLRun::nz), "(nr, nz), 1/cm^3")
        .def_property_readonly("Rd_ra", arr2(&R::Rd_ra, &MCMLRun::na), "(nr, na), 1/(cm^2 sr)")
        .def_property_readonly("Tt_ra", arr2(&R::Tt_ra, &MCMLRun::na), "(nr, na), 1/(cm^2 sr)")
        .def("write", [](const R& r, const std::string& path) { ::writeMCO(path, r); }, py::arg("path"),
             "Writes the result as an MCML .mco file");

    m.def("read_mco", [](const std::string& path) { return ::readMCO(path); }, py::arg("path"),
          "An MCML .mco output file as an MCMLResult");

    m.def("run_mcml", [](const MCMLRun& run, py::handle seed, unsigned threads, const std::string& kernel) {
        fm::McmlTallies raw;
        return runMcmlCancellable(run, mcmlOptions(run, seed, threads, "run_mcml"), kernel, raw, "run_mcml");
    }, py::arg("run"), py::kw_only(), py::arg("seed") = 1, py::arg("threads") = 0, py::arg("kernel") = "cpu",
       "Runs one MCML run (its photon count; set run.photons to change it) and returns its MCMLResult. "
       "GIL released; Ctrl-C cancels.");

    m.def("run_mcml_time", [](const MCMLRun& run, py::handle timeGates, py::handle seed, unsigned threads,
                              const std::string& kernel) {
        fm::RunOptions opt = mcmlOptions(run, seed, threads, "run_mcml_time");
        const auto g = timeGates.cast<std::vector<double>>();
        if (g.size() != 3) throw py::value_error("time_gates: needs (start, stop, step) in ns");
        opt.gates = fm::makeTimeGates(g[0], g[1], g[2], "time_gates");
        fm::McmlTallies raw;
        const MCMLResult res = runMcmlCancellable(run, opt, kernel, raw, "run_mcml_time");
        // Per launched photon, shape (bins, rows): the gates, then the early and late bins.
        const double n = double(raw.packetsDone);
        auto grid = [&](std::vector<double>& v, unsigned rows) {
            for (double& x : v) x /= n;
            return owned(std::move(v), 0).attr("reshape")(raw.gates.bins(), rows);
        };
        py::dict t;
        t["gates"] = py::make_tuple(opt.gates.startNs, opt.gates.stopNs, opt.gates.stepNs);
        t["Rd_rt"] = grid(raw.reflectedRT, run.nr);
        t["Tt_rt"] = grid(raw.transmittedRT, run.nr);
        t["A_zt"] = grid(raw.absorbedZT, run.nz);
        return py::make_tuple(res, t);
    }, py::arg("run"), py::arg("time_gates"), py::kw_only(), py::arg("seed") = 1, py::arg("threads") = 0,
       py::arg("kernel") = "cpu",
       "Runs one MCML run with time gates (start, stop, step) in ns and returns (MCMLResult, dict): the dict's "
       "'Rd_rt', 'Tt_rt' (bins, nr) and 'A_zt' (bins, nz) hold the weight per launched photon per time bin "
       "(the gates, then early, then late) and radius or depth bin; each row of bins sums to the CW value.");

    m.def("run_mcml_records", [](const MCMLRun& run, py::handle maxRecords, double radius, py::handle seed,
                                 unsigned threads, const std::string& kernel) {
        fm::RunOptions opt = mcmlOptions(run, seed, threads, "run_mcml_records");
        const fm::DetectionSpec spec = fm::layeredDetection(fm::packLayered(fm::layeredFromMcml(run)),
                                                            countArg(maxRecords, "run_mcml_records max_records", 1), radius);
        opt.detection = &spec;
        fm::McmlTallies raw;
        const MCMLResult res = runMcmlCancellable(run, opt, kernel, raw, "run_mcml_records");
        return py::make_tuple(res, std::make_shared<fm::DetectedPackets>(std::move(raw.records)));
    }, py::arg("run"), py::kw_only(), py::arg("max_records") = 1000000, py::arg("radius") = 0.0, py::arg("seed") = 1,
       py::arg("threads") = 0, py::arg("kernel") = "cpu",
       "Runs one MCML run (kernel 'cpu' or 'cuda') keeping per-photon exit records and returns (MCMLResult, "
       "DetectedPackets): detector 0 the top surface (Rd), 1 the bottom (Tt), the layers as regions; radius > 0 "
       "(mm) keeps only exits within it of the beam axis; the lowest max_records photon indices are kept.");
}

}  // namespace

void bindStorage(py::module_& m) {
    m.def("read_timos_mesh", [](const std::string& p, bool allowDefects) {
        return std::make_shared<fm::TetraMesh>(fm::readTIMOSMesh(p, checkOptions(allowDefects)));
    }, py::arg("path"), py::arg("allow_defects") = false, "TIM-OS .mesh (mm), checked (allow_defects: see TetraMesh)");
    m.def("read_timos_materials", [](const std::string& p) {
        return std::make_shared<fm::MaterialSet>(fm::readTIMOSMaterials(p));
    }, py::arg("path"), "TIM-OS .opt (1/mm)");
    m.def("read_timos_source", [](const std::string& p) { return fm::readTIMOSSource(p).source; }, py::arg("path"),
          "TIM-OS .source: one source, or a Composite for several rows");
    m.def("write_timos_mesh", [](const std::string& p, const fm::TetraMesh& mesh) { fm::writeTIMOSMesh(p, mesh); },
          py::arg("path"), py::arg("mesh"), "Writes a TIM-OS .mesh (1-based, mm)");
    m.def("read_mmc_mesh", [](const std::string& node, const std::string& elem, bool allowDefects) {
        std::vector<uint32_t> tetraOf;  // MMC's background elements are left out: a warning says how many
        auto mesh = std::make_shared<fm::TetraMesh>(fm::readMMCMesh(node, elem, checkOptions(allowDefects), &tetraOf));
        uint64_t background = 0;
        const std::string note = fm::mmcdetail::backgroundNote(tetraOf, background);
        if (!note.empty()) issueWarnings({elem + ": " + note});
        return mesh;
    }, py::arg("node_path"), py::arg("elem_path"), py::arg("allow_defects") = false,
       "MMC node_*.dat and elem_*.dat, checked (allow_defects: see TetraMesh); MMC's background elements "
       "(labels 0 and -1) are left out of the mesh with a RuntimeWarning");
    m.def("read_mmc_materials", [](const std::string& p, double n) {
        return std::make_shared<fm::MaterialSet>(fm::readMMCMaterials(p, n));
    }, py::arg("path"), py::arg("exterior_n") = 1.0, "MMC prop_*.dat");
    m.def("write_values", [](const std::string& p, const fm::TetraMesh& mesh, py::handle values) {
        fm::writeValues(p, perTetraCopy(mesh, values, "write_values values"));
    }, py::arg("path"), py::arg("mesh"), py::arg("values"), "One value per tetra as a FullMonte text file");
    m.def("read_values", [](const std::string& p, const fm::TetraMesh& mesh) {
        std::vector<double> v = fm::readValues(p);
        if (v.size() != mesh.tetraCount() + 1)
            throw fm::FormatError(p + ": " + std::to_string(v.size() ? v.size() - 1 : 0) + " values, the mesh has " +
                                  std::to_string(mesh.tetraCount()) + " tetras");
        return owned(std::move(v), 1);
    }, py::arg("path"), py::arg("mesh"), "One value per tetra from a FullMonte text file (as write_values writes)");
    m.def("read_time_gated", [](const std::string& p) {
        fm::TimeGatedArray a = fm::readTimeGated(p);
        const size_t bins = a.gates.bins(), n = size_t(a.elements);
        // The elements' ids: from the list beside the file where it has one, else all ids in order.
        std::vector<uint32_t> ids;
        const std::string listName = fm::gatedElementListName(a.quantity);
        const std::string dir = p.find('/') == std::string::npos ? std::string(".") : p.substr(0, p.rfind('/'));
        const std::string list = dir + "/" + listName;
        const bool listed = a.quantity == fm::GatedQuantity::exitFluenceListed;
        if (!listName.empty() && std::ifstream(list).good()) {
            ids = fm::readGatedElementList(list, listed).ids;
            if (ids.size() != n)
                throw fm::FormatError(list + ": " + std::to_string(ids.size()) + " elements for the " + std::to_string(n) +
                                      " of " + p + " (files of different runs?)");
        } else if (listed) {
            throw fm::FormatError(p + ": its elements are listed in " + list + ", which cannot be read");
        } else {
            for (size_t i = 1; i <= n; ++i) ids.push_back(uint32_t(i));
        }
        auto grid = [&](const std::vector<double>& v) {
            py::array_t<double> out({py::ssize_t(bins), py::ssize_t(n)});
            if (!v.empty()) std::memcpy(out.mutable_data(), v.data(), v.size() * sizeof(double));
            return out;
        };
        py::dict d;
        d["gates"] = py::make_tuple(a.gates.startNs, a.gates.stopNs, a.gates.stepNs, a.gates.count);
        d["quantity"] = a.quantity == fm::GatedQuantity::volumeFluence ? "fluence" : "exit_fluence";
        d["units"] = a.units;
        d["values"] = grid(a.values);
        d["stderr"] = a.stderrs.empty() ? py::object(py::none()) : py::object(grid(a.stderrs));
        d["elements"] = py::array_t<uint32_t>(py::ssize_t(ids.size()), ids.data());
        return d;
    }, py::arg("path"),
       "A time-gated file (.fmtg, docs/TIME_DOMAIN.md) as a dict: gates (start, stop, step, count), quantity "
       "('fluence' per tetra or 'exit_fluence' per boundary face), units, values and stderr (None without) as "
       "(gates + 2, elements) arrays (the gates, then before and after), and elements: the tetra or face ids "
       "(1-based) of the columns, from the list fullmonte-run writes beside the file where it has one");
    m.def("read_comsol_mesh", [](const std::string& p) { return std::make_shared<fm::TetraMesh>(fm::readCOMSOLMesh(p)); },
          py::arg("path"), "COMSOL text mesh (.mphtxt): its tetrahedra, regions from the domains");
    m.def("write_comsol_mesh", [](const std::string& p, const fm::TetraMesh& mesh) { fm::writeCOMSOLMesh(p, mesh); },
          py::arg("path"), py::arg("mesh"), "Writes the mesh as a COMSOL text mesh (.mphtxt)");
    m.def("read_mmc_input", [](const std::string& p, double exteriorN) {
        auto sim = std::make_shared<fm::MMCSimulation>(fm::readMMCInput(p, exteriorN));
        py::dict d;
        d["mesh"] = std::make_shared<fm::TetraMesh>(std::move(sim->mesh));
        d["materials"] = std::make_shared<fm::MaterialSet>(sim->materials);
        d["source"] = sim->source;
        d["photons"] = sim->photons;
        d["seed"] = sim->seed < 0 ? py::object(py::none()) : py::object(py::int_(sim->seed));
        d["seed_note"] = sim->seedNote;  // the file's seed was negative (MMC: from the clock): the one drawn
        d["id"] = sim->id;
        d["warnings"] = sim->warnings;  // e.g. MMC's background elements left out of the mesh
        return d;
    }, py::arg("path"), py::arg("exterior_n") = 1.0,
       "An MMC simulation input (.inp or .json) as {mesh, materials, source, photons, seed (None: not given; "
       "drawn when the file's is negative, MMC's seed from the clock, which seed_note then names), seed_note, id, "
       "warnings}; "
       "errors name the file and line or JSON path");
#ifdef FM_PY_VTK
    m.def("read_vtk_mesh", [](const std::string& p, const std::string& regionArray, bool allowDefects,
                              bool singleRegion) {
        fm::VTKMeshReader r(p);
        r.regionArrayName(regionArray);
        r.checkOptions(checkOptions(allowDefects));
        r.singleRegion(singleRegion);
        r.read();
        return std::make_shared<fm::TetraMesh>(r.takeMesh());
    }, py::arg("path"), py::arg("region_array") = "", py::arg("allow_defects") = false,
       py::arg("single_region") = false,
       "Tetra mesh from .vtk/.vtu: regions from region_array, else the usual names (none found: an error "
       "listing the arrays, unless single_region); checked (allow_defects: see TetraMesh)");
    m.def("write_vtk_mesh", [](const std::string& p, const fm::TetraMesh& mesh, py::dict arrays) {
        fm::VTKMeshWriter w(p);
        w.mesh(mesh);
        for (auto item : arrays)
            w.addData(item.first.cast<std::string>(), perTetraCopy(mesh, item.second, "write_vtk_mesh arrays"));
        w.write();
    }, py::arg("path"), py::arg("mesh"), py::arg("arrays") = py::dict(),
       "Writes the mesh (.vtu or .vtk by extension) with per-tetra arrays {name: values}; name them with units");
    m.def("render_fluence", [](const std::string& png, const fm::TetraMesh& mesh, py::handle values,
                               const std::string& title, py::handle origin, py::handle normal, int64_t surfaceRegion,
                               unsigned width, unsigned height, bool logScale, py::handle range, bool outlines) {
        fm::FluenceRenderer r;
        r.filename(png);
        r.mesh(mesh);
        r.data(perTetraCopy(mesh, values, "render_fluence values"), title);
        if (surfaceRegion >= 0) {
            if (surfaceRegion >= int64_t(mesh.regionCount()))
                throw py::value_error("render_fluence: surface_region " + std::to_string(surfaceRegion) +
                                      " is not in the mesh (0.." + std::to_string(mesh.regionCount() - 1) + ")");
            r.surface(uint32_t(surfaceRegion));
        } else if (origin.is_none()) {
            r.sliceThroughCentre(point3(normal, "render_fluence normal"));
        } else {
            r.slice(point3(origin, "render_fluence origin"), point3(normal, "render_fluence normal"));
        }
        if (width < 16 || width > 8000 || height < 16 || height > 8000)
            throw py::value_error("render_fluence: width and height must be in 16..8000 pixels");
        r.size(width, height);
        r.logScale(logScale);
        if (!range.is_none()) {
            auto lh = range.cast<std::pair<double, double>>();
            r.range(lh.first, lh.second);
        }
        r.showRegionOutlines(outlines);
        {
            py::gil_scoped_release nogil;
            r.write();
        }
        return py::make_tuple(r.usedMin(), r.usedMax());
    }, py::arg("png"), py::arg("mesh"), py::arg("values"), py::kw_only(), py::arg("title") = "Fluence",
       py::arg("origin") = py::none(), py::arg("normal") = std::vector<double>{0, 0, 1},
       py::arg("surface_region") = -1, py::arg("width") = 800, py::arg("height") = 600, py::arg("log_scale") = true,
       py::arg("range") = py::none(), py::arg("outlines") = true,
       "Renders per-tetra values to a PNG with VTK (FluenceRenderer): a slice through origin (default the "
       "centre) with normal, or with surface_region >= 0 that region's boundary (0: the mesh's). Needs an X "
       "display (headless: run under xvfb-run -a; without one it raises fm.Error). The title labels the "
       "colour bar: give the unit. Returns the colour range used (lo, hi). For pictures without a display "
       "use render_dose_slice (cairo, planner builds).");
#endif
    bindMcml(m);
}

}  // namespace fmpy
