// SPDX-License-Identifier: GPL-3.0-or-later
// Per-packet records on the GPU, shared by the detecting mesh kernel (DetectCuda.cu) and the
// recording MCML slab kernel (McmlCuda.cu): DeviceDetectorTally, a tally of the pack
// (Kernels/Core/Tally.hpp hooks) that keeps each packet's path and scatter count per material,
// tests its exit against the detectors (a face -> detector bits table and the detector zones in
// device memory) and appends the records into a bounded device buffer (in a mesh replay it adds
// each move of a listed packet into the mu_a Jacobian instead); and the host side of a recording
// run: the buffer, its counters, and the truncation rule "exactly the first N records by
// (packet index, detector)" (appendRecordsBelow, refillRecords), whatever kernel fills them.
#pragma once
#include "Kernels/CUDA/CudaEngine.cuh"

#include <algorithm>
#include <cmath>

#include <cub/device/device_radix_sort.cuh>

#include "Kernels/DetectedOrder.hpp"
#include "Kernels/Detection.hpp"

namespace fm {
namespace detect_records {

using namespace cuda_engine;

// The detector tally of the GPU's record runs (one copy per thread: one packet at a time).
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
    double* detectedWeight = nullptr;  // [detector]: weight of every detection, kept or not (null: not added up)
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
    // (detectKernel's, mcmlSlabKernel's), kept apart from the scorer so that the scorer's other members stay in
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
            if (detectedWeight) atomicAdd(detectedWeight + (__ffsll((long long)bits) - 1), double(st.pk.w));
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

// DeviceDetectorTally for packets that take many steps in one material between changes (the
// MCML slab kernel's photons, layer crossings being rare beside interactions): the path and
// interactions since the packet entered `material` are kept in registers and added to the
// thread's arrays when it leaves that material or is recorded, one local-memory update per
// material change instead of one per step. The mesh's detecting kernel keeps the per-step
// updates: at its register limit the two extra registers spill.
struct DeviceSegmentDetectorTally : DeviceDetectorTally {
    float segmentPath = 0.f;
    uint32_t segmentCount = 0;

    __device__ void startPacket(uint64_t slot, uint64_t packetIndex) {
        DeviceDetectorTally::startPacket(slot, packetIndex);
        segmentPath = 0.f;
        segmentCount = 0u;
    }
    __device__ void flushSegment() {
        path[size_t(material) * pathStride] += segmentPath;
        count[size_t(material) * pathStride] += segmentCount;
        segmentPath = 0.f;
        segmentCount = 0u;
    }
    __device__ void move(const PacketState& st, uint32_t mat, float dist) {
        if (jacobian) return DeviceDetectorTally::move(st, mat, dist);
        if (mat != material) {
            flushSegment();
            material = mat;
        }
        segmentPath += dist;
    }
    __device__ void absorb(const PacketState&, double) {
        if (!jacobian) ++segmentCount;
    }
    __device__ void exit(const PacketState& st, uint32_t face) {
        if (!jacobian) flushSegment();  // before a record copies the arrays
        DeviceDetectorTally::exit(st, face);
    }
};

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

// Detection counters of the device (DeviceDetectorTally's found, lowestLost, mismatched).
struct DetectCounters {
    unsigned long long found = 0, lowestLost = ~0ull, mismatched = 0;
};

// The detectors in device memory, as DeviceDetectorTally reads them: the detector bits per face
// id, the zones (centre x, y, z, radius^2 per detector) and the detection counters.
struct DetectorTables {
    DeviceBuffer<unsigned long long> faceDetectors, counters;  // counters: found, lowestLost, mismatched
    DeviceBuffer<double> zones;

