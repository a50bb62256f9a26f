// SPDX-License-Identifier: GPL-3.0-or-later
// The GPU mesh kernel's cell layouts (Kernels/Core/CellLayout.hpp, TuningKnobs::cudaCellLayout): the
// split arrays hold the records' values bit for bit, a bad setting is refused by name, and on a
// GPU the split layout follows the records' histories and the compact layout (other planes:
// Tests/Kernels/test_compact_cells.cpp) gives their physics within statistics. The GPU cases
// skip with a message without a device.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "Common/Errors.hpp"
#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/Core/CellLayout.hpp"
#include "Kernels/HostCellArrays.hpp"
#include "Kernels/Dispatch.hpp"
#include "Kernels/Tuning.hpp"
#include "Tests/TestUtil.hpp"

using namespace fm;
using fmtest::haveGpu;

namespace {
// Three materials of different refractive indices (Fresnel at their faces) and scored faces:
// every field of a crossing is read.
struct LayoutModel {
    TetraMesh mesh = makeBoxMesh({-5, -5, -5}, {5, 5, 5}, 8, 8, 8, [](const Point3& c) {
        return c[0] * c[0] + c[1] * c[1] + c[2] * c[2] < 9 ? 2u : (c[2] > 2 ? 3u : 1u);
    });
    MaterialSet mats;
    std::vector<uint32_t> scored;
    LayoutModel() {
        mats.exterior(Material(0, 0, 0, 1.0));
        mats.append(Material(0.05, 5, 0.8, 1.4));
        mats.append(Material(0.5, 20, 0.9, 1.37));
        mats.append(Material(0.02, 2, 0.0, 1.33));
        for (uint32_t t = 1; t <= mesh.tetraCount(); t += 5) scored.push_back(mesh.tetraFace(t, 2) & 0x7fffffff);
    }
    KernelInput input() const {
        PointSource P;
        P.position = {0.1, 0.2, 0.3};
        return packModel(mesh, mats, P, scored);
    }
};

// Sets FM_CUDA_CELL_LAYOUT for a scope, unset after.
struct LayoutEnv {
    explicit LayoutEnv(const char* v) { setenv("FM_CUDA_CELL_LAYOUT", v, 1); }
    ~LayoutEnv() { unsetenv("FM_CUDA_CELL_LAYOUT"); }
};
// The same histories: the same event counts; ledger and tallies equal up to the order of the
// atomic additions.
void checkSameHistories(const RunResult& a, const RunResult& b) {
    BOOST_CHECK_EQUAL(a.events.scatter, b.events.scatter);
    BOOST_CHECK_EQUAL(a.events.boundary, b.events.boundary);
    BOOST_CHECK_EQUAL(a.events.fresnel, b.events.fresnel);
    BOOST_CHECK_EQUAL(a.events.exit, b.events.exit);
    BOOST_CHECK_CLOSE(a.ledger.absorbed, b.ledger.absorbed, 1e-9);
    BOOST_CHECK_CLOSE(a.ledger.exited, b.ledger.exited, 1e-9);
    BOOST_CHECK_SMALL(fmtest::l1(a.volume, b.volume), 1e-9);
    BOOST_CHECK_SMALL(fmtest::l1(a.surface, b.surface), 1e-9);
    BOOST_CHECK_SMALL(fmtest::l1(a.directed, b.directed), 1e-9);
}
}  // namespace

BOOST_FIXTURE_TEST_SUITE(cuda_cell_layout, LayoutModel)

BOOST_AUTO_TEST_CASE(split_arrays_hold_the_records_values) {
    const KernelInput in = input();
    const HostCellArrays split = hostCellArrays(in.cells, CellLayout::Split);
    const UninitVector<CellPlanes>& planes = split.planes;
    const UninitVector<CellLinks>& links = split.links;
    BOOST_REQUIRE_EQUAL(planes.size(), in.cells.size());
    BOOST_REQUIRE_EQUAL(links.size(), in.cells.size());
    size_t scoredCells = 0;
    for (size_t i = 0; i < in.cells.size(); ++i) {
        const TetraRecord& r = in.cells[i];
        BOOST_REQUIRE_EQUAL(std::memcmp(&planes[i], &r, sizeof(CellPlanes)), 0);  // the records lead with the planes
        for (int f = 0; f < 4; ++f) {
            BOOST_REQUIRE_EQUAL(links[i].adj[f], r.adj[f]);
            BOOST_REQUIRE_EQUAL(links[i].adjMaterial[f], r.adjMaterial[f]);
        }
        BOOST_REQUIRE_EQUAL(links[i].material, r.material);
        BOOST_REQUIRE_EQUAL(links[i].scoredFaces, r.scoredFaces);
        scoredCells += r.scoredFaces != 0;
    }
    BOOST_CHECK_GT(scoredCells, 0u);
}

