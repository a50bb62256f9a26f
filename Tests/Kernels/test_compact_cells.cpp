// SPDX-License-Identifier: GPL-3.0-or-later
// The compact cell layout (Kernels/Core/CellLayout.hpp CompactPlanes): normal codes within their
// angle bound, every cell's decoded planes through its own corners (height errors a small
// fraction of the cell's edges, the opposite corner inside), the two sides of every face exactly
// opposite, and the CPU packet loop on decoded planes giving the records' physics within
// statistics. Meshes: a jittered box far from the origin, cube_5med from the reference data, and
// any meshes named in FM_COMPACT_TEST_MESHES (TIM-OS .mesh or .fmb paths, e.g. the Digimouse
// meshes on the GPU machine; skipped when unset).
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>

#include "Common/ParallelFor.hpp"
#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/Core/ArrayModel.hpp"
#include "Kernels/Core/CellLayout.hpp"
#include "Kernels/HostCellArrays.hpp"
#include "Kernels/Core/Packet.hpp"
#include "Storage/Binary/BinaryMesh.hpp"
#include "Storage/TIMOS/TIMOS.hpp"
#include "Tests/TestUtil.hpp"

using namespace fm;

namespace {

// The angle between a code's decoded normal and the direction it codes, worst case: the
// rounding moves u by at most 1/(2K) and v by 1/K, so the L1-scaled normal (length >= 1/sqrt 3)
// moves by at most about 3.4e-5: 6e-5 rad. 1e-4 rad leaves room for the double arithmetic.
constexpr double kAngleBound = 1e-4;

double angleOf(uint32_t w, const double x[3]) {
    double n[3];
    decodeCompactNormal(w, n);
    const double d = n[0] * x[0] + n[1] * x[1] + n[2] * x[2];
    const double ln = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]), lx = std::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
    return std::acos(std::min(1.0, d / (ln * lx)));
}

bool sameBits(float a, float b) { return compactBitsOf(a) == compactBitsOf(b); }
// Exactly opposite vectors (a zero component may be +0 on both sides: the same value).
bool opposite(Vec3 a, Vec3 b) { return a.x == -b.x && a.y == -b.y && a.z == -b.z; }

// A box mesh with interior points moved at random by up to a tenth of the spacing (normals in
// every direction, not only the grid's), centred 100 mm from the origin, three materials of
// different refractive indices (Fresnel at their faces).
TetraMesh jitteredBox() {
    const double c = 100, h = 1.25;
    BoxMeshArrays a = makeBoxMeshArrays({c - 5, c - 5, c - 5}, {c + 5, c + 5, c + 5}, 8, 8, 8, [c](const Point3& p) {
        const double x = p[0] - c, y = p[1] - c, z = p[2] - c;
        return x * x + y * y + z * z < 9 ? 2u : (z > 2 ? 3u : 1u);
    });
    std::mt19937 g(7);
    std::uniform_real_distribution<double> u(-0.1 * h, 0.1 * h);
    for (size_t i = 1; i < a.points.size(); ++i)
        for (int k = 0; k < 3; ++k)
            if (std::fabs(a.points[i][k] - c) < 5 - 1e-9) a.points[i][k] += u(g);
    return TetraMesh(std::move(a.points), std::move(a.tetras), std::move(a.regions));
}

MaterialSet threeMaterials() {
    MaterialSet mats;
    mats.exterior(Material(0, 0, 0, 1.0));
    mats.append(Material(0.05, 5, 0.8, 1.4));
    mats.append(Material(0.5, 20, 0.9, 1.37));
    mats.append(Material(0.02, 2, 0.0, 1.33));
    return mats;
}

// The cells of any mesh: one material per region, a point source at tetra 1's centroid.
KernelInput cellsOf(const TetraMesh& mesh) {
    MaterialSet mats;
    mats.exterior(Material(0, 0, 0, 1.0));
    for (uint32_t r = 1; r < mesh.regionCount(); ++r) mats.append(Material(0.1, 10, 0.9, 1.4));
    PointSource P;
    for (uint32_t k : mesh.tetra(1))
        for (int i = 0; i < 3; ++i) P.position[i] += mesh.point(k)[i] / 4;
    return packModel(mesh, mats, P);
}

