// SPDX-License-Identifier: GPL-3.0-or-later
#include "Kernels/McmlRecords.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "Common/Errors.hpp"
#include "Kernels/Detection.hpp"
#include "Kernels/McmlKernel.hpp"

namespace fm {

DetectionSpec layeredDetection(const KernelInput& in, uint64_t maxRecords, double radius) {
    const uint32_t L = slabLayers(in);
    if (!(radius >= 0) || !std::isfinite(radius))
        throw ParameterError("record detector radius must be finite and >= 0 mm (0: the whole surface), got " +
                             std::to_string(radius));
    if (maxRecords == 0) throw ParameterError("records kept (max records) must be >= 1");
    DetectionSpec spec;
    spec.maxRecords = maxRecords;
    const double r2 = radius > 0 ? radius * radius : std::numeric_limits<double>::infinity();
    DetectorZone top, bottom;
    top.centre[2] = in.slabs[1].z0;
    bottom.centre[2] = in.slabs[L].z1;
    top.radius2 = bottom.radius2 = r2;
    spec.detectors = {top, bottom};
    // Face ids as SlabModel::faceId gives them (the side bit cleared): the top face of layer 1,
    // the bottom face of layer L.
    spec.faceDetectors.assign(in.faceCount, 0);
    spec.faceDetectors.at(1) = 1;
    spec.faceDetectors.at(L + 1) |= 2;
    return spec;
}

DetectedPackets describeLayeredRun(const KernelInput& in, const RunOptions& opt, const DetectionSpec& spec) {
    const uint32_t L = slabLayers(in);
    DetectedPackets dp = describeDetectingRun(in, opt, spec);  // materials 1..L+1: the layers, then the medium below
    dp.regions = L;
    for (auto* v : {&dp.mua, &dp.mus, &dp.g, &dp.n}) v->resize(L);
    dp.model = "layered";
    return dp;
}

void appendRecords(DetectedPackets& into, const DetectedPackets& more, uint64_t keep) {
    if (into.regions == 0) {
        into = more;
    } else {
        if (more.regions != into.regions || more.detectors.size() != into.detectors.size())
            throw Error("records: batches of different models");
        const size_t room = keep > into.records.size() ? size_t(keep - into.records.size()) : 0;
        const size_t n = std::min(room, more.records.size());
        into.records.insert(into.records.end(), more.records.begin(), more.records.begin() + n);
        into.pathLengths.insert(into.pathLengths.end(), more.pathLengths.begin(),
                                more.pathLengths.begin() + n * more.regions);
        if (into.scatterCounts.empty() != more.scatterCounts.empty())
            throw Error("records: batches with and without per-layer scatter counts");
        if (!more.scatterCounts.empty())
            into.scatterCounts.insert(into.scatterCounts.end(), more.scatterCounts.begin(),
                                      more.scatterCounts.begin() + n * more.regions);
        into.detected += more.detected;
        into.packets += more.packets;
        for (size_t d = 0; d < into.detectedWeight.size() && d < more.detectedWeight.size(); ++d)
            into.detectedWeight[d] += more.detectedWeight[d];
    }
    if (into.records.size() > keep) {
        into.records.resize(keep);
        into.pathLengths.resize(keep * into.regions);
        if (!into.scatterCounts.empty()) into.scatterCounts.resize(keep * into.regions);
    }
}

}  // namespace fm
