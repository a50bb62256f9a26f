// SPDX-License-Identifier: GPL-3.0-or-later
// The toy tally of docs/ARCHITECTURE.md (Tests/Kernels/DepthTally.hpp: absorbed weight and
// weight times depth per region) through the scalar packet loop and the CPU lane loops, checked
// against independent computations: the volume tally summed per region, and the interactions
// rebuilt from the packets' traces.
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/CPU/TraceCpu.hpp"
#include "Tests/Kernels/DepthTally.hpp"

using namespace fm;

namespace {

struct Layers {
    // Three regions stacked in z with different indices (crossings refract and reflect), a
    // pencil beam from above.
    TetraMesh mesh = makeBoxMesh({-4, -4, 0}, {4, 4, 6}, 5, 5, 6, [](const Point3& c) {
        return c[2] < 1.5 ? 1u : (c[2] < 3.5 ? 2u : 3u);
    });
    MaterialSet mats;
    KernelInput in;
    std::vector<uint32_t> cellMaterial;
    RunOptions o;
    Layers() {
        mats.exterior(Material(0, 0, 0, 1.0));
        mats.append(Material(0.1, 6, 0.8, 1.4));
        mats.append(Material(0.3, 10, 0.9, 1.37));
        mats.append(Material(0.05, 3, 0.5, 1.33));
        PencilBeamSource B;
        B.position = {0.3, -0.2, -1.0};
        B.direction = {0, 0, 1};
        in = packModel(mesh, mats, B);
        for (const TetraRecord& T : in.cells) cellMaterial.push_back(T.material);
        o.packets = 3000;
        o.threads = 1;
        o.params.seed = 23;
    }
};

// A run's depth tally, volume tally and counts.
struct DepthRun {
    std::vector<double> volume, weight, weightZ;
    DepthScorer sc;
    DepthRun(const Layers& L) : volume(L.in.cells.size(), 0.0), weight(L.in.materials.size(), 0.0),
                                weightZ(L.in.materials.size(), 0.0) {
        sc.volume = volume.data();
        sc.cellMaterial = L.cellMaterial.data();
        sc.weight = weight.data();
        sc.weightZ = weightZ.data();
    }
};

struct AllPackets final : PacketChunks {
    uint64_t n;
    bool given = false;
    explicit AllPackets(uint64_t packets) : n(packets) {}
    bool next(uint64_t& b, uint64_t& e) override {
        if (given) return false;
        given = true;
        b = 0;
        e = n;
        return true;
    }
};

void checkSame(const DepthRun& a, const DepthRun& ref) {
    BOOST_CHECK_EQUAL(a.sc.events.absorb, ref.sc.events.absorb);
    BOOST_CHECK_EQUAL(a.sc.events.boundary, ref.sc.events.boundary);
    for (size_t m = 0; m < ref.weight.size(); ++m) {
        BOOST_CHECK_SMALL(a.weight[m] - ref.weight[m], 1e-12 * (1 + ref.weight[m]));
        BOOST_CHECK_SMALL(a.weightZ[m] - ref.weightZ[m], 1e-12 * (1 + std::fabs(ref.weightZ[m])));
    }
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(depth_tally, Layers)

BOOST_AUTO_TEST_CASE(depth_tally_matches_volume_tally_and_traces_on_every_cpu_loop) {
    DepthRun scalar(*this);
    const ArrayModel m = in.view();
    for (uint64_t i = 0; i < o.packets; ++i) runPacket(m, o.params, i, scalar.sc);
    scalar.sc.flush();

    // Independent 1: the weight per region is the volume tally summed over the region's cells.
    std::vector<double> perRegion(in.materials.size(), 0.0);
    for (size_t t = 1; t < in.cells.size(); ++t) perRegion[cellMaterial[t]] += scalar.volume[t];
    for (uint32_t r = 1; r <= 3; ++r) {
        BOOST_TEST_MESSAGE("region " << r << ": absorbed " << scalar.weight[r] << ", mean depth "
                                     << scalar.weightZ[r] / scalar.weight[r] << " mm");
        BOOST_CHECK_GT(scalar.weight[r], 0.0);
        BOOST_CHECK_SMALL(scalar.weight[r] - perRegion[r], 1e-12 * perRegion[r]);
    }

    // Independent 2: every interaction rebuilt from the traces (same packets and streams): the
    // drop is the weight before it less the weight after the interaction, where roulette won
    // (weight raised by 1/prwin) or lost (weight 0) the weight after the drop itself.
    const TracedRunResult tr = runCpuTraced(in, o);
    std::vector<double> w(in.materials.size(), 0.0), wz(in.materials.size(), 0.0);
    for (size_t p = 0; p < tr.traces.traceCount(); ++p)
        for (size_t j = 1; j < tr.traces.length(p); ++j) {
            const TraceStep& a = tr.traces.step(p, j - 1);
            const TraceStep& b = tr.traces.step(p, j);
            const MaterialRecord& M = in.materials[b.material];
            double after;
            if (b.event == kTraceScatter) after = b.w;
            else if (b.event == kTraceRouletteWin || b.event == kTraceRouletteDeath) after = a.w * (1.f - M.absorbFraction);
            else continue;
            const double dw = double(a.w) - after;
            w[b.material] += dw;
            wz[b.material] += dw * b.pos[2];
        }
    for (uint32_t r = 1; r <= 3; ++r) {
        BOOST_CHECK_CLOSE(w[r], scalar.weight[r], 1e-6);
        BOOST_CHECK_CLOSE(wz[r], scalar.weightZ[r], 1e-6);
        // Physics: the mean depth lies within the region's slab.
        const double z = scalar.weightZ[r] / scalar.weight[r];
        BOOST_CHECK(z > (r == 1 ? 0.0 : r == 2 ? 1.5 : 3.5) && z < (r == 1 ? 1.5 : r == 2 ? 3.5 : 6.0));
    }

    // The CPU lane loops: the same histories, so the same sums to rounding.
    const std::vector<uint8_t> crossing = plainCrossingBits(in);
    {
        DepthRun lanes(*this);
        AllPackets all(o.packets);
        depth_lanes_generic::runLanes(m, o.params, all, lanes.sc, uint32_t(in.materials.size()), crossing.data());
        checkSame(lanes, scalar);
    }
#if FM_DEPTH_AVX2_LANES
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2")) {
        BOOST_TEST_MESSAGE("no AVX2 on this CPU: the AVX2 lane loop is not run");
        return;
    }
    DepthRun lanes(*this);
    AllPackets all(o.packets);
    depth_lanes_avx2::runLanes(m, o.params, all, lanes.sc, uint32_t(in.materials.size()), crossing.data());
    checkSame(lanes, scalar);
#else
    BOOST_TEST_MESSAGE("the AVX2 lane loop is not built: not run");
#endif
}

BOOST_AUTO_TEST_SUITE_END()
