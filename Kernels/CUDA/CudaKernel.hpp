// SPDX-License-Identifier: GPL-3.0-or-later
// The CUDA kernel: the Kernels/Core packet loop on the GPU, filling the same RunResult as the
// CPU kernel. Host-only header (no CUDA types), so callers compile with a plain C++ compiler.
#pragma once
#include <string>
#include <vector>

#include <memory>
#include <vector>

#include "Kernels/Batch.hpp"
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

// Each device keeps the last mesh a run uploaded to it (with its tally buffers), and a later run
// or batch on the same packed mesh and tallies reuses it (Kernels/DeviceModelCache.hpp): a Tcl
// loop, new kernel objects or BatchRunners on one mesh upload it once per device.
struct CudaModelCacheStats {
    size_t uploads = 0;  // models built (mesh uploads) since the process started
    size_t reuses = 0;   // runs that found their mesh already on the device
};
CudaModelCacheStats cudaModelCacheStats();
// Frees the meshes kept on the devices (the next run uploads again).
void cudaReleaseCachedModels();

constexpr unsigned kMaxCudaMaterials = 256;

// Device ids for a request (empty: {0}; {-1}: every device); throws naming a missing device.
std::vector<int> cudaResolveDevices(const std::vector<int>& requested);

// The cells' layout a run of `cells` cells uses on `device` (Kernels/Core/CellLayout.hpp): as
// `wanted`, or for Auto chosen from the device's L2 (the records where it cannot be asked).
CellLayout cudaCellLayoutFor(CellLayout wanted, size_t cells, int device);
// The L2 size of `device` in bytes (asked once per device); false where the device cannot be
// asked.
bool deviceL2Bytes(int device, double& l2Bytes);

// The mesh of a batch uploaded once to one device (Kernels/Batch.hpp); each run uploads only its
// materials and emitters. Use from one thread at a time. run() gives what runCuda gives for the
// same input on that one device. layout: the cells' layout asked for (TuningKnobs::cudaCellLayout;
// Auto chooses as runCuda does, so a batch's runs follow the histories of the same runs alone).
class CudaModelOnDevice {
public:
    CudaModelOnDevice(int device, const KernelInput& mesh, const OutputSelection& outputs,
                      CellLayout layout = CellLayout{});
    ~CudaModelOnDevice();
    CudaModelOnDevice(const CudaModelOnDevice&) = delete;
    CudaModelOnDevice& operator=(const CudaModelOnDevice&) = delete;
    RunResult run(const RunVariant& v, const RunOptions& opt);
    int device() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace fm
