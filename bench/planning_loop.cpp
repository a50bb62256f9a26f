// SPDX-License-Identifier: GPL-3.0-or-later
// A planning loop through the C++ batch API (Kernels/Batch.hpp): RUNS point sources spread over
// the middle of a TIM-OS mesh, PACKETS each, against one long run's kernel-only throughput on
// the same devices. Prints one "key value" line per figure and checks the batch's first run
// against the CPU kernel (absorbed fraction within 4 sigma) and against the same run made alone
// on the GPU (normalised L1: the same packets, so rounding only). Exit status 1 when a check
// fails. Used by bench/planning_loop.sh.
// Usage: planning_loop MESH OPT RUNS PACKETS LONG_PACKETS DEVICES [CPU_PACKETS]
//        (DEVICES: "0", "0,1", "all"; the batch also runs on the first device alone when several).
//        KERNEL=cpu in the environment runs everything on the CPU (a smoke test without a GPU).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>

#include "Geometry/BatchModel.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/Batch.hpp"
#include "Kernels/Dispatch.hpp"
#include "Storage/TIMOS/TIMOS.hpp"
#include "fm_config.h"
#if FM_HAVE_CUDA
#include "Kernels/CUDA/CudaKernel.hpp"
#endif

using namespace fm;

namespace {
double since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<int> parseDevices(const std::string& s) {
    if (s == "all") return {-1};
    std::vector<int> d;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) d.push_back(std::atoi(item.c_str()));
    return d;
}

// n point sources on a grid over the middle half of the mesh's bounding box.
std::vector<SourcePtr> gridSources(const TetraMesh& mesh, size_t n) {
    Point3 lo{1e300, 1e300, 1e300}, hi{-1e300, -1e300, -1e300};
    const auto& pts = mesh.points();
    for (size_t i = pts.size() > 1 ? 1 : 0; i < pts.size(); ++i)
        for (int k = 0; k < 3; ++k) {
            lo[k] = std::min(lo[k], pts[i][k]);
            hi[k] = std::max(hi[k], pts[i][k]);
        }
    const size_t side = size_t(std::ceil(std::cbrt(double(n))));
    std::vector<SourcePtr> out;
    for (size_t i = 0; i < n; ++i) {
        const size_t idx[3] = {i % side, (i / side) % side, i / (side * side)};
        auto p = std::make_shared<PointSource>();
        for (int k = 0; k < 3; ++k) {
            const double f = side > 1 ? double(idx[k]) / double(side - 1) : 0.5;
            p->position[k] = lo[k] + (hi[k] - lo[k]) * (0.25 + 0.5 * f);
        }
        out.push_back(p);
    }
    return out;
}

double l1(const std::vector<double>& a, const std::vector<double>& b) {
    double d = 0, s = 0;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
        d += std::fabs(a[i] - b[i]);
        s += std::fabs(a[i]);
    }
    return s > 0 ? d / s : 0;
}

struct BatchTiming {
    double seconds = 0, kernelSeconds = 0, idleSeconds = 0;
    RunResult first;
    std::string kernel;
};

std::string kernelName() {
    const char* k = std::getenv("KERNEL");
    return k && std::string(k) == "cpu" ? "cpu" : "cuda";
}

BatchTiming timeBatch(const BatchModel& bm, const std::vector<int>& devices, unsigned slotsPerDevice = 1) {
    BatchOptions o;
    o.slotsPerDevice = slotsPerDevice;
    o.kernel = kernelName();
    if (o.kernel == "cuda") o.devices = devices;
    o.outputs.surface = false;  // as fullmonte-run's batch: the matrix needs the volume only
    BatchTiming t;
    auto t0 = std::chrono::steady_clock::now();
    BatchSummary s = runBatch(bm.mesh, bm.runs, o, [&](size_t i, RunResult&& r) {
        t.kernelSeconds += r.kernelSeconds;
        if (i == 0) t.first = std::move(r);
    });
    t.seconds = since(t0);
    t.idleSeconds = s.idleSeconds;
    t.kernel = s.kernel + (s.splitRuns ? " (runs split)" : "") + (s.slotsPerDevice > 1 ? " (2 runs per device)" : "");
    return t;
}
}  // namespace

