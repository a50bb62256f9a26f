// SPDX-License-Identifier: GPL-3.0-or-later
// The largest mesh one GPU holds, and the memory a tetra costs, measured (issue 29 target 1).
// Builds the synthetic head (bench/SyntheticHead.hpp) at growing tetra counts in memory, runs a
// short GPU run on each and prints per size: host bytes per tetra from the allocator (the mesh,
// the packed records, the process's peak resident memory over the step), GPU bytes per tetra
// from cudaMemGetInfo (what the device keeps for the next run, and the least free memory seen
// during the run), the times, and the absorbed fraction beside each. "auto" measures three
// probe sizes, fits bytes = fixed + per-tetra x tetras for host and GPU, predicts the largest
// mesh that fits (the GPU's free memory or the host's available memory, whichever runs out
// first), runs 0.97 of it, and then 1.06x the GPU's limit where the host can build it: that run
// must fail with the kernel's "out of device memory" error and the process go on. "--oom-check"
// holds all but a little of the GPU's memory, checks that a small run is refused with that
// error, frees it and checks that the same run then passes with the same absorbed fraction.
// Exit 0 when every check passed, 1 otherwise.
//
// Usage: mesh_capacity [auto | N1,N2,...] [--packets P] [--budget SECONDS] [--oom-check]
//                      [--kernel cuda|cpu] [--cpu-check PACKETS] (0: no CPU check)
//   N: tetra counts (1e6 or 1000000); default auto; --budget caps the whole program's time
//   (default 420 s: a size predicted to need longer is not started); --kernel cpu measures
//   the host side only (a smoke test without a GPU).
//        mesh_capacity N --write PREFIX   writes the head of N tetras as PREFIX.{mesh,opt,source}
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "Geometry/ModelPacker.hpp"
#include "Kernels/Dispatch.hpp"
#include "Storage/TIMOS/TIMOS.hpp"
#include "SyntheticHead.hpp"
#include "fm_config.h"
#if FM_HAVE_CUDA
#include <cuda_runtime.h>

#include "Kernels/CUDA/CudaKernel.hpp"
#endif

using namespace fm;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Bytes the allocator has handed out and not taken back (heap and mmapped blocks).
double heapInUse() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 m = mallinfo2();
    return double(m.uordblks) + double(m.hblkhd);
#else
    return 0;
#endif
}

// A field of /proc/self/status or /proc/meminfo, in bytes (0 where absent).
double procKiB(const char* file, const char* field) {
    std::ifstream f(file);
    std::string line;
    const size_t n = std::strlen(field);
    while (std::getline(f, line))
        if (line.compare(0, n, field) == 0 && line.size() > n && line[n] == ':')
            return 1024.0 * std::atof(line.c_str() + n + 1);
    return 0;
}
double peakResident() { return procKiB("/proc/self/status", "VmHWM"); }
double resident() { return procKiB("/proc/self/status", "VmRSS"); }
double hostAvailable() { return procKiB("/proc/meminfo", "MemAvailable"); }
// Starts a new peak: VmHWM is set back to the current resident size.
void resetPeakResident() {
    std::ofstream f("/proc/self/clear_refs");
    f << "5";
}

