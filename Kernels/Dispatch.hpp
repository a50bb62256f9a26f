// Choose a kernel by name ("cpu" or "cuda") at run time.
#pragma once
#include <string>

#include "Kernels/KernelInput.hpp"

namespace fm {

bool cudaAvailable(std::string* why = nullptr);  // built with CUDA and a device present
RunResult runKernel(const std::string& kind, const KernelInput& in, const RunOptions& opt);
void validateRunOptions(const RunOptions& opt);  // throws ParameterError naming the parameter

}  // namespace fm
