// SPDX-License-Identifier: GPL-3.0-or-later
// The packed cells of a mesh kept between runs: a loop of single runs over one mesh (a Tcl
// kernel's runSync per source or material set, Python Simulations, a C++ loop calling runKernel)
// packs the cells (planes, neighbours and their regions: sizeof(TetraRecord) bytes a tetra)
// once, and only the materials and sources per run. A GPU keeping the uploaded mesh
// (Kernels/DeviceModelCache.hpp) then knows it by its identity without hashing it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "Geometry/ModelPacker.hpp"

namespace fm {

class PackedModelCache {
public:
    // packModel(mesh, mats, src, directedFaces), equal to it field for field, with the cells of
    // the last call reused when they are the same cells: the same mesh (TetraMesh::identity, which
    // no edit or move keeps), matched-boundary flag and directed faces; material values, the
    // number of materials and the source may differ. The input returned is the cache's: the next
    // call updates it in place when no-one else holds it any more, and otherwise leaves it as it
    // is and copies its cells. Thread-safe.
    std::shared_ptr<const KernelInput> pack(const TetraMesh& mesh, const MaterialSet& mats, const Source& src,
                                            const std::vector<uint32_t>& directedFaces = {});
    void clear();               // frees the cells kept
    size_t cellPacks() const;   // calls that packed the cells
    size_t cellReuses() const;  // calls that reused the kept cells

private:
    struct Key {
        uint64_t mesh = 0;
        bool matchedBoundary = false;
        std::vector<uint32_t> directed;
        bool operator==(const Key& o) const {
            return mesh == o.mesh && matchedBoundary == o.matchedBoundary && directed == o.directed;
        }
    };
    mutable std::mutex m_;
    Key key_;
    std::shared_ptr<KernelInput> last_;
    size_t packs_ = 0, reuses_ = 0;
};

}  // namespace fm
