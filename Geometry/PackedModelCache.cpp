// SPDX-License-Identifier: GPL-3.0-or-later
#include "Geometry/PackedModelCache.hpp"

namespace fm {

std::shared_ptr<const KernelInput> PackedModelCache::pack(const TetraMesh& mesh, const MaterialSet& mats,
                                                          const Source& src, const std::vector<uint32_t>& directedFaces) {
    Key key{mesh.identity(), mats.matchedBoundary, directedFaces};
    std::lock_guard<std::mutex> g(m_);
    if (last_ && key == key_) {
        // In place when only the cache holds it; otherwise (an earlier run's input still held: a
        // run going, a detector replay) a new input with a copy of the cells.
        std::shared_ptr<KernelInput> in = last_;
        if (last_.use_count() > 2) {  // held by others besides last_ and in
            in = std::make_shared<KernelInput>();
            in->cells = last_->cells;
            in->faceCount = last_->faceCount;
            in->cellsIdentity = last_->cellsIdentity;
        }
        // A throw leaves the cells as they were; every call packs materials and sources anew.
        packModelRun(mesh, mats, src, *in);
        last_ = in;
        ++reuses_;
        return in;
    }
    last_.reset();  // the old cells freed before the new ones are packed
    auto in = std::make_shared<KernelInput>(packModel(mesh, mats, src, directedFaces));
    key_ = std::move(key);
    last_ = in;
    ++packs_;
    return in;
}

void PackedModelCache::clear() {
    std::lock_guard<std::mutex> g(m_);
    last_.reset();
}

size_t PackedModelCache::cellPacks() const {
    std::lock_guard<std::mutex> g(m_);
    return packs_;
}

size_t PackedModelCache::cellReuses() const {
    std::lock_guard<std::mutex> g(m_);
    return reuses_;
}

}  // namespace fm
