// SPDX-License-Identifier: GPL-3.0-or-later
// Choose a kernel by name ("cpu", "cuda" or "hybrid": both at once, Kernels/Hybrid.hpp) at run time.
#pragma once
#include <string>
#include <thread>
#include <vector>

#include "Kernels/Detection.hpp"
#include "Kernels/KernelInput.hpp"

namespace fm {

bool cudaAvailable(std::string* why = nullptr);  // built with CUDA and a device present
// Starts creating the CUDA contexts of opt-style `devices` on a background thread, so that it
// overlaps reading the model (a few tenths of a second); join() before the run. A no-op for
// "cpu" and in builds without CUDA.
class KernelWarmUp {
public:
    KernelWarmUp(const std::string& kind, const std::vector<int>& devices);
    ~KernelWarmUp();
    void join();
private:
    std::thread t_;
};
RunResult runKernel(const std::string& kind, const KernelInput& in, const RunOptions& opt);
void validateRunOptions(const RunOptions& opt);  // throws ParameterError naming the parameter
// The Jacobian replay of dp's packets on kernel kind (cpu or cuda), which must be the kernel
// that detected them (DetectedPackets::kernel); throws ParameterError otherwise.
ReplayResult replayKernel(const std::string& kind, const KernelInput& in, const RunOptions& opt,
                          const DetectionSpec& spec, const DetectedPackets& dp);

}  // namespace fm
