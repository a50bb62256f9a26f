// SPDX-License-Identifier: GPL-3.0-or-later
// Where a mesh upload's time goes: for MB megabytes (a 1M-tetra mesh in the compact layout is
// about 200 MB), on each visible device, the device allocation, a copy from ordinary (pageable)
// host memory, a copy from page-locked memory (cudaMallocHost, filled by memcpy first) and the
// locking of the ordinary memory in place (cudaHostRegister) with its copy. Once on one device,
// then on every visible device at the same time (one thread each), as a multi-GPU run uploads.
// Contexts are created before any timing. Prints seconds and GB/s per step.
// Usage: BUILD_DIR/bin/cuda_upload [MB] [ROUNDS]    (defaults 200 and 2)
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

bool ok(cudaError_t e, const char* what) {
    if (e == cudaSuccess) return true;
    std::printf("%s: %s\n", what, cudaGetErrorString(e));
    return false;
}

struct Steps {
    double malloc = 0, pageable = 0, fillPinned = 0, pinned = 0, registerHost = 0, registered = 0;
};

// The steps on `device`, from the host buffer `host` (bytes, already touched).
bool steps(int device, std::vector<char>& host, Steps& s) {
    const size_t bytes = host.size();
    if (!ok(cudaSetDevice(device), "set device")) return false;
    void* d = nullptr;
    auto t = Clock::now();
    if (!ok(cudaMalloc(&d, bytes), "malloc")) return false;
    s.malloc = since(t);
    t = Clock::now();
    ok(cudaMemcpy(d, host.data(), bytes, cudaMemcpyHostToDevice), "pageable copy");
    s.pageable = since(t);
    void* p = nullptr;
    if (ok(cudaMallocHost(&p, bytes), "malloc host")) {
        t = Clock::now();
        std::memcpy(p, host.data(), bytes);
        s.fillPinned = since(t);
        t = Clock::now();
        ok(cudaMemcpy(d, p, bytes, cudaMemcpyHostToDevice), "pinned copy");
        s.pinned = since(t);
        cudaFreeHost(p);
    }
    t = Clock::now();
    if (ok(cudaHostRegister(host.data(), bytes, cudaHostRegisterDefault), "host register")) {
        s.registerHost = since(t);
        t = Clock::now();
        ok(cudaMemcpy(d, host.data(), bytes, cudaMemcpyHostToDevice), "registered copy");
        s.registered = since(t);
        cudaHostUnregister(host.data());
    }
    cudaFree(d);
    return true;
}

void print(const char* what, int device, size_t bytes, const Steps& s) {
    const double gb = double(bytes) / 1e9;
    std::printf("%s device %d: malloc %.4f  pageable %.4f (%.1f GB/s)  fill pinned %.4f  pinned %.4f (%.1f GB/s)"
                "  register %.4f  registered %.4f (%.1f GB/s)\n",
                what, device, s.malloc, s.pageable, gb / s.pageable, s.fillPinned, s.pinned, gb / s.pinned, s.registerHost,
                s.registered, s.registered > 0 ? gb / s.registered : 0.0);
}

}  // namespace

int main(int argc, char** argv) {
    const size_t mb = argc > 1 ? size_t(std::atol(argv[1])) : 200;
    const int rounds = argc > 2 ? std::atoi(argv[2]) : 2;
    int n = 0;
    if (!ok(cudaGetDeviceCount(&n), "device count") || n == 0) return 1;
    for (int d = 0; d < n; ++d) {  // contexts first, out of the timings
        cudaSetDevice(d);
        cudaFree(nullptr);
    }
    std::vector<std::vector<char>> buffers(static_cast<size_t>(n), std::vector<char>(mb << 20));
    for (auto& h : buffers)
        for (size_t i = 0; i < h.size(); i += 4096) h[i] = char(i >> 12);  // pages touched
    std::printf("cuda_upload: %zu MB, %d devices\n", mb, n);
    for (int r = 0; r < rounds; ++r) {
        Steps one;
        if (steps(0, buffers[0], one)) print("alone ", 0, buffers[0].size(), one);
        if (n < 2) continue;
        std::vector<Steps> each(static_cast<size_t>(n));
        std::vector<std::thread> pool;
        const auto t = Clock::now();
        for (int d = 0; d < n; ++d) pool.emplace_back([&, d] { steps(d, buffers[size_t(d)], each[size_t(d)]); });
        for (auto& th : pool) th.join();
        const double wall = since(t);
        for (int d = 0; d < n; ++d) print("at once", d, buffers[size_t(d)].size(), each[size_t(d)]);
        std::printf("at once: all devices' steps %.4f s\n", wall);
    }
    return 0;
}
