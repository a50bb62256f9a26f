// SPDX-License-Identifier: GPL-3.0-or-later
// Where a CUDA process's fixed start-up time goes: prints the seconds from the process's exec
// (T0, CLOCK_REALTIME seconds set by the caller: T0=$(date +%s.%N)) to main, then the time of
// each step of bringing up a device. The caller times the whole process, so exit (context
// teardown) is the rest.  Built with the CUDA kernel (BUILD_DIR/bin/cuda_startup), or by hand:
// nvcc -O2 -arch=sm_90 bench/cuda_startup.cu -lcuda
// Usage: T0=$(date +%s.%N) ./a.out [alloc_MB]
// STACK=n sets the per-thread stack (cudaLimitStackSize) before the launch.
// EXIT=reset times cudaDeviceReset() as a step before the exit; EXIT=fast leaves by _Exit
// (no atexit teardown by the runtime: what is left is the kernel driver's, at the close of the
// device files).
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

static double wall() {
    timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

__global__ void empty() {}

int main(int argc, char** argv) {
    const double t0 = getenv("T0") ? atof(getenv("T0")) : wall();
    const size_t mb = argc > 1 ? size_t(atol(argv[1])) : 256;
    double last = wall();
    std::printf("exec->main %.4f", last - t0);
    auto step = [&](const char* what) {
        const double t = wall();
        std::printf("  %s %.4f", what, t - last);
        last = t;
    };
    if (cuInit(0) != CUDA_SUCCESS) { std::printf("\ncuInit failed\n"); return 1; }
    step("cuInit");
    CUdevice dev;
    cuDeviceGet(&dev, 0);
    CUcontext ctx;
    if (cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS) { std::printf("\nctx failed\n"); return 1; }
    step("ctx");
    cuCtxSetCurrent(ctx);
    cudaFree(nullptr);
    step("runtime");
    if (getenv("STACK")) {  // per-thread stack bytes (the runtime's default is 1024)
        cudaDeviceSetLimit(cudaLimitStackSize, size_t(atol(getenv("STACK"))));
        step("stack");
    }
    void* p = nullptr;
    if (mb) cudaMalloc(&p, mb << 20);
    step("malloc");
    empty<<<1, 1>>>();
    cudaDeviceSynchronize();
    step("launch");
    if (p) cudaFree(p);
    step("free");
    const char* mode = getenv("EXIT");
    if (mode && std::string(mode) == "reset") {
        cudaDeviceReset();
        cuDevicePrimaryCtxRelease(dev);
        step("reset");
    }
    std::printf("  main total %.4f\n", wall() - t0);
    std::fflush(stdout);
    if (mode && std::string(mode) == "fast") std::_Exit(0);
    return 0;
}
