// SPDX-License-Identifier: GPL-3.0-or-later
// A planning loop through the C++ batch API (Kernels/Batch.hpp): RUNS point sources spread over
// the middle of a TIM-OS mesh, PACKETS each, against the kernel-only throughput of one long run
// of all the sources together (the same packet mix) on the same devices. Prints one "key value" line per figure and checks the batch's first run
// against the CPU kernel (absorbed fraction within 4 sigma) and against the same run made alone
// on the GPU (normalised L1: the same packets, so rounding only). Then, on the GPU: one run per
// launch (the path before run groups) with one and two runs in flight per device, and run groups
// (Kernels/MultiRun.hpp) of several sizes, each checked run by run against the single GPU runs
// (absorbed fraction and event counts of a sample of runs: the same histories), a script's loop
// of single runs (pack + runKernel per run, as a Tcl runSync loop) packing everything per run
// and keeping the packed cells (PackedModelCache; checked run by run: the same histories), and
// the cost of the model cache's key of the mesh (content hash against the packer's identity).
// Exit status 1 when a check fails. Used by bench/planning_loop.sh.
// Usage: planning_loop MESH OPT RUNS PACKETS LONG_PACKETS DEVICES [CPU_PACKETS]
//        (DEVICES: "0", "0,1", "all"; the batch also runs on the first device alone when several).
//        Environment: KERNEL=cpu runs everything on the CPU (a smoke test without a GPU);
//        SOURCES=FILE.source takes the runs' sources from a TIM-OS source file's rows (repeated
//        up to RUNS) instead of the grid over the middle of the mesh (a clinical mesh, whose
//        bounding box is partly outside the body); GROUPS="2 4 8" the run-group sizes timed
//        (default "2 4 8 16 32"); BPS="4 3" the forced blocks per SM of the script loop (default
//        "4 3 2 1"; "" none); NO_SCRIPT=1 leaves out the script loops; the FM_* tuning variables (docs/PERFORMANCE.md, "Tuning knobs")
//        apply to every batch and loop.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <stdexcept>

#include "Geometry/BatchModel.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Geometry/PackedModelCache.hpp"
#include "Kernels/Batch.hpp"
#include "Kernels/DeviceModelCache.hpp"
#include "Kernels/Dispatch.hpp"
#include "Kernels/Tuning.hpp"
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

// The rows of a TIM-OS source file (a composite's elements, or the one source), repeated up to n.
std::vector<SourcePtr> fileSources(const std::string& path, size_t n) {
    const SourcePtr s = readTIMOSSource(path).source;
    std::vector<SourcePtr> rows;
    if (auto c = std::dynamic_pointer_cast<CompositeSource>(s)) rows = c->elements;
    else rows.push_back(s);
    if (rows.empty()) throw std::runtime_error(path + ": no sources");
    std::vector<SourcePtr> out;
    for (size_t i = 0; i < n; ++i) out.push_back(rows[i % rows.size()]);
    return out;
}

// Unsigned numbers from an environment variable (def when it is not set).
std::vector<unsigned> envList(const char* name, const char* def) {
    const char* v = std::getenv(name);
    std::stringstream ss(v ? v : def);
    std::vector<unsigned> out;
    for (unsigned x; ss >> x;) out.push_back(x);
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
    BatchSummary summary;
    RunResult first;
    std::string kernel;
    std::vector<double> absorbed;          // every run's absorbed fraction
    std::vector<uint64_t> absorbEvents;    // every run's absorption events
};

std::string kernelName() {
    const char* k = std::getenv("KERNEL");
    return k && std::string(k) == "cpu" ? "cpu" : "cuda";
}

