// SPDX-License-Identifier: GPL-3.0-or-later
// MCML's time-resolved tallies (docs/TIME_DOMAIN.md "MCML"): Rd(r, t) and Tt(r, t), the exit
// weight of the top and bottom surfaces per radial bin per time bin, and A(z, t), the absorbed
// weight per depth bin per time bin, binned by the packet clock (st.opl) with the time gates of
// Kernels/TimeGates.hpp (the gates, then the early and late bins). Each adds exactly the weight
// the CW MCML tallies add for the same event, so the sum over the time bins of Rd(r, t) is the
// sum over the angles of Rd(r, a), and of A(z, t) the sum over the radii of A(r, z).
// McmlTimeScorer is MCML's pack with it: the scalar slab loop runs it (Kernels/CPU/McmlCpu.cpp).
#pragma once
#include "Kernels/Core/TallyScorer.hpp"
#include "Kernels/McmlScorer.hpp"
#include "Kernels/TimeGates.hpp"

namespace fm {

template <class Acc>
struct McmlTimeTally {
    static constexpr bool kNeedsClock = true;
    static constexpr bool kScoresFaces = true;
    double* reflectedRT = nullptr;    // [bin * nr + ir]
    double* transmittedRT = nullptr;  // [bin * nr + ir]
    double* absorbedZT = nullptr;     // [bin * nz + iz]
    McmlGrid timeGrid;
    GateBins timeBins;

    // The one-entry cache of the A(z, t) adds where Acc wants one (AccUsesCache: the GPU's
    // atomics): successive deposits in one depth bin and gate are summed and added once.
    uint64_t cacheZT = 0;
    double cacheZTWeight = 0;

    FM_HD void absorb(const PacketState& st, double dw) {
        const uint32_t iz = McmlGrid::bin(st.pk.pos.z * timeGrid.invDz, timeGrid.nz);
        const uint64_t i = uint64_t(timeBins.bin(st.opl)) * timeGrid.nz + iz;
        if constexpr (!AccUsesCache<Acc>::value) {
            Acc::add(absorbedZT + i, dw);
        } else {
            if (i != cacheZT) {
                flush();
                cacheZT = i;
            }
            cacheZTWeight += dw;
        }
    }
    FM_HD void flush() {
        if constexpr (AccUsesCache<Acc>::value) {
            if (cacheZTWeight != 0.0) Acc::add(absorbedZT + cacheZT, cacheZTWeight);
            cacheZTWeight = 0.0;
        }
    }
    FM_HD void exit(const PacketState& st, uint32_t face) {
        double* t = (face & ~kFaceSideBit) == timeGrid.topFace ? reflectedRT : transmittedRT;
        Acc::add(t + (uint64_t(timeBins.bin(st.opl)) * timeGrid.nr + timeGrid.radialBin(st.pk.pos)), st.pk.w);
    }
};

template <class Acc, class Count = uint64_t>
using McmlTimeScorer =
    TallyPack<Count, McmlAbsorbTally<Acc>, McmlExitTally<Acc>, McmlLayerTally<Acc>, McmlTimeTally<Acc>>;

}  // namespace fm
