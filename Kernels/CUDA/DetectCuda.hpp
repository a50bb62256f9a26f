// SPDX-License-Identifier: GPL-3.0-or-later
// Detectors on the GPU mesh kernel: the detecting run and the Jacobian replay of
// Kernels/Detection.hpp on one CUDA device. Host-only header (no CUDA types).
#pragma once
#include "Kernels/Detection.hpp"

namespace fm {

// Materials (the exterior included) whose paths a GPU thread keeps in a local array; models with
// more keep them in a per-thread scratch slice in global memory (DetectCuda.cu).
constexpr uint32_t kGpuDetectMaterials = 32;

// runCpuDetecting on one GPU (opt.devices: empty or one device): the standard tallies of
// opt.outputs and the records (DetectedPackets::kernel "cuda", cells the layout read). When more than spec.maxRecords
// are detected, the records kept are the spec.maxRecords lowest (index, detector) detections,
// as on the CPU: those of the packets below the lowest index whose record did not fit, then
// those of packets run again from that index on (DetectedPackets::refilledPackets counts them).
// No batch standard errors. Throws ParameterError for more than one device.
RunResult runCudaDetecting(const KernelInput& in, const RunOptions& opt, const DetectionSpec& spec);

// replayJacobian on one GPU, for records a GPU detecting run made (streams keyed by (seed,
// packet index) as the GPU kernel keys them), reading the cells in the layout the records name
// (replayCellLayout). Throws ParameterError for records of another kernel or another layout
// forced by opt.tuning.
ReplayResult replayJacobianCuda(const KernelInput& in, const RunOptions& opt, const DetectionSpec& spec,
                                const DetectedPackets& dp);

}  // namespace fm