// Every cell of `mesh`: the decoded plane of each face within the bound of its three corners,
// the fourth corner clearly inside, and the neighbour's plane of the face its exact opposite.
void checkCompactMesh(const TetraMesh& mesh, const std::string& name) {
    const KernelInput in = cellsOf(mesh);
    const std::vector<CompactPlanes> cp = compactCells(in.cells);
    BOOST_REQUIRE_EQUAL(cp.size(), in.cells.size());
    double worst = 0, worstInside = 1e9;
    size_t shared = 0, bad = 0;
    for (uint32_t t = 1; t <= mesh.tetraCount(); ++t) {
        const TetraPoints& tp = mesh.tetra(t);
        double edge = 0, reach = 0;
        for (int a = 0; a < 4; ++a) {
            const Point3& p = mesh.point(tp[a]);
            reach = std::max(reach, std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]));
            for (int b = a + 1; b < 4; ++b) {
                const Point3& q = mesh.point(tp[b]);
                edge = std::max(edge, std::hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]));
            }
        }
        // The code's angle error over the corners' distance to the centroid (< the longest
        // edge), plus the float rounding of C, relative to the distance from the origin.
        const double bound = kAngleBound * edge + 4e-7 * reach;
        for (int f = 0; f < 4; ++f) {
            double n[3];
            decodeCompactNormal(cp[t].normal[f], n);
            const double ln = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
            const MeshFace& F = mesh.face(mesh.tetraFace(t, f) & 0x7fffffffu);
            auto height = [&](uint32_t k) {
                const Point3& p = mesh.point(k);
                return (double(cp[t].C[f]) - (n[0] * p[0] + n[1] * p[1] + n[2] * p[2])) / ln;
            };
            for (uint32_t k : F.points) {
                worst = std::max(worst, std::fabs(height(k)) / edge);
                bad += !(std::fabs(height(k)) < bound);
            }
            for (uint32_t k : tp)
                if (k != F.points[0] && k != F.points[1] && k != F.points[2]) {
                    // The true height of the opposite corner from the face's exact plane.
                    const Point3& p = mesh.point(k);
                    const Point3& q = mesh.point(F.points[0]);
                    const double s = (mesh.tetraFace(t, f) & kFaceSideBit) ? -1 : 1;
                    const double h = -s * (F.normal[0] * (p[0] - q[0]) + F.normal[1] * (p[1] - q[1]) + F.normal[2] * (p[2] - q[2]));
                    worstInside = std::min(worstInside, height(k) / h);
                    bad += !(height(k) > 0.5 * h);
                }
            const uint32_t nb = in.cells[t].adj[f];
            if (isExterior(nb)) continue;
            for (int g = 0; g < 4; ++g)
                if ((in.cells[nb].face[g] & ~kFaceSideBit) == (in.cells[t].face[f] & ~kFaceSideBit)) {
                    ++shared;
                    bad += cp[nb].normal[g] != negateCompactNormal(cp[t].normal[f]);
                    bad += !sameBits(cp[nb].C[g], -cp[t].C[f]);
                    const Vec3 a = decodeCompactNormal(cp[t].normal[f]), b = decodeCompactNormal(cp[nb].normal[g]);
                    bad += !opposite(a, b);
                }
        }
    }
    BOOST_TEST_MESSAGE(name << ": " << mesh.tetraCount() << " cells, worst corner height / longest edge " << worst
                            << ", least inside corner height / true height " << worstInside << ", " << shared
                            << " shared faces");
    BOOST_CHECK_EQUAL(bad, 0u);
    BOOST_CHECK_GT(shared, mesh.tetraCount());
}

// The CPU packet loop on decoded compact planes: the GPU's CompactDeviceModel on the host
// (exit distances from the decoded normals as they are, Fresnel from the plane's unit normal).
struct CompactArrayModel : ArrayModel {
    const CompactPlanes* compact;
    static constexpr bool kLazyNormals = true;
    CellPlanes planes(uint32_t i) const { return decodeCompactPlanes(compact[i]); }
    Vec3 faceNormal(uint32_t i, int f) const { return compactFaceNormal(compact[i].normal[f]); }
};

// Per-region energy of each packet, summed with its square over the packets.
struct RegionScorer {
    Events events;
    Ledger ledger;
    const TetraRecord* cells = nullptr;
    std::vector<double> packet, sum, sumSq;
    explicit RegionScorer(const KernelInput& in, size_t regions)
        : cells(in.cells.data()), packet(regions), sum(regions), sumSq(regions) {}
    void absorb(const PacketState& st, double dw) { packet[cells[st.pk.tetra].material] += dw; }
    void endPacket() {
        double all = 0;
        for (size_t r = 1; r < packet.size(); ++r) all += packet[r];
        packet[0] = all;  // region 0 (the exterior absorbs nothing): the packet's whole absorption
        for (size_t r = 0; r < packet.size(); ++r) {
            sum[r] += packet[r];
            sumSq[r] += packet[r] * packet[r];
            packet[r] = 0;
        }
    }
};

