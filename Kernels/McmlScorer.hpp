// SPDX-License-Identifier: GPL-3.0-or-later
// MCML's grid (McmlGrid: the bins every MCML kernel uses) and MCML's tallies as a scorer of the
// common packet loop (McmlScorer, same hooks as TallyScorer): absorbed weight on the (r, z) grid
// and per layer cell, exit weight on the (r, angle) grid for the top surface (diffuse
// reflectance) and for the bottom one (transmittance). Raw sums of packet weight; MCML's
// normalisations are applied on the host (Kernels/McmlKernel.cpp). The MCML kernels run the
// slab photon loop (Kernels/McmlSlabLoop.hpp), which books the same tallies through a sink;
// runPacket(SlabModel, McmlScorer) is the reference the tests compare it with.
//
// Plain pointers and sizes only (no std containers), so it can run in device code with an
// atomic Acc. Out-of-grid values go to the last bin of their axis, as MCML does.
#pragma once
#include "Kernels/Core/Physics.hpp"
#include "Kernels/Core/Tally.hpp"

namespace fm {

// The .mci grid in the kernel's units (mm). Bins: iz = z/dz, ir = r/dr, ia = angle/da with
// da = pi/(2 na) and angle = acos|uz| of the exit direction (the one in the ambient medium).
struct McmlGrid {
    float invDz = 0, invDr = 0, invDa = 0;
    uint32_t nz = 1, nr = 1, na = 1;
    uint32_t topFace = 1;  // face id whose exits are reflectance; every other exit is transmittance

    // floor(x) clamped to [0, n-1]; written so that NaN and huge values stay in range (NaN, which
    // no finite position gives: the last bin on the CPU, the first on the GPU). The GPU converts
    // with saturation (negative and NaN -> 0, huge -> 2^32-1), then clamps: 3 instructions
    // instead of two compares and a branch, twice per MCML interaction.
    FM_HD static uint32_t bin(float x, uint32_t n) {
#if defined(__CUDA_ARCH__)
        return min(__float2uint_rz(x), n - 1u);
#else
        return x < float(n) ? (x > 0.f ? uint32_t(x) : 0u) : n - 1u;
#endif
    }
    FM_HD uint32_t radialBin(Vec3 p) const { return bin(fm_sqrt(p.x * p.x + p.y * p.y) * invDr, nr); }
    FM_HD uint32_t rzBin(Vec3 p) const { return radialBin(p) * nz + bin(p.z * invDz, nz); }
    FM_HD uint32_t raBin(Vec3 p, Vec3 d) const {
        return radialBin(p) * na + bin(acosf(fminf(1.f, fabsf(d.z))) * invDa, na);
    }
};

// The (r, z) bin is added to directly: a one-entry cache for it is no faster (its compare is
// hard to predict). The layer cell has one: successive deposits nearly always share it.
// Count is the event counter type, as in TallyScorer (32 bits per GPU thread).
template <class Acc, class Count = uint64_t>
struct McmlScorer {
    static constexpr bool kScoresFaces = true;  // exits are binned (Core/Packet.hpp crossFace)
    double* absorbedRZ = nullptr;   // [ir*nz + iz]
    double* reflectedRA = nullptr;  // [ir*na + ia]
    double* transmittedRA = nullptr;
    double* absorbedCell = nullptr; // [cell]: per layer, exact whatever the grid
    McmlGrid grid;
    Ledger ledger;
    EventCounts<Count> events;
    // One-entry cache of the layer: successive deposits nearly always share it.
    uint32_t cacheCell = 0;
    double cacheCellWeight = 0;

    FM_HD void absorb(const PacketState& st, double dw) {
        const uint32_t cell = st.pk.tetra;
        Acc::add(absorbedRZ + grid.rzBin(st.pk.pos), dw);
        if (cell != cacheCell) {
            flushCell();
            cacheCell = cell;
        }
        cacheCellWeight += dw;
    }
    FM_HD void exit(const PacketState& st, uint32_t face) {
        double* t = (face & ~kFaceSideBit) == grid.topFace ? reflectedRA : transmittedRA;
        Acc::add(t + grid.raBin(st.pk.pos, st.pk.dir), st.pk.w);
    }
    FM_HD void flush() { flushCell(); }

private:
    FM_HD void flushCell() {
        if (cacheCellWeight != 0.0) Acc::add(absorbedCell + cacheCell, cacheCellWeight);
        cacheCellWeight = 0.0;
    }
};

}  // namespace fm
