// SPDX-License-Identifier: GPL-3.0-or-later
// MCML's grid (McmlGrid: the bins every MCML kernel uses) and MCML's tallies as tally types of
// the common packet loop (Core/Tally.hpp): absorbed weight on the (r, z) grid and per layer
// cell, exit weight on the (r, angle) grid for the top surface (diffuse reflectance) and for the
// bottom one (transmittance); McmlScorer packs them. Raw sums of packet weight; MCML's
// normalisations are applied on the host (Kernels/McmlKernel.cpp). The MCML kernels run the
// slab photon loop (Kernels/McmlSlabLoop.hpp) over the same pack; runPacket(SlabModel,
// McmlScorer) is the reference the tests compare it with.
//
// Plain pointers and sizes only (no std containers), so it can run in device code with an
// atomic Acc. Out-of-grid values go to the last bin of their axis, as MCML does.
#pragma once
#include "Kernels/Core/Packet.hpp"
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

// A(r, z): absorbed weight on the (r, z) grid, added to directly (a one-entry cache for the bin
// is no faster on the host: its compare is hard to predict; the GPU's slab loop has its own
// accumulation, Kernels/CUDA/McmlCuda.cu).
template <class Acc>
struct McmlAbsorbTally {
    double* absorbedRZ = nullptr;  // [ir*nz + iz]
    McmlGrid rzGrid;

    FM_HD void absorb(const PacketState& st, double dw) { Acc::add(absorbedRZ + rzGrid.rzBin(st.pk.pos), dw); }
};

// A(r, z) for the slab loop's deposits as weight differences (Kernels/McmlSlabLoop.hpp,
// kDepositsAsDifferences; the GPU's plain run): the deposits of a run of interactions in one bin
// add up to the photon's weight where the run began less its weight where it ends (each partial
// sum exact in double), sent when an interaction falls in another bin, when the weight jumps (a
// roulette win) and when the photon ends. An interaction in the run's bin adds nothing; a send
// costs one conversion and one subtraction. A thread's first send (bin 0, nothing deposited)
// adds zero. The bins at the beam (the first nearBins, the grid's first radial rows) may go to
// an array of their own (nearRZ: the GPU gives them more replicas than the rest, since the
// sends to them come from many lanes at once); with nearBins 0 every bin is in absorbedRZ.
template <class Acc>
struct McmlAbsorbDifferenceTally {
    double* absorbedRZ = nullptr;  // [ir*nz + iz]
    double* nearRZ = nullptr;      // [ir*nz + iz] for ir*nz + iz < nearBins
    McmlGrid rzGrid;
    uint32_t nearBins = 0;
    uint32_t rzBin = 0;  // the run's bin, and the weight the run began with
    double rzFrom = 0.0;

    FM_HD void send(double w) { Acc::add((rzBin < nearBins ? nearRZ : absorbedRZ) + rzBin, rzFrom - w); }
    FM_HD void launch(const PacketState& st) { rzFrom = widen(st.pk.w); }
    // An interaction at st.pk.pos took the weight from w0 to st.pk.w.
    FM_HD void interaction(const PacketState& st, float w0) {
        const uint32_t i = rzGrid.rzBin(st.pk.pos);
        if (i != rzBin) {
            const double w = widen(w0);
            send(w);
            rzBin = i;
            rzFrom = w;
        }
    }
    // The weight jumped from w1 to st.pk.w with nothing deposited.
    FM_HD void reweight(const PacketState& st, float w1) {
        send(widen(w1));
        rzFrom = widen(st.pk.w);
    }
    FM_HD void end(const PacketState& st) { send(widen(st.pk.w)); }
};

// Rd(r, a) and Tt(r, a): exit weight on the (r, angle) grid of the top surface (diffuse
// reflectance) and of the bottom one (transmittance).
template <class Acc>
struct McmlExitTally {
    static constexpr bool kScoresFaces = true;  // exits are binned (Core/Packet.hpp crossFace)
    double* reflectedRA = nullptr;  // [ir*na + ia]
    double* transmittedRA = nullptr;
    McmlGrid raGrid;

    FM_HD void exit(const PacketState& st, uint32_t face) {
        double* t = (face & ~kFaceSideBit) == raGrid.topFace ? reflectedRA : transmittedRA;
        Acc::add(t + raGrid.raBin(st.pk.pos, st.pk.dir), st.pk.w);
    }
};

// Absorbed weight per layer cell, exact whatever the grid. Per cell visit (kVisitSums): the slab
// loops sum a visit themselves; the generic loop's absorbs go through a one-entry cache of the
// cell (successive deposits nearly always share it).
template <class Acc>
struct McmlLayerTally {
    static constexpr bool kVisitSums = true;
    double* absorbedCell = nullptr;  // [cell]
    uint32_t cacheCell = 0;
    double cacheCellWeight = 0;

    FM_HD void visit(const PacketState& st, double w) { Acc::add(absorbedCell + st.pk.tetra, w); }
    FM_HD void absorb(const PacketState& st, double dw) {
        if (st.pk.tetra != cacheCell) {
            flush();
            cacheCell = st.pk.tetra;
        }
        cacheCellWeight += dw;
    }
    FM_HD void flush() {
        if (cacheCellWeight != 0.0) Acc::add(absorbedCell + cacheCell, cacheCellWeight);
        cacheCellWeight = 0.0;
    }
};

// MCML's tallies as a pack (Core/Tally.hpp): what every MCML loop books into (Count is the event
// counter type, as in TallyScorer: 32 bits per GPU thread).
template <class Acc, class Count = uint64_t>
using McmlScorer = TallyPack<Count, McmlAbsorbTally<Acc>, McmlExitTally<Acc>, McmlLayerTally<Acc>>;

// An McmlScorer on grid g over the given arrays.
template <class Acc, class Count = uint64_t>
FM_HD McmlScorer<Acc, Count> mcmlScorer(const McmlGrid& g, double* absorbedRZ, double* reflectedRA,
                                        double* transmittedRA, double* absorbedCell) {
    McmlScorer<Acc, Count> s;
    s.absorbedRZ = absorbedRZ;
    s.rzGrid = g;
    s.reflectedRA = reflectedRA;
    s.transmittedRA = transmittedRA;
    s.raGrid = g;
    s.absorbedCell = absorbedCell;
    return s;
}

}  // namespace fm