template <class Model>
RegionScorer runScalar(const Model& m, const KernelInput& in, size_t regions, uint64_t seed, uint64_t packets) {
    RegionScorer sc(in, regions);
    KernelParams kp;
    kp.seed = seed;
    for (uint64_t i = 0; i < packets; ++i) {
        PacketState st;
        if (launchPacket(m, kp, i, st, sc)) {
            KeptMaterial km = keptMaterial(m, st.pk.tetra);
            while (advance(m, kp, st, km, sc)) {}
        }
        sc.endPacket();
    }
    return sc;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(compact_cells)

// Directions all over the sphere, the axes and the planes between them: within the angle
// bound; the float decode equals the exact one; a negated code decodes to the exact negation.
BOOST_AUTO_TEST_CASE(codes_round_trip_within_the_angle_bound) {
    std::mt19937 g(3);
    std::normal_distribution<double> N;
    std::vector<std::array<double, 3>> dirs = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1},
                                               {1, 1, 0}, {1, -1, 0}, {0, 1, -1}, {1, 1, 1}, {-1, 2, -3}, {1e-9, 0, -1}};
    for (int i = 0; i < 200000; ++i) dirs.push_back({N(g), N(g), N(g)});
    double worst = 0, mean = 0;
    for (const auto& d : dirs) {
        const uint32_t w = encodeCompactNormal(d[0], d[1], d[2]);
        const double a = angleOf(w, d.data());
        worst = std::max(worst, a);
        mean += a / dirs.size();
        double n[3];
        decodeCompactNormal(w, n);
        const Vec3 f = decodeCompactNormal(w), m = decodeCompactNormal(negateCompactNormal(w));
        BOOST_REQUIRE(double(f.x) == n[0] && double(f.y) == n[1] && double(f.z) == n[2]);
        BOOST_REQUIRE(opposite(m, f));
        BOOST_REQUIRE_EQUAL(negateCompactNormal(negateCompactNormal(w)), w);
        const Vec3 u = compactFaceNormal(w);
        BOOST_REQUIRE_SMALL(double(dot(u, u)) - 1.0, 1e-6);
    }
    BOOST_TEST_MESSAGE("compact normal codes: worst angle " << worst << " rad, mean " << mean);
    BOOST_CHECK_LT(worst, kAngleBound);
}

BOOST_AUTO_TEST_CASE(planes_of_a_jittered_mesh_far_from_the_origin) { checkCompactMesh(jitteredBox(), "jittered box"); }

// The planes do not depend on how the cells are split over the load threads (one thread, or
// chunks of a few cells on several: Common/ParallelFor.hpp).
BOOST_AUTO_TEST_CASE(planes_are_the_same_for_any_thread_split) {
    const KernelInput in = cellsOf(jitteredBox());
    setLoadThreads(1);
    const std::vector<CompactPlanes> one = compactCells(in.cells);
    setLoadThreads(7);
    loadGrainDivisor() = 4096;  // chunks of 4 cells
    const std::vector<CompactPlanes> many = compactCells(in.cells);
    setLoadThreads(0);
    loadGrainDivisor() = 1;
    BOOST_REQUIRE_EQUAL(one.size(), in.cells.size());
    BOOST_REQUIRE_EQUAL(many.size(), one.size());
    BOOST_CHECK(std::memcmp(one.data(), many.data(), one.size() * sizeof(CompactPlanes)) == 0);
}

BOOST_AUTO_TEST_CASE(planes_of_cube_5med) {
    if (!fmtest::haveSharedData("timos/cube_5med/cube_5med.mesh")) return;
    checkCompactMesh(readTIMOSMesh(fmtest::sharedData("timos/cube_5med/cube_5med.mesh")), "cube_5med");
}

