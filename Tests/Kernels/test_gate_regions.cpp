// SPDX-License-Identifier: GPL-3.0-or-later
// Per-region gating (--time-gate-regions, TimeGates::tetras): the gated volume tally over the
// tetras of chosen regions equals the all-tetras gated tally there (same seed: the same
// histories, bit for bit on the CPU), its bins sum to the CW tally of those tetras, the exit and
// CW tallies are unchanged, it works in batches, and bad region lists are refused by name.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "Common/Errors.hpp"
#include "Geometry/BatchModel.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/Batch.hpp"
#include "Kernels/Dispatch.hpp"
#include "Kernels/TimeGates.hpp"
#include "Tests/Kernels/BatchTestModel.hpp"

using namespace fm;

namespace {
struct RegionModel : fmtest::BatchTestModel {
    PointSource src;
    KernelInput in;
    RegionModel() {
        src.position = {0.1, 0.2, 0.3};
        in = packModel(mesh, mats, src);
    }
    RunOptions options(const std::shared_ptr<const GatedTetras>& tetras) const {
        RunOptions o;
        o.packets = 20000;
        o.params.seed = 13;
        o.threads = 2;
        o.batches = 4;
        o.outputs.directed = false;
        o.outputs.gatedVolume = o.outputs.gatedSurface = true;
        o.gates = makeTimeGates(0, 0.2, 0.02, "test");
        o.gates.tetras = tetras;
        return o;
    }
};

// A ParameterError whose message holds `part`.
template <class F>
void refused(F f, const std::string& part) {
    try {
        f();
        BOOST_ERROR("accepted; expected an error with '" << part << "'");
    } catch (const ParameterError& e) {
        BOOST_CHECK_MESSAGE(std::string(e.what()).find(part) != std::string::npos, e.what());
    }
}
}  // namespace

BOOST_FIXTURE_TEST_SUITE(gate_regions, RegionModel)

BOOST_AUTO_TEST_CASE(chosen_region_equals_the_all_tetras_run_there) {
    const auto sphere = gatedTetras(in, {2}, "regions");
    const size_t cells = in.cells.size();
    size_t inSphere = 0;
    for (size_t c = 1; c < cells; ++c) inSphere += in.cells[c].material == 2;
    BOOST_REQUIRE_EQUAL(sphere->cells.size(), inSphere + 1);  // the dummy, then the sphere's tetras
    BOOST_REQUIRE(inSphere > 0 && inSphere < cells - 1);
    const RunResult all = runKernel("cpu", in, options(nullptr));
    const RunResult part = runKernel("cpu", in, options(sphere));
    const TimeGates& g = part.gates;
    BOOST_REQUIRE(g.tetras);
    BOOST_REQUIRE_EQUAL(part.gatedVolume.size(), size_t(g.bins()) * (inSphere + 1));  // gates x chosen tetras
    BOOST_CHECK(part.volume == all.volume);              // the same histories
    BOOST_CHECK(part.gatedSurface == all.gatedSurface);  // exit gating unchanged
    BOOST_CHECK(part.standardError.gatedSurfaceTotals == all.standardError.gatedSurfaceTotals);
    const size_t n = inSphere + 1;
    size_t mismatches = 0;
    double worst = 0, energy = 0;
    for (size_t k = 1; k < n; ++k) {
        const uint32_t c = sphere->cells[k];
        BOOST_REQUIRE_EQUAL(sphere->slot[c], int32_t(k));
        double sum = 0;
        for (uint32_t b = 0; b < g.bins(); ++b) {
            mismatches += part.gatedVolume[b * n + k] != all.gatedVolume[b * cells + c];
            mismatches += part.standardError.gatedVolume[b * n + k] != all.standardError.gatedVolume[b * cells + c];
            sum += part.gatedVolume[b * n + k];
        }
        worst = std::max(worst, std::abs(sum - part.volume[c]) / std::max(part.volume[c], 1e-300));
        energy += sum;
    }
    BOOST_CHECK_EQUAL(mismatches, 0u);
    BOOST_CHECK_LT(worst, 1e-12);  // the bins of a chosen tetra sum to its CW tally
    BOOST_CHECK_GT(energy, 0.0);
    for (size_t c = 1; c < cells; ++c)
        if (in.cells[c].material != 2) BOOST_CHECK_EQUAL(sphere->slot[c], -1);
}

BOOST_AUTO_TEST_CASE(batch_runs_gate_the_chosen_regions) {
    BatchModel bm = packBatch(mesh, {mats, mats2}, {std::make_shared<PointSource>(src)}, {6000}, 3);
    BatchOptions o;
    o.threads = 2;
    o.outputs.directed = false;
    o.outputs.gatedVolume = o.outputs.gatedSurface = true;
    o.gates = makeTimeGates(0, 0.2, 0.02, "test");
    o.gates.tetras = gatedTetras(bm.mesh, {1}, "regions");
    std::map<size_t, RunResult> got;
    runBatch(bm.mesh, bm.runs, o, [&](size_t i, RunResult&& r) { got[i] = std::move(r); });
    BOOST_REQUIRE_EQUAL(got.size(), 2u);
    for (size_t m = 0; m < 2; ++m) {
        const RunResult one = runKernel("cpu", packModel(mesh, m ? mats2 : mats, src), singleRunOptions(o, bm.runs[m]));
        BOOST_CHECK_EQUAL(got[m].gatedVolume.size(), size_t(o.gates.bins()) * o.gates.tetras->cells.size());
        BOOST_CHECK(got[m].gatedVolume == one.gatedVolume);
    }
}

BOOST_AUTO_TEST_CASE(bad_region_lists_are_refused) {
    refused([&] { parseRegionList("", "--time-gate-regions"); }, "--time-gate-regions: needs at least one region id");
    refused([&] { parseRegionList(" , ", "--time-gate-regions"); }, "needs at least one region id");
    refused([&] { parseRegionList("1,x", "--time-gate-regions"); }, "'x' is not a region id");
    refused([&] { parseRegionList("-1", "--time-gate-regions"); }, "'-1' is not a region id");
    BOOST_CHECK((parseRegionList("2, 1 3", "r") == std::vector<uint32_t>{2, 1, 3}));
    refused([&] { gatedTetras(in, {}, "regions"); }, "regions: needs at least one region id");
    refused([&] { gatedTetras(in, {1, 7}, "regions"); }, "regions: region 7 has no tetras (the model's regions: 1 2)");
    refused([&] { gatedTetras(in, {2, 2}, "regions"); }, "region 2 is given twice");
    // A map made for another mesh, and regions without a gated volume tally.
    const KernelInput other = packModel(fmtest::BatchTestModel(3).mesh, mats, src);
    refused([&] { runKernel("cpu", in, options(gatedTetras(other, {1}, "r"))); }, "made for another mesh");
    RunOptions exitOnly = options(gatedTetras(in, {1}, "r"));
    exitOnly.outputs.gatedVolume = false;
    refused([&] { runKernel("cpu", in, exitOnly); }, "gated volume tally");
}

BOOST_AUTO_TEST_SUITE_END()
