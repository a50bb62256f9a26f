// SPDX-License-Identifier: GPL-3.0-or-later
// A toy tally, written as a new tally is (docs/ARCHITECTURE.md "How to add a tally"): the mean
// depth of interaction per region, as the absorbed weight and the absorbed weight times depth z
// per material. One absorb hook; the pack it joins (DepthScorer) and the lane loops compiled for
// it (depth_tally_lanes_*.cpp) are its registration.
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

// The CPU lane loops compiled for DepthScorer (AVX2 where built, and the one-at-a-time loop).
namespace depth_lanes_avx2 {
void runLanes(const ArrayModel& m, const KernelParams& kp, PacketChunks& chunks, DepthScorer& sc,
              uint32_t materialCount, const uint8_t* crossing);
}
namespace depth_lanes_generic {
void runLanes(const ArrayModel& m, const KernelParams& kp, PacketChunks& chunks, DepthScorer& sc,
              uint32_t materialCount, const uint8_t* crossing);
}

}  // namespace fm
