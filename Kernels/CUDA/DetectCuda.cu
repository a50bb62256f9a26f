// SPDX-License-Identifier: GPL-3.0-or-later
// Detectors on the GPU mesh kernel (Kernels/CUDA/DetectCuda.hpp): DeviceDetectorTally, a tally
// of the pack (Kernels/Core/Tally.hpp hooks) that keeps each packet's path per material, tests
// its exit against the detectors (a face -> detector bits table and the detector zones in device
// memory) and appends the records into a bounded device buffer; in a replay it adds each move
// of a listed packet into the mu_a Jacobian of the detectors that recorded it.
//
// The detecting kernel is its own template instantiation (detectKernel over DetectScorer), so a
// run without detectors runs the standard kernel, unchanged. Detecting runs and replays use the
// same instantiation (all standard tallies on; unselected ones write into arrays that are
// dropped), so that a replayed packet takes the detecting run's code path, rounding included.
//
// Where the path per material lives: for models of up to kGpuDetectMaterials materials, in a
// per-thread array (local memory: it is indexed by the packet's material, so it cannot stay in
// registers). Local memory is per-thread global memory interleaved so that a warp's accesses to
// one element coalesce, cached in L1, private to the thread, and sized at compile time. Models
// with more materials use a scratch slice per thread in global memory, laid out the same way
// ([material][thread of the launch]: a warp's adds to one material coalesce), one scratch per
// stream of runBatches, so that its two overlapping launches never share a slice.
#include "Kernels/CUDA/CudaEngine.cuh"

#include <algorithm>

#include <cub/device/device_radix_sort.cuh>

#include "Common/Errors.hpp"
#include "Kernels/CUDA/CudaKernel.hpp"
#include "Kernels/CUDA/DetectCuda.hpp"
#include "Kernels/DetectedOrder.hpp"

namespace fm {
namespace {

using namespace cuda_engine;

struct DeviceDetectorTally {
    static constexpr bool kScoresFaces = true, kNeedsMoves = true, kNeedsClock = true;
    // The detectors: bits per face id, and per detector its zone (centre x, y, z, radius^2).
    const unsigned long long* faceDetectors = nullptr;
    const double* zones = nullptr;
    uint32_t faces = 0;
    // Detecting runs: the record buffer (maxRecords records and their regions path lengths),
    // the detections found (records appended or not), the lowest packet index of a detection
    // that found the buffer full.
    DetectedRecord* records = nullptr;
    float* paths = nullptr;
    uint32_t* scatterCounts = nullptr;  // per record as paths
    unsigned long long* found = nullptr;
    unsigned long long* lowestLost = nullptr;
    uint64_t maxRecords = 0;
    uint32_t regions = 0;
    // Replays (jacobian set): per packet slot its recorded detectors and exit weight; the
    // Jacobian [detector][cell]; packets that do not reproduce their records.
    double* jacobian = nullptr;
    uint32_t cells = 0;
    const unsigned long long* replayDetectors = nullptr;
    const float* replayWeight = nullptr;
    unsigned long long* mismatched = nullptr;
    // The packet in flight.
    uint64_t index = 0;
    unsigned long long want = 0, hit = 0;
    float wantWeight = 0, exitWeight = 0;
    uint32_t material = 0;  // of the last move: where an interaction that follows it happens
    // Path of material i at path[i * pathStride]: the thread's own array or scratch slice
    // (detectKernel's), kept apart from the scorer so that the scorer's other members stay in
    // registers (an array indexed at run time is addressed in local memory, and so would be a
    // struct holding it).
    // Its scattering events of material i at count[i * pathStride], kept the same way.
    float* path = nullptr;
    uint32_t* count = nullptr;
    uint32_t pathStride = 1;

