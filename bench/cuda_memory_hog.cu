// SPDX-License-Identifier: GPL-3.0-or-later
// cuda_memory_hog LEAVE_MIB SECONDS: holds all of device 0's free memory but LEAVE_MIB for
// SECONDS, so that bench/gpu_oom_check.sh can show how a run that does not fit is refused.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: cuda_memory_hog LEAVE_MIB SECONDS\n");
        return 1;
    }
    const size_t leave = size_t(std::atof(argv[1]) * 1048576.0);
    const double seconds = std::atof(argv[2]);
    std::vector<void*> held;
    size_t freeB = 0, totalB = 0;
    cudaMemGetInfo(&freeB, &totalB);
    // Take the memory in 256 MiB pieces, then smaller ones, until only `leave` is free.
    for (size_t piece = size_t(256) << 20; piece >= (size_t(1) << 20); piece /= 2) {
        for (;;) {
            cudaMemGetInfo(&freeB, &totalB);
            if (freeB < leave + piece) break;
            void* p = nullptr;
            if (cudaMalloc(&p, piece) != cudaSuccess) {
                cudaGetLastError();
                break;
            }
            held.push_back(p);
        }
    }
    cudaMemGetInfo(&freeB, &totalB);
    std::printf("holding %zu pieces; %.0f MiB free of %.0f MiB\n", held.size(), freeB / 1048576.0,
                totalB / 1048576.0);
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    for (void* p : held) cudaFree(p);
    return 0;
}
