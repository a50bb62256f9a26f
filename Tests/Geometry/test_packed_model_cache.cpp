// SPDX-License-Identifier: GPL-3.0-or-later
// PackedModelCache (Geometry/PackedModelCache.hpp): a loop of runs over one mesh with the source
// and the material values changed each run packs the cells once and gives inputs, and CPU
// results, bit for bit those of fresh packs; another mesh, a mesh object given other contents, a
// moved mesh, other directed faces or another boundary flag pack the cells again. The CPU runs
// also check the kernel's plain-crossing bits kept between runs of the same cells
// (keptPlainCrossingBits): the references run without the cells' identity, computing them anew.
#include <boost/test/unit_test.hpp>
#include <cstring>

#include "Common/Errors.hpp"
#include "Geometry/MeshBuilder.hpp"
#include "Geometry/PackedModelCache.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Tests/TestUtil.hpp"

using namespace fm;

namespace {
TetraMesh box(unsigned n, double inner) {
    return makeBoxMesh({-5, -5, -5}, {5, 5, 5}, n, n, n, [inner](const Point3& c) {
        return c[0] * c[0] + c[1] * c[1] + c[2] * c[2] < inner * inner ? 2u : 1u;
    });
}

// The materials of run k: values that change with k, the refractive index of region 2 included
// (equal to region 1's in even runs, whose crossings between them are then plain).
MaterialSet materials(int k) {
    const double scale = 1 + 0.3 * k;
    MaterialSet m;
    m.exterior(Material(0, 0, 0, 1.0));
    m.append(Material(0.05 * scale, 5 * scale, 0.8, 1.4));
    m.append(Material(0.5 * scale, 20, 0.9, k % 2 ? 1.37 : 1.4));
    return m;
}

template <class T>
bool sameBytes(const std::vector<T>& a, const std::vector<T>& b) {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// Every field of the two inputs, byte for byte where they are records.
void checkSameInput(const KernelInput& a, const KernelInput& b) {
    BOOST_CHECK(sameBytes(a.cells, b.cells));
    BOOST_CHECK(sameBytes(a.materials, b.materials));
    BOOST_CHECK_EQUAL(a.emitters.size(), b.emitters.size());
    BOOST_CHECK(a.emitterCdf == b.emitterCdf);
    BOOST_CHECK_EQUAL(a.pieces.size(), b.pieces.size());
    BOOST_CHECK(a.pieceCdf == b.pieceCdf);
    BOOST_CHECK_EQUAL(a.faceCount, b.faceCount);
    BOOST_CHECK_EQUAL(a.cellsIdentity, b.cellsIdentity);
    BOOST_CHECK(a.warnings == b.warnings);
}

// A CPU run; `anonymous`: with the cells' identity taken away, so that the run computes what it
// derives from the cells (the CPU's plain-crossing bits) instead of taking those kept from
// an earlier run of the same cells.
RunResult run(const KernelInput& in, bool anonymous = false) {
    if (anonymous) {
        KernelInput copy = in;
        copy.cellsIdentity = 0;
        return run(copy);
    }
    RunOptions o;
    o.packets = 2000;
    o.threads = 2;
    o.params.seed = 7;
    o.outputs.directed = true;
    return runCpu(in, o);
}

void checkSameResult(const RunResult& a, const RunResult& b) {
    fmtest::checkSameEvents(a.events, b.events);
    BOOST_CHECK(a.volume == b.volume);
    BOOST_CHECK(a.surface == b.surface);
    BOOST_CHECK(a.directed == b.directed);
    BOOST_CHECK_EQUAL(a.ledger.absorbed, b.ledger.absorbed);
}

SourcePtr sourceOfRun(int k) {
    if (k % 3 == 2) {
        auto b = std::make_shared<BallSource>();
        b->centre = {0.5 * k - 1, 0.2, -0.3};
        b->radius = 1.5;
        return b;
    }
    auto p = std::make_shared<PointSource>();
    p->position = {0.7 * k - 2, -0.4, 0.3 * k};
    return p;
}
}  // namespace

BOOST_AUTO_TEST_CASE(loop_with_changed_sources_and_materials_equals_fresh_packs) {
    const TetraMesh mesh = box(6, 3);
    const std::vector<uint32_t> directed = {mesh.tetraFace(40, 1) & 0x7fffffffu, mesh.tetraFace(90, 2) & 0x7fffffffu};
    PackedModelCache cache;
    for (int k = 0; k < 5; ++k) {
        const MaterialSet mats = materials(k);
        const SourcePtr src = sourceOfRun(k);
        const std::shared_ptr<const KernelInput> kept = cache.pack(mesh, mats, *src, directed);
        const KernelInput fresh = packModel(mesh, mats, *src, directed);
        checkSameInput(*kept, fresh);
        checkSameResult(run(*kept), run(fresh, true));
    }
    BOOST_CHECK_EQUAL(cache.cellPacks(), 1u);
    BOOST_CHECK_EQUAL(cache.cellReuses(), 4u);
}

BOOST_AUTO_TEST_CASE(an_input_still_held_is_left_as_it_is) {
    const TetraMesh mesh = box(5, 3);
    PackedModelCache cache;
    const SourcePtr a = sourceOfRun(0), b = sourceOfRun(2);
    const std::shared_ptr<const KernelInput> first = cache.pack(mesh, materials(1), *a);
    std::shared_ptr<const KernelInput> second = cache.pack(mesh, materials(2), *b);
    BOOST_CHECK(first != second);
    checkSameInput(*first, packModel(mesh, materials(1), *a));
    checkSameInput(*second, packModel(mesh, materials(2), *b));
    BOOST_CHECK_EQUAL(cache.cellPacks(), 1u);
    // Once the caller lets go, the next run updates the cache's input in place.
    const KernelInput* where = second.get();
    second.reset();
    const std::shared_ptr<const KernelInput> third = cache.pack(mesh, materials(3), *a);
    BOOST_CHECK(third.get() == where);
    checkSameInput(*third, packModel(mesh, materials(3), *a));
}

BOOST_AUTO_TEST_CASE(another_mesh_an_edited_or_moved_mesh_or_other_faces_pack_again) {
    PackedModelCache cache;
    const SourcePtr src = sourceOfRun(0);
    const MaterialSet mats = materials(1);
    TetraMesh mesh = box(5, 3);
    cache.pack(mesh, mats, *src);
    BOOST_CHECK_EQUAL(cache.cellPacks(), 1u);

    // The same object given other contents (regions moved: same sizes, other cells).
    const uint64_t before = mesh.identity();
    mesh = box(5, 2);
    BOOST_CHECK_NE(mesh.identity(), before);
    std::shared_ptr<const KernelInput> in = cache.pack(mesh, mats, *src);
    BOOST_CHECK_EQUAL(cache.cellPacks(), 2u);
    checkSameInput(*in, packModel(mesh, mats, *src));
    checkSameResult(run(*in), run(packModel(mesh, mats, *src), true));

    // A move: the new owner keeps the cells' identity, the moved-from object gets a new one.
    const uint64_t id = mesh.identity();
    TetraMesh moved = std::move(mesh);
    BOOST_CHECK_EQUAL(moved.identity(), id);
    BOOST_CHECK_NE(mesh.identity(), id);
    in = cache.pack(moved, mats, *src);
    BOOST_CHECK_EQUAL(cache.cellPacks(), 2u);

    // Other directed faces, another boundary flag: other cells.
    const std::vector<uint32_t> directed = {moved.tetraFace(10, 0) & 0x7fffffffu};
    in = cache.pack(moved, mats, *src, directed);
    BOOST_CHECK_EQUAL(cache.cellPacks(), 3u);
    checkSameInput(*in, packModel(moved, mats, *src, directed));
    MaterialSet matched = mats;
    matched.matchedBoundary = true;
    in = cache.pack(moved, matched, *src, directed);
    BOOST_CHECK_EQUAL(cache.cellPacks(), 4u);
    checkSameInput(*in, packModel(moved, matched, *src, directed));
    checkSameResult(run(*in), run(packModel(moved, matched, *src, directed), true));
}

BOOST_AUTO_TEST_CASE(a_failed_pack_raises_and_the_next_run_reuses_the_cells) {
    const TetraMesh mesh = box(5, 3);
    PackedModelCache cache;
    const SourcePtr src = sourceOfRun(0);
    cache.pack(mesh, materials(1), *src);
    MaterialSet one;  // region 2 has no material
    one.append(Material(0.1, 10, 0.9, 1.4));
    BOOST_CHECK_EXCEPTION(cache.pack(mesh, one, *src), ModelError, [](const ModelError& e) {
        return std::string(e.what()).find("region 2 has no material") != std::string::npos;
    });
    auto outside = std::make_shared<PointSource>();
    outside->position = {50, 0, 0};
    BOOST_CHECK_THROW(cache.pack(mesh, materials(1), *outside), ModelError);
    const std::shared_ptr<const KernelInput> in = cache.pack(mesh, materials(2), *src);
    BOOST_CHECK_EQUAL(cache.cellPacks(), 1u);
    checkSameInput(*in, packModel(mesh, materials(2), *src));
    checkSameResult(run(*in), run(packModel(mesh, materials(2), *src), true));
}
