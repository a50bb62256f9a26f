// SPDX-License-Identifier: GPL-3.0-or-later
// The split layout of a mesh's cells for the GPU (TuningKnobs::cudaCellLayout, FM_CUDA_CELL_LAYOUT):
// the four planes of every cell in an array of 64-byte entries, read at every event (two 32-byte
// sectors, half of a 128-byte line, where a 112-byte record's planes straddle three sectors every
// other cell), and the fields a face crossing reads in an array of 32-byte entries (one sector).
// The face ids, read only by surface tallies, go in a third array (CellFaces, 16 bytes per cell):
// the 112-byte records stay on the host. The values are the records' own, bit for bit, so both
// layouts follow the same histories.
// The compact layout: the four planes of a cell in one 32-byte sector (CompactPlanes below) and
// its crossing fields (CellLinks) in the next, one 64-byte entry per cell (CompactCell): a miss on
// the planes brings the crossing fields into the L2 in the same 64-byte memory access; the face
// ids beside them as in the split layout (80 bytes per cell in all, against the records' 112).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "Kernels/Core/Records.hpp"

namespace fm {

// Auto (the default): Compact where the mesh's records outgrow the L2 and the device has memory to
// spare, else Record (chooseCellLayout, Kernels/CUDA/CudaKernel.hpp cudaCellLayoutFor). Split only
// when asked for (FM_CUDA_CELL_LAYOUT=split).
enum class CellLayout : uint8_t { Auto, Record, Split, Compact };

// What a crossing reads: neighbours, their materials, the cell's material and scored faces.
struct alignas(32) CellLinks {
    uint32_t adj[4];
    uint16_t adjMaterial[4];
    uint32_t material;
    uint32_t scoredFaces;
};
static_assert(sizeof(CellLinks) == 32, "CellLinks is one 32-byte sector");
static_assert(sizeof(CellPlanes) == 64, "CellPlanes is half of a 128-byte line");

inline CellPlanes cellPlanesOf(const TetraRecord& r) {
    CellPlanes p;
    for (int f = 0; f < 4; ++f) {
        p.nx[f] = r.nx[f];
        p.ny[f] = r.ny[f];
        p.nz[f] = r.nz[f];
        p.C[f] = r.C[f];
    }
    return p;
}

// A cell's face ids (TetraRecord::face), what the split and compact layouts upload of the
// records besides their planes and links.
struct alignas(16) CellFaces {
    uint32_t face[4];
};
static_assert(sizeof(CellFaces) == 16, "CellFaces is one 16-byte load");

inline CellFaces cellFacesOf(const TetraRecord& r) {
    CellFaces f;
    for (int i = 0; i < 4; ++i) f.face[i] = r.face[i];
    return f;
}

inline CellLinks cellLinksOf(const TetraRecord& r) {
    CellLinks l;
    for (int f = 0; f < 4; ++f) {
        l.adj[f] = r.adj[f];
        l.adjMaterial[f] = r.adjMaterial[f];
    }
    l.material = r.material;
    l.scoredFaces = r.scoredFaces;
    return l;
}

// ---- The compact layout ----
// A cell's four planes in 32 bytes: per face a normal code (32 bits) and an offset C (a float).
// The code holds an octahedral direction: the normal n, scaled to |x| + |y| + |z| = 1, has its
// x, y rotated by 45 degrees into u = x + y, v = x - y (both in [-1, 1] on the upper
// hemisphere); u is kept in 16 bits as A = round(u K), v in 15 bits as B = round(v K / 2),
// K = 32767, and the sign of z in one bit. The decoded normal is the integer vector
// (A + 2B, A - 2B, +-(2K - 2 max(|A|, |2B|))), exact in float: K times twice the scaled normal,
// not a unit vector. The exit distance height / cosine does not depend on the normal's length,
// so the kernel uses it as it is; a crossing that needs the unit normal (Fresnel) normalises it
// (compactFaceNormal). C is computed from the decoded normal and the face's centroid, so the
// height error the code's rounding makes at a vertex is the angle error times the vertex's
// distance to the centroid (a fraction of the cell's size), not times its distance from the
// origin. Both cells of a face hold exactly opposite planes: the face's code and C are
// computed once and negated for the cell that sees the face reversed (-A, -B, the other z sign,
// -C decode to the exact negation), so the mesh stays watertight.
// Word: bits 31..16 A + 32768, bits 15..1 B + 16384, bit 0 set where z < 0.
struct alignas(32) CompactPlanes {
    uint32_t normal[4];  // face f's outward normal, coded as above
    float C[4];          // dot(decoded normal, a point of face f)
};
static_assert(sizeof(CompactPlanes) == 32, "CompactPlanes is one 32-byte sector");

// A cell in the compact layout: its planes, then its crossing fields, in one aligned 64 bytes.
struct alignas(64) CompactCell {
    CompactPlanes planes;
    CellLinks links;
};
static_assert(sizeof(CompactCell) == 64 && offsetof(CompactCell, links) == 32, "CompactCell is two sectors");

constexpr int32_t kCompactK = 32767;       // |A| <= K
constexpr int32_t kCompactBMax = 16383;    // |B| <= 16383, |2B| <= K

// The bits of a float as an integer and back (memcpy: a register move on either side).
template <class To, class From>
FM_HD To compactBitCast(From x) {
    static_assert(sizeof(To) == sizeof(From), "a bit cast keeps the size");
    To t;
    memcpy(&t, &x, sizeof t);
    return t;
}
FM_HD float compactFloatOf(uint32_t b) { return compactBitCast<float>(b); }
FM_HD uint32_t compactBitsOf(float f) { return compactBitCast<uint32_t>(f); }

// The decoded (unnormalised) normal of code w. The 16-bit fields become floats by placing them
// in the mantissa of 1.5 * 2^23 and subtracting (two full-rate instructions each, no integer
// conversion); every value is an integer below 2^17, so all of it is exact.
FM_HD Vec3 decodeCompactNormal(uint32_t w) {
    constexpr uint32_t kMagic = 0x4B400000u;  // 1.5 * 2^23: its low 22 mantissa bits are 0
    constexpr float kBias = 12582912.f + 32768.f;
    const float u = compactFloatOf(kMagic | (w >> 16)) - kBias;       // A
    const float v = compactFloatOf(kMagic | (w & 0xfffeu)) - kBias;  // 2B
    const float zAbs = fmaf(-2.f, fmaxf(fabsf(u), fabsf(v)), float(2 * kCompactK));  // one FMA, exact
    const float z = compactFloatOf(compactBitsOf(zAbs) ^ (w << 31));
    return Vec3{u + v, u - v, z};
}

// The unit outward normal of code w (a crossing's Fresnel normal: the plane's own direction, so
// a reflected packet moves away from the plane the exit test uses).
FM_HD Vec3 compactFaceNormal(uint32_t w) { return normalize(decodeCompactNormal(w)); }

// The four decoded planes of a cell, as the exit test reads planes.
FM_HD CellPlanes decodeCompactPlanes(const CompactPlanes& c) {
    CellPlanes p;
    for (int f = 0; f < 4; ++f) {
        const Vec3 n = decodeCompactNormal(c.normal[f]);
        p.nx[f] = n.x;
        p.ny[f] = n.y;
        p.nz[f] = n.z;
        p.C[f] = c.C[f];
    }
    return p;
}

// The fields of a code, and the code of fields: A in [-K, K], B in [-16383, 16383].
inline uint32_t compactCode(int32_t a, int32_t b, bool zNegative) {
    return (uint32_t(a + 32768) << 16) | (uint32_t(b + 16384) << 1) | (zNegative ? 1u : 0u);
}
inline void compactFields(uint32_t w, int32_t& a, int32_t& b, bool& zNegative) {
    a = int32_t(w >> 16) - 32768;
    b = int32_t((w >> 1) & 0x7fffu) - 16384;
    zNegative = (w & 1u) != 0;
}
// The code of the opposite normal (exactly the negated decoded vector).
inline uint32_t negateCompactNormal(uint32_t w) {
    int32_t a, b;
    bool zn;
    compactFields(w, a, b, zn);
    return compactCode(-a, -b, !zn);
}
// The decoded normal in double (the same integers decodeCompactNormal gives as floats).
inline void decodeCompactNormal(uint32_t w, double n[3]) {
    int32_t a, b;
    bool zn;
    compactFields(w, a, b, zn);
    const int32_t v = 2 * b, z = 2 * kCompactK - 2 * std::max(std::abs(a), std::abs(v));
    n[0] = a + v;
    n[1] = a - v;
    n[2] = zn ? -z : z;
}

// The code of direction (x, y, z) (any length > 0): of the four roundings of (u, v), the one whose
// decoded direction is nearest.
inline uint32_t encodeCompactNormal(double x, double y, double z) {
    const double s = std::fabs(x) + std::fabs(y) + std::fabs(z), len = std::sqrt(x * x + y * y + z * z);
    const bool zn = std::signbit(z);
    const double u = (x + y) / s * kCompactK, v = (x - y) / s * (kCompactK / 2.0);
    uint32_t best = 0;
    double bestCos = -2;
    for (double ua : {std::floor(u), std::ceil(u)})
        for (double vb : {std::floor(v), std::ceil(v)}) {
            const int32_t a = int32_t(std::min<double>(kCompactK, std::max<double>(-kCompactK, ua)));
            const int32_t b = int32_t(std::min<double>(kCompactBMax, std::max<double>(-kCompactBMax, vb)));
            const uint32_t w = compactCode(a, b, zn);
            double n[3];
            decodeCompactNormal(w, n);
            const double c = (n[0] * x + n[1] * y + n[2] * z) / (len * std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]));
            if (c > bestCos) {
                bestCos = c;
                best = w;
            }
        }
    return best;
}