#if FM_HAVE_CUDA
double gpuFree(double* total = nullptr) {
    size_t f = 0, t = 0;
    cudaSetDevice(0);
    if (cudaMemGetInfo(&f, &t) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    if (total) *total = double(t);
    return double(f);
}

// The least free memory of device 0 while a run goes on (sampled every millisecond).
class GpuLowWater {
public:
    GpuLowWater() : low_(gpuFree()), thread_([this] {
        while (!stop_) {
            low_ = std::min(low_.load(), gpuFree());
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }) {}
    ~GpuLowWater() {
        if (thread_.joinable()) stop();
    }
    double stop() {
        stop_ = true;
        thread_.join();
        return std::min(low_.load(), gpuFree());
    }

private:
    std::atomic<bool> stop_{false};
    std::atomic<double> low_;
    std::thread thread_;
};
#endif

struct Options {
    std::vector<double> sizes;  // empty: auto
    uint64_t packets = 1000000;
    double budget = 420;
    bool oomCheck = false;
    std::string kernel = "cuda";
    uint64_t cpuCheck = 200000;
    std::string write;  // write the model of sizes[0] tetras as TIM-OS files PREFIX.{mesh,opt,source}
};

struct Measure {
    double tetras = 0, points = 0, faces = 0;
    double hostMesh = 0, hostPacked = 0, hostPeak = 0;  // bytes
    double gpuKept = 0, gpuPeak = 0;                     // bytes
    double buildSeconds = 0, packSeconds = 0, runSeconds = 0, kernelSeconds = 0, totalSeconds = 0;
    double absorbed = 0;
    bool ran = false;
    std::string error;
};

// The packed head model of about `tetras` tetras; the mesh is freed once packed.
KernelInput buildModel(double tetras, Measure& m) {
    const auto t0 = Clock::now();
    const double heap0 = heapInUse();
    std::unique_ptr<TetraMesh> mesh;
    {
        BoxMeshArrays a = fmbench::headArrays(fmbench::headDivisions(tetras));
        mesh = std::make_unique<TetraMesh>(std::move(a.points), std::move(a.tetras), std::move(a.regions));
    }
    m.buildSeconds = since(t0);
    m.tetras = double(mesh->tetraCount());
    m.points = double(mesh->pointCount());
    m.faces = double(mesh->faceCount());
    const double heap1 = heapInUse();
    const auto t1 = Clock::now();
    KernelInput in = packModel(*mesh, fmbench::headMaterials(), *fmbench::headSource());
    m.packSeconds = since(t1);
    const double heap2 = heapInUse();
    m.hostMesh = heap1 - heap0;
    m.hostPacked = heap2 - heap1;
    return in;
}

RunResult runOnce(const KernelInput& in, uint64_t packets, const std::string& kernel) {
    RunOptions ro;
    ro.packets = packets;
    ro.params.seed = 1;
    return runKernel(kernel, in, ro);
}

void measureSize(double tetras, const Options& o, Measure& m) {
    const auto t0 = Clock::now();
    const double rss0 = resident();
    resetPeakResident();
    try {
        KernelInput in = buildModel(tetras, m);
#if FM_HAVE_CUDA
        const bool gpu = o.kernel == "cuda";
        const double free0 = gpu ? gpuFree() : 0;
        std::unique_ptr<GpuLowWater> watch(gpu ? new GpuLowWater : nullptr);
#endif
        const auto t1 = Clock::now();
        RunResult r;
        try {
            r = runOnce(in, o.packets, o.kernel);
        } catch (...) {
#if FM_HAVE_CUDA
            if (watch) watch->stop();
#endif
            throw;
        }
        m.runSeconds = since(t1);
        m.kernelSeconds = r.kernelSeconds;
#if FM_HAVE_CUDA
        if (gpu) {
            m.gpuPeak = free0 - watch->stop();
            m.gpuKept = free0 - gpuFree();  // the mesh and tallies the device keeps for a next run
            cudaReleaseCachedModels();
        }
#endif
        m.absorbed = r.ledger.absorbed / r.ledger.launched;
        m.ran = true;
    } catch (const std::bad_alloc&) {
        m.error = "host memory exhausted (std::bad_alloc)";
    } catch (const std::exception& e) {
        m.error = e.what();
    }
#if FM_HAVE_CUDA
    if (!m.ran && o.kernel == "cuda") cudaReleaseCachedModels();
#endif
    m.hostPeak = peakResident() - rss0;
    m.totalSeconds = since(t0);
}

void printHeader() {
    std::printf("| tetras | points | faces | host B/tetra: mesh | packed | peak RSS | GPU B/tetra: kept | peak in run "
                "| build s | pack s | run s (kernel) | absorbed | result |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
}

void printRow(const Measure& m) {
    const double t = std::max(1.0, m.tetras);
    if (m.tetras == 0) {
        std::printf("| - | | | | | | | | | | | | FAILED: %s |\n", m.error.c_str());
    } else {
        std::printf("| %.0f | %.0f | %.0f | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f | %.3f (%.3f) | %.5f | %s |\n",
                    m.tetras, m.points, m.faces, m.hostMesh / t, m.hostPacked / t, m.hostPeak / t, m.gpuKept / t,
                    m.gpuPeak / t, m.buildSeconds, m.packSeconds, m.runSeconds, m.kernelSeconds, m.absorbed,
                    m.ran ? "ran" : ("FAILED: " + m.error).c_str());
    }
    std::fflush(stdout);
}

// bytes = fixed + slope x tetras through two measurements.
struct Line {
    double fixed = 0, slope = 0;
    double at(double n) const { return fixed + slope * n; }
    double solve(double bytes) const { return slope > 0 ? (bytes - fixed) / slope : 0; }
};
Line fit(double n1, double b1, double n2, double b2) {
    Line l;
    l.slope = (b2 - b1) / (n2 - n1);
    l.fixed = b1 - l.slope * n1;
    if (l.slope <= 0) l = {0, b2 / n2};
    return l;
}

bool isOutOfDeviceMemory(const std::string& e) { return e.find("out of device memory") != std::string::npos; }

#if FM_HAVE_CUDA
// A small run refused while the device is full, then passing once memory is back.
bool oomCheck(const Options& o) {
    Measure probe;
    KernelInput in = buildModel(2e5, probe);
    const RunResult ref = runOnce(in, 100000, "cuda");
    cudaReleaseCachedModels();
    std::vector<void*> held;
    for (size_t piece = size_t(1) << 30; piece >= (size_t(1) << 20); piece /= 2)
        for (;;) {
            if (gpuFree() < double(piece) + 16.0 * 1048576) break;
            void* p = nullptr;
            if (cudaMalloc(&p, piece) != cudaSuccess) {
                cudaGetLastError();
                break;
            }
            held.push_back(p);
        }
    std::printf("oom check: holding all but %.0f MiB of device 0\n", gpuFree() / 1048576.0);
    std::string err;
    try {
        runOnce(in, 100000, "cuda");
    } catch (const std::exception& e) {
        err = e.what();
    }
    for (void* p : held) cudaFree(p);
    cudaReleaseCachedModels();
    const bool refused = isOutOfDeviceMemory(err);
    std::printf("oom check: run on a full device: %s\n", err.empty() ? "RAN (expected a refusal)" : err.c_str());
    double again = -1;
    try {
        again = runOnce(in, 100000, "cuda").ledger.absorbed / ref.ledger.launched;
        cudaReleaseCachedModels();
    } catch (const std::exception& e) {
        std::printf("oom check: run after freeing: FAILED: %s\n", e.what());
    }
    const double first = ref.ledger.absorbed / ref.ledger.launched;
    const bool same = std::fabs(again - first) <= 1e-9;
    std::printf("oom check: same run after freeing: absorbed %.9f (before %.9f)\n", again, first);
    std::printf("oom check: %s\n", refused && same ? "pass" : "FAIL");
    return refused && same;
}
#endif

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw ParameterError(a + ": needs a value");
            return argv[++i];
        };
        if (a == "--packets") o.packets = uint64_t(std::atof(value().c_str()));
        else if (a == "--budget") o.budget = std::atof(value().c_str());
        else if (a == "--oom-check") o.oomCheck = true;
        else if (a == "--kernel") o.kernel = value();
        else if (a == "--write") o.write = value();
        else if (a == "--cpu-check") o.cpuCheck = uint64_t(std::atof(value().c_str()));
        else if (a == "auto") o.sizes.clear();
        else if (!a.empty() && (std::isdigit((unsigned char)a[0]) != 0)) {
            std::stringstream ss(a);
            std::string item;
            while (std::getline(ss, item, ',')) {
                const double n = std::atof(item.c_str());
                if (!(n >= 6)) throw ParameterError("sizes: " + item + " is not a tetra count >= 6");
                o.sizes.push_back(n);
            }
        } else throw ParameterError("unknown argument " + a);
    }
    if (o.kernel != "cuda" && o.kernel != "cpu") throw ParameterError("--kernel: cuda or cpu");
    if (!(o.packets >= 1)) throw ParameterError("--packets: at least 1");
    return o;
}

