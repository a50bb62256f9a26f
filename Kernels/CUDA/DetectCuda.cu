// SPDX-License-Identifier: GPL-3.0-or-later
// Detectors on the GPU mesh kernel (Kernels/CUDA/DetectCuda.hpp): DeviceDetectorTally
// (DetectRecords.cuh), a tally of the pack that keeps each packet's path per material, tests
// its exit against the detectors and appends the records into a bounded device buffer; in a
// replay it adds each move of a listed packet into the mu_a Jacobian of the detectors that
// recorded it.
//
// The detecting kernel is its own template instantiation (detectKernel over DetectScorer), so a
// run without detectors runs the standard kernel, unchanged. There is one per cell layout's
// model: a detecting run reads the cells in the layout a run without detectors would
// (cudaCellLayoutFor: compact planes on meshes beyond the L2). Detecting runs and replays use
// the same instantiation and layout (all standard tallies on; unselected ones write into
// arrays that are dropped), so that a replayed packet takes the detecting run's code path,
// rounding included.
//
// Where the path per material lives: for models of up to kGpuDetectMaterials materials, in a
// per-thread array (local memory: it is indexed by the packet's material, so it cannot stay in
// registers). Local memory is per-thread global memory interleaved so that a warp's accesses to
// one element coalesce, cached in L1, private to the thread, and sized at compile time. Models
// with more materials use a scratch slice per thread in global memory, laid out the same way
// ([material][thread of the launch]: a warp's adds to one material coalesce), one scratch per
// stream of runBatches, so that its two overlapping launches never share a slice.
#include "Kernels/CUDA/CudaEngine.cuh"
#include "Kernels/CUDA/DetectRecords.cuh"

#include <algorithm>

#include "Common/Errors.hpp"
#include "Kernels/CUDA/CudaKernel.hpp"
#include "Kernels/CUDA/DetectCuda.hpp"

namespace fm {
namespace {

using namespace cuda_engine;
using namespace detect_records;

using DetectScorer = TallyScorer<true, true, true, DeviceAtomicAdd, uint32_t, DeviceDetectorTally>;

// The warp loop (CudaEngine.cuh warpLoop) with the detector told each packet's index and
// replay slot before its launch; replayIndex maps slots to packet indices (null: slot = index).
// scratch, countScratch: the launch's path and scatter count slices for models of more than
// kGpuDetectMaterials materials (null: local arrays).
template <class Model, class Scorer>
__global__ void __launch_bounds__(kBlock, kMinBlocksPerSm)
detectKernel(Model m, KernelParams kp, uint64_t first, uint64_t count, Scorer scIn, DeviceTotals* totals,
             unsigned long long* next, Ledger* rare, const unsigned long long* replayIndex, float* scratch,
             uint32_t* countScratch) {
    SplitLedgerScorer<Scorer> sc(scIn, rare + blockIdx.x % kRareLedgerCopies);
    float path[kGpuDetectMaterials];
    uint32_t scatters[kGpuDetectMaterials];
    DeviceDetectorTally& det = sc.inner.template tally<DeviceDetectorTally>();
    if (scratch) {
        det.path = scratch + (blockIdx.x * blockDim.x + threadIdx.x);
        det.count = countScratch + (blockIdx.x * blockDim.x + threadIdx.x);
        det.pathStride = gridDim.x * blockDim.x;
    } else {
        det.path = path;
        det.count = scatters;
    }
    m.enterBlock(0);
    warpLoop(
        m, kp, count, next, sc, [&](const EventCounts<uint32_t>& e) { addEventsUnaggregated(totals, e); },
        [&](uint64_t i, PacketState& st) {
            const uint64_t slot = first + i, index = replayIndex ? replayIndex[slot] : slot;
            sc.inner.template tally<DeviceDetectorTally>().startPacket(slot, index);
            return launchPacket(m, kp, index, st, sc);
        });
    sc.flush();
    addTotals(totals, sc.ledger(), sc.events);
}


// One device's model, detectors and standard tallies for a detecting run or a replay.
struct DetectDevice {
    Stream s;
    DeviceInput input;
    MaterialTableSent::Lease materials;  // the model's materials in constant memory, held until done
    size_t nv, ns, stride;
    uint32_t copies;
    DeviceBuffer<double> tallies;
    DeviceBuffer<DeviceTotals> totals;
    DeviceBuffer<Ledger> rare;
    DetectorTables tables;

