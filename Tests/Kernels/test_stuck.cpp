// SPDX-License-Identifier: GPL-3.0-or-later
// Stuck packets: launches exactly on vertices, edges and faces, beams travelling along faces and
// edges or grazing the surface, sliver tetras, and pathological models. Every run must finish in
// bounded time with the ledger closed; what the guards (maxSteps, maxHits) stop is booked
// abnormal, and in a sane model that is (nearly) nothing.
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cmath>

#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/CPU/CpuKernel.hpp"

using namespace fm;

namespace {

// Wall-clock bound per run: generous, since the sanitizer builds run this test too (TSan ~10x).
constexpr double kMaxSeconds = 60;

struct Run {
    RunResult r;
    double seconds;
    double abnormal() const { return r.ledger.abnormal / r.ledger.launched; }
    double exited() const { return r.ledger.exited / r.ledger.launched; }
};

// Runs the CPU kernel and checks what must hold for any model: bounded time, every packet
// accounted for, ledger closed to 1e-12, tallies equal to the ledger's absorbed and exited.
Run runChecked(const std::string& what, const KernelInput& in, uint64_t packets, KernelParams kp = {}) {
    RunOptions o;
    o.packets = packets;
    o.threads = 2;
    o.params = kp;
    auto t0 = std::chrono::steady_clock::now();
    Run run{runCpu(in, o), 0};
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const Ledger& L = run.r.ledger;
    const Events& e = run.r.events;
    BOOST_TEST_MESSAGE(what << ": " << run.seconds << " s, abnormal " << run.abnormal() << " ("
                            << e.abnormal << " packets), exited " << run.exited() << ", absorbed "
                            << L.absorbed / L.launched);
    BOOST_CHECK_MESSAGE(run.seconds < kMaxSeconds, what << " took " << run.seconds << " s");
    BOOST_CHECK_EQUAL(L.launched, double(packets));
    BOOST_CHECK_EQUAL(e.launch, packets);
    BOOST_CHECK_EQUAL(e.exit + e.die + e.abnormal, packets);  // every packet ended one way
    BOOST_CHECK_MESSAGE(std::fabs(L.imbalance()) <= 1e-12 * L.launched,
                        what << ": ledger imbalance " << L.imbalance() / L.launched);
    double vol = 0, surf = 0;
    for (double x : run.r.volume) vol += x;
    for (double x : run.r.surface) surf += x;
    BOOST_CHECK_CLOSE(vol, L.absorbed, 1e-9);
    BOOST_CHECK_SMALL(surf - L.exited, 1e-9 * (1 + L.exited));
    return run;
}

void checkAbnormalBelow(const std::string& what, const Run& run, double limit) {
    BOOST_CHECK_MESSAGE(run.abnormal() <= limit, what << ": abnormal weight " << run.abnormal()
                                                      << " exceeds " << limit);
}

Point3 lerp(const Point3& a, const Point3& b, double t) {
    return {a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]), a[2] + t * (b[2] - a[2])};
}

// Launch points on the closure of tetra t: its vertices, edge midpoints or face centroids.
enum class Feature { Vertex, Edge, Face };
std::vector<Point3> featurePoints(const TetraMesh& m, uint32_t t, Feature f) {
    const auto& T = m.tetra(t);
    std::vector<Point3> out;
    for (int i = 0; i < 4; ++i) {
        if (f == Feature::Vertex) out.push_back(m.point(T[i]));
        for (int j = i + 1; j < 4; ++j) {
            if (f == Feature::Edge) out.push_back(lerp(m.point(T[i]), m.point(T[j]), 0.5));
            for (int k = j + 1; k < 4 && f == Feature::Face; ++k) {
                Point3 c = lerp(m.point(T[i]), m.point(T[j]), 0.5);
                out.push_back(lerp(m.point(T[k]), c, 2.0 / 3.0));
            }
        }
    }
    return out;
}

SourcePtr pointsSource(const std::vector<Point3>& pts) {
    auto c = std::make_shared<CompositeSource>();
    for (const Point3& p : pts) {
        auto s = std::make_shared<PointSource>();
        s->position = p;
        c->elements.push_back(s);
    }
    return c;
}

