// SPDX-License-Identifier: GPL-3.0-or-later
// The time-resolved tallies (Kernels/TimeGates.hpp) as one tally of the loops' pack
// (Kernels/Core/Tally.hpp): volume energy per tetra per gate and exit energy per exit face per
// gate, binned by the packet clock (st.opl, the optical path length since launch). Each adds
// exactly the value the CW tally adds for the same event, into bin-major arrays ([bin * stride +
// element], stride = cells or chosen tetras + 1, exit faces + 1), so that the sum over the bins
// of an element is its CW tally. A null array is a gated tally that is off (a predictable
// branch, paid only by gated runs). Acc as for the standard tallies (plain adds on the CPU,
// atomics through a one-entry cache on the GPU).
#pragma once
#include "Kernels/Core/TallyScorer.hpp"
#include "Kernels/TimeGates.hpp"

namespace fm {

template <class Acc>
struct TimeGatedTally {
    static constexpr bool kNeedsClock = true;
    static constexpr bool kScoresFaces = true;
    double* gatedVolume = nullptr;   // [bin * gatedCells + element], or null: off
    double* gatedSurface = nullptr;  // [bin * gatedFaces + element], or null: off
    // Per-region gating: [tetra] -> element of gatedVolume, -1 outside the regions (null: the
    // element is the tetra; gatedCells is then the cell count).
    const int32_t* gatedSlot = nullptr;
    // [face id] -> element of gatedSurface (GatedFaces::slot: every face a packet can exit
    // through has one); set wherever gatedSurface is.
    const int32_t* gatedFaceSlot = nullptr;
    uint32_t gatedCells = 0, gatedFaces = 0;
    GateBins gates;
    // The CW volume tally where the pack leaves it to this one (the GPU's gated runs, whose pack
    // has no VolumeTally): every deposit is added to it as well, into the replica cwReplicas
    // picks (TallyReplicas), through the same cache. Null where the pack keeps its own
    // VolumeTally, or where the CW volume tally is the sum of the gated bins (every tetra
    // gated: the GPU sums them after the run, Kernels/CUDA/CudaKernel.cu).
    double* cwVolume = nullptr;
    TallyReplicas cwReplicas;
    // The one-entry cache where Acc wants one (AccUsesCache, as VolumeTally): a packet's
    // successive deposits in one tetra and one gate are summed and added once, so a gated run
    // sends about as many adds into its gated array as a CW run into its volume tally (without
    // it, one per interaction, where GPU kernels wait on the L2's atomics).
    uint32_t cacheTetra = 0, cacheBin = 0;
    double cacheEnergy = 0;

    FM_HD void absorb(const PacketState& st, double dw) {
        if (!gatedVolume && !cwVolume) return;
        const uint32_t bin = gatedVolume ? gates.bin(st.opl) : 0u;  // an exit-only gated run: the CW volume alone
        if constexpr (!AccUsesCache<Acc>::value) {
            addVolume(st.pk.tetra, bin, dw, cwVolume ? cwReplicas.offset<Acc>(st.pk.pos) : 0u);
        } else {
            if (st.pk.tetra != cacheTetra || bin != cacheBin) {
                flushInto(cwVolume ? cwReplicas.offset<Acc>(st.pk.pos) : 0u);
                cacheTetra = st.pk.tetra;
                cacheBin = bin;
            }
            cacheEnergy += dw;
        }
    }
    FM_HD void exit(const PacketState& st, uint32_t face) {
        if (gatedSurface)
            Acc::add(gatedSurface + (uint64_t(gates.bin(st.opl)) * gatedFaces + uint32_t(gatedFaceSlot[face & ~kFaceSideBit])),
                     st.pk.w);
    }
    FM_HD void flush() { flushInto(cwReplicas.base); }
    FM_HD void flushInto(uint32_t cwOffset) {  // cwOffset: of the CW replica (TallyReplicas::offset)
        if constexpr (AccUsesCache<Acc>::value) {
            if (cacheEnergy != 0.0) addVolume(cacheTetra, cacheBin, cacheEnergy, cwOffset);
            cacheEnergy = 0.0;
        }
    }
    FM_HD void addVolume(uint32_t tetra, uint32_t bin, double dw, uint32_t cwOffset) const {
        if (cwVolume) Acc::add(cwVolume + (cwOffset + tetra), dw);
        if (!gatedVolume) return;
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