// The first size also runs on the CPU with another seed: absorbed fractions within 4 sigma
// (a packet's absorbed weight lies in [0, 1], so its variance is at most 1/4).
bool cpuCheck(const Options& o, const Measure& first) {
    Measure m;
    KernelInput in = buildModel(first.tetras, m);
    RunOptions ro;
    ro.packets = o.cpuCheck;
    ro.params.seed = 12345;
    const RunResult c = runKernel("cpu", in, ro);
    const double ac = c.ledger.absorbed / c.ledger.launched;
    const double sigma = std::sqrt(0.25 / double(o.packets) + 0.25 / double(o.cpuCheck));
    const double z = (first.absorbed - ac) / sigma;
    std::printf("check: absorbed %s %.5f vs CPU (%llu packets, other seed) %.5f: z %.2f %s\n", o.kernel.c_str(),
                first.absorbed, (unsigned long long)o.cpuCheck, ac, z, std::fabs(z) <= 4 ? "ok" : "FAIL");
    return std::fabs(z) <= 4;
}

// The head model as TIM-OS files, for fullmonte-run and bench/peer_mmc.sh.
int writeModel(const Options& o) {
    if (o.sizes.size() != 1) throw ParameterError("--write PREFIX needs one tetra count");
    BoxMeshArrays a = fmbench::headArrays(fmbench::headDivisions(o.sizes[0]));
    TetraMesh mesh(std::move(a.points), std::move(a.tetras), std::move(a.regions));
    writeTIMOSMesh(o.write + ".mesh", mesh);
    writeTIMOSMaterials(o.write + ".opt", fmbench::headMaterials());
    writeTIMOSSource(o.write + ".source", *fmbench::headSource(), mesh);
    std::printf("%s.{mesh,opt,source}: %zu tetras, %zu points, 4 tissues, point source in the scalp\n",
                o.write.c_str(), mesh.tetraCount(), mesh.pointCount());
    return 0;
}

