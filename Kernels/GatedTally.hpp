// SPDX-License-Identifier: GPL-3.0-or-later
// The time-resolved tallies (Kernels/TimeGates.hpp) as one tally of the loops' pack
// (Kernels/Core/Tally.hpp): volume energy per tetra per gate and exit energy per face per gate,
// binned by the packet clock (st.opl, the optical path length since launch). Each adds exactly
// the value the CW tally adds for the same event, into bin-major arrays ([bin * stride + index],
// stride = cells or face ids), so that the sum over the bins of an element is its CW tally. A
// null array is a gated tally that is off (a predictable branch, paid only by gated runs). Acc
// as for the standard tallies (plain adds on the CPU, atomics on the GPU).
#pragma once
#include "Kernels/Core/Tally.hpp"
#include "Kernels/TimeGates.hpp"

namespace fm {

template <class Acc>
struct TimeGatedTally {
    static constexpr bool kNeedsClock = true;
    static constexpr bool kScoresFaces = true;
    double* gatedVolume = nullptr;   // [bin * gatedCells + element], or null: off
    double* gatedSurface = nullptr;  // [bin * faces + face id], or null: off
    // Per-region gating: [tetra] -> element of gatedVolume, -1 outside the regions (null: the
    // element is the tetra; gatedCells is then the cell count).
    const int32_t* gatedSlot = nullptr;
    uint32_t gatedCells = 0, gatedFaces = 0;
    GateBins gates;

    FM_HD void absorb(const PacketState& st, double dw) {
        if (!gatedVolume) return;
        uint32_t e = st.pk.tetra;
        if (gatedSlot) {
            const int32_t s = gatedSlot[e];
            if (s < 0) return;
            e = uint32_t(s);
        }
        Acc::add(gatedVolume + (uint64_t(gates.bin(st.opl)) * gatedCells + e), dw);
    }
    FM_HD void exit(const PacketState& st, uint32_t face) {
        if (gatedSurface)
            Acc::add(gatedSurface + (uint64_t(gates.bin(st.opl)) * gatedFaces + (face & ~kFaceSideBit)), st.pk.w);
    }
};

}  // namespace fm