    DetectDevice(const KernelInput& in, const DetectionSpec& spec, CellLayout layout)
        : input(in, s, layout), materials(holdMaterials(in.materials, s)), nv(in.cells.size()), ns(in.faceCount),
          stride(nv + 3 * ns), copies(meshTallyCopies(stride)),
          tallies(stride * copies, "tallies"), totals(1, "ledger"), rare(kRareLedgerCopies, "ledger replicas"),
          tables(spec, s) {
        tallies.zero(s);
        totals.zero(s);
        rare.zero(s);
        cudaCheck(cudaStreamSynchronize(s), "upload");
    }
    DetectScorer scorer() const {
        DetectScorer sc;
        sc.volume = tallies.get();
        sc.surface = tallies.get() + nv;
        sc.directed = tallies.get() + nv + ns;
        sc.setReplicas(copies - 1, uint32_t(stride));
        tables.setIn(sc.tally<DeviceDetectorTally>());
        return sc;
    }
    BatchRun run(const RunOptions& opt, const DetectScorer& sc, const unsigned long long* replayIndex,
                 uint32_t materials) {
        BatchRun b;
        withDeviceModel(input.mesh, input.sources.view(),
                        [&](const auto& m) { b = runOn(m, opt, sc, replayIndex, materials); });
        return b;
    }
    // The launches over model m (the mesh's layout).
    template <class Model>
    BatchRun runOn(const Model& m, const RunOptions& opt, const DetectScorer& sc,
                   const unsigned long long* replayIndex, uint32_t materials) {
        auto kernel = detectKernel<Model, DetectScorer>;
        // Scratch for models with more materials than the local array holds: per stream of
        // runBatches, a slice of `materials` floats for each thread a launch can have.
        DeviceBuffer<float> scratch;
        DeviceBuffer<uint32_t> countScratch;
        size_t half = 0;
        if (materials > kGpuDetectMaterials) {
            int device = 0, sms = 0, fit = 0;
            cudaCheck(cudaGetDevice(&device), "get device");
            cudaCheck(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "query SMs");
            cudaCheck(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, kBlock, 0), "occupancy");
            half = size_t(sms) * size_t(std::max(fit, 1)) * kBlock * materials;
            scratch.allocate(2 * half, "per-thread path lengths of the detectors");
            countScratch.allocate(2 * half, "per-thread scatter counts of the detectors");
        }
        const BatchRun b = runBatches(kernel, 0, opt, s,
                                      [&](unsigned blocks, cudaStream_t on, uint64_t first, uint64_t n, unsigned long long* next) {
                                          const size_t at = on == cudaStream_t(s) ? 0 : half;
                                          float* own = half ? scratch.get() + at : nullptr;
                                          uint32_t* ownCounts = half ? countScratch.get() + at : nullptr;
                                          kernel<<<blocks, kBlock, 0, on>>>(
                                              m, opt.params, first, n, sc, totals.get(), next, rare.get(),
                                              replayIndex, own, ownCounts);
                                      });
        cudaCheck(cudaStreamSynchronize(s), "detecting kernel");
        return b;
    }
    // The standard tallies, ledger and events into r (the selected outputs only).
    void addTo(RunResult& r, const OutputSelection& o) {
        const std::vector<double> t = downloadFolded(tallies, stride, s);
        if (o.volume) r.volume.assign(t.begin(), t.begin() + nv);
        if (o.surface) r.surface.assign(t.begin() + nv, t.begin() + nv + ns);
        if (o.directed) r.directed.assign(t.begin() + nv + ns, t.end());
        totalsToResult(totals.download(s)[0], r);
        for (const Ledger& l : rare.download(s)) r.ledger.add(l);
    }
};

// The one device of a detecting run or replay (current on return).
int selectOneDevice(const RunOptions& opt, const char* what) {
    std::string why;
    if (!cudaDeviceAvailable(&why)) throw Error(std::string(what) + ": kernel cuda: " + why);
    const std::vector<int> ds = cudaResolveDevices(opt.devices);
    if (ds.size() != 1)
        throw ParameterError(std::string(what) + " on the GPU use one device; " + std::to_string(ds.size()) +
                             " were given (name one with --devices)");
    cudaCheck(cudaSetDevice(ds[0]), "select device");
    return ds[0];
}

// The cells' layout of a detecting run on `device`: a run's without detectors
// (TuningKnobs::cudaCellLayout, Auto by the mesh and the device). The records name it
// (DetectedPackets::cells) and their replay reads the cells in it (replayCellLayout).
CellLayout detectingLayout(const KernelInput& in, const RunOptions& opt, int device) {
    return cudaCellLayoutFor(opt.tuning.cudaCellLayout, in.cells.size(), device);
}

// The detected weight per detector, from the records where they are all kept (a truncated run's
// is unknown: left empty, and summary.json says null).
void setDetectedWeight(DetectedPackets& dp) {
    if (dp.truncated()) return;
    dp.detectedWeight.assign(dp.detectors.size(), 0.0);
    for (const DetectedRecord& x : dp.records) dp.detectedWeight[x.detector] += x.weight;
}

}  // namespace