// slotsPerDevice and runsPerLaunch as BatchOptions (0: the defaults).
BatchTiming timeBatch(const BatchModel& bm, const std::vector<int>& devices, unsigned slotsPerDevice = 1,
                      unsigned runsPerLaunch = 1) {
    BatchOptions o;
    o.tuning = tuningFromEnvironment();
    o.slotsPerDevice = slotsPerDevice;
    o.runsPerLaunch = runsPerLaunch;
    o.kernel = kernelName();
    if (o.kernel == "cuda") o.devices = devices;
    o.outputs.surface = false;  // as fullmonte-run's batch: the matrix needs the volume only
    BatchTiming t;
    t.absorbed.assign(bm.runs.size(), 0.0);
    t.absorbEvents.assign(bm.runs.size(), 0);
    auto t0 = std::chrono::steady_clock::now();
    BatchSummary s = runBatch(bm.mesh, bm.runs, o, [&](size_t i, RunResult&& r) {
        t.kernelSeconds += r.kernelSeconds;
        t.absorbed[i] = r.ledger.absorbed / r.ledger.launched;
        t.absorbEvents[i] = r.events.absorb;
        if (i == 0) t.first = std::move(r);
    });
    t.seconds = since(t0);
    t.idleSeconds = s.idleSeconds;
    t.summary = s;
    t.kernel = s.kernel + (s.splitRuns ? " (runs split)" : "") +
               (s.slotsPerDevice > 1 ? " (" + std::to_string(s.slotsPerDevice) + " in flight per device)" : "") +
               (o.kernel == "cuda" ? " (" + std::to_string(s.runsPerLaunch) + " runs per launch)" : "");
    return t;
}

// Single GPU runs of every step-th run of the batch, against which the batches are checked.
struct SampleRuns {
    std::vector<size_t> index;
    std::vector<double> absorbed;
    std::vector<uint64_t> absorbEvents;
};
SampleRuns sampleRuns(const TetraMesh& mesh, const MaterialSet& mats, const std::vector<SourcePtr>& sources,
                      const BatchModel& bm, const std::vector<int>& devices, size_t count) {
    SampleRuns s;
    const size_t step = std::max<size_t>(1, sources.size() / count);
    for (size_t i = 0; i < sources.size(); i += step) {
        RunOptions o;
        o.devices = devices;
        o.outputs.surface = false;
        o.packets = bm.runs[i].packets;
        o.params.seed = bm.runs[i].seed;
        o.batches = 1;
        const RunResult r = runKernel("cuda", packModel(mesh, mats, *sources[i]), o);
        s.index.push_back(i);
        s.absorbed.push_back(r.ledger.absorbed / r.ledger.launched);
        s.absorbEvents.push_back(r.events.absorb);
    }
    return s;
}

// Where a batch's seconds went (BatchSummary's split).
void printTime(const char* name, const BatchSummary& s) {
    std::printf("%s_time setup %.4f busy %.4f gaps %.4f tail %.4f deliver %.4f held %.4f idle %.4f\n", name,
                s.setupSeconds, s.kernelBusySeconds, s.kernelGapSeconds, s.tailSeconds, s.deliverSeconds, s.heldSeconds,
                s.idleSeconds);
}

// Prints a batch's timing and checks it run by run against the sample; false when a run differs.
bool reportBatch(const char* name, const BatchTiming& b, double kernelRate, size_t runs, uint64_t packets,
                 const SampleRuns& sample) {
    const double rate = double(runs) * double(packets) / b.seconds;
    std::printf("%s_kernel %s\n%s_seconds %.4f\n%s_fraction_of_kernel_only %.4f\n%s_overhead_per_run_ms %.3f\n"
                "%s_kernel_seconds_sum %.4f\n",
                name, b.kernel.c_str(), name, b.seconds, name, rate / kernelRate, name,
                1e3 * (b.seconds - double(runs) * double(packets) / kernelRate) / double(runs), name, b.kernelSeconds);
    printTime(name, b.summary);
    double worst = 0;
    size_t differ = 0;
    for (size_t k = 0; k < sample.index.size(); ++k) {
        const size_t i = sample.index[k];
        worst = std::max(worst, std::fabs(b.absorbed[i] - sample.absorbed[k]));
        if (b.absorbEvents[i] != sample.absorbEvents[k]) ++differ;
    }
    std::printf("check_%s_runs_vs_single_runs %zu runs, max |absorbed fraction difference| %.3g, event counts differ in %zu\n",
                name, sample.index.size(), worst, differ);
    return differ == 0 && worst < 1e-9;
}

