// SPDX-License-Identifier: GPL-3.0-or-later
// Meshes, materials, sources and the queries over per-tetra values (fluence, DVH, probes).
#include <unordered_set>

#include "Geometry/MaterialSet.hpp"
#include "Geometry/MeshCheck.hpp"
#include "Geometry/MeshRepair.hpp"
#include "Geometry/MeshBuilder.hpp"
#include "Geometry/Queries.hpp"
#include "Geometry/Sources.hpp"
#include "Python/PyCommon.hpp"

namespace fmpy {
namespace {

using MeshPtr = std::shared_ptr<fm::TetraMesh>;

// numpy (N, 3) float -> points with the dummy 0 in front.
std::vector<fm::Point3> pointsFrom(py::handle h) {
    auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(h);
    if (!a || a.ndim() != 2 || a.shape(1) != 3)
        throw py::value_error("TetraMesh: points must be an (N, 3) array of numbers");
    std::vector<fm::Point3> p(size_t(a.shape(0)) + 1, fm::Point3{0, 0, 0});
    auto r = a.unchecked<2>();
    for (py::ssize_t i = 0; i < a.shape(0); ++i) p[size_t(i) + 1] = {r(i, 0), r(i, 1), r(i, 2)};
    return p;
}

// numpy (M, 4) integer point indices (0-based, or 1-based with one_based) -> tetras with the
// dummy 0 in front, 1-based as the C++ mesh holds them. Range is checked by TetraMesh.
std::vector<fm::TetraPoints> tetrasFrom(py::handle h, size_t nPoints, bool oneBased) {
    auto a = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(h);
    if (!a || a.ndim() != 2 || a.shape(1) != 4)
        throw py::value_error("TetraMesh: tetras must be an (M, 4) array of point indices");
    std::vector<fm::TetraPoints> t(size_t(a.shape(0)) + 1, fm::TetraPoints{0, 0, 0, 0});
    auto r = a.unchecked<2>();
    int64_t lo = oneBased ? 1 : 0, hi = int64_t(nPoints) - 1 + lo;
    for (py::ssize_t i = 0; i < a.shape(0); ++i)
        for (int k = 0; k < 4; ++k) {
            int64_t v = r(i, k);
            if (v < lo || v > hi)
                throw py::value_error("TetraMesh: tetras[" + std::to_string(i) + ", " + std::to_string(k) +
                                      "] = " + std::to_string(v) + " is not a point index (" + std::to_string(lo) +
                                      ".." + std::to_string(hi) + ")");
            t[size_t(i) + 1][k] = uint32_t(v + 1 - lo);
        }
    return t;
}

std::vector<uint32_t> regionsFrom(py::handle h, size_t nTetras) {
    std::vector<uint32_t> out(nTetras + 1, 0);
    if (h.is_none()) {
        std::fill(out.begin() + 1, out.end(), 1u);
        return out;
    }
    auto a = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(h);
    if (!a || a.ndim() != 1 || size_t(a.shape(0)) != nTetras)
        throw py::value_error("TetraMesh: regions must be a 1-D array with one label per tetra (" +
                              std::to_string(nTetras) + ")");
    for (size_t i = 0; i < nTetras; ++i) {
        int64_t v = a.data()[i];
        if (v < 0 || v > int64_t(UINT32_MAX))
            throw py::value_error("TetraMesh: regions[" + std::to_string(i) + "] = " + std::to_string(v) +
                                  " is not a region label (a non-negative integer)");
        out[i + 1] = uint32_t(v);
    }
    return out;
}

MeshPtr makeMesh(py::handle points, py::handle tetras, py::handle regions, bool oneBased, bool allowDefects) {
    auto p = pointsFrom(points);
    auto t = tetrasFrom(tetras, p.size() - 1, oneBased);
    auto r = regionsFrom(regions, t.size() - 1);
    fm::MeshCheckOptions check;
    check.allowDefects = allowDefects;
    py::gil_scoped_release nogil;
    return std::make_shared<fm::TetraMesh>(std::move(p), std::move(t), std::move(r), check);
}

py::array_t<int64_t> tetraArray(const fm::TetraMesh& m) {
    py::array_t<int64_t> a({py::ssize_t(m.tetraCount()), py::ssize_t(4)});
    auto w = a.mutable_unchecked<2>();
    for (size_t t = 1; t <= m.tetraCount(); ++t)
        for (int k = 0; k < 4; ++k) w(py::ssize_t(t - 1), k) = int64_t(m.tetra(uint32_t(t))[k]) - 1;
    return a;
}

// A per-tetra array the caller passes (one value per tetra, no dummy) as the C++ layout.
std::vector<double> perTetra(const fm::TetraMesh& m, py::handle v, const std::string& what) {
    return withDummy(v, m.tetraCount(), what);
}

uint32_t regionArg(const fm::TetraMesh& m, int64_t r) {
    if (r < 0 || r >= int64_t(m.regionCount()))
        throw py::value_error("region " + std::to_string(r) + " is not in the mesh (0.." +
                              std::to_string(m.regionCount() - 1) + ", 0 = all)");
    return uint32_t(r);
}

// A composite must not contain itself, directly or through its elements.
bool reaches(const fm::Source& from, const fm::Source* target) {
    if (&from == target) return true;
    if (auto c = dynamic_cast<const fm::CompositeSource*>(&from))
        for (const auto& e : c->elements)
            if (e && reaches(*e, target)) return true;
    return false;
}

void bindMesh(py::module_& m) {
    py::class_<fm::TetraMesh, MeshPtr>(m, "TetraMesh", R"doc(
Tetrahedral mesh in millimetres.

TetraMesh(points, tetras, regions=None, one_based=False)
  points: (N, 3) coordinates in mm; tetras: (M, 4) point indices (0-based unless one_based);
  regions: M region labels (1.. for tissues; default all 1). Inverted tetras are re-oriented;
  degenerate tetras, bad indices and non-manifold faces raise ModelError. Every mesh is checked
  (docs/MESH_CHECKS.md): cracks and folded tetras raise ModelError unless allow_defects=True, which
  keeps them as check_warnings; coincident vertices, several components and empty regions are
  check_warnings.
Per-tetra arrays everywhere in this package have one value per tetra, in this order.)doc")
        .def(py::init(&makeMesh), py::arg("points"), py::arg("tetras"), py::arg("regions") = py::none(),
             py::arg("one_based") = false, py::arg("allow_defects") = false)
        .def_property_readonly("check_warnings", [](const fm::TetraMesh& mesh) { return mesh.checkReport().warnings(); },
                               "What the mesh checks found: warnings, and defects allowed through")
        .def_property_readonly("point_count", &fm::TetraMesh::pointCount, "Number of points")
        .def_property_readonly("tetra_count", &fm::TetraMesh::tetraCount, "Number of tetras")
        .def_property_readonly("face_count", &fm::TetraMesh::faceCount, "Number of faces (shared faces once)")
        .def_property_readonly("region_count", &fm::TetraMesh::regionCount,
                               "Largest region label + 1 (region 0 is the exterior)")
        .def_property_readonly("points", [](py::object self) {
            const auto& mesh = self.cast<const fm::TetraMesh&>();
            return view2(mesh.points()[1].data(), mesh.pointCount(), 3, self);
        }, "(N, 3) read-only view of the point coordinates (mm)")
        .def_property_readonly("tetras", &tetraArray, "(M, 4) point indices, 0-based (a copy)")
        .def_property_readonly("regions", [](py::object self) {
            const auto& mesh = self.cast<const fm::TetraMesh&>();
            return view(mesh.regions().data() + 1, mesh.tetraCount(), self);
        }, "Region label per tetra (read-only view)")
        .def_property_readonly("volumes", [](const fm::TetraMesh& mesh) {
            std::vector<double> v(mesh.tetraCount() + 1, 0.0);
            for (size_t t = 1; t <= mesh.tetraCount(); ++t) v[t] = mesh.volume(uint32_t(t));
            return owned(std::move(v), 1);
        }, "Volume per tetra (mm^3)")
        .def("region_volume", [](const fm::TetraMesh& mesh, int64_t r) {
            return mesh.regionVolume(regionArg(mesh, r));
        }, py::arg("region"), "Volume of a region (mm^3)")
        .def_property_readonly("bounds", [](const fm::TetraMesh& mesh) {
            auto b = mesh.bounds();
            return py::make_tuple(py::make_tuple(b[0][0], b[0][1], b[0][2]), py::make_tuple(b[1][0], b[1][1], b[1][2]));
        }, "((xmin, ymin, zmin), (xmax, ymax, zmax)) in mm")
        .def("locate", [](const fm::TetraMesh& mesh, py::handle p) {
            return int64_t(mesh.locate(point3(p, "locate"))) - 1;
        }, py::arg("point"), "Index of the tetra containing the point, -1 outside the mesh")
        .def("__repr__", [](const fm::TetraMesh& mesh) {
            return "<fullmonte.TetraMesh " + std::to_string(mesh.pointCount()) + " points, " +
                   std::to_string(mesh.tetraCount()) + " tetras, " + std::to_string(mesh.regionCount() - 1) +
                   " regions>";
        });

    py::class_<fm::RegionShape>(m, "RegionShape", R"doc(
A shape that paints the tetras whose centroid it contains with its region, for box_mesh (later
shapes paint over earlier ones): RegionShape.box(region, lo, hi), .sphere(region, centre, radius),
.cylinder(region, a, b, radius), .shell(region, thickness) (within thickness of the box's faces).)doc")
        .def_static("box", [](uint32_t r, py::handle lo, py::handle hi) {
            return fm::RegionShape{fm::RegionShape::Box, r, point3(lo, "box lo"), point3(hi, "box hi"), 0};
        }, py::arg("region"), py::arg("lo"), py::arg("hi"))
        .def_static("sphere", [](uint32_t r, py::handle c, double radius) {
            return fm::RegionShape{fm::RegionShape::Sphere, r, point3(c, "sphere centre"), {}, radius};
        }, py::arg("region"), py::arg("centre"), py::arg("radius"))
        .def_static("cylinder", [](uint32_t r, py::handle a, py::handle b, double radius) {
            return fm::RegionShape{fm::RegionShape::Cylinder, r, point3(a, "cylinder a"), point3(b, "cylinder b"),
                                   radius};
        }, py::arg("region"), py::arg("a"), py::arg("b"), py::arg("radius"))
        .def_static("shell", [](uint32_t r, double thickness) {
            return fm::RegionShape{fm::RegionShape::Shell, r, {}, {}, thickness};
        }, py::arg("region"), py::arg("thickness"))
        .def_readonly("region", &fm::RegionShape::region, "The region this shape paints");

    m.def("merge_coincident_vertices", [](const fm::TetraMesh& mesh, double tolerance) {
        fm::RepairReport report;
        MeshPtr out;
        {
            py::gil_scoped_release nogil;
            out = std::make_shared<fm::TetraMesh>(fm::mergeCoincidentVertices(mesh, tolerance, &report));
        }
        py::dict d;
        d["tolerance"] = report.tolerance;
        d["points_merged"] = report.pointsMerged;
        d["faces_joined"] = report.facesJoined;
        d["summary"] = report.summary();
        return py::make_tuple(out, d);
    }, py::arg("mesh"), py::arg("tolerance") = 0.0,
       "Repair of organs meshed apart: points closer than tolerance (mm; 0: 1e-6 x the bounding-box "
       "diagonal) merged; returns (mesh, report). The result must pass every mesh check.");

    m.def("box_mesh", [](py::handle lo, py::handle hi, py::handle divisions, uint32_t region,
                         const std::vector<fm::RegionShape>& shapes) {
        auto d = divisions.cast<std::vector<int64_t>>();
        if (d.size() != 3) throw py::value_error("box_mesh: divisions must be three integers");
        for (auto x : d)
            if (x < 1 || x > 2000) throw py::value_error("box_mesh: each division must be in 1..2000");
        if (region == 0) throw py::value_error("box_mesh: region 0 is the exterior; the background needs >= 1");
        fm::checkRegionShapes(shapes);
        fm::Point3 a = point3(lo, "box_mesh lo"), b = point3(hi, "box_mesh hi");
        py::gil_scoped_release nogil;
        return std::make_shared<fm::TetraMesh>(
            fm::makeBoxMesh(a, b, unsigned(d[0]), unsigned(d[1]), unsigned(d[2]), [&](const fm::Point3& c) {
                return fm::paintRegion(shapes, region, c, a, b);
            }));
    }, py::arg("lo"), py::arg("hi"), py::arg("divisions"), py::arg("region") = 1,
       py::arg("shapes") = std::vector<fm::RegionShape>{},
       "A box from lo to hi (mm) cut into divisions cubes per axis, six tetras each; tetras get the "
       "background region, painted over by each RegionShape containing their centroid (as Tcl's "
       "BoxMeshBuilder)");
}

void bindMaterials(py::module_& m) {
    py::class_<fm::Material>(m, "Material", "Optical properties: mu_a, mu_s in 1/mm, anisotropy g, index n")
        .def(py::init<double, double, double, double>(), py::arg("mu_a") = 0.0, py::arg("mu_s") = 0.0,
             py::arg("g") = 0.0, py::arg("n") = 1.0)
        .def_readwrite("mu_a", &fm::Material::mu_a, "Absorption coefficient (1/mm)")
        .def_readwrite("mu_s", &fm::Material::mu_s, "Scattering coefficient (1/mm)")
        .def_readwrite("g", &fm::Material::g, "Anisotropy factor, -1..1")
        .def_readwrite("n", &fm::Material::n, "Refractive index")
        .def("__repr__", [](const fm::Material& x) {
            return "Material(mu_a=" + std::string(py::repr(py::float_(x.mu_a))) + ", mu_s=" +
                   std::string(py::repr(py::float_(x.mu_s))) + ", g=" + std::string(py::repr(py::float_(x.g))) +
                   ", n=" + std::string(py::repr(py::float_(x.n))) + ")";
        });

    py::class_<fm::MaterialSet, std::shared_ptr<fm::MaterialSet>>(m, "MaterialSet", R"doc(
Materials by region label: index 0 is the exterior (only its n matters), index r the material of
region r. MaterialSet(materials, exterior=Material(n=1), matched_boundary=False).)doc")
        .def(py::init([](const std::vector<fm::Material>& mats, const fm::Material& ext, bool matched) {
                 auto s = std::make_shared<fm::MaterialSet>();
                 s->exterior(ext);
                 for (const auto& x : mats) s->append(x);
                 s->matchedBoundary = matched;
                 s->validate();
                 return s;
             }),
             py::arg("materials") = std::vector<fm::Material>{}, py::arg("exterior") = fm::Material(0, 0, 0, 1),
             py::arg("matched_boundary") = false)
        .def("__len__", &fm::MaterialSet::size)
        .def("__getitem__", [](const fm::MaterialSet& s, int64_t i) {
            if (i < 0 || size_t(i) >= s.size()) throw py::index_error("MaterialSet: no material " + std::to_string(i));
            return s.material(size_t(i));
        })
        .def("__setitem__", [](fm::MaterialSet& s, int64_t i, const fm::Material& x) {
            if (i < 0 || size_t(i) > s.size()) throw py::index_error("MaterialSet: slot " + std::to_string(i) +
                                                                     " is beyond the end (append instead)");
            s.set(size_t(i), x);
        })
        .def("append", [](fm::MaterialSet& s, const fm::Material& x) { return s.append(x); }, py::arg("material"),
             "Adds the material of the next region label; returns that label")
        .def_property("exterior", py::overload_cast<>(&fm::MaterialSet::exterior, py::const_),
                      py::overload_cast<const fm::Material&>(&fm::MaterialSet::exterior),
                      "The exterior's material (only its n matters)")
        .def_readwrite("matched_boundary", &fm::MaterialSet::matchedBoundary,
                       "Exterior index matched to the tissue it touches (no Fresnel at the surface)")
        .def("validate", &fm::MaterialSet::validate, "Raises ModelError naming the material and parameter");
}

void bindSources(py::module_& m) {
    using S = fm::Source;
    py::class_<S, fm::SourcePtr>(m, "Source", "Base of every source; power is relative inside a Composite")
        .def_readwrite("power", &S::power, "Relative power (weight of this source inside a Composite)")
        .def_property_readonly("type_name", &S::typeName, "The kind of source, as Tcl names it");

    auto pos = [](auto& cls, const char* name, auto field) {
        using T = typename std::remove_reference_t<decltype(cls)>::type;
        cls.def_property(
            name, [field](const T& s) { auto p = s.*field; return py::make_tuple(p[0], p[1], p[2]); },
            [field, name](T& s, py::handle v) { s.*field = point3(v, name); }, "(x, y, z) in mm");
    };

    py::class_<fm::PointSource, S, std::shared_ptr<fm::PointSource>> point(m, "PointSource", "Isotropic point");
    point.def(py::init([](py::handle p, double power) {
              auto s = std::make_shared<fm::PointSource>();
              s->position = point3(p, "PointSource position");
              s->power = power;
              return s;
          }), py::arg("position"), py::arg("power") = 1.0);
    pos(point, "position", &fm::PointSource::position);

    py::class_<fm::PencilBeamSource, S, std::shared_ptr<fm::PencilBeamSource>> pencil(
        m, "PencilBeam", "Collimated beam; from outside it enters where its ray meets the mesh");
    pencil.def(py::init([](py::handle p, py::handle d, double power) {
               auto s = std::make_shared<fm::PencilBeamSource>();
               s->position = point3(p, "PencilBeam position");
               s->direction = point3(d, "PencilBeam direction");
               s->power = power;
               return s;
           }), py::arg("position"), py::arg("direction") = std::vector<double>{0, 0, 1}, py::arg("power") = 1.0);
    pos(pencil, "position", &fm::PencilBeamSource::position);
    pos(pencil, "direction", &fm::PencilBeamSource::direction);

    py::class_<fm::DiskSource, S, std::shared_ptr<fm::DiskSource>> disk(
        m, "DiskSource",
        "Collimated beam of uniform intensity over a disk square to its direction (MMC's disk source); "
        "from outside it enters where its rays meet the mesh");
    disk.def(py::init([](py::handle c, double r, py::handle d, double power, bool specular) {
             auto s = std::make_shared<fm::DiskSource>();
             s->centre = point3(c, "DiskSource centre");
             s->radius = r;
             s->direction = point3(d, "DiskSource direction");
             s->power = power;
             s->specularAtEntry = specular;
             return s;
         }), py::arg("centre"), py::arg("radius"), py::arg("direction") = std::vector<double>{0, 0, 1},
         py::arg("power") = 1.0, py::arg("specular_at_entry") = true)
        .def_readwrite("radius", &fm::DiskSource::radius, "mm")
        .def_readwrite("specular_at_entry", &fm::DiskSource::specularAtEntry,
                       "Fresnel reflection (booked as specular) and refraction where the beam enters from outside");
    pos(disk, "centre", &fm::DiskSource::centre);
    pos(disk, "direction", &fm::DiskSource::direction);

    py::class_<fm::PlanarSource, S, std::shared_ptr<fm::PlanarSource>> planar(
        m, "PlanarSource",
        "Collimated beam of uniform intensity over the parallelogram corner + s side1 + t side2 (s, t in [0, 1]; "
        "MMC's planar source); from outside it enters where its rays meet the mesh");
    planar.def(py::init([](py::handle c, py::handle a, py::handle b, py::handle d, double power, bool specular) {
               auto s = std::make_shared<fm::PlanarSource>();
               s->corner = point3(c, "PlanarSource corner");
               s->side1 = point3(a, "PlanarSource side1");
               s->side2 = point3(b, "PlanarSource side2");
               s->direction = point3(d, "PlanarSource direction");
               s->power = power;
               s->specularAtEntry = specular;
               return s;
           }), py::arg("corner"), py::arg("side1"), py::arg("side2"), py::arg("direction") = std::vector<double>{0, 0, 1},
           py::arg("power") = 1.0, py::arg("specular_at_entry") = true)
        .def_readwrite("specular_at_entry", &fm::PlanarSource::specularAtEntry,
                       "Fresnel reflection (booked as specular) and refraction where the beam enters from outside");
    pos(planar, "corner", &fm::PlanarSource::corner);
    pos(planar, "side1", &fm::PlanarSource::side1);
    pos(planar, "side2", &fm::PlanarSource::side2);
    pos(planar, "direction", &fm::PlanarSource::direction);

    py::class_<fm::BallSource, S, std::shared_ptr<fm::BallSource>> ball(m, "BallSource",
                                                                       "Uniform in a sphere, isotropic");
    ball.def(py::init([](py::handle c, double r, double power) {
             auto s = std::make_shared<fm::BallSource>();
             s->centre = point3(c, "BallSource centre");
             s->radius = r;
             s->power = power;
             return s;
         }), py::arg("centre"), py::arg("radius"), py::arg("power") = 1.0)
        .def_readwrite("radius", &fm::BallSource::radius, "mm");
    pos(ball, "centre", &fm::BallSource::centre);

    py::class_<fm::LineSource, S, std::shared_ptr<fm::LineSource>>(m, "LineSource",
                                                                    "Segment, isotropic or normal to its axis")
        .def(py::init([](py::handle a, py::handle b, const std::string& pattern, double power) {
                 auto s = std::make_shared<fm::LineSource>();
                 s->endpoint[0] = point3(a, "LineSource a");
                 s->endpoint[1] = point3(b, "LineSource b");
                 if (pattern == "isotropic") s->pattern = fm::LineSource::Isotropic;
                 else if (pattern == "normal") s->pattern = fm::LineSource::Normal;
                 else throw py::value_error("LineSource pattern: '" + pattern + "' is not isotropic or normal");
                 s->power = power;
                 return s;
             }), py::arg("a"), py::arg("b"), py::arg("pattern") = "isotropic", py::arg("power") = 1.0);

    py::class_<fm::VolumeSource, S, std::shared_ptr<fm::VolumeSource>>(
        m, "VolumeSource", "Uniform in a region (region=) or one tetra (tetra=, 0-based), isotropic")
        .def(py::init([](int64_t region, int64_t tetra, double power) {
                 if ((region > 0) == (tetra >= 0))
                     throw py::value_error("VolumeSource: give exactly one of region (>= 1) or tetra (>= 0)");
                 if (region > int64_t(UINT32_MAX) || tetra >= int64_t(UINT32_MAX))
                     throw py::value_error("VolumeSource: region or tetra out of range");
                 auto s = std::make_shared<fm::VolumeSource>();
                 s->region = region > 0 ? uint32_t(region) : 0;
                 s->element = tetra >= 0 ? uint32_t(tetra + 1) : 0;
                 s->power = power;
                 return s;
             }), py::arg("region") = 0, py::arg("tetra") = -1, py::arg("power") = 1.0);

    py::class_<fm::FiberSource, S, std::shared_ptr<fm::FiberSource>> fiber(
        m, "FiberSource", "Fibre tip: a cone of numerical aperture na around direction");
    fiber.def(py::init([](py::handle p, py::handle d, double na, double power) {
              auto s = std::make_shared<fm::FiberSource>();
              s->position = point3(p, "FiberSource position");
              s->direction = point3(d, "FiberSource direction");
              s->numericalAperture = na;
              s->power = power;
              return s;
          }), py::arg("position"), py::arg("direction"), py::arg("na") = 0.22, py::arg("power") = 1.0)
        .def_readwrite("na", &fm::FiberSource::numericalAperture, "Numerical aperture");
    pos(fiber, "position", &fm::FiberSource::position);
    pos(fiber, "direction", &fm::FiberSource::direction);

    py::class_<fm::CylinderSource, S, std::shared_ptr<fm::CylinderSource>>(
        m, "CylinderSource", "Cylindrical diffuser from a to b: its lateral surface (default) or its volume")
        .def(py::init([](py::handle a, py::handle b, double radius, bool volume, double power) {
                 auto s = std::make_shared<fm::CylinderSource>();
                 s->endpoint[0] = point3(a, "CylinderSource a");
                 s->endpoint[1] = point3(b, "CylinderSource b");
                 s->radius = radius;
                 s->emitVolume = volume;
                 s->power = power;
                 return s;
             }), py::arg("a"), py::arg("b"), py::arg("radius") = 0.5, py::arg("volume") = false,
             py::arg("power") = 1.0)
        .def_readwrite("radius", &fm::CylinderSource::radius, "mm");

    py::class_<fm::SurfaceSource, S, std::shared_ptr<fm::SurfaceSource>>(
        m, "SurfaceSource", "Lambertian emission into the tissue over the boundary of a region")
        .def(py::init([](int64_t region, double power) {
                 if (region < 1 || region > int64_t(UINT32_MAX))
                     throw py::value_error("SurfaceSource: region must be a label >= 1");
                 auto s = std::make_shared<fm::SurfaceSource>();
                 s->region = uint32_t(region);
                 s->power = power;
                 return s;
             }), py::arg("region"), py::arg("power") = 1.0);

    py::class_<fm::CompositeSource, S, std::shared_ptr<fm::CompositeSource>>(
        m, "Composite", "Power-weighted mix of sources")
        .def(py::init([](const std::vector<fm::SourcePtr>& elements, double power) {
                 auto s = std::make_shared<fm::CompositeSource>();
                 for (const auto& e : elements) {
                     if (!e) throw py::value_error("Composite: None is not a source");
                     s->elements.push_back(e);
                 }
                 s->power = power;
                 return s;
             }), py::arg("elements") = std::vector<fm::SourcePtr>{}, py::arg("power") = 1.0)
        .def("add", [](fm::CompositeSource& c, const fm::SourcePtr& e) {
            if (!e) throw py::value_error("Composite.add: None is not a source");
            if (reaches(*e, &c)) throw py::value_error("Composite.add: the source contains this composite (a cycle)");
            c.elements.push_back(e);
        }, py::arg("source"), "Adds a source (a composite may not contain itself)")
        .def_property_readonly("elements", [](const fm::CompositeSource& c) { return c.elements; }, "The sources mixed")
        .def("__len__", [](const fm::CompositeSource& c) { return c.elements.size(); });
}

void bindQueries(py::module_& m) {
    m.def("fluence", [](const fm::TetraMesh& mesh, const fm::MaterialSet& mats, py::handle energy, double scale) {
        auto e = perTetra(mesh, energy, "fluence energy");
        std::vector<double> f;
        {
            py::gil_scoped_release nogil;
            f = fm::volumeFluence(mesh, mats, e, scale);
        }
        return owned(std::move(f), 1);
    }, py::arg("mesh"), py::arg("materials"), py::arg("energy"), py::arg("scale") = 1.0,
       "Fluence per tetra, E / (V mu_a) * scale, in [scale unit]/mm^2 (NaN where mu_a = 0)");

    py::class_<fm::DoseHistogram>(m, "DoseHistogram", "Cumulative dose-volume histogram of one region")
        .def_readonly("region", &fm::DoseHistogram::region, "Region label")
        .def_readonly("total_volume", &fm::DoseHistogram::totalVolume, "Volume with a defined dose (mm^3)")
        .def_readonly("undefined", &fm::DoseHistogram::undefined, "Tetras whose dose is NaN (mu_a = 0)")
        .def_property_readonly("dose", [](py::object self) {
            const auto& h = self.cast<const fm::DoseHistogram&>();
            return view(h.dose.data(), h.dose.size(), self);
        }, "Dose levels, ascending (read-only view)")
        .def_property_readonly("cdf", [](py::object self) {
            const auto& h = self.cast<const fm::DoseHistogram&>();
            return view(h.cdf.data(), h.cdf.size(), self);
        }, "Fraction of the region's volume receiving at least dose[i]")
        .def_property_readonly("mean_dose", &fm::DoseHistogram::meanDose, "Volume-weighted mean")
        .def_property_readonly("max_dose", &fm::DoseHistogram::maxDose, "Highest dose in the region")
        .def("dose_at_fraction", &fm::DoseHistogram::doseAtFraction, py::arg("fraction"),
             "Dose received by at least this fraction of the volume (D90: 0.9)");

    m.def("dose_histogram", [](const fm::TetraMesh& mesh, py::handle dose, int64_t region) {
        auto d = perTetra(mesh, dose, "dose_histogram dose");
        return fm::doseHistogram(mesh, d, regionArg(mesh, region));
    }, py::arg("mesh"), py::arg("dose"), py::arg("region"),
       "Cumulative DVH of a region from per-tetra doses (J/cm^2 if you pass J/cm^2; NaN doses counted as undefined)");

    m.def("region_sum", [](const fm::TetraMesh& mesh, py::handle values, int64_t region) {
        return fm::regionSum(mesh, perTetra(mesh, values, "region_sum values"), regionArg(mesh, region));
    }, py::arg("mesh"), py::arg("values"), py::arg("region") = 0, "Sum over a region's tetras (0 = all)");

    m.def("value_at", [](const fm::TetraMesh& mesh, py::handle values, py::handle p) {
        return fm::valueAt(mesh, perTetra(mesh, values, "value_at values"), point3(p, "value_at point"));
    }, py::arg("mesh"), py::arg("values"), py::arg("point"), "Value of the tetra holding the point (NaN outside)");

    m.def("values_along", [](const fm::TetraMesh& mesh, py::handle values, py::handle a, py::handle b,
                             int64_t samples) {
        if (samples < 1 || samples > 10000000) throw py::value_error("values_along: samples must be in 1..1e7");
        auto v = fm::valuesAlong(mesh, perTetra(mesh, values, "values_along values"), point3(a, "values_along a"),
                                 point3(b, "values_along b"), size_t(samples));
        return owned(std::move(v), 0);
    }, py::arg("mesh"), py::arg("values"), py::arg("a"), py::arg("b"), py::arg("samples"),
       "Values at `samples` points evenly spaced from a to b (mm), NaN outside the mesh");
}

}  // namespace

void bindGeometry(py::module_& m) {
    bindMesh(m);
    bindMaterials(m);
    bindSources(m);
    bindQueries(m);
}

}  // namespace fmpy
