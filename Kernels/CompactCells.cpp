// SPDX-License-Identifier: GPL-3.0-or-later
// The compact planes of a mesh's cells (Kernels/Core/CellLayout.hpp CompactPlanes), alone or in
// the device's CompactCells beside their links, and the other layouts' host arrays
// (hostCellArrays), built on the load threads (Common/ParallelFor.hpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "Common/ParallelFor.hpp"
#include "Kernels/HostCellArrays.hpp"

namespace fm {

namespace {

double det3(const double a[3], const double b[3], const double c[3]) {
    return a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) + a[2] * (b[0] * c[1] - b[1] * c[0]);
}

// The corners of a cell from its four planes: corner k, opposite face k, is where the other
// three planes meet (Cramer's rule in double). False where the planes do not meet in a point
// (the dummy cell 0, whose normals are zero).
bool cellCorners(const TetraRecord& r, double corner[4][3]) {
    for (int k = 0; k < 4; ++k) {
        double a[3][3], c[3];
        for (int i = 0, j = 0; j < 4; ++j) {
            if (j == k) continue;
            a[i][0] = r.nx[j];
            a[i][1] = r.ny[j];
            a[i][2] = r.nz[j];
            c[i++] = r.C[j];
        }
        const double d = det3(a[0], a[1], a[2]);
        if (!(std::fabs(d) > 1e-12)) return false;
        for (int axis = 0; axis < 3; ++axis) {
            double b[3][3];
            for (int i = 0; i < 3; ++i)
                for (int j = 0; j < 3; ++j) b[i][j] = j == axis ? c[i] : a[i][j];
            corner[k][axis] = det3(b[0], b[1], b[2]) / d;
        }
    }
    return true;
}

// Face f's code and offset as cell r sees it: the code of its normal, C through the centroid of
// the face's three corners (those opposite the other faces).
void compactFace(const TetraRecord& r, const double corner[4][3], int f, uint32_t& code, float& C) {
    code = encodeCompactNormal(r.nx[f], r.ny[f], r.nz[f]);
    double n[3], c = 0;
    decodeCompactNormal(code, n);
    for (int k = 0; k < 4; ++k)
        if (k != f)
            for (int axis = 0; axis < 3; ++axis) c += n[axis] * corner[k][axis] / 3.0;
    C = float(c);
}

// The faces of a cell coded by it: `pass` 0 those it sees canonically (each face id has one such
// cell, so cells may run in parallel), 1 those it sees reversed whose canonical cell does not
// exist (run serially: such a face may have two).
void codeFacesOf(const TetraRecord& r, int pass, UninitVector<uint32_t>& faceCode, UninitVector<float>& faceC,
                 std::vector<uint8_t>& coded) {
    double corner[4][3];
    bool cornered = false, tried = false;
    for (int f = 0; f < 4; ++f) {
        const uint32_t id = r.face[f] & ~kFaceSideBit;
        const bool reversed = (r.face[f] & kFaceSideBit) != 0;
        if (id == 0 || reversed != (pass == 1) || coded[id]) continue;
        if (!tried) cornered = cellCorners(r, corner), tried = true;
        if (!cornered) return;
        uint32_t code;
        float C;
        compactFace(r, corner, f, code, C);
        faceCode[id] = reversed ? negateCompactNormal(code) : code;
        faceC[id] = reversed ? -C : C;
        coded[id] = 1;
    }
}

// The compact planes of each cell of `cells` written to planesOf(i) (a CompactPlanes&), once per
// cell, on the load threads: the one code behind compactCells and compactLayoutCells.
template <class PlanesOf>
void compactPlanesInto(const std::vector<TetraRecord>& cells, PlanesOf planesOf) {
    // Every step but the second pass's few cells runs on the load threads: the face count (the
    // largest id + 1) per chunk, then the chunks' largest.
    const unsigned chunks = chunkCount(cells.size());
    std::vector<uint32_t> most(chunks, 0);
    parallelChunks(0, cells.size(), chunks, [&](unsigned c, size_t lo, size_t hi) {
        uint32_t m = 0;
        for (size_t i = lo; i < hi; ++i)
            for (int f = 0; f < 4; ++f) m = std::max(m, (cells[i].face[f] & ~kFaceSideBit) + 1);
        most[c] = m;
    });
    const uint32_t faces = most.empty() ? 0u : *std::max_element(most.begin(), most.end());
    UninitVector<uint32_t> faceCode(faces);  // read only where coded
    UninitVector<float> faceC(faces);
    std::vector<uint8_t> coded(faces, 0);
    parallelFor(0, cells.size(), [&](unsigned, size_t lo, size_t hi) {
        for (size_t i = lo; i < hi; ++i) codeFacesOf(cells[i], 0, faceCode, faceC, coded);
    });
    // The second pass in cell order over the cells it can change (those that see a face
    // reversed that the first pass left uncoded), found on the load threads: the same faces
    // coded by the same cells as a pass over every cell.
    std::vector<std::vector<size_t>> late(chunks);
    parallelChunks(0, cells.size(), chunks, [&](unsigned c, size_t lo, size_t hi) {
        for (size_t i = lo; i < hi; ++i)
            for (int f = 0; f < 4; ++f) {
                const uint32_t id = cells[i].face[f] & ~kFaceSideBit;
                if (id != 0 && (cells[i].face[f] & kFaceSideBit) != 0 && !coded[id]) {
                    late[c].push_back(i);
                    break;
                }
            }
    });
    for (const std::vector<size_t>& l : late)
        for (size_t i : l) codeFacesOf(cells[i], 1, faceCode, faceC, coded);
    parallelFor(0, cells.size(), [&](unsigned, size_t lo, size_t hi) {
        for (size_t i = lo; i < hi; ++i) {
            const TetraRecord& r = cells[i];
            CompactPlanes& p = planesOf(i);
            double corner[4][3];
            bool cornered = false, tried = false;
            for (int f = 0; f < 4; ++f) {
                const uint32_t id = r.face[f] & ~kFaceSideBit;
                if (id != 0 && coded[id]) {
                    const bool reversed = (r.face[f] & kFaceSideBit) != 0;
                    p.normal[f] = reversed ? negateCompactNormal(faceCode[id]) : faceCode[id];
                    p.C[f] = reversed ? -faceC[id] : faceC[id];
                    continue;
                }
                if (!tried) cornered = cellCorners(r, corner), tried = true;
                if (cornered) {  // a face without an id: coded for this cell alone
                    compactFace(r, corner, f, p.normal[f], p.C[f]);
                } else {
                    p.normal[f] = compactCode(0, 0, false);
                    p.C[f] = std::numeric_limits<float>::infinity();
                }
            }
        }
    });
}

}  // namespace

