// The CUDA kernel: the Kernels/Core packet loop on the GPU, filling the same RunResult as the
// CPU kernel. Host-only header (no CUDA types), so callers compile with a plain C++ compiler.
#pragma once
#include <string>
#include <vector>

#include "Kernels/KernelInput.hpp"

namespace fm {

// True when a CUDA device can be used; otherwise *why says why (no device, driver mismatch...).
bool cudaDeviceAvailable(std::string* why = nullptr);
// Creates the CUDA context of each device in `devices` (empty: device 0; {-1}: all), so that a
// later run does not wait for it. Errors are ignored here: the run reports them.
void warmUpCudaDevices(const std::vector<int>& devices);
// Throws fm::Error for no device, out of device memory (with the size needed), too many
// materials for constant memory.
RunResult runCuda(const KernelInput& in, const RunOptions& opt);

constexpr unsigned kMaxCudaMaterials = 256;

}  // namespace fm
