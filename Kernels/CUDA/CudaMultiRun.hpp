// SPDX-License-Identifier: GPL-3.0-or-later
// Groups of a batch's runs in one GPU launch (Kernels/MultiRun.hpp): the mesh is uploaded once
// per device, each group uploads its runs' sources, and the persistent threads take packets
// across the runs, so that one run's last packets no longer leave the GPU idle. Host-only
// header (no CUDA types).
#pragma once
#include <memory>
#include <vector>

#include "Kernels/Batch.hpp"
#include "Kernels/KernelInput.hpp"

namespace fm {

// Whether groups can run this mesh with these tallies: not for the few-cell models whose
// tallies the mesh kernel keeps in per-thread rows (those go one run per launch).
bool cudaMultiRunSupports(const KernelInput& mesh, const OutputSelection& outputs);

// One device holding a mesh and the tallies of up to maxRuns runs. Use from one thread at a
// time; several on one device (a batch's two slots) each have their own copy.
class CudaRunGroupOnDevice {
public:
    // layout: the cells' layout asked for, as CudaModelOnDevice's.
    CudaRunGroupOnDevice(int device, const KernelInput& mesh, const OutputSelection& outputs, size_t maxRuns,
                         CellLayout layout = CellLayout{});
    ~CudaRunGroupOnDevice();
    CudaRunGroupOnDevice(const CudaRunGroupOnDevice&) = delete;
    CudaRunGroupOnDevice& operator=(const CudaRunGroupOnDevice&) = delete;
    // Runs per group that fit its tally budget (at most the maxRuns asked for, at least 1).
    size_t maxRuns() const;
    // Runs variant v[i] with options opt[i] (packets, seed, first packet), all in one launch;
    // every v[i] must have the materials of v[0], and the options the same params (but the
    // seed), outputs and tuning. Result i equals runCuda of that run alone on this device but
    // for the order of the sums (the same packet histories: equal event counts). A cancel seen
    // before the launch returns every run cancelled with no packets; a launch always completes.
    std::vector<RunResult> run(const std::vector<const RunVariant*>& v, const std::vector<RunOptions>& opt);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace fm
