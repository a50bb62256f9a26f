// SPDX-License-Identifier: GPL-3.0-or-later
// The host arrays a GPU's cell layouts upload (Kernels/Core/CellLayout.hpp), made from the packed
// records on the load threads (Kernels/CompactCells.cpp).
#pragma once
#include <vector>

#include "Common/UninitVector.hpp"
#include "Kernels/Core/CellLayout.hpp"

namespace fm {

// The compact layout's cells of `cells`, index for index: the planes compactCells gives, beside
// the links cellLinksOf gives, written in place in one pass (what a compact DeviceMesh uploads).
UninitVector<CompactCell> compactLayoutCells(const std::vector<TetraRecord>& cells);

// A mesh's cells as a layout other than the records' uploads them (Kernels/CUDA/CudaEngine.cuh
// DeviceMesh): the split layout's planes and links or the compact layout's cells, and the face
// ids; the other arrays empty. Each array is first touched by the threads that fill it; nothing
// for the record layout.
struct HostCellArrays {
    UninitVector<CellPlanes> planes;
    UninitVector<CellLinks> links;
    UninitVector<CompactCell> compact;
    UninitVector<CellFaces> faces;
};
HostCellArrays hostCellArrays(const std::vector<TetraRecord>& cells, CellLayout layout);

}  // namespace fm
