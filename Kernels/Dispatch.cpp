// SPDX-License-Identifier: GPL-3.0-or-later
#include "Kernels/Dispatch.hpp"

#include <cmath>

#include "Kernels/BatchMeans.hpp"
#include "Common/Errors.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Kernels/Hybrid.hpp"
#include "Kernels/Detection.hpp"
#include "fm_config.h"
#if FM_HAVE_CUDA
#include "Kernels/CUDA/CudaKernel.hpp"
#include "Kernels/CUDA/DetectCuda.hpp"
#endif

namespace fm {

bool cudaAvailable(std::string* why) {
#if FM_HAVE_CUDA
    return cudaDeviceAvailable(why);
#else
    if (why) *why = "this build has no CUDA kernel (configured with FM_USE_CUDA=OFF or no nvcc)";
    return false;
#endif
}

KernelWarmUp::KernelWarmUp(const std::string& kind, const std::vector<int>& devices) {
#if FM_HAVE_CUDA
    if (kind == "cuda" || kind == "hybrid") t_ = std::thread([devices] { warmUpCudaDevices(devices); });
#else
    (void)kind;
    (void)devices;
#endif
}
KernelWarmUp::~KernelWarmUp() { join(); }
void KernelWarmUp::join() {
    if (t_.joinable()) t_.join();
}

void validateRunOptions(const RunOptions& o) {
    const KernelParams& p = o.params;
    if (o.packets == 0) throw ParameterError("packets must be at least 1");
    if (o.packets > kMaxPackets)
        throw ParameterError("packets = " + std::to_string(o.packets) + " is more than one run launches (at most " +
                             std::to_string(kMaxPackets) + " = 2^53-1); split the run");
    if (!(p.wmin >= 0 && p.wmin < 1) || !std::isfinite(p.wmin))
        throw ParameterError("wmin must be in [0, 1), got " + std::to_string(p.wmin));
    if (!(p.prwin > 0 && p.prwin <= 1))
        throw ParameterError("prwin must be in (0, 1], got " + std::to_string(p.prwin));
    if (p.maxSteps == 0 || p.maxHits == 0) throw ParameterError("maxSteps and maxHits must be at least 1");
    if (o.batches) validateBatches(o.batches, o.packets);
    if (o.threads > 4096) throw ParameterError("threads = " + std::to_string(o.threads) + " is unreasonable");
    if (o.outputs.gated() && !o.gates.on())
        throw ParameterError("time-gated outputs need time gates: give the gates' start, stop and step in ns");
}

RunResult runKernel(const std::string& kind, const KernelInput& in, const RunOptions& given) {
    validateRunOptions(given);
    RunOptions opt = given;  // with the gated exit tally's faces, made once for the kernels (and a hybrid run's sides)
    if (opt.outputs.gatedSurface) opt.gates = withExitFaces(in, opt.gates);
    checkGatedRun(in, opt);
    const bool detecting = opt.detection && opt.detection->active();
    // A hybrid run would mix CPU and GPU histories in one record set, which neither kernel
    // could replay (their math functions round differently).
    if (detecting && kind == "hybrid")
        throw ParameterError("detectors: the hybrid kernel does not record detected packets (its records could not be "
                             "replayed); use the cpu or cuda kernel");
    if (detecting && opt.outputs.gated())
        throw ParameterError("detectors: time-gated tallies and detectors in one run are not supported; the detector TPSF "
                             "(--tpsf) gives the detected packets' times");
    if (kind == "cpu") return detecting ? runCpuDetecting(in, opt, *opt.detection) : runCpu(in, opt);
    if (kind == "cuda") {
#if FM_HAVE_CUDA
        return detecting ? runCudaDetecting(in, opt, *opt.detection) : runCuda(in, opt);
#else
        std::string why;
        cudaAvailable(&why);
        throw ParameterError("kernel cuda: " + why);
#endif
    }
    if (kind == "hybrid") return runHybrid(in, opt);
    throw ParameterError("unknown kernel '" + kind + "' (use cpu, cuda or hybrid)");
}

ReplayResult replayKernel(const std::string& kind, const KernelInput& in, const RunOptions& opt,
                          const DetectionSpec& spec, const DetectedPackets& dp) {
    if (kind != dp.kernel)
        throw ParameterError("replay: the records were detected by the " + dp.kernel + " kernel, not " + kind +
                             "; replay them with the " + dp.kernel +
                             " kernel (CPU and GPU histories of one packet differ in rounding" +
                             (dp.cells == "compact" ? "; the GPU's compact cell planes differ from the CPU's too" : "") + ")");
    if (kind == "cpu") return replayJacobian(in, opt, spec, dp);
    if (kind == "cuda") replayCellLayout(dp, opt.tuning.cudaCellLayout);  // another layout forced: refused first
#if FM_HAVE_CUDA
    if (kind == "cuda") return replayJacobianCuda(in, opt, spec, dp);
#endif
    std::string why;
    cudaAvailable(&why);
    throw ParameterError("replay: kernel " + kind + ": " + why);
}

}  // namespace fm