BOOST_AUTO_TEST_CASE(layout_setting_is_read_and_a_bad_one_refused_by_name) {
    unsetenv("FM_CUDA_CELL_LAYOUT");
    BOOST_CHECK(tuningFromEnvironment().cudaCellLayout == CellLayout::Auto);
    {
        LayoutEnv e("auto");
        BOOST_CHECK(tuningFromEnvironment().cudaCellLayout == CellLayout::Auto);
    }
    {
        LayoutEnv e("split");
        BOOST_CHECK(tuningFromEnvironment().cudaCellLayout == CellLayout::Split);
    }
    {
        LayoutEnv e("record");
        BOOST_CHECK(tuningFromEnvironment().cudaCellLayout == CellLayout::Record);
    }
    {
        LayoutEnv e("compact");
        BOOST_CHECK(tuningFromEnvironment().cudaCellLayout == CellLayout::Compact);
    }
    LayoutEnv e("hot");
    auto names = [](const ParameterError& x) {
        return std::string(x.what()).find("FM_CUDA_CELL_LAYOUT=hot") != std::string::npos;
    };
    BOOST_CHECK_EXCEPTION(tuningFromEnvironment(), ParameterError, names);
}

// Auto: the compact layout for a mesh whose records outgrow half the L2 (an H100: 50 MB of L2),
// however large (it takes less memory than the records), the records for an L2-resident mesh;
// an explicit choice is kept.
BOOST_AUTO_TEST_CASE(auto_layout_compacts_meshes_beyond_the_l2) {
    const double l2 = 50e6;
    BOOST_CHECK(chooseCellLayout(CellLayout::Auto, 48000, l2) == CellLayout::Record);      // cube_5med, 5.4 MB
    BOOST_CHECK(chooseCellLayout(CellLayout::Auto, 996468, l2) == CellLayout::Compact);    // Digimouse, 112 MB
    BOOST_CHECK(chooseCellLayout(CellLayout::Auto, 223000, l2) == CellLayout::Record);     // 25 MB: half the L2
    BOOST_CHECK(chooseCellLayout(CellLayout::Auto, 224000, l2) == CellLayout::Compact);
    BOOST_CHECK(chooseCellLayout(CellLayout::Auto, 900000000, l2) == CellLayout::Compact);  // beyond any device
    BOOST_CHECK(chooseCellLayout(CellLayout::Split, 1000, l2) == CellLayout::Split);
    BOOST_CHECK(chooseCellLayout(CellLayout::Record, 996468, l2) == CellLayout::Record);
    BOOST_CHECK(chooseCellLayout(CellLayout::Compact, 1000, l2) == CellLayout::Compact);
}

// What the split and compact layouts upload instead of the records: the records' face ids, the
// split arrays (their values: split_arrays_hold_the_records_values) or the compact cells as
// compactLayoutCells makes them; nothing for the record layout.
BOOST_AUTO_TEST_CASE(host_cell_arrays_hold_the_records_face_ids_and_the_layouts_arrays) {
    const KernelInput in = input();
    const HostCellArrays none = hostCellArrays(in.cells, CellLayout::Record);
    BOOST_CHECK(none.faces.empty() && none.planes.empty() && none.links.empty() && none.compact.empty());
    const HostCellArrays split = hostCellArrays(in.cells, CellLayout::Split);
    const HostCellArrays compact = hostCellArrays(in.cells, CellLayout::Compact);
    const UninitVector<CompactCell> cells = compactLayoutCells(in.cells);
    BOOST_REQUIRE_EQUAL(split.faces.size(), in.cells.size());
    BOOST_REQUIRE_EQUAL(compact.faces.size(), in.cells.size());
    BOOST_REQUIRE_EQUAL(split.planes.size(), in.cells.size());
    BOOST_REQUIRE_EQUAL(split.links.size(), in.cells.size());
    BOOST_REQUIRE_EQUAL(compact.compact.size(), in.cells.size());
    BOOST_CHECK(split.compact.empty() && compact.planes.empty() && compact.links.empty());
    size_t surfaceFaces = 0;
    for (size_t i = 0; i < in.cells.size(); ++i) {
        for (int f = 0; f < 4; ++f) {
            BOOST_REQUIRE_EQUAL(split.faces[i].face[f], in.cells[i].face[f]);
            BOOST_REQUIRE_EQUAL(compact.faces[i].face[f], in.cells[i].face[f]);
            surfaceFaces += in.cells[i].face[f] != 0;
        }
        BOOST_REQUIRE_EQUAL(std::memcmp(&compact.compact[i], &cells[i], sizeof(CompactCell)), 0);
    }
    BOOST_CHECK_GT(surfaceFaces, 0u);
}

