// SPDX-License-Identifier: GPL-3.0-or-later
// Packed records the kernels consume. Built on the host from Geometry/, identical on CPU and GPU.
#pragma once
#include "Kernels/Core/Vec3.hpp"

namespace fm {

// Neighbour code for "outside the mesh". Bits below kExteriorBit give the exterior material, so a
// layered (MCML) model can have different ambient media above and below.
constexpr uint32_t kExteriorBit = 0x80000000u;
FM_HD bool isExterior(uint32_t adj) { return (adj & kExteriorBit) != 0u || adj == 0u; }
FM_HD uint32_t exteriorMaterial(uint32_t adj) { return adj & ~kExteriorBit; }

// Face id field: bit 31 says whether this cell sees the face's canonical normal reversed, so
// directed tallies index 2*face + side.
constexpr uint32_t kFaceSideBit = 0x80000000u;

// One cell: 4 face planes with outward unit normals (p is inside when dot(n,p) <= C for all
// faces), neighbours, face ids, material. 112 bytes, 16-byte aligned: the GPU reads the planes
// as four 16-byte vectors. A layer of a layered model uses two planes; the others have n = 0,
// C = +inf.
// adjMaterial[i] is the material across face i (the neighbour's, or the exterior's), so a face
// crossing decides Fresnel from this record alone instead of loading the neighbour's record
// first (on the GPU a second dependent load, usually an L1 miss, per crossing).
constexpr uint32_t kMaxPackedMaterials = 65536;  // adjMaterial is 16 bits
struct alignas(16) TetraRecord {
    float nx[4], ny[4], nz[4], C[4];
    uint32_t adj[4];    // neighbour cell, or kExteriorBit|material (0 = exterior material 0)
    uint32_t face[4];   // face id | kFaceSideBit when reversed
    uint32_t material;  // index into the material table
    uint32_t scoredFaces;  // bit i: face i is scored by the directed-surface tally
    uint16_t adjMaterial[4];  // material across face i
};
static_assert(sizeof(TetraRecord) == 112, "TetraRecord must stay 112 bytes");

// The part of a cell every hop reads: its four planes (the first 64 bytes of TetraRecord).
// Neighbours and face ids are read only when a packet actually crosses a face.
struct alignas(16) CellPlanes {
    float nx[4], ny[4], nz[4], C[4];
};

// Optical properties as the packet loop needs them (lengths in mm): derived constants, so that
// an event multiplies where it would divide (Geometry/ModelPacker.cpp packMaterial); mu_a and
// mu_s themselves are not needed. Floats only (the CPU lanes derive a row per field from this
// type), in pairs that an event reads together, each one 8-byte constant load on the GPU: {mu_t, mfp}
// at the move, {g, hgScale} and {hgA, hgB} at the spin.
struct alignas(16) MaterialRecord {
    float mu_t;
    float mfp;             // 1 / mu_t, the mean free path (+inf where mu_t = 0)
    float absorbFraction;  // mu_a / mu_t, weight dropped per interaction
    float n;
    float g;
    float hgScale;         // 1 / (2 g) for Henyey-Greenstein; 0 where isotropic (|g| < 1e-6)
    float hgA, hgB;        // (1 + g^2), (1 - g^2): Henyey-Greenstein sampling constants
};

// Where and how a packet starts. weight < 1 when specular reflection was taken at entry.
struct LaunchRecord {
    Vec3 pos;
    Vec3 dir;
    uint32_t tetra;
    float weight;
};

// Roulette, guards and random stream, shared by every kernel.
struct KernelParams {
    uint64_t seed = 1;
    float wmin = 1e-5f;     // roulette threshold
    float prwin = 0.1f;     // roulette survival probability
    uint32_t maxSteps = 100000;  // interactions per packet before it is booked abnormal
    uint32_t maxHits = 100000;   // face crossings in one step before it is booked abnormal
};

// Conservation ledger in units of launched packet weight (each packet launches weight 1):
// launched + roulette_gained = specular + absorbed + exited + roulette_lost + abnormal.
struct Ledger {
    double launched = 0, specular = 0, absorbed = 0, exited = 0;
    double rouletteGained = 0, rouletteLost = 0, abnormal = 0;

    FM_HD void add(const Ledger& o) {
        launched += o.launched; specular += o.specular; absorbed += o.absorbed;
        exited += o.exited; rouletteGained += o.rouletteGained;
        rouletteLost += o.rouletteLost; abnormal += o.abnormal;
    }
    FM_HD double imbalance() const {
        return (launched + rouletteGained) -
               (specular + absorbed + exited + rouletteLost + abnormal);
    }
};

// Event counts (FullMonte's MCEventCounts names). The GPU counts per thread in 32 bits (fewer
// registers) and widens when it reduces; hosts count in 64 bits.
template <class Count>
struct EventCounts {
    Count launch = 0, absorb = 0, scatter = 0, boundary = 0, tir = 0, fresnel = 0, refract = 0,
          interface = 0, exit = 0, die = 0, win = 0, abnormal = 0;

    template <class O>
    FM_HD void add(const EventCounts<O>& o) {
        launch += o.launch; absorb += o.absorb; scatter += o.scatter; boundary += o.boundary;
        tir += o.tir; fresnel += o.fresnel; refract += o.refract; interface += o.interface;
        exit += o.exit; die += o.die; win += o.win; abnormal += o.abnormal;
    }
};
using Events = EventCounts<uint64_t>;

}  // namespace fm
