// SPDX-License-Identifier: GPL-3.0-or-later
// fullmonte-run's detector options (--detectors, --max-detected, --tpsf, --replay) and the files
// they write: detected.fmd (docs/DETECTORS.md), detector_tpsf.txt, jacobian.txt.
#pragma once
#include <string>

#include "Geometry/ModelFingerprint.hpp"
#include "Geometry/TetraMesh.hpp"
#include "Kernels/Detection.hpp"
#include "Storage/OutputFolder.hpp"

namespace fm {

// "--detectors 'x,y,z,r;faces:f1,f2;...'" on `mesh`, keeping at most maxRecords records.
DetectionSpec detectorsOption(const std::string& list, uint64_t maxRecords, const TetraMesh& mesh);
// "--tpsf start,stop,step" (ns).
TimeGates gatesOption(const std::string& text);

// detected.fmd, and with gates detector_tpsf.txt (per launched packet); says on stderr when
// the records were truncated by maxRecords.
void writeDetectorOutputs(const OutputFolder& out, const DetectedPackets& dp, const TimeGates* gates);

// summary.json's "detectors": per detector the detected weight per launched packet over all
// detections (kept or not) and its standard error (null without batches), records kept and
// detections found.
std::string detectorsSummaryJson(const DetectedPackets& dp);

// adjoint_fluence.fmm (Storage/FluenceMatrix, docs/FLUENCE_MATRIX.md): rows tetras, one column
// per detector, its adjoint fluence per launched packet (mm^-2), with the runs' model fingerprint
// (adjointFingerprint).
void writeAdjointFluence(const OutputFolder& out, const std::vector<std::vector<double>>& perDetector,
                         const ModelFingerprint& model);

// jacobian.txt: per tetra, its region and d(signal)/d(mu_a) per detector, the signal being
// detected weight per launched packet (mm).
void writeJacobian(const OutputFolder& out, const TetraMesh& mesh, const ReplayResult& rr, uint64_t packets);

}  // namespace fm
