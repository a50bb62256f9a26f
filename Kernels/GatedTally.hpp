// SPDX-License-Identifier: GPL-3.0-or-later
// The time-resolved tallies (Kernels/TimeGates.hpp) as one tally of the loops' pack
// (Kernels/Core/Tally.hpp): volume energy per tetra per gate and exit energy per face per gate,
// binned by the packet clock (st.opl, the optical path length since launch). Each adds exactly
// the value the CW tally adds for the same event, into bin-major arrays ([bin * stride + index],
// stride = cells or face ids), so that the sum over the bins of an element is its CW tally. A
// null array is a gated tally that is off (a predictable branch, paid only by gated runs). Acc
// as for the standard tallies (plain adds on the CPU, atomics through a one-entry cache on the GPU).
#pragma once
#include "Kernels/Core/TallyScorer.hpp"
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
    // The one-entry cache of the volume adds where Acc wants one (AccUsesCache, as VolumeTally):
    // a packet's successive deposits in one tetra and one gate are summed and added once, so a
    // gated run sends about as many adds into its gated array as into the CW one (without it,
    // one per interaction: twice the CW run's adds, where GPU kernels wait on the L2's atomics).
    uint32_t cacheTetra = 0, cacheBin = 0;
    double cacheEnergy = 0;

    FM_HD void absorb(const PacketState& st, double dw) {
        if (!gatedVolume) return;
        const uint32_t bin = gates.bin(st.opl);
        if constexpr (!AccUsesCache<Acc>::value) {
            addVolume(st.pk.tetra, bin, dw);
        } else {
            if (st.pk.tetra != cacheTetra || bin != cacheBin) {
                flush();
                cacheTetra = st.pk.tetra;
                cacheBin = bin;
            }
            cacheEnergy += dw;
        }
    }
    FM_HD void exit(const PacketState& st, uint32_t face) {
        if (gatedSurface)
            Acc::add(gatedSurface + (uint64_t(gates.bin(st.opl)) * gatedFaces + (face & ~kFaceSideBit)), st.pk.w);
    }
    FM_HD void flush() {
        if constexpr (AccUsesCache<Acc>::value) {
            if (cacheEnergy != 0.0) addVolume(cacheTetra, cacheBin, cacheEnergy);
            cacheEnergy = 0.0;
        }
    }
    FM_HD void addVolume(uint32_t tetra, uint32_t bin, double dw) const {
        uint32_t e = tetra;
        if (gatedSlot) {
            const int32_t s = gatedSlot[e];
            if (s < 0) return;
            e = uint32_t(s);
        }
        Acc::add(gatedVolume + (uint64_t(bin) * gatedCells + e), dw);
    }
};

}  // namespace fm