    // Before launchPacket: packet `index`, at position `slot` of the replay list.
    __device__ void startPacket(uint64_t slot, uint64_t packetIndex) {
        index = packetIndex;
        hit = 0;
        exitWeight = -1.f;
        if (jacobian) {
            want = replayDetectors[slot];
            wantWeight = replayWeight[slot];
        } else {
            for (uint32_t r = 0; r <= regions; ++r) {
                path[size_t(r) * pathStride] = 0.f;
                count[size_t(r) * pathStride] = 0u;
            }
        }
    }
    __device__ void move(const PacketState& st, uint32_t mat, float dist) {
        if (!jacobian) {
            path[size_t(mat) * pathStride] += dist;
            material = mat;
            return;
        }
        const double dj = -double(wantWeight) * double(dist);
        for (unsigned long long bits = want; bits; bits &= bits - 1)
            atomicAdd(jacobian + size_t(__ffsll((long long)bits) - 1) * cells + st.pk.tetra, dj);
    }
    // Every interaction (booked right after its move): a detected packet survived them all, so
    // its counts sum to its steps.
    __device__ void absorb(const PacketState&, double) {
        if (!jacobian) ++count[size_t(material) * pathStride];
    }
    __device__ void exit(const PacketState& st, uint32_t face) {
        const uint32_t f = face & ~kFaceSideBit;
        unsigned long long bits = f < faces ? __ldg(faceDetectors + f) : 0ull;
        for (; bits; bits &= bits - 1) {
            const int d = __ffsll((long long)bits) - 1;
            const double* z = zones + 4 * d;
            const double dx = st.pk.pos.x - z[0], dy = st.pk.pos.y - z[1], dz = st.pk.pos.z - z[2];
            if (dx * dx + dy * dy + dz * dz <= z[3]) hit |= 1ull << d;
        }
        if (!hit) return;
        exitWeight = st.pk.w;
        if (!jacobian) append(st);
    }
    __device__ void end(const PacketState&) {
        if (jacobian && ((hit & want) != want || exitWeight != wantWeight)) atomicAdd(mismatched, 1ull);
    }
    // One record per detector of `hit`; a full buffer counts the detection and lowers lowestLost.
    __device__ void append(const PacketState& st) {
        const float time = float(double(st.opl) / kLightSpeedMmPerNs);
        for (unsigned long long bits = hit; bits; bits &= bits - 1) {
            const unsigned long long k = atomicAdd(found, 1ull);
            if (k >= maxRecords) {
                atomicMin(lowestLost, (unsigned long long)index);
                continue;
            }
            DetectedRecord* rec = records + k;
            rec->index = index;
            rec->detector = uint32_t(__ffsll((long long)bits) - 1);
            rec->scatters = st.steps;
            rec->weight = st.pk.w;
            rec->time = time;
            rec->pos[0] = st.pk.pos.x, rec->pos[1] = st.pk.pos.y, rec->pos[2] = st.pk.pos.z;
            rec->dir[0] = st.pk.dir.x, rec->dir[1] = st.pk.dir.y, rec->dir[2] = st.pk.dir.z;
            float* p = paths + size_t(k) * regions;
            uint32_t* c = scatterCounts + size_t(k) * regions;
            for (uint32_t r = 0; r < regions; ++r) {
                p[r] = path[size_t(r + 1) * pathStride];
                c[r] = count[size_t(r + 1) * pathStride];
            }
        }
    }
};

using DetectScorer = TallyScorer<true, true, true, DeviceAtomicAdd, uint32_t, DeviceDetectorTally>;

// The warp loop (CudaEngine.cuh warpLoop) with the detector told each packet's index and
// replay slot before its launch; replayIndex maps slots to packet indices (null: slot = index).
// scratch, countScratch: the launch's path and scatter count slices for models of more than
// kGpuDetectMaterials materials (null: local arrays).
template <class Scorer>
__global__ void __launch_bounds__(kBlock, kMinBlocksPerSm)
detectKernel(DeviceModel m, KernelParams kp, uint64_t first, uint64_t count, Scorer scIn, DeviceTotals* totals,
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

// Replicas of the standard tallies as the standard kernel's runs make them (CudaKernel.cu).
uint32_t tallyCopies(size_t doubles) {
    return doubles * sizeof(double) > (size_t(4) << 20) ? 1u : replicaCountPow2(doubles, 32);
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
    DeviceBuffer<unsigned long long> faceDetectors, counters;  // counters: found, lowestLost, mismatched
    DeviceBuffer<double> zones;

    DetectDevice(const KernelInput& in, const DetectionSpec& spec)
        : input(in, s), materials(holdMaterials(in.materials, s)), nv(in.cells.size()), ns(in.faceCount),
          stride(nv + 3 * ns), copies(tallyCopies(stride)),
          tallies(stride * copies, "tallies"), totals(1, "ledger"), rare(kRareLedgerCopies, "ledger replicas"),
          faceDetectors(spec.faceDetectors.size(), "face detectors"), counters(3, "detection counters"),
          zones(4 * spec.detectors.size(), "detector zones") {
        tallies.zero(s);
        totals.zero(s);
        rare.zero(s);
        const std::vector<unsigned long long> fd(spec.faceDetectors.begin(), spec.faceDetectors.end());
        faceDetectors.upload(fd, s);
        const std::vector<unsigned long long> start{0, ~0ull, 0};
        counters.upload(start, s);
        std::vector<double> z;
        for (const DetectorZone& d : spec.detectors) z.insert(z.end(), {d.centre[0], d.centre[1], d.centre[2], d.radius2});
        zones.upload(z, s);
        cudaCheck(cudaStreamSynchronize(s), "upload");
    }
    DetectScorer scorer() const {
        DetectScorer sc;
        sc.volume = tallies.get();
        sc.surface = tallies.get() + nv;
        sc.directed = tallies.get() + nv + ns;
        sc.setReplicas(copies - 1, uint32_t(stride));
        DeviceDetectorTally& d = sc.tally<DeviceDetectorTally>();
        d.faceDetectors = faceDetectors.get();
        d.zones = zones.get();
        d.faces = uint32_t(faceDetectors.size());
        d.found = counters.get();
        d.lowestLost = counters.get() + 1;
        d.mismatched = counters.get() + 2;
        return sc;
    }
    BatchRun run(const RunOptions& opt, const DetectScorer& sc, const unsigned long long* replayIndex,
                 uint32_t materials) {
        // Scratch for models with more materials than the local array holds: per stream of
        // runBatches, a slice of `materials` floats for each thread a launch can have.
        DeviceBuffer<float> scratch;
        DeviceBuffer<uint32_t> countScratch;
        size_t half = 0;
        if (materials > kGpuDetectMaterials) {
            int device = 0, sms = 0, fit = 0;
            cudaCheck(cudaGetDevice(&device), "get device");
            cudaCheck(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "query SMs");
            cudaCheck(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, detectKernel<DetectScorer>, kBlock, 0), "occupancy");
            half = size_t(sms) * size_t(std::max(fit, 1)) * kBlock * materials;
            scratch.allocate(2 * half, "per-thread path lengths of the detectors");
            countScratch.allocate(2 * half, "per-thread scatter counts of the detectors");
        }
        const BatchRun b = runBatches(detectKernel<DetectScorer>, 0, opt, s,
                                      [&](unsigned blocks, cudaStream_t on, uint64_t first, uint64_t n, unsigned long long* next) {
                                          const size_t at = on == cudaStream_t(s) ? 0 : half;
                                          float* own = half ? scratch.get() + at : nullptr;
                                          uint32_t* ownCounts = half ? countScratch.get() + at : nullptr;
                                          detectKernel<DetectScorer><<<blocks, kBlock, 0, on>>>(
                                              input.model(), opt.params, first, n, sc, totals.get(), next, rare.get(),
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
void selectOneDevice(const RunOptions& opt, const char* what) {
    std::string why;
    if (!cudaDeviceAvailable(&why)) throw Error(std::string(what) + ": kernel cuda: " + why);
    const std::vector<int> ds = cudaResolveDevices(opt.devices);
    if (ds.size() != 1)
        throw ParameterError(std::string(what) + " on the GPU use one device; " + std::to_string(ds.size()) +
                             " were given (name one with --devices)");
    cudaCheck(cudaSetDevice(ds[0]), "select device");
}

// The device record buffer: records, their path lengths and scatter counts per region.
struct RecordBuffers {
    DeviceBuffer<DetectedRecord> records;
    DeviceBuffer<float> paths;
    DeviceBuffer<uint32_t> scatterCounts;
    RecordBuffers(uint64_t slots, uint32_t regions)
        : records(slots, "detected-packet records (keep fewer: --max-detected)"),
          paths(slots * regions, "detected path lengths (keep fewer: --max-detected)"),
          scatterCounts(slots * regions, "detected scatter counts (keep fewer: --max-detected)") {}
    void setIn(DeviceDetectorTally& d) const {
        d.records = records.get();
        d.paths = paths.get();
        d.scatterCounts = scatterCounts.get();
    }
};

// Detection counters of the device: found, lowestLost, mismatched.
struct DetectCounters {
    unsigned long long found = 0, lowestLost = ~0ull, mismatched = 0;
};

DetectCounters readCounters(DetectDevice& dev) {
    const std::vector<unsigned long long> c = dev.counters.download(dev.s);
    return DetectCounters{c[0], c[1], c[2]};
}

void resetCounters(DetectDevice& dev) {
    const std::vector<unsigned long long> start{0, ~0ull, 0};
    dev.counters.upload(start, dev.s);
}

// Record order keys of the first n records: packet index x 64 + detector (kMaxDetectors = 64:
// keys never tie), and their slots.
__global__ void recordKeysKernel(const DetectedRecord* records, uint32_t n, unsigned long long* keys, uint32_t* slots) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    keys[i] = (unsigned long long)records[i].index << 6 | records[i].detector;
    slots[i] = i;
}

// Of n sorted keys, how many are below `limit` (the thread at the boundary writes it; count
// starts at 0).
__global__ void countBelowKernel(const unsigned long long* keys, uint32_t n, unsigned long long limit,
                                 unsigned long long* count) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && keys[i] < limit && (i + 1 == n || keys[i + 1] >= limit)) *count = i + 1ull;
}

// Record j of the order is record slots[j], with its path lengths and scatter counts.
__global__ void gatherRecordsKernel(const DetectedRecord* records, const float* paths, const uint32_t* counts,
                                    const uint32_t* slots, uint32_t m, uint32_t regions, DetectedRecord* outRecords,
                                    float* outPaths, uint32_t* outCounts) {
    const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= m) return;
    const size_t k = slots[j];
    outRecords[j] = records[k];
    for (uint32_t r = 0; r < regions; ++r) {
        outPaths[size_t(j) * regions + r] = paths[k * regions + r];
        outCounts[size_t(j) * regions + r] = counts[k * regions + r];
    }
}

// Allocates b, or says the device has not the memory (false, nothing thrown).
template <class T>
bool allocated(DeviceBuffer<T>& b, size_t n) {
    try {
        b.allocate(n, "ordering detected records");
        return true;
    } catch (const Error&) {
        return false;
    }
}

// appendRecordsBelow with the ordering on the device: the n filled records' keys radix-sorted
// (CUB) over the bits that packet indices below indexEnd need, the first records below `below`
// gathered in order, and only those downloaded, straight into dp. False (dp untouched) where the
// device lacks the memory or the keys cannot hold the indices.
bool appendOrderedOnDevice(DetectDevice& dev, const RecordBuffers& b, size_t n, uint64_t below, uint64_t indexEnd,
                           uint64_t keep, DetectedPackets& dp) {
    if (n > 0x7fffffffu || indexEnd >= (uint64_t(1) << 57)) return false;  // CUB counts items in an int
    const uint32_t count = uint32_t(n), R = dp.regions;
    int endBit = 6;
    while (endBit < 64 && (indexEnd << 6 | 63) >> endBit) ++endBit;
    DeviceBuffer<unsigned long long> keys, sortedKeys, below1;
    DeviceBuffer<uint32_t> slots, sortedSlots;
    DeviceBuffer<unsigned char> temp;
    size_t tempBytes = 0;
    cudaCheck(cub::DeviceRadixSort::SortPairs(nullptr, tempBytes, keys.get(), sortedKeys.get(), slots.get(),
                                              sortedSlots.get(), count, 0, endBit, dev.s),
              "record order (size)");
    if (!allocated(keys, n) || !allocated(sortedKeys, n) || !allocated(slots, n) || !allocated(sortedSlots, n) ||
        !allocated(temp, std::max<size_t>(tempBytes, 1)) || !allocated(below1, 1))
        return false;
    const unsigned blocks = unsigned((n + kBlock - 1) / kBlock);
    recordKeysKernel<<<blocks, kBlock, 0, dev.s>>>(b.records.get(), count, keys.get(), slots.get());
    cudaCheck(cudaGetLastError(), "record keys");
    cudaCheck(cub::DeviceRadixSort::SortPairs(temp.get(), tempBytes, keys.get(), sortedKeys.get(), slots.get(),
                                              sortedSlots.get(), count, 0, endBit, dev.s),
              "record order");
    below1.zero(dev.s);
    const unsigned long long limit = below >= indexEnd ? ~0ull : (unsigned long long)below << 6;
    countBelowKernel<<<blocks, kBlock, 0, dev.s>>>(sortedKeys.get(), count, limit, below1.get());
    cudaCheck(cudaGetLastError(), "records below");
    const size_t have = dp.records.size();
    const size_t m = size_t(std::min<uint64_t>(below1.download(dev.s)[0], keep - have));
    DeviceBuffer<DetectedRecord> outRecords;
    DeviceBuffer<float> outPaths;
    DeviceBuffer<uint32_t> outCounts;
    if (!allocated(outRecords, m) || !allocated(outPaths, m * R) || !allocated(outCounts, m * R)) return false;
    if (m) {
        gatherRecordsKernel<<<unsigned((m + kBlock - 1) / kBlock), kBlock, 0, dev.s>>>(
            b.records.get(), b.paths.get(), b.scatterCounts.get(), sortedSlots.get(), uint32_t(m), R,
            outRecords.get(), outPaths.get(), outCounts.get());
        cudaCheck(cudaGetLastError(), "record gather");
    }
    dp.records.resize(have + m);
    dp.pathLengths.resize((have + m) * R);
    dp.scatterCounts.resize((have + m) * R);
    outRecords.downloadTo(dp.records.data() + have, m, dev.s);
    outPaths.downloadTo(dp.pathLengths.data() + have * R, m * R, dev.s);
    outCounts.downloadTo(dp.scatterCounts.data() + have * R, m * R, dev.s);
    cudaCheck(cudaStreamSynchronize(dev.s), "download records");
    return true;
}

// Appends to dp the records in the device buffer (`stored` slots filled) of the packets below
// `below` (all packet indices are below indexEnd), in (index, detector) order, until dp holds
// `keep` records: ordered on the device (tuning cudaDeviceRecordOrder, where memory allows),
// else downloaded as filled and ordered on the host.
void appendRecordsBelow(DetectDevice& dev, const RecordBuffers& b, unsigned long long stored, uint64_t below,
                        uint64_t indexEnd, uint64_t keep, const TuningKnobs& tuning, DetectedPackets& dp) {
    const size_t n = size_t(std::min<unsigned long long>(stored, b.records.size()));
    if (n == 0 || dp.records.size() >= keep) return;
    if (tuning.cudaDeviceRecordOrder && appendOrderedOnDevice(dev, b, n, below, indexEnd, keep, dp)) return;
    const std::vector<DetectedRecord> r = b.records.download(dev.s, n);
    const std::vector<float> p = b.paths.download(dev.s, n * dp.regions);
    const std::vector<uint32_t> c = b.scatterCounts.download(dev.s, n * dp.regions);
    appendInRecordOrder(RecordBufferView{r.data(), p.data(), c.data(), n, dp.regions}, below, keep,
                        RecordArrays{dp.records, dp.pathLengths, dp.scatterCounts});
}

// Fills a truncated run's records up to maxRecords, as the CPU keeps them: dp holds every record
// of the packets below `from` (the main run's lowest lost index); packets from, from + 1, ...
// up to `end` run again, with their own (seed, index) streams and the detecting kernel itself,
// so their records are bit-identical to the main run's (their tally additions go to the arrays
// already read, and are dropped). They run in index-ordered chunks sized for the records still
// wanted at `rate` detections per packet, within the buffer; each chunk keeps the records below its own lowest
// lost index and the next starts there. A chunk that keeps nothing (its first packet was lost)
// is halved: a one-packet chunk always fits, the buffer holding at least kMaxDetectors records.
// Returns the packets run again.
uint64_t refillRecords(DetectDevice& dev, const RunOptions& opt, DetectScorer sc, const RecordBuffers& b,
                       uint64_t from, uint64_t end, uint32_t materials, uint64_t maxRecords, double rate,
                       DetectedPackets& dp) {
    sc.tally<DeviceDetectorTally>().maxRecords = b.records.size();
    RunOptions ro = opt;
    ro.progress = nullptr;
    uint64_t rerun = 0, cap = end - from;
    // Detections a chunk may expect: what is still needed (3 standard deviations over), but no
    // more than keep clear of the buffer's end by 3 standard deviations, so that a chunk rarely
    // overflows and runs again from its lowest lost index.
    const double slots = double(b.records.size()), fit = std::max(1.0, slots - 3.0 * std::sqrt(slots));
    while (dp.records.size() < maxRecords && from < end) {
        const double need = double(maxRecords - dp.records.size());
        const double chunk = std::ceil(std::min(need + 3.0 * std::sqrt(need) + 1.0, fit) / rate);
        ro.firstPacket = from;
        ro.packets = std::min<uint64_t>({uint64_t(std::min(chunk, 1e18)), end - from, cap});
        resetCounters(dev);
        const uint64_t done = dev.run(ro, sc, nullptr, materials).packetsDone;
        rerun += done;
        const DetectCounters c = readCounters(dev);
        const uint64_t below = std::min<uint64_t>(c.lowestLost, from + done);
        appendRecordsBelow(dev, b, c.found, below, end, maxRecords, opt.tuning, dp);
        if (done < ro.packets) break;  // cancelled
        if (below > from) {
            from = below;
            cap = std::max(cap, std::min(end - from, 2 * cap));
        } else {
            cap = std::max<uint64_t>(1, ro.packets / 2);
        }
    }
    return rerun;
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
    selectOneDevice(opt, "detecting runs");
    RunResult r;
    r.kernel = "cuda";
    r.packetsRequested = opt.packets;
    r.detected = describeDetectingRun(in, opt, spec);
    DetectedPackets& dp = r.detected;
    dp.kernel = "cuda";
    DetectDevice dev(in, spec);
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
    const DetectCounters c = readCounters(dev);
    dp.detected = c.found;
    appendRecordsBelow(dev, bufs, c.found, c.lowestLost, opt.firstPacket + opt.packets, spec.maxRecords, opt.tuning, dp);
    r.packetsDone = b.packetsDone;
    r.cancelled = r.packetsDone < opt.packets;
    if (dp.truncated() && !r.cancelled)
        dp.refilledPackets = refillRecords(dev, opt, sc, bufs, c.lowestLost, opt.firstPacket + opt.packets,
                                           uint32_t(in.materials.size()), spec.maxRecords,
                                           double(c.found) / double(std::max<uint64_t>(1, b.packetsDone)), dp);
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
    const ReplayPackets list = replayPackets(dp);
    const size_t nv = in.cells.size(), nDet = spec.detectors.size();
    ReplayResult out;
    out.jacobian.assign(nDet, std::vector<double>(nv, 0.0));
    if (list.index.empty()) return out;
    selectOneDevice(opt, "replays");
    DetectDevice dev(in, spec);
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
    out.mismatched = dev.counters.download(dev.s)[2];
    const std::vector<double> J = jac.download(dev.s);
    for (size_t k = 0; k < nDet; ++k) std::copy(J.begin() + k * nv, J.begin() + (k + 1) * nv, out.jacobian[k].begin());
    return out;
}

}  // namespace fm
