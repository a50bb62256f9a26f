// SPDX-License-Identifier: GPL-3.0-or-later
// Surface detectors and the packets they detect (MMC/MCX-style detected-photon records): what a
// run detects, the records' reweighting to other absorption coefficients, the detector TPSF, and
// the replay of detected packets that scores the mu_a Jacobian per tetra.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "Kernels/DetectedPackets.hpp"
#include "Kernels/KernelInput.hpp"
#include "Kernels/TimeGates.hpp"

namespace fm {

// Detected weight per time gate of detector d (the detector TPSF; gates as the time-gated
// tallies', Kernels/TimeGates.hpp), launched packet weight per gate; a record outside the gates
// is not counted.
std::vector<double> detectorTpsf(const DetectedPackets& dp, uint32_t d, const TimeGates& gates);

// Record weights for other absorption coefficients muaNew[material 1..regions at 0..regions-1],
// mu_s, g and n held: w' = w exp(-sum_r (mu_a'_r - mu_a_r) L_r). Throws ParameterError for a
// wrong count or a negative / non-finite coefficient.
std::vector<double> reweightedWeights(const DetectedPackets& dp, const std::vector<double>& muaNew);

// Detected weight per detector (launched packet weight), of the records' own weights or of
// `weights` (one per record, e.g. reweightedWeights).
std::vector<double> detectedSignal(const DetectedPackets& dp, const std::vector<double>* weights = nullptr);

// Per detector d and material r, d(signal_d)/d(mu_a,r) = -sum over d's records of w L_r
// (launched packet weight x mm): [d * regions + r - 1].
std::vector<double> regionJacobian(const DetectedPackets& dp);

// A CPU run that also detects packets: the standard tallies of opt.outputs, plus the records
// in RunResult::detected, kept for the lowest packet indices when more than spec.maxRecords are
// detected. Runs the lane loop (same histories as the scalar loop that replays use) and, with
// opt.batches > 1, sets the tallies' standard errors and the detected weight's
// (DetectedPackets::detectedWeight, detectedWeightError).
RunResult runCpuDetecting(const KernelInput& in, const RunOptions& opt, const DetectionSpec& spec);

// The mu_a Jacobian from a replay of detected packets: J[d][tetra] = -sum over detector d's
// detected packets of w (path length in the tetra), launched packet weight x mm; tetra 0 unused.
struct ReplayResult {
    std::vector<std::vector<double>> jacobian;  // [detector][tetra]
    uint64_t replayed = 0;                      // packets replayed
    uint64_t mismatched = 0;                    // replayed packets not detected as recorded
    bool cancelled = false;                     // stopped by RunOptions::cancel before the end
};

// Replays the packets of `dp`'s records (same model, params and seed as the run that detected
// them, on the CPU, where a packet's history depends on its index and seed only) and scores
// the Jacobian of each detector. Throws ParameterError when the records' detectors, regions or
// optical properties do not match the spec or model.
ReplayResult replayJacobian(const KernelInput& in, const RunOptions& opt, const DetectionSpec& spec,
                            const DetectedPackets& dp);

// The cells' layout a GPU replay of dp's records reads (Kernels/Core/CellLayout.hpp): the one
// they were made in (DetectedPackets::cells; "record" also replays in the split layout, whose
// planes are the records' bit for bit). `asked` is TuningKnobs::cudaCellLayout
// (FM_CUDA_CELL_LAYOUT): Auto follows the records; another layout throws ParameterError naming
// dp's file and both layouts.
CellLayout replayCellLayout(const DetectedPackets& dp, CellLayout asked);
// The DetectedPackets::cells of records a GPU run made in layout `used` (not Auto).
std::string recordedCells(CellLayout used);

// Shared by the CPU and GPU detecting runs (Kernels/CUDA/DetectCuda.cu):
// throws ParameterError when spec does not fit the model (too many detectors, another mesh);
void checkDetectionSpec(const KernelInput& in, const DetectionSpec& spec);
// the records' description of a run (regions, optical properties, detectors, packets, seed);
DetectedPackets describeDetectingRun(const KernelInput& in, const RunOptions& opt, const DetectionSpec& spec);
// the checks of replayJacobian (records of this model, materials and detectors);
void checkReplayInput(const KernelInput& in, const RunOptions& opt, const DetectionSpec& spec,
                      const DetectedPackets& dp);
// the packets a replay runs: each recorded packet once, in index order, with the detectors
// (bits) that recorded it and its recorded exit weight.
struct ReplayPackets {
    std::vector<uint64_t> index;
    std::vector<uint64_t> detectors;
    std::vector<float> weight;
};
ReplayPackets replayPackets(const DetectedPackets& dp);

}  // namespace fm