SourcePtr pencil(const Point3& p, const Point3& d) {
    auto s = std::make_shared<PencilBeamSource>();
    s->position = p;
    s->direction = d;
    return s;
}

// An 8 mm cube of 2 mm Kuhn cells (384 tetras); the plane z = 0 is an interface between two
// regions, so launch points there also meet Fresnel reflection.
struct Cube {
    TetraMesh mesh = makeBoxMesh({-4, -4, -4}, {4, 4, 4}, 4, 4, 4,
                                 [](const Point3& c) { return c[2] < 0 ? 1u : 2u; });
    MaterialSet tissue, clear;
    Cube() {
        tissue.exterior(Material(0, 0, 0, 1.0));
        tissue.append(Material(0.05, 5, 0.8, 1.4));
        tissue.append(Material(0.1, 10, 0.9, 1.5));
        // No scattering, no index steps: a beam goes straight along the face or edge it starts on.
        clear.exterior(Material(0, 0, 0, 1.0));
        clear.append(Material(0.05, 0, 0, 1.0));
        clear.append(Material(0.05, 0, 0, 1.0));
    }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(stuck_packets, Cube)

// Every vertex, edge midpoint and face centroid of three tetras: one at the centre (touching the
// interface), one at the corner of the mesh (its faces and vertex on the surface), one beside
// the interface.
BOOST_AUTO_TEST_CASE(points_on_vertices_edges_and_faces) {
    const uint32_t tetras[] = {mesh.locate({0.1, 0.2, 0.3}), mesh.locate({3.9, 3.8, 3.7}),
                               mesh.locate({-1.9, 0.5, -0.1})};
    const char* names[] = {"vertices", "edge midpoints", "face centroids"};
    for (Feature f : {Feature::Vertex, Feature::Edge, Feature::Face}) {
        std::vector<Point3> pts;
        for (uint32_t t : tetras) {
            BOOST_REQUIRE(t);
            for (const Point3& p : featurePoints(mesh, t, f)) pts.push_back(p);
        }
        KernelInput in = packModel(mesh, tissue, *pointsSource(pts));
        std::string what = std::string("points on ") + names[int(f)];
        checkAbnormalBelow(what, runChecked(what, in, 20000), 1e-4);
    }
}

// Unscattered beams through a matched, uniformly absorbing cube along lines made of tetra faces
// and edges: the transmitted fraction must be exp(-mu_a L) (binomial error), none abnormal.
BOOST_AUTO_TEST_CASE(beams_along_faces_and_edges) {
    struct Beam {
        const char* what;
        Point3 p, d;
        double length;  // path in the cube, mm
    };
    const double s3 = std::sqrt(3.0);
    const Beam beams[] = {
        {"along the edges x = y = 0", {0, 0, -6}, {0, 0, 1}, 8},
        {"along faces in the plane x = 0", {0, 0.7, -6}, {0, 0, 1}, 8},
        {"along faces in the diagonal plane x = y", {0.5, 0.5, -6}, {0, 0, 1}, 8},
        {"along cube diagonals (tetra edges) from the mesh corner", {-6, -6, -6}, {1, 1, 1}, 8 * s3},
        {"along the surface edge y = z = 4", {-6, 4, 4}, {1, 0, 0}, 8},
        {"inside, along faces in the plane y = 2", {-1.3, 2, 0.6}, {1, 0, 0}, 5.3},
    };
    const uint64_t n = 20000;
    for (const Beam& b : beams) {
        KernelInput in = packModel(mesh, clear, *pencil(b.p, b.d));
        Run run = runChecked(b.what, in, n);
        checkAbnormalBelow(b.what, run, 0.0);
        const double expected = std::exp(-0.05 * b.length);
        const double sd = std::sqrt(expected * (1 - expected) / n);
        BOOST_CHECK_MESSAGE(std::fabs(run.exited() - expected) < 5 * sd,
                            b.what << ": transmitted " << run.exited() << ", expected " << expected);
    }
}

// Beams from outside at 1e-4 rad to the top surface, landing on a face and exactly on an edge
// line, into scattering tissue; and a beam inside the tissue along the interface plane z = 0.
BOOST_AUTO_TEST_CASE(grazing_beams) {
    const Point3 dir{1, 0, -1e-4};
    struct G {
        const char* what;
        Point3 p, d;
    };
    const G beams[] = {
        {"grazing onto a face of the top surface", {-8, 0.3, 4 + 6.7e-4}, dir},
        {"grazing onto an edge line of the top surface", {-8, 0.3, 4 + 6e-4}, dir},
        {"inside along the interface plane z = 0", {-3.5, 0.25, 0}, {1, 0, 0}},
        {"inside along the interface plane, towards a vertex", {-3, -3, 0}, {1, 1, 0}},
    };
    for (const G& b : beams) {
        KernelInput in = packModel(mesh, tissue, *pencil(b.p, b.d));
        checkAbnormalBelow(b.what, runChecked(b.what, in, 20000), 1e-4);
    }
}

BOOST_AUTO_TEST_SUITE_END()

namespace {

// A sliver between four pyramids: A B C D is a unit square with D lifted by eps, so tetra ABCD
// has volume eps/6; apex P above caps its upper faces (ABD, BCD), apex Q below its lower faces
// (ABC, ACD). Five tetras, conforming, the sliver a region of its own.
TetraMesh sliverMesh(double eps) {
    std::vector<Point3> pts{{0, 0, 0},   {0, 0, 0},       {1, 0, 0},       {1, 1, 0},
                            {0, 1, eps}, {0.5, 0.5, 1.0}, {0.5, 0.5, -1.0}};
    enum { A = 1, B, C, D, P, Q };
    std::vector<TetraPoints> tets{{0, 0, 0, 0}, {A, B, C, D}, {P, A, B, D}, {P, B, C, D},
                                  {Q, A, B, C}, {Q, A, C, D}};
    std::vector<uint32_t> regions{0, 2, 1, 1, 1, 1};
    return TetraMesh(std::move(pts), std::move(tets), std::move(regions));
}

MaterialSet sliverMaterials(double sliverN) {
    MaterialSet mats;
    mats.exterior(Material(0, 0, 0, 1.0));
    mats.append(Material(0.1, 10, 0.9, 1.37));
    mats.append(Material(0.5, 20, 0.8, sliverN));
    return mats;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(stuck_packets)

// The sliver has other optical properties than its neighbours but the same index (the usual
// case: slivers come from meshing within a tissue or along a boundary of similar index).
BOOST_AUTO_TEST_CASE(sliver_tetras) {
    const MaterialSet mats = sliverMaterials(1.37);
    for (double eps : {1e-3, 1e-6, 1e-9}) {
        TetraMesh m = sliverMesh(eps);
        BOOST_REQUIRE_EQUAL(m.boundaryFaces().size(), 8u);  // conforming: the sliver is inside
        BOOST_CHECK_CLOSE(m.volume(1), eps / 6, 1e-3);
        const std::string tag = " (sliver eps " + std::to_string(eps) + ")";
        const SourcePtr sources[] = {
            pointsSource({{0.5, 0.5, eps / 4}, {0.5, 0.5, 0}, {0.25, 0.5, 0}}),  // in and on it
            pencil({0.3, 0.6, -3}, {0, 0, 1}),                                  // across it
            pencil({0.4, 0.45, 0}, {1, 0.3, 0}),                                // along its base
        };
        const char* names[] = {"points in the sliver", "beam across the sliver", "beam along the sliver"};
        for (int i = 0; i < 3; ++i) {
            KernelInput in = packModel(m, mats, *sources[i]);
            checkAbnormalBelow(names[i] + tag, runChecked(names[i] + tag, in, 20000), 1e-3);
        }
    }
}

// A sliver of higher index than its neighbours is a waveguide 1e-9 mm thick: a packet inside it
// beyond the critical angle is totally reflected between its faces, ~1/eps face hits per mm of
// path, and only maxHits stops it. That is the physics of the model as given; the run must
// still finish with the ledger closed and those packets booked (and reported) abnormal.
BOOST_AUTO_TEST_CASE(high_index_sliver_traps_packets_until_max_hits) {
    TetraMesh m = sliverMesh(1e-9);
    KernelParams kp;
    kp.maxHits = 10000;
    KernelInput in = packModel(m, sliverMaterials(1.5), *pointsSource({{0.5, 0.5, 0.25e-9}}));
    Run run = runChecked("points in a high-index sliver (eps 1e-9)", in, 2000, kp);
    BOOST_CHECK_GT(run.r.events.abnormal, 0u);
    BOOST_CHECK_GT(run.abnormal(), 0.0);
}

// No absorption: weight never falls, so roulette never ends a packet; those that do not escape
// within maxSteps interactions are booked abnormal, each with its whole weight 1.
BOOST_AUTO_TEST_CASE(max_steps_books_the_remainder_abnormal) {
    TetraMesh m = makeBoxMesh({-4, -4, -4}, {4, 4, 4}, 4, 4, 4, [](const Point3&) { return 1u; });
    MaterialSet mats;
    mats.exterior(Material(0, 0, 0, 1.0));
    mats.append(Material(0, 10, 0, 1.4));
    PointSource p;
    p.position = {0, 0, 0};
    KernelParams kp;
    kp.maxSteps = 50;  // ~0.1 mm random-walk steps: almost none gets 4 mm out in 50
    Run run = runChecked("maxSteps 50, no absorption", packModel(m, mats, p), 5000, kp);
    BOOST_CHECK_GT(run.abnormal(), 0.9);
    BOOST_CHECK_EQUAL(run.r.ledger.abnormal, double(run.r.events.abnormal));  // weight 1 each
    BOOST_CHECK_EQUAL(run.r.ledger.absorbed, 0.0);
    BOOST_CHECK_EQUAL(run.r.ledger.exited + run.r.ledger.abnormal, 5000.0);
}

// Vacuum inside a high-index cube: a step never ends (mu_t = 0) and total internal reflection
// keeps most packets inside, so only maxHits ends them.
BOOST_AUTO_TEST_CASE(max_hits_books_trapped_packets_abnormal) {
    TetraMesh m = makeBoxMesh({-4, -4, -4}, {4, 4, 4}, 4, 4, 4, [](const Point3&) { return 1u; });
    MaterialSet mats;
    mats.exterior(Material(0, 0, 0, 1.0));
    mats.append(Material(0, 0, 0, 3.0));
    PointSource p;
    p.position = {0.1, 0.2, 0.3};
    KernelParams kp;
    kp.maxHits = 300;
    Run run = runChecked("maxHits 300, vacuum with TIR", packModel(m, mats, p), 5000, kp);
    BOOST_CHECK_GT(run.abnormal(), 0.1);
    BOOST_CHECK_GT(run.exited(), 0.0);  // those within the escape cone (or Fresnel-transmitted) leave
    BOOST_CHECK_EQUAL(run.r.ledger.exited + run.r.ledger.abnormal, 5000.0);
}

// A tangled mesh: the centre vertex of a 2x2x2 box moved far into one cell, so tetras around it
// fold over their neighbours (the mesh re-orients them, but they overlap). Packets there can
// ping-pong between overlapping cells; the guards must end them, booked abnormal.
BOOST_AUTO_TEST_CASE(tangled_mesh_finishes_with_abnormal_booked) {
    TetraMesh box = makeBoxMesh({0, 0, 0}, {2, 2, 2}, 2, 2, 2, [](const Point3&) { return 1u; });
    std::vector<Point3> pts = box.points();
    uint32_t centre = 0;
    for (uint32_t i = 1; i <= box.pointCount(); ++i)
        if (pts[i] == Point3{1, 1, 1}) centre = i;
    BOOST_REQUIRE(centre);
    pts[centre] = {1.9, 0.2, 1.7};
    MeshCheckOptions allow;  // the mesh check rejects folds; this test is about the kernel's guards
    allow.allowDefects = true;
    TetraMesh m(std::move(pts), box.tetras(), box.regions(), allow);
    BOOST_CHECK(m.checkReport().hasErrors());
    MaterialSet mats;
    mats.exterior(Material(0, 0, 0, 1.0));
    mats.append(Material(0.05, 5, 0.8, 1.4));
    VolumeSource v;
    v.region = 1;
    KernelParams kp;
    kp.maxSteps = 2000;
    kp.maxHits = 2000;
    Run run = runChecked("tangled mesh", packModel(m, mats, v), 5000, kp);
    BOOST_CHECK_GE(run.r.ledger.abnormal, 0.0);
}

BOOST_AUTO_TEST_SUITE_END()
