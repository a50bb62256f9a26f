// SPDX-License-Identifier: GPL-3.0-or-later
// Mesh checks on every TetraMesh (Geometry/MeshCheck.hpp) and the coincident-vertex repair
// (Geometry/MeshRepair.hpp): each broken-mesh case of issue 23 ends in an error or a warning
// naming ids and coordinates, and a crack repaired has the joined mesh's physics.
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "Common/Errors.hpp"
#include "Geometry/MeshBuilder.hpp"
#include "Geometry/MeshRepair.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/Dispatch.hpp"

using namespace fm;

namespace {

struct RawMesh {
    std::vector<Point3> points;
    std::vector<TetraPoints> tetras;
    std::vector<uint32_t> regions;
    TetraMesh build(bool allow = false) const {
        MeshCheckOptions o;
        o.allowDefects = allow;
        return TetraMesh(points, tetras, regions, o);
    }
};

RawMesh raw(const TetraMesh& m) { return RawMesh{m.points(), m.tetras(), m.regions()}; }

// A 10 mm box, region 2 a 4 mm cube in its centre ("tumour" in "tissue").
TetraMesh joinedOrgans() {
    return makeBoxMesh({-5, -5, -5}, {5, 5, 5}, 10, 10, 10, [](const Point3& c) {
        return std::fabs(c[0]) < 2 && std::fabs(c[1]) < 2 && std::fabs(c[2]) < 2 ? 2u : 1u;
    });
}

// The same organs meshed separately: region 2's tetras use their own copies of every point,
// so the shared surface exists twice (coincident vertices under two ids).
RawMesh separateOrgans(const TetraMesh& joined, double shift = 0) {
    RawMesh r = raw(joined);
    std::vector<uint32_t> copy(r.points.size(), 0);
    for (uint32_t t = 1; t < r.tetras.size(); ++t) {
        if (r.regions[t] != 2) continue;
        for (uint32_t& v : r.tetras[t]) {
            if (!copy[v]) {
                copy[v] = uint32_t(r.points.size());
                Point3 p = r.points[v];
                p[0] += shift;
                r.points.push_back(p);
            }
            v = copy[v];
        }
    }
    return r;
}

bool mentions(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

template <class F>
std::string errorOf(F f) {
    try {
        f();
    } catch (const ModelError& e) {
        return e.what();
    }
    return "";
}

std::string joined(const std::vector<std::string>& lines) {
    std::string s;
    for (const auto& l : lines) s += l + "\n";
    return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(mesh_check)

BOOST_AUTO_TEST_CASE(a_clean_mesh_has_no_findings) {
    TetraMesh m = joinedOrgans();
    BOOST_CHECK_MESSAGE(m.checkReport().defects.empty(), joined(m.checkReport().warnings()));
    BOOST_CHECK_EQUAL(m.checkReport().components, 1u);
    BOOST_CHECK_CLOSE(m.checkReport().tolerance, 1e-6 * std::sqrt(300.0), 1e-9);
}

BOOST_AUTO_TEST_CASE(organs_meshed_apart_are_a_crack_error) {
    RawMesh r = separateOrgans(joinedOrgans());
    std::string e = errorOf([&] { r.build(); });
    BOOST_TEST_MESSAGE(e);
    BOOST_CHECK(mentions(e, "cracks: 384 boundary faces lying on another boundary face"));  // 6 x 32, both sides
    BOOST_CHECK(mentions(e, "region 1) lies on face"));
    BOOST_CHECK(mentions(e, ", region 2) at ("));
    BOOST_CHECK(mentions(e, "--allow-defects"));
    // Allowed: the mesh loads, and every finding is a warning a user sees.
    TetraMesh m = r.build(true);
    std::string w = joined(m.checkReport().warnings());
    BOOST_CHECK(mentions(w, "mesh (allowed defect): cracks: 384"));
    BOOST_CHECK(mentions(w, "coincident vertices: 98 point pairs"));  // 5^3 - 3^3 surface points
    BOOST_CHECK(mentions(w, "connected components: 2"));
    BOOST_CHECK_EQUAL(m.checkReport().components, 2u);
}

BOOST_AUTO_TEST_CASE(cracks_are_found_by_geometry_not_by_vertex_ids) {
    TetraMesh j = joinedOrgans();
    double tol = j.checkReport().tolerance;
    BOOST_CHECK(mentions(errorOf([&] { separateOrgans(j, 0.3 * tol).build(); }), "cracks: 384"));
    // Shifted by 10 tolerances along x: no vertex coincides any more and the x faces are apart,
    // but the y and z faces still lie on each other (4 sides x 32 faces, both sides): a crack.
    TetraMesh shifted = separateOrgans(j, 10 * tol).build(true);
    std::string w = joined(shifted.checkReport().warnings());
    BOOST_CHECK(mentions(w, "cracks: 256"));
    BOOST_CHECK(!mentions(w, "coincident vertices"));
}

BOOST_AUTO_TEST_CASE(a_tetra_listed_twice_is_an_error_even_when_defects_are_allowed) {
    RawMesh r = raw(joinedOrgans());
    r.tetras.push_back(r.tetras[17]);
    std::swap(r.tetras.back()[0], r.tetras.back()[3]);  // the same tetra in another vertex order
    r.regions.push_back(1);
    for (bool allow : {false, true}) {
        std::string e = errorOf([&] { r.build(allow); });
        BOOST_CHECK(mentions(e, "duplicated tetras: 1"));
        BOOST_CHECK(mentions(e, "tetra 6001 repeats tetra 17"));
        BOOST_CHECK(mentions(e, "the kernels cannot run on such a mesh"));
    }
}

BOOST_AUTO_TEST_CASE(faces_shared_by_three_tetras_are_counted) {
    // Two tetras on each side of triangle (1,2,3) plus a third on it: non-manifold.
    std::vector<Point3> p{{0, 0, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0, 0, -1}, {0.2, 0.2, 2}};
    RawMesh r{p, {{0, 0, 0, 0}, {1, 2, 3, 4}, {1, 2, 3, 5}, {1, 2, 3, 6}}, {0, 1, 1, 1}};
    std::string e = errorOf([&] { r.build(true); });
    BOOST_CHECK(mentions(e, "non-manifold faces: 1"));
    BOOST_CHECK(mentions(e, "face (1,2,3) is shared by 3 tetras (1, 2, 3)"));
}

BOOST_AUTO_TEST_CASE(degenerate_tetras_are_all_counted) {
    std::vector<Point3> p{{0, 0, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 0}, {2, 0, 0}};
    RawMesh r{p, {{0, 0, 0, 0}, {1, 2, 3, 5}, {1, 2, 3, 4}, {1, 2, 6, 3}}, {0, 1, 1, 1}};
    std::string e = errorOf([&] { r.build(true); });
    BOOST_CHECK(mentions(e, "degenerate tetras: 2"));
    BOOST_CHECK(mentions(e, "tetra 1 is degenerate"));
    BOOST_CHECK(mentions(e, "tetra 3 is degenerate"));
}

BOOST_AUTO_TEST_CASE(a_folded_tetra_is_an_error) {
    // Tetras 1 and 2 share face (2,3,4) and lie on the same side of it: they overlap.
    std::vector<Point3> p{{0, 0, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0.1, 0.1, 0.1}};
    RawMesh r{p, {{0, 0, 0, 0}, {1, 2, 3, 4}, {5, 2, 4, 3}}, {0, 1, 1}};
    std::string e = errorOf([&] { r.build(); });
    BOOST_CHECK(mentions(e, "folded tetras: 1"));
    BOOST_CHECK(mentions(e, "tetras 1 and 2"));
    BOOST_CHECK(mentions(e, "merging vertices does not undo: mesh the model again"));  // not "merge vertices"
    BOOST_CHECK(!mentions(e, "fullmonte-mesh --repair"));
    TetraMesh m = r.build(true);
    BOOST_CHECK(mentions(joined(m.checkReport().warnings()), "folded tetras"));
    // Tetras written with either orientation are a convention, not a fold.
    RawMesh c = raw(joinedOrgans());
    for (size_t t = 1; t < c.tetras.size(); t += 3) std::swap(c.tetras[t][0], c.tetras[t][1]);
    BOOST_CHECK(c.build().checkReport().defects.empty());
}

BOOST_AUTO_TEST_CASE(a_numerically_flat_sliver_is_no_fold) {
    // Tetra 2 is a sliver on face (1,2,3) of tetra 1 whose apex sits 1e-10 above it, on tetra 1's
    // side (as meshers leave slivers, e.g. MMC's sphshells example): no volume to overlap, no
    // orientation beyond rounding. The same apex 0.2 above the face is a fold.
    std::vector<Point3> p{{0, 0, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0.3, 0.3, 1e-10}};
    RawMesh r{p, {{0, 0, 0, 0}, {1, 2, 3, 4}, {5, 1, 2, 3}}, {0, 1, 1}};
    BOOST_CHECK(r.build().checkReport().defects.empty());
    r.points[5] = {0.3, 0.3, 0.2};
    BOOST_CHECK(mentions(errorOf([&] { r.build(); }), "folded tetras: 1"));
}

BOOST_AUTO_TEST_CASE(region_labels_without_tetras_are_a_warning) {
    RawMesh r = raw(joinedOrgans());
    for (auto& g : r.regions)
        if (g == 2) g = 4;
    TetraMesh m = r.build();
    std::string w = joined(m.checkReport().warnings());
    BOOST_CHECK(mentions(w, "empty regions: 2"));
    BOOST_CHECK(mentions(w, "region 2; region 3"));
}

// A mesh holds region labels up to kMaxRegion, and a material set's slots go no further: a
// mistyped slot is an error, not a set sized by it.
BOOST_AUTO_TEST_CASE(material_slots_end_at_the_largest_region_a_mesh_holds) {
    RawMesh r = raw(joinedOrgans());
    for (auto& g : r.regions)
        if (g == 2) g = kMaxRegion;
    BOOST_CHECK_EQUAL(r.build().regionCount(), kMaxRegion + 1);
    for (auto& g : r.regions)
        if (g == kMaxRegion) g = kMaxRegion + 1;
    BOOST_CHECK(mentions(errorOf([&] { r.build(); }), "region labels up to 65535 are supported"));
    MaterialSet ms;
    ms.set(kMaxRegion, Material(0.1, 1, 0, 1.4));
    BOOST_CHECK_EQUAL(ms.size(), size_t(kMaxRegion) + 1);
    try {
        ms.set(1000000000, Material(0.1, 1, 0, 1.4));
        BOOST_ERROR("a billion-slot material set was made");
    } catch (const ParameterError& e) {
        BOOST_TEST(std::string(e.what()) ==
                   "MaterialSet set: slot 1000000000 is beyond the largest region a mesh holds (65535)");
    }
    BOOST_CHECK_EQUAL(ms.size(), size_t(kMaxRegion) + 1);
}

// Single-precision positions 1e6 mm from the origin are resolved to 0.06 mm, 6% of this mesh's
// shortest (1 mm) edges: a warning; 1e4 mm away (0.06%) is fine.
BOOST_AUTO_TEST_CASE(coordinates_far_from_the_origin_for_the_tetras_are_a_warning) {
    for (double shift : {1e4, 1e6}) {
        RawMesh r = raw(joinedOrgans());
        for (Point3& p : r.points) p[0] += shift;
        TetraMesh m = r.build();
        std::string w = joined(m.checkReport().warnings());
        BOOST_TEST_MESSAGE(w);
        BOOST_CHECK_EQUAL(mentions(w, "coordinates far from the origin: 1"), shift > 1e5);
        if (shift > 1e5) BOOST_CHECK(mentions(w, "shortest edge 1 (tetra "));
    }
}

BOOST_AUTO_TEST_CASE(separate_bodies_are_a_components_warning_only) {
    TetraMesh a = makeBoxMesh({0, 0, 0}, {1, 1, 1}, 2, 2, 2, [](const Point3&) { return 1u; });
    RawMesh r = raw(a);
    size_t n = r.points.size() - 1;
    for (size_t i = 1; i <= n; ++i) r.points.push_back({r.points[i][0] + 3, r.points[i][1], r.points[i][2]});
    size_t nt = r.tetras.size();
    for (size_t t = 1; t < nt; ++t) {
        TetraPoints T = r.tetras[t];
        for (auto& v : T) v += uint32_t(n);
        r.tetras.push_back(T);
        r.regions.push_back(1);
    }
    TetraMesh m = r.build();
    BOOST_CHECK_EQUAL(m.checkReport().components, 2u);
    BOOST_CHECK(!m.checkReport().hasErrors());
    BOOST_CHECK(mentions(joined(m.checkReport().warnings()), "connected components: 2"));
}

BOOST_AUTO_TEST_CASE(merging_coincident_vertices_joins_the_crack) {
    TetraMesh j = joinedOrgans();
    TetraMesh cracked = separateOrgans(j).build(true);
    RepairReport rep;
    TetraMesh fixed = mergeCoincidentVertices(cracked, 0, &rep);
    BOOST_TEST_MESSAGE(rep.summary());
    BOOST_CHECK(fixed.checkReport().defects.empty());
    BOOST_CHECK_EQUAL(rep.pointsMerged, 98u);
    BOOST_CHECK_EQUAL(fixed.pointCount(), j.pointCount());
    BOOST_CHECK_EQUAL(fixed.boundaryFaces().size(), j.boundaryFaces().size());
    BOOST_CHECK_EQUAL(rep.facesJoined, 384u);
    BOOST_CHECK_EQUAL(fixed.faceCount(), j.faceCount());
    for (uint32_t t = 1; t <= j.tetraCount(); ++t) {
        BOOST_REQUIRE_EQUAL(fixed.region(t), j.region(t));
        BOOST_REQUIRE_CLOSE(fixed.volume(t), j.volume(t), 1e-9);
    }
    // A tolerance above an edge length would collapse tetras: refused, naming the tetra.
    BOOST_CHECK(mentions(errorOf([&] { mergeCoincidentVertices(j, 1.5); }), "collapses tetra"));
}

// The case: a point source in a tumour meshed apart from its surroundings loses light
// through the crack; repaired, it matches the joined mesh. Compared over independent seeds
// (batch means and their standard error), so the tolerance comes from the runs' own variance.
BOOST_AUTO_TEST_CASE(a_repaired_crack_has_the_joined_meshs_physics) {
    TetraMesh j = joinedOrgans();
    TetraMesh cracked = separateOrgans(j).build(true);
    TetraMesh fixed = mergeCoincidentVertices(cracked, 0);
    MaterialSet mats;
    mats.exterior(Material(0, 0, 0, 1.0));
    mats.append(Material(0.05, 2, 0.5, 1.0));
    mats.append(Material(0.2, 2, 0.5, 1.0));
    PointSource src;
    src.position = {0.1, 0.2, 0.3};
    const int kBatches = 8;
    auto exited = [&](const TetraMesh& m, double& mean, double& se) {
        KernelInput in = packModel(m, mats, src);
        std::vector<double> x;
        for (int b = 0; b < kBatches; ++b) {
            RunOptions o;
            o.packets = 3000;
            o.threads = 2;
            o.params.seed = 100 + b;
            o.outputs.surface = false;
            RunResult r = runKernel("cpu", in, o);
            x.push_back(r.ledger.exited / r.ledger.launched);
        }
        mean = 0;
        for (double v : x) mean += v / kBatches;
        double var = 0;
        for (double v : x) var += (v - mean) * (v - mean) / (kBatches - 1);
        se = std::sqrt(var / kBatches);
    };
    double mj, sj, mc, sc, mf, sf;
    exited(j, mj, sj);
    exited(cracked, mc, sc);
    exited(fixed, mf, sf);
    BOOST_TEST_MESSAGE("exited fraction: joined " << mj << " +- " << sj << ", cracked " << mc << " +- " << sc
                                                  << ", repaired " << mf << " +- " << sf);
    // The crack makes every packet reaching the tumour surface leave: far more light exits.
    BOOST_CHECK_GT((mc - mj) / std::hypot(sc, sj), 10.0);
    BOOST_CHECK_LT(std::fabs(mf - mj) / std::hypot(sf, sj), 4.0);
}

BOOST_AUTO_TEST_SUITE_END()
