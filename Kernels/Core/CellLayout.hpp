// SPDX-License-Identifier: GPL-3.0-or-later
// The split layout of a mesh's cells for the GPU (TuningKnobs::cudaCellLayout, FM_CUDA_CELL_LAYOUT):
// the four planes of every cell in an array of 64-byte entries, read at every event (two 32-byte
// sectors, half of a 128-byte line, where a 112-byte record's planes straddle three sectors every
// other cell), and the fields a face crossing reads in an array of 32-byte entries (one sector).
// The face ids stay in the 112-byte records, read only by surface tallies. The values are the
// records' own, bit for bit, so both layouts follow the same histories.
#pragma once
#include <vector>

#include "Kernels/Core/Records.hpp"

namespace fm {

// Auto (the default): Split where the mesh's records outgrow the L2 and the device has memory to
// spare, else Record (Kernels/CUDA/CudaKernel.cu cellLayoutFor).
enum class CellLayout : uint8_t { Auto, Record, Split };

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

// The layout for `cells` cells on a device of `l2Bytes` of L2 and `deviceBytes` of memory: as
// asked, or for Auto the split arrays where the records take more than half of the L2 (most
// events then miss it, and the split arrays read fewer sectors per event) and the records and
// arrays together take at most half of the memory; the records elsewhere, so that L2-resident
// meshes run as before and the largest mesh a device holds stays the records'.
inline CellLayout chooseCellLayout(CellLayout wanted, size_t cells, double l2Bytes, double deviceBytes) {
    if (wanted != CellLayout::Auto) return wanted;
    const double records = double(cells) * sizeof(TetraRecord);
    const double both = double(cells) * (sizeof(TetraRecord) + sizeof(CellPlanes) + sizeof(CellLinks));
    return records > 0.5 * l2Bytes && both <= 0.5 * deviceBytes ? CellLayout::Split : CellLayout::Record;
}

// The split arrays of `cells`, index for index.
inline void splitCells(const std::vector<TetraRecord>& cells, std::vector<CellPlanes>& planes,
                       std::vector<CellLinks>& links) {
    planes.resize(cells.size());
    links.resize(cells.size());
    for (size_t i = 0; i < cells.size(); ++i) {
        planes[i] = cellPlanesOf(cells[i]);
        links[i] = cellLinksOf(cells[i]);
    }
}

}  // namespace fm
