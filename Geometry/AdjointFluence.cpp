// SPDX-License-Identifier: GPL-3.0-or-later
#include "Geometry/AdjointFluence.hpp"

#include <string>

#include "Common/Errors.hpp"
#include "Common/Interrupt.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Geometry/Queries.hpp"

namespace fm {
namespace {

std::vector<uint32_t> detectorFaces(const TetraMesh& mesh, const DetectionSpec& spec, uint32_t d) {
    if (d >= spec.detectors.size())
        throw ParameterError("adjoint: detector " + std::to_string(d) + " does not exist (the run has " +
                             std::to_string(spec.detectors.size()) + ")");
    std::vector<uint32_t> faces;
    for (uint32_t f = 1; f < spec.faceDetectors.size() && f <= mesh.faceCount(); ++f)
        if (((spec.faceDetectors[f] >> d) & 1u) && mesh.face(f).other == 0) faces.push_back(f);
    if (faces.empty()) throw ParameterError("adjoint: detector " + std::to_string(d) + " has no boundary faces");
    return faces;
}

}  // namespace

SurfaceSource detectorAdjointSource(const TetraMesh& mesh, const DetectionSpec& spec, uint32_t d) {
    SurfaceSource s;
    s.faces = detectorFaces(mesh, spec, d);
    s.emission = SurfaceSource::Lambert;
    return s;
}

double detectorArea(const TetraMesh& mesh, const DetectionSpec& spec, uint32_t d) {
    double a = 0;
    for (uint32_t f : detectorFaces(mesh, spec, d)) a += mesh.face(f).area;
    return a;
}

std::vector<std::vector<double>> adjointFluence(const TetraMesh& mesh, const MaterialSet& mats,
                                                const DetectionSpec& spec, const RunOptions& opt,
                                                const KernelRunner& run) {
    std::vector<std::vector<double>> phi;
    RunOptions o = opt;
    o.detection = nullptr;
    o.outputs.volume = true;
    for (uint32_t d = 0; d < spec.detectors.size(); ++d) {
        const KernelInput in = packModel(mesh, mats, detectorAdjointSource(mesh, spec, d));
        const RunResult r = run(in, o);
        if (r.cancelled) throw Interrupted("adjoint run of detector " + std::to_string(d) + " cancelled");
        phi.push_back(volumeFluence(mesh, mats, r.volume, 1.0 / double(r.packetsDone)));
    }
    return phi;
}

ModelFingerprint adjointFingerprint(const TetraMesh& mesh, const MaterialSet& mats, const DetectionSpec& spec,
                                    const RunOptions& opt) {
    std::vector<SourcePtr> sources;
    for (uint32_t d = 0; d < spec.detectors.size(); ++d)
        sources.push_back(std::make_shared<SurfaceSource>(detectorAdjointSource(mesh, spec, d)));
    return modelFingerprint(mesh, {mats}, sources, std::vector<uint64_t>(sources.size(), opt.packets), opt.params);
}

}  // namespace fm