// The compact planes of `cells`, index for index (Kernels/CompactCells.cpp). A face is coded
// once, from the cell that sees it in its canonical orientation (face id without kFaceSideBit),
// and negated for the other; C goes through the face's centroid. A cell without corners (the
// dummy cell 0) gets planes no packet leaves through (C = +inf). The device's arrays of a mesh:
// Kernels/HostCellArrays.hpp.
std::vector<CompactPlanes> compactCells(const std::vector<TetraRecord>& cells);

// A mesh whose cell records take more than half the L2: its packet kernels wait on memory.
inline bool cellsBeyondL2(size_t cells, double l2Bytes) { return double(cells) * sizeof(TetraRecord) > 0.5 * l2Bytes; }

// The layout for `cells` cells on a device of `l2Bytes` of L2: as asked, or for Auto the compact
// layout where the records take more than half of the L2 (most events then miss it, and an
// event reads one 32-byte sector of planes, so twice the cells fit the L2 and the L1 as with
// the split layout's 64 bytes), the records elsewhere, so that L2-resident meshes follow the
// records' exact planes. The compact layout takes less device memory than the records (80
// bytes per cell against 112), so it also holds the largest meshes.
inline CellLayout chooseCellLayout(CellLayout wanted, size_t cells, double l2Bytes) {
    if (wanted != CellLayout::Auto) return wanted;
    return cellsBeyondL2(cells, l2Bytes) ? CellLayout::Compact : CellLayout::Record;
}

}  // namespace fm