int run(int argc, char** argv) {
    const Options o = parse(argc, argv);
    if (!o.write.empty()) return writeModel(o);
    const auto start = Clock::now();
    double gpuTotal = 0, gpuFree0 = 0;
#if FM_HAVE_CUDA
    if (o.kernel == "cuda") {
        std::string why;
        if (!cudaDeviceAvailable(&why)) throw Error("no CUDA device: " + why);
        gpuFree0 = gpuFree(&gpuTotal);
    }
#else
    if (o.kernel == "cuda") throw Error("built without CUDA: use --kernel cpu");
#endif
    std::printf("mesh_capacity: synthetic head (180 mm cube, 4 tissues), %llu packets a run on %s; host: %.1f GiB "
                "available, %u threads; device 0: %.2f GiB free of %.2f GiB\n",
                (unsigned long long)o.packets, o.kernel.c_str(), hostAvailable() / 1073741824.0,
                std::thread::hardware_concurrency(), gpuFree0 / 1073741824.0, gpuTotal / 1073741824.0);
    printHeader();
    bool ok = true;
    std::vector<Measure> done;
    auto attempt = [&](double n) {
        Measure m;
        measureSize(n, o, m);
        printRow(m);
        done.push_back(m);
        return m;
    };
    if (!o.sizes.empty()) {
        for (double n : o.sizes) {
            const Measure m = attempt(n);
            if (!m.ran) {
                ok = ok && isOutOfDeviceMemory(m.error);
                break;
            }
        }
    } else {
        for (double n : {1e6, 4e6, 16e6})
            if (!attempt(n).ran) return 1;
        const Measure& a = done[1];
        const Measure& b = done[2];
        const Line host = fit(a.tetras, a.hostPeak, b.tetras, b.hostPeak);
        const Line gpu = fit(a.tetras, a.gpuPeak, b.tetras, b.gpuPeak);
        const Line secs = fit(a.tetras, a.totalSeconds, b.tetras, b.totalSeconds);
        // Host: what is available now, less a margin for the runtime's own growth.
        const double hostLimit = host.solve(0.92 * hostAvailable());
        const double gpuLimit = o.kernel == "cuda" ? gpu.solve(gpuFree()) : HUGE_VAL;
        // Face ids hold 31 bits: 12 n^3 + 6 n^2 faces for n^3 cubes.
        double cubes = 1;
        while (12 * std::pow(cubes + 1, 3) + 6 * std::pow(cubes + 1, 2) < 2147483647.0) ++cubes;
        const double indexLimit = 6.0 * std::pow(cubes, 3);
        std::printf("\nfit from the last two sizes: host peak %.1f B/tetra + %.0f MiB, GPU peak %.1f B/tetra + %.0f MiB, "
                    "%.3f s per million tetras\n",
                    host.slope, host.fixed / 1048576.0, gpu.slope, gpu.fixed / 1048576.0, secs.slope * 1e6);
        std::printf("predicted largest mesh: GPU memory %.0f tetras, host memory %.0f tetras, 31-bit face ids %.0f tetras\n",
                    gpuLimit, hostLimit, indexLimit);
        const double limit = std::min({gpuLimit, hostLimit, indexLimit});
        const char* by = limit == gpuLimit ? "GPU memory" : limit == hostLimit ? "host memory" : "31-bit face ids";
        std::printf("the limit here is %s\n", by);
        double target = 0.97 * limit;
        const double left = o.budget - since(start);
        if (secs.at(target) > left) {
            const double fits = std::max(0.0, secs.solve(0.9 * left));
            std::printf("0.97 x the limit (%.0f tetras) would take ~%.0f s, %.0f s left: running %.0f tetras instead\n",
                        target, secs.at(target), left, fits);
            target = fits;
        }
        if (target <= b.tetras)
            std::printf("no size beyond the last probe fits the time left\n");
        else {
            const Measure m = attempt(target);
            if (!m.ran) ok = false;
            // Over the GPU's limit where the host can still build it: the run must be refused.
            const double over = 1.06 * gpuLimit;
            if (m.ran && o.kernel == "cuda" && over < hostLimit && over < indexLimit &&
                secs.at(over) < o.budget - since(start)) {
                const Measure x = attempt(over);
                const bool clean = !x.ran && isOutOfDeviceMemory(x.error);
                std::printf("over the GPU limit: %s\n", clean ? "refused with the out-of-memory error (pass)"
                                                              : "NOT refused cleanly (FAIL)");
                ok = ok && clean;
            } else if (m.ran && o.kernel == "cuda") {
                std::printf("over the GPU limit: not tried (the host cannot build %.0f tetras or no time left)\n", over);
            }
        }
    }
    double largest = 0;
    for (const Measure& m : done)
        if (m.ran) largest = std::max(largest, m.tetras);
    std::printf("\nlargest mesh that ran: %.0f tetras\n", largest);
    if (!done.empty() && done[0].ran && o.cpuCheck > 0) ok = cpuCheck(o, done[0]) && ok;
#if FM_HAVE_CUDA
    if (o.oomCheck && o.kernel == "cuda") ok = oomCheck(o) && ok;
#endif
    std::printf("checks %s (%.0f s)\n", ok ? "pass" : "FAIL", since(start));
    return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "mesh_capacity: %s\n", e.what());
        return 1;
    }
}