// A script's loop of single runs (Tcl runSync, Python Simulation, C++ pack + runKernel).
struct ScriptLoop {
    size_t runs = 0;
    double seconds = 0, packSeconds = 0, runSeconds = 0, kernelSeconds = 0;
    std::vector<double> absorbed;
    std::vector<uint64_t> absorbEvents;
};

ScriptLoop scriptLoop(const TetraMesh& mesh, const MaterialSet& mats, const std::vector<SourcePtr>& sources,
                      const std::vector<int>& devices, uint64_t packets, bool reuse, uint32_t blocksPerSm = 0) {
    ScriptLoop L;
    L.runs = std::min<size_t>(sources.size(), 200);
    RunOptions lo;
    lo.tuning = tuningFromEnvironment();
    if (blocksPerSm) lo.tuning.cudaBlocksPerSm = blocksPerSm;
    if (kernelName() == "cuda") lo.devices = devices;
    lo.outputs.surface = false;
    lo.packets = packets;
    lo.batches = 1;
    PackedModelCache cache;
    auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < L.runs; ++i) {
        auto tp = std::chrono::steady_clock::now();
        std::shared_ptr<const KernelInput> in;
        if (reuse) {
            const MaterialSet m = mats;  // a script's material set, built anew each run
            in = cache.pack(mesh, m, *sources[i]);
        } else {
            in = std::make_shared<const KernelInput>(packModel(mesh, mats, *sources[i]));
        }
        L.packSeconds += since(tp);
        lo.params.seed = uint32_t(1000 + i);
        const RunResult r = runKernel(kernelName(), *in, lo);
        L.runSeconds += r.seconds;
        L.kernelSeconds += r.kernelSeconds;
        L.absorbed.push_back(r.ledger.absorbed / r.ledger.launched);
        L.absorbEvents.push_back(r.events.absorb);
    }
    L.seconds = since(t0);
    return L;
}

// Its throughput against kernel-only, where the time per run goes (packing, inside runKernel but
// outside the packet kernels, the rest of the loop) and, on the GPU, the runs' own kernels'
// rate against kernel-only (a single launch's tail shows there, not in the host's share).
void reportScriptLoop(const std::string& name, const ScriptLoop& L, double kernelRate, uint64_t packets) {
    const double n = double(L.runs), rate = n * double(packets) / L.seconds;
    std::printf("%s_runs %zu\n%s_seconds %.4f\n%s_fraction_of_kernel_only %.4f\n%s_overhead_per_run_ms %.3f\n"
                "%s_pack_per_run_ms %.3f\n%s_run_per_run_ms %.3f\n",
                name.c_str(), L.runs, name.c_str(), L.seconds, name.c_str(), rate / kernelRate, name.c_str(),
                1e3 * (L.seconds - n * double(packets) / kernelRate) / n, name.c_str(), 1e3 * L.packSeconds / n,
                name.c_str(), 1e3 * L.runSeconds / n);
    if (L.kernelSeconds > 0)
        std::printf("%s_kernel_seconds_sum %.4f\n%s_outside_kernel_per_run_ms %.3f\n%s_in_kernel_fraction_of_kernel_only %.4f\n",
                    name.c_str(), L.kernelSeconds, name.c_str(), 1e3 * (L.seconds - L.kernelSeconds) / n, name.c_str(),
                    n * double(packets) / L.kernelSeconds / kernelRate);
}