RunResult runCudaDetecting(const KernelInput& in, const RunOptions& opt, const DetectionSpec& spec) {
    const auto t0 = Clock::now();
    checkDetectionSpec(in, spec);
    const int device = selectOneDevice(opt, "detecting runs");
    RunResult r;
    r.kernel = "cuda";
    r.packetsRequested = opt.packets;
    r.detected = describeDetectingRun(in, opt, spec);
    DetectedPackets& dp = r.detected;
    dp.kernel = "cuda";
    const CellLayout layout = detectingLayout(in, opt, device);
    dp.cells = recordedCells(layout);
    DetectDevice dev(in, spec, layout);
    // At least kMaxDetectors slots, so that a refill's one-packet chunk always fits.
    const uint64_t slots = std::max<uint64_t>(spec.maxRecords, kMaxDetectors);
    const RecordBuffers bufs(slots, dp.regions);
    DetectScorer sc = dev.scorer();
    DeviceDetectorTally& d = sc.tally<DeviceDetectorTally>();
    bufs.setIn(d);
    d.maxRecords = slots;  // every slot the buffer has: appendRecordsBelow reads the filled ones
    d.regions = dp.regions;
    r.uploadSeconds = since(t0);
    const BatchRun b = dev.run(opt, sc, nullptr, uint32_t(in.materials.size()));
    r.kernelSeconds = b.seconds;
    r.gpuBlocksPerSm = b.blocksPerSm;
    const auto t1 = Clock::now();
    dev.addTo(r, opt.outputs);
    const DetectCounters c = dev.tables.read(dev.s);
    dp.detected = c.found;
    appendRecordsBelow(dev.s, bufs, c.found, c.lowestLost, opt.firstPacket + opt.packets, spec.maxRecords, opt.tuning, dp);
    r.packetsDone = b.packetsDone;
    r.cancelled = r.packetsDone < opt.packets;
    if (dp.truncated() && !r.cancelled) {
        const uint32_t materials = uint32_t(in.materials.size());
        auto runChunk = [&](const RunOptions& ro) {
            dev.tables.reset(dev.s);
            return dev.run(ro, sc, nullptr, materials).packetsDone;
        };
        dp.refilledPackets = refillRecords(dev.s, opt, runChunk, [&] { return dev.tables.read(dev.s); },
                                           bufs, c.lowestLost, opt.firstPacket + opt.packets, spec.maxRecords,
                                           double(c.found) / double(std::max<uint64_t>(1, b.packetsDone)), dp);
    }
    setDetectedWeight(dp);
    r.downloadSeconds = since(t1);
    r.seconds = since(t0);
    return r;
}

ReplayResult replayJacobianCuda(const KernelInput& in, const RunOptions& opt, const DetectionSpec& spec,
                                const DetectedPackets& dp) {
    if (dp.kernel != "cuda")
        throw ParameterError("replay: the records were detected by the " + dp.kernel +
                             " kernel; replay them with that kernel (a packet's history reproduces only there)");
    checkReplayInput(in, opt, spec, dp);
    const CellLayout layout = replayCellLayout(dp, opt.tuning.cudaCellLayout);
    const ReplayPackets list = replayPackets(dp);
    const size_t nv = in.cells.size(), nDet = spec.detectors.size();
    ReplayResult out;
    out.jacobian.assign(nDet, std::vector<double>(nv, 0.0));
    if (list.index.empty()) return out;
    selectOneDevice(opt, "replays");
    DetectDevice dev(in, spec, layout);
    DeviceBuffer<double> jac(nDet * nv, "Jacobian (detectors x tetras)");
    DeviceBuffer<unsigned long long> index(list.index.size(), "replayed packets"), bits(list.index.size(), "replayed packets");
    DeviceBuffer<float> weight(list.index.size(), "replayed packets");
    jac.zero(dev.s);
    const std::vector<unsigned long long> hostIndex(list.index.begin(), list.index.end()),
        hostBits(list.detectors.begin(), list.detectors.end());
    index.upload(hostIndex, dev.s);
    bits.upload(hostBits, dev.s);
    weight.upload(list.weight, dev.s);
    DetectScorer sc = dev.scorer();
    DeviceDetectorTally& d = sc.tally<DeviceDetectorTally>();
    d.jacobian = jac.get();
    d.cells = uint32_t(nv);
    d.replayDetectors = bits.get();
    d.replayWeight = weight.get();
    RunOptions ro = opt;
    ro.packets = list.index.size();
    ro.firstPacket = 0;
    out.replayed = dev.run(ro, sc, index.get(), 0).packetsDone;  // a replay keeps no path per material
    out.cancelled = out.replayed < list.index.size();
    out.mismatched = dev.tables.read(dev.s).mismatched;
    const std::vector<double> J = jac.download(dev.s);
    for (size_t k = 0; k < nDet; ++k) std::copy(J.begin() + k * nv, J.begin() + (k + 1) * nv, out.jacobian[k].begin());
    return out;
}

}  // namespace fm