    DetectorTables(const DetectionSpec& spec, cudaStream_t s)
        : faceDetectors(spec.faceDetectors.size(), "face detectors"), counters(3, "detection counters"),
          zones(4 * spec.detectors.size(), "detector zones") {
        const std::vector<unsigned long long> fd(spec.faceDetectors.begin(), spec.faceDetectors.end());
        faceDetectors.upload(fd, s);
        reset(s);
        std::vector<double> z;
        for (const DetectorZone& d : spec.detectors) z.insert(z.end(), {d.centre[0], d.centre[1], d.centre[2], d.radius2});
        zones.upload(z, s);
    }
    void setIn(DeviceDetectorTally& d) const {
        d.faceDetectors = faceDetectors.get();
        d.zones = zones.get();
        d.faces = uint32_t(faceDetectors.size());
        d.found = counters.get();
        d.lowestLost = counters.get() + 1;
        d.mismatched = counters.get() + 2;
    }
    DetectCounters read(cudaStream_t s) const {
        const std::vector<unsigned long long> c = counters.download(s);
        return DetectCounters{c[0], c[1], c[2]};
    }
    void reset(cudaStream_t s) {
        const std::vector<unsigned long long> start{0, ~0ull, 0};
        counters.upload(start, s);
    }
};

// Record order keys of the first n records: packet index x 64 + detector (kMaxDetectors = 64:
// keys never tie), and their slots. The kernels and their host driver are file-local: each .cu
// that includes this header has its own copy.
namespace {
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
bool appendOrderedOnDevice(cudaStream_t s, const RecordBuffers& b, size_t n, uint64_t below, uint64_t indexEnd,
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
                                              sortedSlots.get(), count, 0, endBit, s),
              "record order (size)");
    if (!allocated(keys, n) || !allocated(sortedKeys, n) || !allocated(slots, n) || !allocated(sortedSlots, n) ||
        !allocated(temp, std::max<size_t>(tempBytes, 1)) || !allocated(below1, 1))
        return false;
    const unsigned blocks = unsigned((n + kBlock - 1) / kBlock);
    recordKeysKernel<<<blocks, kBlock, 0, s>>>(b.records.get(), count, keys.get(), slots.get());
    cudaCheck(cudaGetLastError(), "record keys");
    cudaCheck(cub::DeviceRadixSort::SortPairs(temp.get(), tempBytes, keys.get(), sortedKeys.get(), slots.get(),
                                              sortedSlots.get(), count, 0, endBit, s),
              "record order");
    below1.zero(s);
    const unsigned long long limit = below >= indexEnd ? ~0ull : (unsigned long long)below << 6;
    countBelowKernel<<<blocks, kBlock, 0, s>>>(sortedKeys.get(), count, limit, below1.get());
    cudaCheck(cudaGetLastError(), "records below");
    const size_t have = dp.records.size();
    const size_t m = size_t(std::min<uint64_t>(below1.download(s)[0], keep - have));
    DeviceBuffer<DetectedRecord> outRecords;
    DeviceBuffer<float> outPaths;
    DeviceBuffer<uint32_t> outCounts;
    if (!allocated(outRecords, m) || !allocated(outPaths, m * R) || !allocated(outCounts, m * R)) return false;
    if (m) {
        gatherRecordsKernel<<<unsigned((m + kBlock - 1) / kBlock), kBlock, 0, s>>>(
            b.records.get(), b.paths.get(), b.scatterCounts.get(), sortedSlots.get(), uint32_t(m), R,
            outRecords.get(), outPaths.get(), outCounts.get());
        cudaCheck(cudaGetLastError(), "record gather");
    }
    dp.records.resize(have + m);
    dp.pathLengths.resize((have + m) * R);
    dp.scatterCounts.resize((have + m) * R);
    outRecords.downloadTo(dp.records.data() + have, m, s);
    outPaths.downloadTo(dp.pathLengths.data() + have * R, m * R, s);
    outCounts.downloadTo(dp.scatterCounts.data() + have * R, m * R, s);
    cudaCheck(cudaStreamSynchronize(s), "download records");
    return true;
}
}  // namespace

// Appends to dp the records in the device buffer (`stored` slots filled) of the packets below
// `below` (all packet indices are below indexEnd), in (index, detector) order, until dp holds
// `keep` records: ordered on the device (tuning cudaDeviceRecordOrder, where memory allows),
// else downloaded as filled and ordered on the host.
inline void appendRecordsBelow(cudaStream_t s, const RecordBuffers& b, unsigned long long stored, uint64_t below,
                               uint64_t indexEnd, uint64_t keep, const TuningKnobs& tuning, DetectedPackets& dp) {
    const size_t n = size_t(std::min<unsigned long long>(stored, b.records.size()));
    if (n == 0 || dp.records.size() >= keep) return;
    if (tuning.cudaDeviceRecordOrder && appendOrderedOnDevice(s, b, n, below, indexEnd, keep, dp)) return;
    const std::vector<DetectedRecord> r = b.records.download(s, n);
    const std::vector<float> p = b.paths.download(s, n * dp.regions);
    const std::vector<uint32_t> c = b.scatterCounts.download(s, n * dp.regions);
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
// runChunk(ro) resets the counters and runs ro's packets (ro.firstPacket on) through the
// recording kernel into b, every slot of b usable, and returns the packets done; counters()
// reads the counters. Returns the packets run again.
template <class RunChunk, class ReadCounters>
uint64_t refillRecords(cudaStream_t s, const RunOptions& opt, RunChunk runChunk, ReadCounters counters,
                       const RecordBuffers& b, uint64_t from, uint64_t end, uint64_t maxRecords, double rate,
                       DetectedPackets& dp) {
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
        const uint64_t done = runChunk(ro);
        rerun += done;
        const DetectCounters c = counters();
        const uint64_t below = std::min<uint64_t>(c.lowestLost, from + done);
        appendRecordsBelow(s, b, c.found, below, end, maxRecords, opt.tuning, dp);
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

}  // namespace detect_records
}  // namespace fm
