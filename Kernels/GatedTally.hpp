// SPDX-License-Identifier: GPL-3.0-or-later
// The time-resolved tallies (Kernels/TimeGates.hpp), as tallies of the loops' pack
// (Kernels/Core/Tally.hpp): volume energy per tetra per gate, and exit energy per face per
// gate, binned by the packet clock (st.opl, the optical path length since launch). Each adds
// exactly the value the CW tally adds for the same event, into bin-major arrays
// ([bin * stride + index], stride = cells or face ids), so that the sum over the bins of an
// element is its CW tally. Acc as for the standard tallies (plain adds on the CPU, atomics on the
// GPU).
#pragma once
#include "Kernels/Core/Tally.hpp"
#include "Kernels/TimeGates.hpp"

namespace fm {

template <class Acc>
struct GatedVolumeTally {
    static constexpr bool kNeedsClock = true;
    double* gatedVolume = nullptr;
    uint32_t gatedVolumeStride = 0;  // cells (tetras + the exterior dummy)
    GateBins volumeGates;

    FM_HD void absorb(const PacketState& st, double dw) {
        const uint64_t bin = volumeGates.bin(st.opl);
        Acc::add(gatedVolume + (bin * gatedVolumeStride + st.pk.tetra), dw);
    }
};

template <class Acc>
struct GatedExitTally {
    static constexpr bool kNeedsClock = true;
    static constexpr bool kScoresFaces = true;
    double* gatedSurface = nullptr;
    uint32_t gatedSurfaceStride = 0;  // face ids (faceCount)
    GateBins surfaceGates;

    FM_HD void exit(const PacketState& st, uint32_t face) {
        const uint64_t bin = surfaceGates.bin(st.opl);
        Acc::add(gatedSurface + (bin * gatedSurfaceStride + (face & ~kFaceSideBit)), double(st.pk.w));
    }
};

}  // namespace fm
