// SPDX-License-Identifier: GPL-3.0-or-later
// Toy tallies, written as a new tally is (docs/ARCHITECTURE.md "How to add a tally"): the mean
// depth of interaction per region, as the absorbed weight and the absorbed weight times depth z
// per material (one absorb hook), and the path length per region with a per-packet check of
// the packet clock (launch, move, end). The packs they join (DepthScorer, PathScorer) and the
// lane loops compiled for them (depth_tally_lanes_*.cpp) are their registration.
#pragma once
#include "Kernels/CPU/CpuLanes.hpp"

namespace fm {

struct DepthTally {
    const uint32_t* cellMaterial = nullptr;  // [cell]: its material
    double* weight = nullptr;                // [material]: absorbed weight
    double* weightZ = nullptr;               // [material]: absorbed weight times z (mm)

    FM_HD void absorb(const PacketState& st, double dw) {
        const uint32_t m = cellMaterial[st.pk.tetra];
        weight[m] += dw;
        weightZ[m] += dw * double(st.pk.pos.z);
    }
};

// The standard volume tally and the depth tally in one pack.
using DepthScorer = TallyScorer<true, false, false, HostAdd, uint64_t, DepthTally>;

// A second toy, for the per-packet hooks: path length per region (move), and per packet the
// clock at its end against its own sum of n * length (launch, move, end).
struct PathTally {
    static constexpr bool kNeedsMoves = true, kNeedsClock = true;
    const MaterialRecord* materials = nullptr;
    double* path = nullptr;  // [material]: path length (mm)
    // Over ended packets: [0] the clock at the end, [1] their own sum of n * length, [2] packets
    // launched, [3] packets ended.
    double* sums = nullptr;
    double packetOpl = 0;  // of the packet in flight (this scorer runs one at a time)

    FM_HD void launch(const PacketState&) {
        packetOpl = 0;
        sums[2] += 1;
    }
    FM_HD void move(const PacketState&, uint32_t material, float dist) {
        path[material] += dist;
        packetOpl += double(materials[material].n) * dist;
    }
    FM_HD void end(const PacketState& st) {
        sums[0] += st.opl;
        sums[1] += packetOpl;
        sums[3] += 1;
    }
};
using PathScorer = TallyScorer<false, false, false, HostAdd, uint64_t, PathTally>;

// The CPU lane loops compiled for DepthScorer and PathScorer (AVX2 where built, and the
// one-at-a-time loop).
#define FM_DEPTH_LANES_DECLARE(NS)                                                                     \
    namespace NS {                                                                                     \
    void runLanes(const ArrayModel& m, const KernelParams& kp, PacketChunks& chunks, DepthScorer& sc,  \
                  uint32_t materialCount, const uint8_t* crossing);                                    \
    void runLanes(const ArrayModel& m, const KernelParams& kp, PacketChunks& chunks, PathScorer& sc,   \
                  uint32_t materialCount, const uint8_t* crossing);                                    \
    }
FM_DEPTH_LANES_DECLARE(depth_lanes_avx2)
FM_DEPTH_LANES_DECLARE(depth_lanes_generic)
#undef FM_DEPTH_LANES_DECLARE

// Their definitions, in a translation unit that compiles the lane loop (depth_tally_lanes_*.cpp).
#if defined(FM_LANES_NS) && defined(FM_LANES_OWN_SCORERS)
namespace FM_LANES_NS {
void runLanes(const ArrayModel& m, const KernelParams& kp, PacketChunks& chunks, DepthScorer& sc,
              uint32_t materialCount, const uint8_t* crossing) {
    runLanes<DepthScorer>(m, kp, chunks, sc, materialCount, crossing);
}
void runLanes(const ArrayModel& m, const KernelParams& kp, PacketChunks& chunks, PathScorer& sc,
              uint32_t materialCount, const uint8_t* crossing) {
    runLanes<PathScorer>(m, kp, chunks, sc, materialCount, crossing);
}
}  // namespace FM_LANES_NS
#endif

}  // namespace fm