// A script's loop (what a Tcl kernel object's runSync does per run): the model packed with
// the run's source, one run through runKernel, the next; the first 200 runs. Once packing
// everything per run, once keeping the packed cells (PackedModelCache: materials and source
// packed per run, from a new MaterialSet each run), run by run the same histories. Two
// interleaved rounds (the second's keys end in _r2), so that neither way has the warm start.
// False when a kept-cells run differs from its fresh one.
bool scriptLoops(const TetraMesh& mesh, const MaterialSet& mats, const std::vector<SourcePtr>& sources,
                 const std::vector<int>& devices, uint64_t packets, double kernelRate) {
    bool ok = true;
    for (int round = 1; round <= 2; ++round) {
        const std::string tag = round == 1 ? "" : "_r2";
        const ScriptLoop fresh = scriptLoop(mesh, mats, sources, devices, packets, false);
        const ScriptLoop kept = scriptLoop(mesh, mats, sources, devices, packets, true);
        reportScriptLoop("script_loop" + tag, fresh, kernelRate, packets);
        reportScriptLoop("script_loop_reuse" + tag, kept, kernelRate, packets);
        // The same histories: equal event counts; the absorbed weight equal up to the order of
        // the GPU's atomic additions (as the grouped runs' check in main).
        size_t differ = 0;
        double maxDiff = 0;
        for (size_t i = 0; i < fresh.absorbed.size(); ++i) {
            if (fresh.absorbEvents[i] != kept.absorbEvents[i]) ++differ;
            maxDiff = std::max(maxDiff, std::fabs(fresh.absorbed[i] - kept.absorbed[i]));
        }
        std::printf("check_script_loop_reuse_vs_fresh_packs%s %zu runs, max |absorbed fraction difference| %.3g, "
                    "event counts differ in %zu\n",
                    tag.c_str(), fresh.absorbed.size(), maxDiff, differ);
        if (differ || !(maxDiff < 1e-12)) ok = false;
    }
    return ok;
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
    const char* sourceFile = std::getenv("SOURCES");
    std::vector<SourcePtr> sources = sourceFile && *sourceFile ? fileSources(sourceFile, runs) : gridSources(mesh, runs);
    BatchModel bm = packBatch(mesh, {mats}, sources, {packets}, 1);
    std::printf("mesh_tetras %zu\nruns %zu\npackets_per_run %llu\n", mesh.tetraCount(), runs,
                (unsigned long long)packets);
    bool ok = true;

    // Kernel-only throughput: one long run of the batch's sources together (a composite of equal
    // weights: its packets start from the runs' sources in the batch's proportions), after a
    // short one that creates the contexts and leaves the mesh on the devices. The packets of
    // different sources do different work (a source nearer the surface loses its packets
    // sooner), so the batch is compared with the same mix; the first source alone is printed
    // beside it (the reference of earlier sessions).
    KernelInput one = packModel(mesh, mats, *sources[0]);
    auto all = std::make_shared<CompositeSource>();
    all->elements = sources;
    const KernelInput mix = packModel(mesh, mats, *all);
    const bool gpu = kernelName() == "cuda";
    RunOptions ro;
    if (gpu) ro.devices = devices;
    ro.outputs.surface = false;
    ro.packets = 100000;
    runKernel(kernelName(), one, ro);
    ro.packets = longPackets;
    auto eventsPerPacket = [](const RunResult& r) {
        return double(r.events.absorb + r.events.boundary) / double(std::max<uint64_t>(r.events.launch, 1));
    };
    const RunResult lf = runKernel(kernelName(), one, ro);
    const double firstRate = double(longPackets) / (gpu ? lf.kernelSeconds : lf.seconds);
    const RunResult lr = runKernel(kernelName(), mix, ro);
    const double kernelRate = double(longPackets) / (gpu ? lr.kernelSeconds : lr.seconds);
    std::printf("long_run_packets %llu\nlong_run_seconds %.4f\nlong_run_kernel_seconds %.4f\nkernel_only_packets_per_s %.4g\n"
                "kernel_only_events_per_packet %.1f\nkernel_only_first_source_packets_per_s %.4g\n"
                "kernel_only_first_source_events_per_packet %.1f\n",
                (unsigned long long)longPackets, lr.seconds, lr.kernelSeconds, kernelRate, eventsPerPacket(lr), firstRate,
                eventsPerPacket(lf));

    // SCRIPT_ONLY=1: the script loops alone (for a tree whose batch API lacks what the rest prints).
    if (std::getenv("SCRIPT_ONLY")) {
        const bool loopsOk = scriptLoops(mesh, mats, sources, devices, packets, kernelRate);
        std::printf("checks %s\n", loopsOk ? "pass" : "FAIL");
        return loopsOk ? 0 : 1;
    }

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
    printTime("batch", b.summary);
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
    // the last ones' tail and the gap while tallies come back. Then groups of runs in one launch
    // (BatchOptions::runsPerLaunch, two groups in flight per device), each batch checked run by
    // run against single GPU runs of a sample of its runs.
    if (gpu) {
        const SampleRuns sample = sampleRuns(mesh, mats, sources, bm, devices, 20);
        const BatchTiming b2 = timeBatch(bm, devices, 2);
        ok = reportBatch("batch2", b2, kernelRate, runs, packets, sample) && ok;
        const double d2 = l1(alone.volume, b2.first.volume);
        std::printf("check_l1_batch2_run0_vs_single_gpu_run %.3g\n", d2);
        if (!(d2 < 1e-6)) ok = false;
        for (unsigned g : envList("GROUPS", "2 4 8 16 32")) {
            const std::string name = "group" + std::to_string(g);
            const BatchTiming bg = timeBatch(bm, devices, 0, g);
            ok = reportBatch(name.c_str(), bg, kernelRate, runs, packets, sample) && ok;
            const double dg = l1(alone.volume, bg.first.volume);
            std::printf("check_l1_%s_run0_vs_single_gpu_run %.3g\n", name.c_str(), dg);
            if (!(dg < 1e-6)) ok = false;
        }
        const BatchTiming g1 = timeBatch(bm, devices, 1, 8);  // one group in flight per device
        ok = reportBatch("group8_one_slot", g1, kernelRate, runs, packets, sample) && ok;
    }

    if (!std::getenv("NO_SCRIPT")) ok = scriptLoops(mesh, mats, sources, devices, packets, kernelRate) && ok;

    // The same loop (cells kept) with the packet kernel's blocks per SM forced: fewer lanes give
    // each more packets and its launch a shorter tail (its last packets' lives, with most lanes
    // idle), but hide less of the memory's latency (docs/PERFORMANCE.md, "Short runs with fewer
    // blocks per SM").
    if (gpu && !std::getenv("NO_SCRIPT"))
        for (uint32_t bps : envList("BPS", "4 3 2 1")) {
            const ScriptLoop forced = scriptLoop(mesh, mats, sources, devices, packets, true, bps);
            reportScriptLoop("script_loop_reuse_bps" + std::to_string(bps), forced, kernelRate, packets);
        }

    // The model cache's key of the mesh, per GPU run (Kernels/DeviceModelCache.hpp cellsKey):
    // the content hash of every cell against the packer's identity with its sample.
    {
        const size_t n = one.cells.size(), reps = 20;
        uint64_t sink = 0;
        auto t0 = std::chrono::steady_clock::now();
        for (size_t k = 0; k < reps; ++k) sink += cellsKey(one.cells.data(), n, sizeof(TetraRecord), 0);
        const double full = since(t0) / reps;
        t0 = std::chrono::steady_clock::now();
        for (size_t k = 0; k < reps; ++k) sink += cellsKey(one.cells.data(), n, sizeof(TetraRecord), one.cellsIdentity);
        const double id = since(t0) / reps;
        std::printf("model_key_content_hash_ms %.4f\nmodel_key_identity_ms %.5f\nmodel_key_check_bits %llx\n", 1e3 * full, 1e3 * id,
                    (unsigned long long)(sink & 0xf));
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