// Same seed, same packets: the same histories in both layouts (the same floats in both), so the
// same event counts; tallies and ledger equal up to the order of the atomic additions.
BOOST_AUTO_TEST_CASE(both_layouts_follow_the_same_histories) {
    if (!haveGpu()) return;
    const KernelInput in = input();
    RunOptions o;
    o.packets = 2000000;
    o.outputs.surface = true;
    o.outputs.directed = true;
    o.tuning.cudaCellLayout = CellLayout::Record;
    const RunResult rec = runKernel("cuda", in, o);
    o.tuning.cudaCellLayout = CellLayout::Split;
    const RunResult split = runKernel("cuda", in, o);
    checkSameHistories(rec, split);
    BOOST_CHECK_GT(rec.events.fresnel, 0u);
    BOOST_TEST_MESSAGE("kernel s, record / split: " << rec.kernelSeconds << " / " << split.kernelSeconds);
}

// Independent seeds: the compact layout's absorbed fraction within 4 batch-means standard errors
// of the records', each region's energy within 4 of the binomial-like bound (a packet leaves
// between 0 and 1 of its weight in a region: variance <= 1/4 per packet); no packet stuck.
BOOST_AUTO_TEST_CASE(compact_layout_gives_the_records_physics) {
    if (!haveGpu()) return;
    const KernelInput in = input();
    RunOptions o;
    o.packets = 4000000;
    o.batches = 20;
    o.outputs.surface = true;
    o.outputs.directed = true;
    o.tuning.cudaCellLayout = CellLayout::Record;
    o.params.seed = 1;
    const RunResult rec = runKernel("cuda", in, o);
    o.tuning.cudaCellLayout = CellLayout::Compact;
    o.params.seed = 2;
    const RunResult com = runKernel("cuda", in, o);
    const double n = double(o.packets);
    BOOST_CHECK_EQUAL(com.events.abnormal, 0u);
    BOOST_CHECK_GT(com.events.fresnel, 0u);
    BOOST_REQUIRE(rec.standardError.available() && com.standardError.available());
    const double se = std::hypot(rec.standardError.ledger.absorbed, com.standardError.ledger.absorbed);
    BOOST_TEST_MESSAGE("absorbed fraction, record / compact: " << rec.ledger.absorbed / n << " / " << com.ledger.absorbed / n
                                                               << ", z " << (com.ledger.absorbed - rec.ledger.absorbed) / se);
    BOOST_CHECK_LT(std::fabs(com.ledger.absorbed - rec.ledger.absorbed), 4 * se);
    std::vector<double> a(mats.size()), b(mats.size());
    for (size_t t = 1; t < in.cells.size(); ++t) {
        a[in.cells[t].material] += rec.volume[t];
        b[in.cells[t].material] += com.volume[t];
    }
    for (size_t r = 1; r < a.size(); ++r) {
        const double z = (b[r] - a[r]) / n / std::sqrt(0.5 / n);
        BOOST_TEST_MESSAGE("region " << r << " energy per packet, record / compact: " << a[r] / n << " / " << b[r] / n << ", z " << z);
        BOOST_CHECK_GT(a[r], 0.0);
        BOOST_CHECK_LT(std::fabs(z), 4.0);
    }
    BOOST_TEST_MESSAGE("kernel s, record / compact: " << rec.kernelSeconds << " / " << com.kernelSeconds);
}

BOOST_AUTO_TEST_SUITE_END()
