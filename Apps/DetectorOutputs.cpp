// SPDX-License-Identifier: GPL-3.0-or-later
#include "Apps/DetectorOutputs.hpp"

#include "Apps/RunSummary.hpp"  // jsonNumber

#include <iostream>
#include <sstream>

#include "Common/Errors.hpp"
#include "Geometry/Detectors.hpp"
#include "Storage/AtomicFile.hpp"
#include "Storage/Detected/DetectedFile.hpp"
#include "Storage/FluenceMatrix/FluenceMatrix.hpp"

namespace fm {

DetectionSpec detectorsOption(const std::string& list, uint64_t maxRecords, const TetraMesh& mesh) {
    std::vector<Detector> ds;
    std::stringstream ss(list);
    for (std::string item; std::getline(ss, item, ';');)
        ds.push_back(parseDetector(item, "--detectors item " + std::to_string(ds.size() + 1)));
    if (ds.empty()) throw ParameterError("--detectors needs at least one detector (x,y,z,radius or faces:f1,f2,...)");
    try {
        return compileDetectors(mesh, ds, maxRecords);
    } catch (const ParameterError& e) {
        throw ParameterError(std::string("--detectors: ") + e.what());
    }
}

TimeGates gatesOption(const std::string& text) { return parseTimeGates(text, "--tpsf"); }

void writeDetectorOutputs(const OutputFolder& out, const DetectedPackets& dp, const TimeGates* gates) {
    writeDetected(out.staged("detected.fmd"), dp);
    if (dp.truncated()) {
        std::cerr << "fullmonte-run: warning: " << dp.detected << " detections, only the first " << dp.records.size()
                  << " (lowest packet indices) kept in detected.fmd; raise --max-detected to keep more";
        if (dp.refilledPackets) std::cerr << " (the GPU ran " << dp.refilledPackets << " packets again to fill them)";
        std::cerr << "\n";
    }
    if (!gates) return;
    AtomicFile f(out.staged("detector_tpsf.txt"));
    f.out << "# gate_start_ns gate_stop_ns then per detector: detected weight per launched packet"
          << (dp.truncated() ? " (of the kept records only)" : "") << "\n";
    std::vector<std::vector<double>> h;
    for (uint32_t d = 0; d < dp.detectors.size(); ++d) h.push_back(detectorTpsf(dp, d, *gates));
    for (uint32_t i = 0; i < gates->count; ++i) {
        f.out << gates->gateStart(i) << ' ' << gates->gateStop(i);
        for (const auto& hd : h) f.out << ' ' << hd[i] / double(dp.packets);
        f.out << '\n';
    }
    f.commit();
}

void writeJacobian(const OutputFolder& out, const TetraMesh& mesh, const ReplayResult& rr, uint64_t packets) {
    AtomicFile f(out.staged("jacobian.txt"));
    f.out << "# tetra region then per detector d(signal)/d(mu_a of the tetra), mm; signal = detected weight per "
             "launched packet\n";
    for (uint32_t t = 1; t <= mesh.tetraCount(); ++t) {
        f.out << t << ' ' << mesh.region(t);
        for (const auto& J : rr.jacobian) f.out << ' ' << J[t] / double(packets);
        f.out << '\n';
    }
    f.commit();
}

std::string detectorsSummaryJson(const DetectedPackets& dp) {
    const double n = dp.packets > 0 ? double(dp.packets) : 1.0;
    std::ostringstream o;
    o << "{\"records\": " << dp.records.size() << ", \"detected\": " << dp.detected << ", \"signal\": ";
    if (dp.detectedWeight.empty()) {  // unknown: a truncated GPU run keeps no per-detector total
        o << "null";
    } else {
        o << "[";
        for (size_t d = 0; d < dp.detectedWeight.size(); ++d) o << (d ? ", " : "") << jsonNumber(dp.detectedWeight[d] / n);
        o << "]";
    }
    o << ", \"signal_stderr\": ";
    if (dp.detectedWeightError.empty()) {
        o << "null";
    } else {
        o << "[";
        for (size_t d = 0; d < dp.detectedWeightError.size(); ++d)
            o << (d ? ", " : "") << jsonNumber(dp.detectedWeightError[d] / n);
        o << "]";
    }
    o << "}";
    return o.str();
}

void writeAdjointFluence(const OutputFolder& out, const std::vector<std::vector<double>>& perDetector,
                         const ModelFingerprint& model) {
    FluenceMatrixHeader h;
    h.rows = perDetector.front().size() - 1;
    h.cols = perDetector.size();
    h.sources = perDetector.size();
    h.materialSets = 1;
    h.quantity = MatrixQuantity::Fluence;
    h.units = "mm^-2 per launched packet";
    h.model = model;
    FluenceMatrixWriter w(out.staged("adjoint_fluence.fmm"), h);
    for (size_t d = 0; d < perDetector.size(); ++d) w.writeColumn(d, matrixColumn(perDetector[d]));
    w.commit();
}

}  // namespace fm