int main(int argc, char** argv) try {
    if (argc < 7) {
        std::fprintf(stderr, "usage: planning_loop MESH OPT RUNS PACKETS LONG_PACKETS DEVICES [CPU_PACKETS]\n");
        return 2;
    }
    const size_t runs = size_t(std::atof(argv[3]));
    const uint64_t packets = uint64_t(std::atof(argv[4])), longPackets = uint64_t(std::atof(argv[5]));
    const std::vector<int> devices = parseDevices(argv[6]);
    const uint64_t cpuPackets = argc > 7 ? uint64_t(std::atof(argv[7])) : 100000;
    TetraMesh mesh = readTIMOSMesh(argv[1]);
    MaterialSet mats = readTIMOSMaterials(argv[2]);
    std::vector<SourcePtr> sources = gridSources(mesh, runs);
    BatchModel bm = packBatch(mesh, {mats}, sources, {packets}, 1);
    std::printf("mesh_tetras %zu\nruns %zu\npackets_per_run %llu\n", mesh.tetraCount(), runs,
                (unsigned long long)packets);
    bool ok = true;

    // Kernel-only throughput: one long run of the first source (after a short one that creates
    // the contexts and leaves the mesh on the devices).
    KernelInput one = packModel(mesh, mats, *sources[0]);
    const bool gpu = kernelName() == "cuda";
    RunOptions ro;
    if (gpu) ro.devices = devices;
    ro.outputs.surface = false;
    ro.packets = 100000;
    runKernel(kernelName(), one, ro);
    ro.packets = longPackets;
    const RunResult lr = runKernel(kernelName(), one, ro);
    const double kernelRate = double(longPackets) / (gpu ? lr.kernelSeconds : lr.seconds);
    std::printf("long_run_packets %llu\nlong_run_seconds %.4f\nlong_run_kernel_seconds %.4f\nkernel_only_packets_per_s %.4g\n",
                (unsigned long long)longPackets, lr.seconds, lr.kernelSeconds, kernelRate);

    // The batch on the devices given.
#if FM_HAVE_CUDA
    const CudaModelCacheStats before = cudaModelCacheStats();
#endif
    const BatchTiming b = timeBatch(bm, devices);
    const double rate = double(runs) * double(packets) / b.seconds;
    std::printf("batch_kernel %s\nbatch_seconds %.4f\nbatch_packets_per_s %.4g\nbatch_fraction_of_kernel_only %.4f\n"
                "batch_overhead_per_run_ms %.3f\nbatch_slot_idle_per_run_ms %.3f\nbatch_kernel_seconds_sum %.4f\n",
                b.kernel.c_str(), b.seconds, rate, rate / kernelRate,
                1e3 * (b.seconds - double(runs) * double(packets) / kernelRate) / double(runs),
                1e3 * b.idleSeconds / double(runs), b.kernelSeconds);
#if FM_HAVE_CUDA
    const CudaModelCacheStats after = cudaModelCacheStats();
    std::printf("batch_mesh_uploads %zu\n", after.uploads - before.uploads);
#endif

    // The batch's first run: the same run made alone (same packets: L1 is rounding), and the
    // CPU kernel's absorbed fraction (other random streams: within 4 sigma).
    RunOptions so;
    if (gpu) so.devices = devices;
    so.outputs.surface = false;
    so.packets = packets;
    so.params.seed = bm.runs[0].seed;
    const RunResult alone = runKernel(kernelName(), one, so);
    const double d = l1(alone.volume, b.first.volume);
    std::printf("check_l1_batch_run0_vs_single_gpu_run %.3g\n", d);
    if (!(d < 1e-6)) ok = false;
    RunOptions co;
    co.packets = cpuPackets;
    co.params.seed = 12345;
    co.outputs.surface = false;
    const RunResult cpu = runKernel("cpu", one, co);
    const double ag = b.first.ledger.absorbed / b.first.ledger.launched, ac = cpu.ledger.absorbed / cpu.ledger.launched;
    const double sigma = std::sqrt(0.25 / double(packets) + 0.25 / double(cpuPackets));
    std::printf("check_absorbed_gpu %.6f\ncheck_absorbed_cpu %.6f\ncheck_absorbed_z %.2f\n", ag, ac, (ag - ac) / sigma);
    if (!(std::fabs(ag - ac) < 4 * sigma)) ok = false;

    // Two runs in flight per device (BatchOptions::slotsPerDevice): the next run's packets fill
    // the last ones' tail and the gap while tallies come back.
    if (gpu) {
        const BatchTiming b2 = timeBatch(bm, devices, 2);
        const double rate2 = double(runs) * double(packets) / b2.seconds;
        std::printf("batch2_kernel %s\nbatch2_seconds %.4f\nbatch2_fraction_of_kernel_only %.4f\n"
                    "batch2_overhead_per_run_ms %.3f\n",
                    b2.kernel.c_str(), b2.seconds, rate2 / kernelRate,
                    1e3 * (b2.seconds - double(runs) * double(packets) / kernelRate) / double(runs));
        const double d2 = l1(alone.volume, b2.first.volume);
        std::printf("check_l1_batch2_run0_vs_single_gpu_run %.3g\n", d2);
        if (!(d2 < 1e-6)) ok = false;
    }

    // Several devices: the same batch on the first device alone.
    const bool several = gpu && (devices.size() > 1 || (devices.size() == 1 && devices[0] < 0));
    if (several) {
        const BatchTiming b1 = timeBatch(bm, {devices[0] < 0 ? 0 : devices[0]});
        std::printf("one_device_batch_seconds %.4f\nmany_over_one_device_time %.3f\n", b1.seconds, b.seconds / b1.seconds);
        const double dd = l1(b1.first.volume, b.first.volume);
        std::printf("check_l1_run0_one_vs_many_devices %.3g\n", dd);
        if (!(dd < 1e-6)) ok = false;
    }
    std::printf("checks %s\n", ok ? "pass" : "FAIL");
    return ok ? 0 : 1;
} catch (const std::exception& e) {
    std::fprintf(stderr, "planning_loop: %s\n", e.what());
    return 2;
}