std::vector<CompactPlanes> compactCells(const std::vector<TetraRecord>& cells) {
    std::vector<CompactPlanes> out(cells.size());
    compactPlanesInto(cells, [&](size_t i) -> CompactPlanes& { return out[i]; });
    return out;
}

UninitVector<CompactCell> compactLayoutCells(const std::vector<TetraRecord>& cells) {
    UninitVector<CompactCell> out(cells.size());  // every byte written below
    compactPlanesInto(cells, [&](size_t i) -> CompactPlanes& {
        out[i].links = cellLinksOf(cells[i]);
        return out[i].planes;
    });
    return out;
}

HostCellArrays hostCellArrays(const std::vector<TetraRecord>& cells, CellLayout layout) {
    HostCellArrays a;
    if (layout != CellLayout::Split && layout != CellLayout::Compact) return a;
    if (layout == CellLayout::Compact) a.compact = compactLayoutCells(cells);
    if (layout == CellLayout::Split) {  // every element written below
        a.planes.resize(cells.size());
        a.links.resize(cells.size());
    }
    a.faces.resize(cells.size());
    parallelFor(0, cells.size(), [&](unsigned, size_t lo, size_t hi) {
        for (size_t i = lo; i < hi; ++i) {
            a.faces[i] = cellFacesOf(cells[i]);
            if (layout == CellLayout::Split) {
                a.planes[i] = cellPlanesOf(cells[i]);
                a.links[i] = cellLinksOf(cells[i]);
            }
        }
    });
    return a;
}

}  // namespace fm
