// SPDX-License-Identifier: GPL-3.0-or-later
// The mesher (Geometry/Meshing, CGAL's Mesh_3; Tcl ImageMesher/SurfaceMesher, fullmonte-mesh):
// label images (numpy or files) and closed surfaces to a TetraMesh, plus the label-image reader
// and the quality report, which need no CGAL. Meshing releases the GIL; CGAL cannot be stopped
// mid-stage, so Ctrl-C takes effect when the mesher returns (its mesh is then dropped).
// Without CGAL (FM_USE_CGAL=OFF) only mesh_quality is defined; fullmonte/__init__.py turns the
// missing names into functions that say which CMake option builds them.
#include <filesystem>
#include <mutex>

#include "Geometry/Meshing/LabelImage.hpp"
#include "Geometry/Meshing/MeshQuality.hpp"
#include "Common/ResourceLimits.hpp"
#include "Python/PyCommon.hpp"
#ifdef FM_PY_MESHING
#include "Geometry/Meshing/Mesher.hpp"
#endif
#ifdef FM_PY_VTK
#include "Storage/VTK/VTKImageReader.hpp"
#endif

namespace fmpy {
namespace {

py::dict qualityDict(const fm::TetraMesh& mesh) {
    fm::MeshQuality q = fm::meshQuality(mesh);
    py::dict d;
    d["min_dihedral"] = q.minDihedral;
    d["median_dihedral"] = q.medianDihedral;
    d["median_radius_edge"] = q.medianRadiusEdge;
    d["max_radius_edge"] = q.maxRadiusEdge;
    return d;
}

#ifdef FM_PY_MESHING
bool endsWith(const std::string& s, const std::string& e) {
    return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
}

// labels[i, j, k] (shape (nx, ny, nz), any integer array) -> LabelImage (x fastest).
fm::LabelImage imageFrom(py::handle labels, py::handle spacing, py::handle origin) {
    py::array a;
    try {
        a = py::array::ensure(labels);
    } catch (const py::error_already_set&) {
        a = py::array();
    }
    if (!a || a.ndim() != 3) throw py::value_error("labels: expected a 3-D integer array labels[i, j, k]");
    char kind = a.dtype().kind();
    if (kind != 'i' && kind != 'u' && kind != 'b')
        throw py::type_error("labels: expected integer labels, got dtype " + std::string(py::str(a.dtype())));
    auto f = py::array_t<int64_t, py::array::f_style | py::array::forcecast>::ensure(a);
    if (!f) {  // the 64-bit copy could not be made (pybind11 clears numpy's MemoryError)
        const double gb = double(a.size()) * 8 / 1e9;
        PyErr_SetString(PyExc_MemoryError,
                        ("labels: " + std::to_string(a.size()) + " voxels: their 64-bit copy (" +
                         std::to_string(gb) + " GB) could not be allocated; crop or downsample the image first")
                            .c_str());
        throw py::error_already_set();
    }
    fm::LabelImage img;
    for (int d = 0; d < 3; ++d) img.dims[size_t(d)] = size_t(f.shape(d));
    img.labels.resize(size_t(f.size()));
    for (size_t i = 0; i < img.labels.size(); ++i) {
        int64_t v = f.data()[i];
        if (v < INT32_MIN || v > INT32_MAX) throw py::value_error("labels: " + std::to_string(v) + " is not a 32-bit label");
        img.labels[i] = int32_t(v);
    }
    img.spacing = point3(spacing, "spacing");
    img.origin = point3(origin, "origin");
    img.validate("labels");
    return img;
}

fm::MeshingOptions meshingOptions(py::dict kw) {
    fm::MeshingOptions o;
    for (auto item : kw) {
        std::string k = py::str(item.first);
        py::handle v = item.second;
        auto num = [&] {
            if (!py::isinstance<py::float_>(v) && !py::isinstance<py::int_>(v))
                throw py::type_error(k + ": expected a number");
            return v.cast<double>();
        };
        auto flag = [&] {
            if (!py::isinstance<py::bool_>(v)) throw py::type_error(k + ": expected True or False");
            return v.cast<bool>();
        };
        auto byLabel = [&] {
            std::map<int32_t, double> out;
            try {
                for (auto [l, s] : v.cast<std::map<int64_t, double>>()) {
                    if (l < 1 || l > INT32_MAX) throw py::value_error(k + ": label " + std::to_string(l) + " is not >= 1");
                    out[int32_t(l)] = s;
                }
            } catch (const py::cast_error&) {
                throw py::type_error(k + ": expected a dict {label: size in mm}");
            }
            return out;
        };
        if (k == "cell_size") o.cellSize = num();
        else if (k == "facet_size") o.facetSize = num();
        else if (k == "facet_distance") o.facetDistance = num();
        else if (k == "facet_angle") o.facetAngle = num();
        else if (k == "radius_edge_ratio") o.cellRadiusEdgeRatio = num();
        else if (k == "cell_size_by_label") o.cellSizeByLabel = byLabel();
        else if (k == "facet_size_by_label") o.facetSizeByLabel = byLabel();
        else if (k == "perturb") o.perturb = flag();
        else if (k == "exude") o.exude = flag();
        else if (k == "sliver_bound") o.sliverBound = num();
        else if (k == "time_limit") o.optimiserTimeLimit = num();
        else if (k == "seed") {
            uint64_t seed = countArg(v, "seed", 0);
            if (seed > UINT32_MAX) throw py::value_error("seed: must be in 0..4294967295, got " + std::to_string(seed));
            o.seed = uint32_t(seed);
        }
        else
            throw py::type_error("unexpected keyword argument '" + k +
                                 "' (meshing options: cell_size, facet_size, facet_distance, facet_angle, "
                                 "radius_edge_ratio, cell_size_by_label, facet_size_by_label, perturb, exude, "
                                 "sliver_bound, time_limit, seed)");
    }
    fm::validateMeshingOptions(o);
    return o;
}

// Meshes with the GIL released; progress messages are collected and handed to `progress` (a
// callable or None) on the calling thread once meshing returns.
std::shared_ptr<fm::TetraMesh> meshWith(const std::function<fm::TetraMesh(const fm::MeshingOptions&)>& mesher,
                                        fm::MeshingOptions o, py::object progress) {
    if (!progress.is_none() && !PyCallable_Check(progress.ptr()))
        throw py::type_error("progress must be callable (message) or None");
    auto messages = std::make_shared<std::vector<std::string>>();
    auto mu = std::make_shared<std::mutex>();
    if (!progress.is_none())
        o.progress = [messages, mu](const std::string& s) {
            std::lock_guard<std::mutex> lock(*mu);
            messages->push_back(s);
        };
    std::shared_ptr<fm::TetraMesh> mesh;
    {
        py::gil_scoped_release nogil;
        mesh = std::make_shared<fm::TetraMesh>(mesher(o));
    }
    for (const auto& s : *messages) progress(s);
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    return mesh;
}

fm::LabelImage readImage(const std::string& path) {
    fm::requireMemory(fm::labelImageReadBytes(path), path + ": reading its voxels", fm::kImageTooLargeAdvice);
#ifdef FM_PY_VTK
    if (endsWith(path, ".vti")) return fm::readVTKLabelImage(path);
#endif
    return fm::readLabelImage(path);
}

// meshLabelImage after checking that its least size fits in memory.
fm::TetraMesh meshImageChecked(const fm::LabelImage& img, const fm::MeshingOptions& o) {
    const fm::MeshingEstimate least = fm::estimateImageMeshing(img, o);
    fm::requireMemory(least.bytes, "mesh_image: meshing: " + least.detail + ",", fm::kMeshTooLargeAdvice);
    return fm::meshLabelImage(img, o);
}

// compact_labels and downsample (fullmonte-mesh's --compact-labels, --downsample N), checked.
fm::ImagePreparation preparationArgs(py::handle compactLabels, py::handle downsample) {
    if (!py::isinstance<py::bool_>(compactLabels)) throw py::type_error("compact_labels: expected True or False");
    if (!py::isinstance<py::int_>(downsample) || py::isinstance<py::bool_>(downsample))
        throw py::type_error("downsample: expected an integer, got " +
                             std::string(py::str(py::type::of(downsample).attr("__name__"))));
    const double n = PyLong_AsDouble(downsample.ptr());
    if (n == -1.0 && PyErr_Occurred()) throw py::error_already_set();
    fm::ImagePreparation p;
    p.compactLabels = compactLabels.cast<bool>();
    p.downsample = fm::downsampleFactor(n, "downsample");
    return p;
}

// `p` applied to `img` after any label map, as the command line applies it: the border-label
// warning issued as a RuntimeWarning, the compact table and the downsampled image's line printed.
void prepareImage(fm::LabelImage& img, const fm::ImagePreparation& p) {
    issueWarnings(fm::labelImageWarnings(img));
    for (const std::string& line : fm::prepareLabelImage(img, p)) py::print(line);
}

// Meshes a prepared image (GIL released) and issues the labels the mesh lost or resolves badly.
std::shared_ptr<fm::TetraMesh> meshImage(std::shared_ptr<const fm::LabelImage> img, const fm::MeshingOptions& o,
                                         py::object progress) {
    auto mesh = meshWith([img](const fm::MeshingOptions& opt) { return meshImageChecked(*img, opt); }, o, progress);
    issueWarnings(fm::regionVolumeWarnings(fm::regionVolumes(*mesh, img.get())));
    return mesh;
}

py::tuple imageTuple(const fm::LabelImage& img) {
    py::array_t<int32_t, py::array::f_style> a({py::ssize_t(img.dims[0]), py::ssize_t(img.dims[1]),
                                                py::ssize_t(img.dims[2])});
    std::copy(img.labels.begin(), img.labels.end(), a.mutable_data());
    return py::make_tuple(a, py::make_tuple(img.spacing[0], img.spacing[1], img.spacing[2]),
                          py::make_tuple(img.origin[0], img.origin[1], img.origin[2]));
}

const char* kOptionsDoc =
    "Options (keywords, sizes in mm, 0 = default from the voxel size s: cell 2.5 s, facet 2 s, "
    "distance 0.5 s): cell_size, facet_size, facet_distance, facet_angle (deg, 25), "
    "radius_edge_ratio (3), cell_size_by_label / facet_size_by_label ({label: mm}), perturb, exude "
    "(True), sliver_bound (deg, 10), time_limit (s per optimiser, 0 = none), seed (0; same seed, "
    "options and input give the same mesh). compact_labels=True renumbers the labels present (after any "
    "label map) to regions 1..N in ascending order, printing the table; downsample=N (integer 1..64) "
    "meshes blocks of N^3 voxels as one voxel of their majority label, printing the new image (as "
    "fullmonte-mesh --compact-labels, --downsample N). A label on every border voxel (a background "
    "not coded 0) and labels the mesh lost or misses by > 20% in volume are RuntimeWarnings. "
    "progress: called with each stage message when done. "
    "GIL released; CGAL cannot stop mid-stage, so Ctrl-C takes effect when meshing returns.";
#endif

}  // namespace

void bindMeshing(py::module_& m) {
    m.def("mesh_quality", &qualityDict, py::arg("mesh"),
          "Element quality: min/median dihedral angle (deg), median/max circumradius-to-shortest-edge "
          "ratio (a regular tetra has 0.61), as fullmonte-mesh reports it");
#ifdef FM_PY_MESHING
    m.attr("has_mesher") = true;
    m.def("read_label_image", [](const std::string& path, const std::string& labelMap) {
        fm::LabelImage img;
        {
            py::gil_scoped_release nogil;
            img = readImage(path);
            if (!labelMap.empty())
                fm::applyLabelMap(img, std::filesystem::exists(labelMap) ? fm::readLabelMapFile(labelMap)
                                                                          : fm::parseLabelMap(labelMap));
        }
        return imageTuple(img);
    }, py::arg("path"), py::arg("label_map") = "",
       "A segmentation (.nii/.nii.gz, .mha/.mhd, .vti in VTK builds) as (labels[i, j, k], spacing, origin) in "
       "mm, axes along +x, +y, +z; label_map: 'a=b,c=d' or a file of pairs (0 drops a label)");
    m.def("write_label_image", [](const std::string& path, py::handle labels, py::handle spacing, py::handle origin) {
        fm::LabelImage img = imageFrom(labels, spacing, origin);
        if (!endsWith(path, ".mha")) throw py::value_error("write_label_image: " + path + ": only .mha is written");
        py::gil_scoped_release nogil;
        fm::writeMetaImage(path, img);
    }, py::arg("path"), py::arg("labels"), py::arg("spacing") = std::vector<double>{1, 1, 1},
       py::arg("origin") = std::vector<double>{0, 0, 0}, "Writes labels[i, j, k] as a MetaImage (.mha)");
    m.def("mesh_image", [](py::handle labels, py::handle spacing, py::handle origin, py::object progress,
                           py::handle compactLabels, py::handle downsample, py::kwargs kw) {
        const fm::MeshingOptions o = meshingOptions(kw);
        const fm::ImagePreparation p = preparationArgs(compactLabels, downsample);
        auto img = std::make_shared<fm::LabelImage>(imageFrom(labels, spacing, origin));
        prepareImage(*img, p);
        return meshImage(img, o, progress);
    }, py::arg("labels"), py::arg("spacing") = std::vector<double>{1, 1, 1},
       py::arg("origin") = std::vector<double>{0, 0, 0}, py::kw_only(), py::arg("progress") = py::none(),
       py::arg("compact_labels") = false, py::arg("downsample") = 1,
       (std::string("Meshes a labelled image labels[i, j, k] (shape (nx, ny, nz); voxel (i, j, k) centred at "
                    "origin + (i, j, k) * spacing, mm) into a TetraMesh whose regions are the labels (0 is "
                    "the outside). ") + kOptionsDoc).c_str());
    m.def("mesh_image_file", [](const std::string& path, const std::string& labelMap, py::object progress,
                                py::handle compactLabels, py::handle downsample, py::kwargs kw) {
        const fm::MeshingOptions o = meshingOptions(kw);  // bad options raise before the image is read
        const fm::ImagePreparation p = preparationArgs(compactLabels, downsample);
        auto img = std::make_shared<fm::LabelImage>();
        {
            py::gil_scoped_release nogil;
            *img = readImage(path);
            if (!labelMap.empty())
                fm::applyLabelMap(*img, std::filesystem::exists(labelMap) ? fm::readLabelMapFile(labelMap)
                                                                           : fm::parseLabelMap(labelMap));
        }
        prepareImage(*img, p);
        return meshImage(img, o, progress);
    }, py::arg("path"), py::kw_only(), py::arg("label_map") = "", py::arg("progress") = py::none(),
       py::arg("compact_labels") = false, py::arg("downsample") = 1,
       (std::string("Meshes a segmentation file (as read_label_image; Tcl ImageMesher). ") + kOptionsDoc).c_str());
    m.def("mesh_surfaces", [](py::handle surfaces, py::object progress, py::kwargs kw) {
        std::vector<fm::RegionSurface> in;
        std::vector<std::pair<std::string, int64_t>> pairs;
        try {
            pairs = surfaces.cast<std::vector<std::pair<std::string, int64_t>>>();
        } catch (const py::cast_error&) {
            throw py::type_error("mesh_surfaces: expected a list of (file, label) pairs");
        }
        if (pairs.empty()) throw py::value_error("mesh_surfaces: no surfaces");
        for (const auto& [file, label] : pairs) {
            if (label < 1 || label > INT32_MAX)
                throw py::value_error("mesh_surfaces: " + file + ": label " + std::to_string(label) +
                                      " (labels are >= 1; 0 is the outside)");
            fm::RegionSurface s{file, int32_t(label), {}};
            if (endsWith(file, ".vtp")) {
#ifdef FM_PY_VTK
                s.surface = fm::readVTKSurface(file);
#else
                throw fm::ParameterError(file + ": .vtp surfaces are read in VTK builds only (FM_USE_VTK)");
#endif
            }
            in.push_back(std::move(s));
        }
        return meshWith([in](const fm::MeshingOptions& o) { return fm::meshSurfaces(in, o); }, meshingOptions(kw),
                        progress);
    }, py::arg("surfaces"), py::kw_only(), py::arg("progress") = py::none(),
       (std::string("Meshes closed organ surfaces [(file, label), ...] (STL, OBJ, OFF, PLY; .vtp with VTK) as "
                    "one conforming mesh (Tcl SurfaceMesher); default sizes from the bounding box's largest "
                    "side L: facet L/40, cell L/30, distance L/200. ") + kOptionsDoc).c_str());
#else
    m.attr("has_mesher") = false;
#endif
}

}  // namespace fmpy
