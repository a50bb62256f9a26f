// SPDX-License-Identifier: GPL-3.0-or-later
#include "Geometry/BatchModel.hpp"

#include "Common/Errors.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Geometry/SourceCompiler.hpp"

namespace fm {

std::string batchItemName(const char* what, size_t i, const std::vector<std::string>& labels) {
    std::string s = std::string(what) + " " + std::to_string(i);
    if (i < labels.size() && !labels[i].empty()) s += " (" + labels[i] + ")";
    return s;
}

BatchModel packBatch(const TetraMesh& mesh, const std::vector<MaterialSet>& materialSets,
                     const std::vector<SourcePtr>& sources, const std::vector<uint64_t>& packets,
                     uint64_t seed, const std::vector<std::string>& sourceLabels,
                     const std::vector<std::string>& materialLabels, PackedModelCache* cache) {
    if (sources.empty()) throw ParameterError("batch: no sources");
    if (materialSets.empty()) throw ParameterError("batch: no material sets");
    if (packets.size() != 1 && packets.size() != sources.size())
        throw ParameterError("batch: " + std::to_string(packets.size()) + " packet counts for " +
                             std::to_string(sources.size()) + " sources");
    BatchModel b;
    b.sources = sources.size();
    b.materialSets = materialSets.size();
    for (size_t m = 0; m < materialSets.size(); ++m) {  // material errors name the set, not a source
        try {
            packMaterials(materialSets[m]);
            if (mesh.regionCount() > materialSets[m].size())
                throw ModelError("region " + std::to_string(mesh.regionCount() - 1) + " has no material (" +
                                 std::to_string(materialSets[m].size() - 1) + " materials given besides the exterior)");
        } catch (const ModelError& e) {
            throw ModelError(batchItemName("material set", m, materialLabels) + ": " + e.what());
        }
    }
    for (size_t m = 0; m < materialSets.size(); ++m) {
        const MaterialSet& mats = materialSets[m];
        if (mats.matchedBoundary != materialSets[0].matchedBoundary)
            throw ModelError(batchItemName("material set", m, materialLabels) +
                             ": matched boundary differs from material set 0 (a batch shares one mesh packing)");
        for (size_t s = 0; s < sources.size(); ++s) {
            if (!sources[s]) throw ParameterError(batchItemName("source", s, sourceLabels) + ": not set");
            KernelInput in;
            try {
                if (m == 0 && s == 0 && cache) {
                    b.cachedCells = cache->pack(mesh, mats, *sources[s]);
                    in.materials = packMaterials(mats);
                    compileSources(*sources[s], mesh, mats, in);
                } else if (m == 0 && s == 0) {
                    in = packModel(mesh, mats, *sources[s]);
                    b.mesh.cells = std::move(in.cells);
                    b.mesh.faceCount = in.faceCount;
                    b.mesh.cellsIdentity = in.cellsIdentity;
                } else {
                    in.materials = packMaterials(mats);
                    compileSources(*sources[s], mesh, mats, in);
                }
            } catch (const ModelError& e) {
                std::string where = batchItemName("source", s, sourceLabels);
                if (materialSets.size() > 1) where += ", " + batchItemName("material set", m, materialLabels);
                throw ModelError(where + ": " + e.what());
            }
            if (m == 0)  // sources' warnings do not depend on the material set
                for (const std::string& w : in.warnings) b.warnings.push_back(batchItemName("source", s, sourceLabels) + ": " + w);
            BatchRunSpec r;
            r.model = takeVariant(in);
            r.packets = packets.size() == 1 ? packets[0] : packets[s];
            r.seed = seed;
            b.runs.push_back(std::move(r));
        }
    }
    return b;
}

}  // namespace fm
