// SPDX-License-Identifier: GPL-3.0-or-later
// Per-photon exit records of the layered model (MCML mode, fullmonte-mcml --records): every
// photon leaving through the top surface (diffuse reflectance, Rd) or the bottom one
// (transmittance, Tt) gives one detected-packet record (Kernels/DetectedPackets.hpp: exit
// weight, position, direction, time of flight on the packet clock, scatter count, path length
// per layer), so the mesh detectors' reweighting, TPSF and .fmd/.mch files apply unchanged.
// The layers are the records' regions 1..L; detector 0 is the top surface, 1 the bottom. Both
// kernels record them, keeping the lowest photon indices, as the mesh detectors do: the CPU in
// its scalar slab loop with the detector tally (Kernels/CPU/McmlCpu.cpp, DetectorTally.hpp), the
// GPU in its slab kernel with the mesh's device detector tally (Kernels/CUDA/McmlCuda.cu,
// DetectRecords.cuh).
#pragma once
#include "Kernels/DetectedPackets.hpp"
#include "Kernels/KernelInput.hpp"

namespace fm {

// The record detectors of a packed layered model (packLayered): detector 0 on the top surface,
// 1 on the bottom; with radius > 0 (mm) each is the disk of that radius about the beam axis
// (x = y = 0), else the whole surface. Throws ParameterError for a model without slab cells,
// a radius that is not finite and >= 0, or maxRecords = 0.
DetectionSpec layeredDetection(const KernelInput& in, uint64_t maxRecords, double radius = 0);

// The records' description of a run of `in` (regions: the layers, with the optical properties
// the kernel ran; model "layered"); no records yet.
DetectedPackets describeLayeredRun(const KernelInput& in, const RunOptions& opt, const DetectionSpec& spec);

// Appends the records of `more`, a run of packets after those of `into` (a later batch), keeping
// at most `keep` records: the lowest packet indices. Counts (detected, packets, detected weight)
// add up. `into` without regions (never described) becomes `more`.
void appendRecords(DetectedPackets& into, const DetectedPackets& more, uint64_t keep);

}  // namespace fm
