// SPDX-License-Identifier: GPL-3.0-or-later
// The cost of the standard errors (batch means, Kernels/BatchMeans.hpp): the same run with
// batches = 1 (off) and with B batches, alternated `reps` times, timing each (CPU: the
// process's CPU time, robust on a shared machine; GPU: the packet kernels' time), then the
// normalised L1 distance of the volume tallies between the two (same seed: ~0 or exactly 0).
// Usage: batch_means_bench MESH OPT SOURCE PACKETS cpu|cuda [B=10] [reps=3] [threads=1]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <exception>
#include <string>
#include <vector>

#include "Geometry/ModelPacker.hpp"
#include "Kernels/Dispatch.hpp"
#include "Storage/TIMOS/TIMOS.hpp"

using namespace fm;

namespace {
double cpuSeconds() { return double(std::clock()) / CLOCKS_PER_SEC; }

double l1(const std::vector<double>& a, const std::vector<double>& b) {
    double n = 0, d = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        n += std::fabs(a[i]);
        d += std::fabs(a[i] - b[i]);
    }
    return n > 0 ? d / n : 0;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}
}  // namespace

int main(int argc, char** argv) try {
    if (argc < 6) {
        std::fprintf(stderr, "usage: %s MESH OPT SOURCE PACKETS cpu|cuda [B=10] [reps=3] [threads=1]\n", argv[0]);
        return 1;
    }
    const TetraMesh mesh = readTIMOSMesh(argv[1]);
    const MaterialSet mats = readTIMOSMaterials(argv[2]);
    const KernelInput in = packModel(mesh, mats, *readTIMOSSource(argv[3]).source);
    const std::string kernel = argv[5];
    const uint64_t B = argc > 6 ? std::stoull(argv[6]) : 10;
    const int reps = argc > 7 ? std::stoi(argv[7]) : 3;
    RunOptions o;
    o.packets = std::stoull(argv[4]);
    o.threads = argc > 8 ? unsigned(std::stoul(argv[8])) : 1;
    std::vector<double> t[2];
    RunResult last[2];
    for (int r = 0; r < reps; ++r)
        for (int k = 0; k < 2; ++k) {
            o.batches = k == 0 ? 1 : B;
            const double c0 = cpuSeconds();
            last[k] = runKernel(kernel, in, o);
            t[k].push_back(kernel == "cuda" ? last[k].kernelSeconds : cpuSeconds() - c0);
        }
    const char* what = kernel == "cuda" ? "kernel seconds" : "CPU seconds";
    std::printf("%s, %llu packets, %s (median of %d): B=1 %.4f  B=%llu %.4f  overhead %+.2f%%\n", kernel.c_str(),
                (unsigned long long)o.packets, what, reps, median(t[0]), (unsigned long long)B, median(t[1]),
                100 * (median(t[1]) / median(t[0]) - 1));
    for (int k = 0; k < 2; ++k) {
        std::printf("  B=%-4llu", (unsigned long long)(k == 0 ? 1 : B));
        for (double x : t[k]) std::printf(" %.4f", x);
        std::printf("\n");
    }
    std::printf("L1 volume tally B=1 vs B=%llu: %.3g; batches used %llu\n", (unsigned long long)B,
                l1(last[0].volume, last[1].volume), (unsigned long long)last[1].standardError.batches);
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "batch_means_bench: %s\n", e.what());
    return 1;
}
