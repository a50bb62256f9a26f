// SPDX-License-Identifier: GPL-3.0-or-later
// Readers and writers (TIM-OS, MMC, text, VTK where built) and MCML runs with their grids.
#include "Geometry/Layered.hpp"
#include "Geometry/MeshCheck.hpp"
#include "Storage/MCML/MCMLKernelRun.hpp"
#include "Python/PyCommon.hpp"
#include "Storage/MCML/MCIReader.hpp"
#include "Storage/MCML/MCOReader.hpp"
#include "Storage/MCML/MCOWriter.hpp"
#include "Storage/MMC/MMC.hpp"
#include "Storage/TIMOS/TIMOS.hpp"
#include "Storage/Text/TextFile.hpp"
#ifdef FM_PY_VTK
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

// MCML results: arrays as numpy views shaped as MCML lays them out (r outermost).
void bindMcml(py::module_& m) {
    py::class_<MCMLRun>(m, "MCMLRun", "One run of an .mci file (MCML's units: cm, 1/cm)")
        .def_readonly("out_name", &MCMLRun::outName)
        .def_readwrite("photons", &MCMLRun::photons)
        .def_readonly("dz", &MCMLRun::dz)
        .def_readonly("dr", &MCMLRun::dr)
        .def_readonly("nz", &MCMLRun::nz)
        .def_readonly("nr", &MCMLRun::nr)
        .def_readonly("na", &MCMLRun::na)
        .def_property_readonly("layer_count", [](const MCMLRun& r) { return r.layers.size(); });

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
        .def_readonly("run", &R::run)
        .def_readonly("specular", &R::Rsp)
        .def_readonly("diffuse_reflectance", &R::Rd)
        .def_readonly("absorbed", &R::A)
        .def_readonly("transmittance", &R::Tt)
        .def_property_readonly("A_l", arr(&R::A_l))
        .def_property_readonly("A_z", arr(&R::A_z))
        .def_property_readonly("Rd_r", arr(&R::Rd_r))
        .def_property_readonly("Rd_a", arr(&R::Rd_a))
        .def_property_readonly("Tt_r", arr(&R::Tt_r))
        .def_property_readonly("Tt_a", arr(&R::Tt_a))
        .def_property_readonly("A_rz", arr2(&R::A_rz, &MCMLRun::nz), "(nr, nz), 1/cm^3")
        .def_property_readonly("Rd_ra", arr2(&R::Rd_ra, &MCMLRun::na), "(nr, na), 1/(cm^2 sr)")
        .def_property_readonly("Tt_ra", arr2(&R::Tt_ra, &MCMLRun::na), "(nr, na), 1/(cm^2 sr)")
        .def("write", [](const R& r, const std::string& path) { ::writeMCO(path, r); }, py::arg("path"),
             "Writes the result as an MCML .mco file");

    m.def("read_mco", [](const std::string& path) { return ::readMCO(path); }, py::arg("path"));

    m.def("run_mcml", [](const MCMLRun& run, py::handle seed, unsigned threads, const std::string& kernel) {
        fm::RunOptions opt = fm::mcmlRunOptions(run);
        opt.params.seed = countArg(seed, "run_mcml seed", 0);
        opt.threads = threads;
        fm::LayeredModel model = fm::layeredFromMcml(run);
        py::gil_scoped_release nogil;
        return fm::runMcml(kernel, model, run, opt);
    }, py::arg("run"), py::kw_only(), py::arg("seed") = 1, py::arg("threads") = 0, py::arg("kernel") = "cpu",
       "Runs one MCML run (its photon count; set run.photons to change it) and returns its MCMLResult");
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
          py::arg("path"), py::arg("mesh"));
    m.def("read_mmc_mesh", [](const std::string& node, const std::string& elem, bool allowDefects) {
        return std::make_shared<fm::TetraMesh>(fm::readMMCMesh(node, elem, checkOptions(allowDefects)));
    }, py::arg("node_path"), py::arg("elem_path"), py::arg("allow_defects") = false,
       "MMC node_*.dat and elem_*.dat, checked (allow_defects: see TetraMesh)");
    m.def("read_mmc_materials", [](const std::string& p, double n) {
        return std::make_shared<fm::MaterialSet>(fm::readMMCMaterials(p, n));
    }, py::arg("path"), py::arg("exterior_n") = 1.0, "MMC prop_*.dat");
    m.def("write_values", [](const std::string& p, const fm::TetraMesh& mesh, py::handle values) {
        fm::writeValues(p, perTetraCopy(mesh, values, "write_values values"));
    }, py::arg("path"), py::arg("mesh"), py::arg("values"), "One value per tetra as a FullMonte text file");
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
#endif
    bindMcml(m);
}

}  // namespace fmpy