// The device's CompactCells filled in place (compactLayoutCells) are, byte for byte, the planes of
// compactCells beside the links of cellLinksOf, on one load thread and on many.
void checkLayoutCells(const TetraMesh& mesh, const std::string& name) {
    const KernelInput in = cellsOf(mesh);
    const std::vector<CompactPlanes> planes = compactCells(in.cells);
    std::vector<CompactCell> expected(in.cells.size());
    for (size_t i = 0; i < in.cells.size(); ++i) expected[i] = CompactCell{planes[i], cellLinksOf(in.cells[i])};
    for (unsigned threads : {1u, 3u}) {
        setLoadThreads(threads);
        const UninitVector<CompactCell> got = compactLayoutCells(in.cells);
        BOOST_REQUIRE_EQUAL(got.size(), expected.size());
        size_t differ = 0;
        for (size_t i = 0; i < got.size(); ++i) differ += std::memcmp(&got[i], &expected[i], sizeof(CompactCell)) != 0;
        BOOST_CHECK_MESSAGE(differ == 0, name << ", " << threads << " load threads: " << differ << " of " << got.size()
                                                << " CompactCells differ");
    }
    setLoadThreads(0);
}

BOOST_AUTO_TEST_CASE(layout_cells_in_place_equal_planes_beside_links) {
    checkLayoutCells(jitteredBox(), "jittered box");
    if (!fmtest::haveSharedData("timos/cube_5med/cube_5med.mesh")) return;
    checkLayoutCells(readTIMOSMesh(fmtest::sharedData("timos/cube_5med/cube_5med.mesh")), "cube_5med");
}

// Large meshes (the Digimouse meshes on the GPU machine: bench/gpu_latency.sh names them).
BOOST_AUTO_TEST_CASE(planes_of_the_meshes_in_FM_COMPACT_TEST_MESHES) {
    const char* list = std::getenv("FM_COMPACT_TEST_MESHES");
    if (!list || !*list) {
        BOOST_TEST_MESSAGE("SKIP: FM_COMPACT_TEST_MESHES names no meshes");
        return;
    }
    std::istringstream names(list);
    for (std::string path; names >> path;)
        checkCompactMesh(isBinaryMeshFile(path) ? readBinaryMesh(path) : readTIMOSMesh(path), path);
}

// The dummy cell 0 and cells without corners get planes no packet leaves through.
BOOST_AUTO_TEST_CASE(a_cell_without_corners_is_never_left) {
    std::vector<TetraRecord> cells(1);
    const std::vector<CompactPlanes> cp = compactCells(cells);
    const CellPlanes p = decodeCompactPlanes(cp[0]);
    const FaceHit h = exitFaceNearest(p, Vec3{0.f, 0.f, 0.f}, Vec3{0.f, 0.f, 1.f});
    BOOST_CHECK_EQUAL(h.face, -1);
}

// The scalar packet loop on the decoded planes against the records' (independent seeds):
// absorbed fraction and each region's energy per packet within 4 standard errors, no packet
// stuck, the ledger closed.
BOOST_AUTO_TEST_CASE(cpu_loop_on_compact_planes_gives_the_records_physics) {
    const TetraMesh mesh = jitteredBox();
    const MaterialSet mats = threeMaterials();
    PointSource P;
    P.position = {100.2, 100.1, 96.5};  // in material 1, below the sphere: exits and Fresnel matter
    const KernelInput in = packModel(mesh, mats, P);
    const std::vector<CompactPlanes> cp = compactCells(in.cells);
    const CompactArrayModel cm{in.view(), cp.data()};
    const uint64_t n = 60000;
    const size_t regions = mats.size();
    const RegionScorer rec = runScalar(in.view(), in, regions, 1, n), com = runScalar(cm, in, regions, 2, n);
    BOOST_CHECK_EQUAL(com.events.abnormal, 0u);
    BOOST_CHECK_GT(com.events.fresnel, 0u);
    BOOST_CHECK_SMALL(com.ledger.imbalance(), 1e-9 * n);
    for (size_t r = 0; r < regions; ++r) {
        auto var = [n](const RegionScorer& s, size_t k) {
            const double m = s.sum[k] / n;
            return (s.sumSq[k] / n - m * m) / (n - 1);
        };
        const double d = (com.sum[r] - rec.sum[r]) / n, se = std::sqrt(var(rec, r) + var(com, r));
        BOOST_TEST_MESSAGE((r ? "region " + std::to_string(r) : std::string("absorbed")) << ": records "
                                                                                          << rec.sum[r] / n << ", compact "
                                                                                          << com.sum[r] / n << ", z " << d / se);
        BOOST_CHECK_GT(rec.sum[r], 0.0);
        BOOST_CHECK_LT(std::fabs(d), 4 * se);
    }
}

BOOST_AUTO_TEST_SUITE_END()
