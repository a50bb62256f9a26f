// SPDX-License-Identifier: GPL-3.0-or-later
// A batch over one mesh (Kernels/Batch.hpp): sources x material sets, packed once. The mesh is
// packed into cells a single time; each run gets its own materials and emitters (compiled per
// material set, since emitters depend on refractive indices: specular entry, fibre cones).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "Geometry/MaterialSet.hpp"
#include "Geometry/PackedModelCache.hpp"
#include "Geometry/Sources.hpp"
#include "Kernels/Batch.hpp"

namespace fm {

struct BatchModel {
    KernelInput mesh;                // cells and faceCount (materials/emitters empty); empty with a cache
    // Packed with a PackedModelCache: the cache's input, whose cells the runs take (cells()).
    std::shared_ptr<const KernelInput> cachedCells;
    std::vector<BatchRunSpec> runs;  // run index = materialSet * sources + source
    size_t sources = 0, materialSets = 0;
    std::vector<std::string> warnings;  // the source compiler's, each prefixed "<batchItemName>: "
    size_t run(size_t materialSet, size_t source) const { return materialSet * sources + source; }
    // The batch's cells and faceCount: the cache's where one packed them, else mesh.
    const KernelInput& cells() const { return cachedCells ? *cachedCells : mesh; }
};

// How packBatch names item i ("source", "material set") in its messages and warnings: "source 3",
// or "source 3 (label)" with a label.
std::string batchItemName(const char* what, size_t i, const std::vector<std::string>& labels);

// packets[s] is source s's packet count (one value: the same for all). Every run uses `seed`,
// so run (m, s) equals a single run of source s with material set m and that seed. Throws
// ModelError naming the source or material set (index, and label when given) at fault. With a
// cache (a caller that runs batches over one mesh again and again: Tcl's BatchRunner) the cells
// come from it, packed only when the mesh is not the one it kept, and mesh stays empty.
BatchModel packBatch(const TetraMesh& mesh, const std::vector<MaterialSet>& materialSets,
                     const std::vector<SourcePtr>& sources, const std::vector<uint64_t>& packets,
                     uint64_t seed, const std::vector<std::string>& sourceLabels = {},
                     const std::vector<std::string>& materialLabels = {}, PackedModelCache* cache = nullptr);

}  // namespace fm
