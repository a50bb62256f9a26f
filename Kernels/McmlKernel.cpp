// SPDX-License-Identifier: GPL-3.0-or-later
#include "Kernels/McmlKernel.hpp"

#include <algorithm>
#include <string>

#include "Common/Errors.hpp"
#include "Kernels/CPU/McmlCpu.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Kernels/CUDA/DetectCuda.hpp"
#include "Kernels/Detection.hpp"
#include "Kernels/Dispatch.hpp"
#include "Common/ResourceLimits.hpp"

namespace fm {

uint32_t slabLayers(const KernelInput& in) {
    const size_t L = in.slabs.size() < 2 ? 0 : in.slabs.size() - 1;
    if (L == 0 || in.materials.size() != L + 2)
        throw ParameterError("MCML kernel: the model is not a packed layered model (no slab cells)");
    return uint32_t(L);
}

double mcmlMemoryBytes(const McmlGrid& g, unsigned threads) {
    const double perCopy = 8.0 * (double(g.nr) * g.nz + 2.0 * double(g.nr) * g.na + g.nz + 2.0 * (g.nr + g.na));
    return perCopy * std::max(threads, 2u);
}

McmlTallies runMcmlKernel(const std::string& kernel, const KernelInput& in, const McmlGrid& grid,
                          const RunOptions& opt) {
    validateRunOptions(opt);
    const unsigned workers = kernel == "cpu" ? resolveThreads(opt.threads) : 1;
    requireMemory(mcmlMemoryBytes(grid, workers),
                  "MCML grid nz=" + std::to_string(grid.nz) + " nr=" + std::to_string(grid.nr) +
                      " na=" + std::to_string(grid.na) + " with " + std::to_string(workers) + " thread(s)",
                  "use fewer bins (nr, nz, na) or fewer threads");
    slabLayers(in);
    if (opt.gates.on())  // Rd(r, t), Tt(r, t), A(z, t): per worker, bins x (2 nr + nz) doubles
        checkGatedSize(opt.gates, (2 * uint64_t(grid.nr) + grid.nz) * std::max(workers, 2u),
                       "MCML's Rd(r,t), Tt(r,t) and A(z,t) over nr=" + std::to_string(grid.nr) + " and nz=" +
                           std::to_string(grid.nz) + " bins with " + std::to_string(workers) + " thread(s)",
                       "use fewer gates, fewer bins (nr, nz) or fewer threads");
    if (opt.detection && opt.detection->active()) {
        checkDetectionSpec(in, *opt.detection);
        // The GPU keeps a photon's path per layer in a per-thread array (CUDA/McmlCuda.cu).
        if (kernel == "cuda" && in.materials.size() > kGpuDetectMaterials)
            throw ParameterError("MCML per-photon records on the GPU: at most " +
                                 std::to_string(kGpuDetectMaterials - 2) + " layers, the model has " +
                                 std::to_string(in.materials.size() - 2) + " (use --kernel cpu)");
    }
    if (kernel == "cpu") return runMcmlCpu(in, grid, opt);
    if (kernel == "cuda") {
#if FM_HAVE_CUDA && defined(FM_HAVE_CUDA_MCML)
        return runMcmlCuda(in, grid, opt);
#else
        throw ParameterError("CUDA MCML kernel not available in this build");
#endif
    }
    throw ParameterError("unknown kernel '" + kernel + "' (use cpu or cuda)");
}

}  // namespace fm
