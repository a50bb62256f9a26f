// SPDX-License-Identifier: GPL-3.0-or-later
// MCML mode on the GPU: the engine's batched launches (CudaEngine.cuh) of the slab photon loop
// (Kernels/McmlSlabLoop.hpp: the common packet loop's physics written out for layers) over the
// slab geometry computed from the layer bounds (DeviceSlabModel): no cell records are read.
// Tallies accumulate through double atomics into replicas (CudaEngine.cuh). A run with per-photon
// records (Kernels/McmlRecords.hpp) adds the detector tally of the mesh detectors
// (DetectRecords.cuh) to the pack, its records kept as the mesh detecting run keeps them.
#include "Kernels/CUDA/CudaEngine.cuh"
#include "Kernels/CUDA/DetectCuda.hpp"
#include "Kernels/CUDA/DetectRecords.cuh"
#include "Kernels/McmlKernel.hpp"
#include "Kernels/McmlRecords.hpp"
#include "Kernels/McmlSlabLoop.hpp"
#include "Kernels/McmlTimeTally.hpp"

#include <algorithm>
#include <memory>
#include <string>

#include "Common/ResourceLimits.hpp"

namespace fm {

using namespace cuda_engine;
using namespace detect_records;

namespace {

// The MCML arrays in device memory: A(r,z) and the layer cells replicated (CudaEngine.cuh).
struct DeviceSlabTallies {
    double* rz = nullptr;
    // The plain run's bins at the beam (the first nearBins of the grid) in nearCopies replicas
    // of their own (McmlAbsorbDifferenceTally::nearRZ); nearBins 0: none.
    double* rzNear = nullptr;
    uint32_t nearBins = 0;
    uint32_t nearCopies = 1;
    double* reflected = nullptr;
    double* transmitted = nullptr;
    double* cells = nullptr;
    // > 0: a thread adds its layer visits into its own row of this many doubles of the kernel's
    // dynamic shared memory, the rows' column sums (nCells of them) added to `cells` once per
    // block; 0: each visit is an atomic add to `cells` (layerCellRows decides).
    uint32_t cellRowStride = 0;
    uint32_t nCells = 0;
    // Time-resolved runs (McmlTimeTally.hpp): Rd(r,t), Tt(r,t), A(z,t), by atomics; else null.
    // A(z,t), which every interaction adds to, is ztCopies replicas of ztBins (block b adds into
    // replica b % ztCopies).
    double* reflectedRT = nullptr;
    double* transmittedRT = nullptr;
    double* absorbedZT = nullptr;
    uint32_t ztBins = 0;
    uint32_t ztCopies = 1;
    GateBins gates;
    // Runs with records: the detector tally's tables and buffers (its per-photon path arrays
    // are the thread's own, set by the kernel).
    DeviceSegmentDetectorTally detector;
};

// A(r,z) on the GPU (McmlAbsorbTally with its own accumulation), into this block's replica.
// One `red.global.add.f64` per interaction would hold the kernel at the L2's atomic
// throughput. A thread adds successive deposits into the same bin in a register and sends the
// sum when the bin changes (about a third of deposits share the previous one's bin): fewer
// atomics, the same tallies to rounding.
struct DeviceRzTally {
    double* absorbedRZ = nullptr;
    McmlGrid rzGrid;
    uint32_t rzBin = 0;  // the bin being added up, and its sum so far
    double rzSum = 0.0;

    // A sum of zero (before a thread's first deposit) is sent too: it adds nothing, and the send
    // needs no test of the sum.
    __device__ void deposit(uint32_t i, double dw) {
        if (i != rzBin) {
            DeviceAtomicAdd::add(absorbedRZ + rzBin, rzSum);
            rzBin = i;
            rzSum = 0.0;
        }
        rzSum += dw;
    }
    __device__ void absorb(const PacketState& st, double dw) { deposit(rzGrid.rzBin(st.pk.pos), dw); }
    __device__ void flush() {
        if (rzSum != 0.0) DeviceAtomicAdd::add(absorbedRZ + rzBin, rzSum);
        rzSum = 0.0;
    }
};

// The layer cells on the GPU: McmlLayerTally's visits (kVisitSums; the slab loop books the
// absorption per layer visit, a few per crossing group), added into this thread's row of
// shared memory where the kernel has rows (DeviceSlabTallies::cellRowStride), else by an atomic
// into this block's replica of the cells. It holds no register: the row stride and the block's
// replica are set in shared memory at the block's start and read at each visit.
__shared__ uint32_t sCellRowStride;
__shared__ double* sBlockCells;
extern __shared__ double cellRows[];  // blockDim.x rows of sCellRowStride doubles (or none)
struct DeviceLayerTally {
    static constexpr bool kVisitSums = true;
    __device__ void visit(const PacketState& st, double w) {
        const uint32_t s = sCellRowStride;
        if (s) DeviceRowAdd::add(cellRows + threadIdx.x * s + st.pk.tetra, w);
        else DeviceAtomicAdd::add(sBlockCells + st.pk.tetra, w);
    }
};

// MCML's tallies on the GPU (Kernels/McmlScorer.hpp): A(r,z) (into this block's replica), the
// layer cells (the plain run's by DeviceLayerTally) and the exits into the (r, angle) grids by
// atomics. The plain run's A(r,z) is McmlAbsorbDifferenceTally (the slab loop's
// kDepositsAsDifferences): a run of deposits into one bin sent from the weights where it began
// and ended, which needs no per-interaction addition; the runs with time gates or records below
// keep DeviceRzTally (they book every deposit).
using DeviceRzDifferenceTally = McmlAbsorbDifferenceTally<DeviceAtomicAdd>;
using DeviceMcmlTallies =
    TallyPack<uint32_t, DeviceRzDifferenceTally, McmlExitTally<DeviceAtomicAdd>, DeviceLayerTally>;
// The same with the time-resolved tallies (a run with time gates).
using DeviceMcmlTimeTallies = TallyPack<uint32_t, DeviceRzTally, McmlExitTally<DeviceAtomicAdd>,
                                        McmlLayerTally<DeviceAtomicAdd>, McmlTimeTally<DeviceAtomicAdd>>;
// Atomics without the tallies' one-entry caches (AccUsesCache).
struct DeviceAtomicAddUncached : DeviceAtomicAdd {
    static constexpr bool kCache = false;
};
// The same two with the per-photon records (a run with RunOptions::detection); the time +
// records kernel adds each deposit to A(z, t) without the cache (it has no register to spare:
// the cache made it spill).
using DeviceMcmlRecordTallies = TallyPack<uint32_t, DeviceRzTally, McmlExitTally<DeviceAtomicAdd>,
                                          McmlLayerTally<DeviceAtomicAdd>, DeviceSegmentDetectorTally>;
using DeviceMcmlTimeRecordTallies = TallyPack<uint32_t, DeviceRzTally, McmlExitTally<DeviceAtomicAdd>,
                                              McmlLayerTally<DeviceAtomicAdd>, McmlTimeTally<DeviceAtomicAddUncached>,
                                              DeviceSegmentDetectorTally>;
template <class Tallies>
constexpr bool kRecords = std::is_base_of_v<DeviceDetectorTally, Tallies>;
template <class Tallies>
constexpr bool kTimed = std::is_base_of_v<McmlTimeTally<DeviceAtomicAdd>, Tallies> ||
                        std::is_base_of_v<McmlTimeTally<DeviceAtomicAddUncached>, Tallies>;
// The plain run's layer cells may be rows of shared memory (DeviceLayerTally); the runs with
// time gates or records keep a global atomic per visit (their kernels have no registers to spare).
template <class Tallies>
constexpr bool kCellRows = std::is_base_of_v<DeviceLayerTally, Tallies>;

template <class Tallies>
__device__ Tallies deviceMcmlTallies(const DeviceSlabTallies& t, const McmlGrid& g) {
    Tallies p;
    p.absorbedRZ = t.rz;
    if constexpr (std::is_base_of_v<DeviceRzDifferenceTally, Tallies>) {
        p.nearRZ = t.rzNear;
        p.nearBins = t.nearBins;
    }
    p.rzGrid = g;
    p.reflectedRA = t.reflected;
    p.transmittedRA = t.transmitted;
    p.raGrid = g;
    if constexpr (!kCellRows<Tallies>) p.absorbedCell = t.cells;
    if constexpr (kTimed<Tallies>) {
        p.reflectedRT = t.reflectedRT;
        p.transmittedRT = t.transmittedRT;
        p.absorbedZT = t.absorbedZT;
        p.timeGrid = g;
        p.timeBins = t.gates;
    }
    if constexpr (kRecords<Tallies>) p.template tally<DeviceSegmentDetectorTally>() = t.detector;
    return p;
}

// The slab loop's sink (McmlSlabLoop.hpp): the tallies' hooks; the ledger and event counts it
// books only at rare events (launches, crossings, ends, roulette), so they live in shared
// memory, one slot per thread, instead of in registers.
template <class Tallies>
struct DeviceSlabSink {
    static constexpr bool kScoresFaces = Tallies::kScoresFaces;
    static constexpr bool kNeedsClock = Tallies::kNeedsClock;
    static constexpr bool kNeedsMoves = Tallies::kNeedsMoves;
    static constexpr bool kDepositsAsDifferences = std::is_base_of_v<DeviceRzDifferenceTally, Tallies>;
    static constexpr bool kBoundariesAtCrossing = true;  // counted by crossAt
    Tallies tallies;
    Ledger& ledger;
    EventCounts<uint32_t>& events;

    __device__ void launch(const PacketState& st) { tallies.launch(st); }
    __device__ void move(const PacketState& st, uint32_t material, float dist) { tallies.move(st, material, dist); }
    __device__ void absorbStep(const PacketState& st, double dw) { tallies.absorbStep(st, dw); }
    __device__ void visit(const PacketState& st, double w) { tallies.visit(st, w); }
    __device__ void exit(const PacketState& st, uint32_t face) { tallies.exit(st, face); }
    __device__ void end(const PacketState& st) { tallies.end(st); }
    __device__ void flush() { tallies.flush(); }
    // The hooks of kDepositsAsDifferences (McmlSlabLoop.hpp), for the plain run's tallies.
    __device__ void interaction(const PacketState& st, float w0) {
        tallies.template tally<DeviceRzDifferenceTally>().interaction(st, w0);
    }
    __device__ void reweight(const PacketState& st, float w1) {
        tallies.template tally<DeviceRzDifferenceTally>().reweight(st, w1);
    }
};

// Layer crossings are rare (a few per cent of events, about one lane per warp iteration) and
// cost about a hundred instructions (Fresnel, a draw, refraction, the next layer's properties)
// that the warp issues
// for the one or two lanes taking them. A lane that reaches a face waits there (moved onto it,
// crossing not done) until kCrossGroup lanes of its warp wait, or for at most kCrossWait
// iterations, and the waiting lanes cross together; one vote of the whole warp per iteration
// decides. A live lane takes up to kStepsPerIteration slab steps per iteration (the next only
// while the last left it live), so the vote and the loop's state tests are issued once per that
// many events; a lane that reaches a face waits out the iteration's other steps. A photon's
// history is the same (its own draws, in the same order): only the interleaving of lanes changes
// (test_cuda checks the event counts). Tuned on the seven-layer skin.
constexpr uint32_t kCrossGroup = 4;        // lanes that cross together
constexpr uint32_t kCrossWait = 4;         // iterations a lane waits at most for the group
constexpr int kStepsPerIteration = 2;      // slab steps a live lane takes per iteration

// Packets per thread of an MCML launch: more than the mesh kernels' (CudaEngine.cuh). A photon
// in layers lives a few hundred interactions, so a launch of this many still ends within a small
// part of a long run (progress and cancel are seen between launches), and fewer launches leave
// fewer lanes idle at their ends (each launch's last photons run in warps whose other lanes have
// run out).
constexpr uint64_t kMcmlPacketsPerThread = 8 * kPacketsPerThread;

// crossSlab, with the boundary counted there (DeviceSlabSink::kBoundariesAtCrossing: the
// lanes that cross together count it together, not each at its hop onto the face).
template <class Sink>
__device__ bool crossAt(const DeviceSlabModel& m, SlabPhoton& p, Sink& sk) {
    static_assert(Sink::kBoundariesAtCrossing, "the slab step leaves the boundary count to crossAt");
    ++sk.events.boundary;
    return crossSlab(m, p, sk);
}

// Threads take photons from the batch's counter and advance them a step or two per iteration
// (kStepsPerIteration), as packetKernel does with packets; kMinBlocksPerSm blocks per SM, as the
// mesh kernels. The ledger
// and event counts live in shared memory, one slot per thread (booked only at rare events:
// registers freed). kGroup: lanes that cross together (1: each lane crosses at once). Tallies:
// DeviceMcmlTallies, or DeviceMcmlTimeTallies for a run with time gates, or either with the
// records (the detector told each photon's index before its launch; its path and scatter count
// per layer in the thread's local arrays).
#ifdef FM_MCML_LANE_STATS
// Measurement build only: per warp iteration, lanes active / live before the step / waiting at a
// face / hopping onto a face / crossing / starting a photon, summed per block in shared memory.
__device__ unsigned long long gLaneStats[8];
#endif
template <uint32_t kGroup, class Tallies = DeviceMcmlTallies>
__global__ void __launch_bounds__(kBlock, kMinBlocksPerSm)
mcmlSlabKernel(DeviceSlabModel m, McmlGrid g, KernelParams kp, uint64_t first, uint64_t count, DeviceSlabTallies t,
               DeviceTotals* totals, unsigned long long* next, BlockTallies bt) {
    if (bt.copies[0]) t.cells = bt.replica(0);
    if (bt.copies[1]) t.rz = bt.replica(1);
    t.rzNear = blockReplica(t.rzNear, t.nearBins, t.nearCopies);
    if constexpr (kTimed<Tallies> && !kRecords<Tallies>)
        t.absorbedZT = blockReplica(t.absorbedZT, t.ztBins, t.ztCopies);
    if constexpr (kCellRows<Tallies>) {
        // DeviceLayerTally's settings (enterBlock's barrier below orders them before any visit)
        // and this thread's row, zeroed; the block adds the rows' column sums to its replica of
        // the cells at its end.
        if (threadIdx.x == 0) {
            sCellRowStride = t.cellRowStride;
            sBlockCells = t.cells;
        }
        for (uint32_t i = 0; i < t.cellRowStride; ++i) cellRows[threadIdx.x * t.cellRowStride + i] = 0.0;
    }
    __shared__ Ledger ledgers[kBlock];
    __shared__ EventCounts<uint32_t> counts[kBlock];
    Ledger& ledger = ledgers[threadIdx.x];
    EventCounts<uint32_t>& events = counts[threadIdx.x];
    ledger = Ledger{};
    events = EventCounts<uint32_t>{};
    DeviceSlabSink<Tallies> sk{deviceMcmlTallies<Tallies>(t, g), ledger, events};
    float path[kRecords<Tallies> ? kGpuDetectMaterials : 1];
    uint32_t scatters[kRecords<Tallies> ? kGpuDetectMaterials : 1];
    if constexpr (kRecords<Tallies>) {
        DeviceDetectorTally& det = sk.tallies.template tally<DeviceSegmentDetectorTally>();
        det.path = path;
        det.count = scatters;
        det.pathStride = 1;
    }
    m.enterBlock(0);
#ifdef FM_MCML_LANE_STATS
    __shared__ unsigned stats[8];
    if (threadIdx.x < 8) stats[threadIdx.x] = 0;
    __syncthreads();
    const auto leaderAdd = [&](int k, unsigned mask) {
        const unsigned act = __activemask();
        if ((threadIdx.x & 31) == __ffs(act) - 1) atomicAdd(&stats[k], __popc(mask));
    };
#endif
    SlabPhoton p;
    uint32_t state = kSlabEnded, waited = 0;
    for (;;) {
#ifdef FM_MCML_LANE_STATS
        {
            const unsigned act = __activemask();
            leaderAdd(0, act);
            leaderAdd(1, __ballot_sync(act, state == kSlabLive));
            leaderAdd(2, __ballot_sync(act, state == kSlabAtFace));
            leaderAdd(6, 1u);
        }
        const bool wasLive = state == kSlabLive;
#endif
        if (state == kSlabLive) {
            state = slabStep(m, kp, p, sk);
#pragma unroll
            for (int k = 1; k < kStepsPerIteration; ++k)
                if (state == kSlabLive) state = slabStep(m, kp, p, sk);
        }
#ifdef FM_MCML_LANE_STATS
        leaderAdd(3, __ballot_sync(__activemask(), wasLive && state == kSlabAtFace));
#endif
        if (kGroup > 1) {
            const unsigned atFace = __ballot_sync(__activemask(), state == kSlabAtFace);
            if (atFace != 0u && (__popc(atFace) >= kGroup || ++waited > kCrossWait)) {
                waited = 0;
#ifdef FM_MCML_LANE_STATS
                leaderAdd(4, atFace);
#endif
                if (state == kSlabAtFace) state = crossAt(m, p, sk) ? kSlabLive : kSlabEnded;
            }
        } else if (state == kSlabAtFace) {
            state = crossAt(m, p, sk) ? kSlabLive : kSlabEnded;
        }
        if (state != kSlabEnded) continue;
        if (events.absorb > 0x40000000u || events.boundary > 0x40000000u) {  // widen 32-bit counts
            slabScatterCount(events);
            addEventsUnaggregated(totals, events);
            events = EventCounts<uint32_t>{};
        }
        const uint64_t i = atomicAdd(next, 1ull);
        if (i >= count) break;
        if constexpr (kRecords<Tallies>) sk.tallies.template tally<DeviceSegmentDetectorTally>().startPacket(first + i, first + i);
#ifdef FM_MCML_LANE_STATS
        leaderAdd(5, __activemask());
#endif
        state = startSlabPhoton(m, kp, first + i, p, sk) ? kSlabLive : kSlabEnded;
    }
#ifdef FM_MCML_LANE_STATS
    __syncthreads();
    if (threadIdx.x < 8) atomicAdd(&gLaneStats[threadIdx.x], (unsigned long long)stats[threadIdx.x]);
#endif
    sk.flush();
    slabScatterCount(events);
    addTotals(totals, Ledger(ledger), EventCounts<uint32_t>(events));
    if (kCellRows<Tallies> && t.cellRowStride)
        addRowColumns(cellRows, t.cellRowStride, t.nCells,
                      [](uint32_t i, double v) { DeviceAtomicAdd::add(sBlockCells + i, v); });
}

// The row length (rowStride) that gives each thread of `kernel` a row of shared memory for the
// nCells layer cells
// (DeviceSlabTallies::cellRowStride), or 0 where the rows would cost the kernel a resident block
// per SM, or there are more cells than kRowDoubles, or the run says no rows (tuning).
template <class Kernel>
uint32_t layerCellRows(Kernel kernel, size_t nCells, const RunOptions& o) {
    if (!o.tuning.mcmlCellRows || nCells == 0 || nCells > kRowDoubles) return 0;
    const uint32_t stride = rowStride(uint32_t(nCells));
    const size_t bytes = sizeof(double) * kBlock * stride;
    int without = 0, with = 0;
    cudaCheck(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)), "shared memory");
    cudaCheck(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&without, kernel, kBlock, 0), "occupancy");
    cudaCheck(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&with, kernel, kBlock, bytes), "occupancy");
    return with >= without ? stride : 0u;
}

// A recording run's device side: the detectors (top and bottom surface, layeredDetection), the
// record buffer (at least kMaxDetectors slots, so that a refill's one-photon chunk fits) and the
// detected weight per detector over all detections, kept or not.
struct DeviceRecords {
    std::unique_ptr<DetectorTables> tables;
    std::unique_ptr<RecordBuffers> buffers;
    DeviceBuffer<double> detectedWeight;
    uint64_t keep = 0;

    void prepare(const KernelInput& in, const DetectionSpec& spec, uint32_t layers, DeviceDetectorTally& d,
                 cudaStream_t s) {
        // runMcmlKernel has checked that the layers' paths fit the thread's arrays (kGpuDetectMaterials).
        keep = spec.maxRecords;
        const uint64_t slots = std::max<uint64_t>(keep, kMaxDetectors);
        // Host memory of the records read back: the buffer's, dp's, and the sort's order.
        requireMemory((double(sizeof(DetectedRecord)) + 8.0 * layers + 8.0) * double(slots) * 2.0,
                      "an MCML run on the GPU keeping up to " + std::to_string(keep) + " records",
                      "keep fewer records (--max-detected)");
        tables = std::make_unique<DetectorTables>(spec, s);
        buffers = std::make_unique<RecordBuffers>(slots, layers);
        detectedWeight.allocate(spec.detectors.size(), "detected weight per detector");
        detectedWeight.zero(s);
        tables->setIn(d);
        buffers->setIn(d);
        d.maxRecords = slots;  // every slot: appendRecordsBelow reads the filled ones
        d.regions = layers;
        d.detectedWeight = detectedWeight.get();
    }

    // The run's records into dp (described by describeLayeredRun): the first `keep` by (photon
    // index, detector), refilled by running photons from the lowest lost index again
    // (refillRecords, with launchAll(options)) where the buffer overflowed; counts and detected
    // weight of every detection.
    template <class LaunchAll>
    void collect(const RunOptions& opt, uint64_t done, bool cancelled, LaunchAll& launchAll, cudaStream_t s,
                 DetectedPackets& dp) {
        dp.kernel = "cuda";
        const DetectCounters c = tables->read(s);
        dp.detected = c.found;
        dp.detectedWeight = detectedWeight.download(s);
        appendRecordsBelow(s, *buffers, c.found, c.lowestLost, opt.firstPacket + opt.packets, keep, opt.tuning, dp);
        if (!dp.truncated() || cancelled) return;
        auto runChunk = [&](const RunOptions& ro) {
            tables->reset(s);
            return launchAll(ro).packetsDone;
        };
        dp.refilledPackets = refillRecords(s, opt, runChunk, [&] { return tables->read(s); }, *buffers, c.lowestLost,
                                           opt.firstPacket + opt.packets, keep,
                                           double(c.found) / double(std::max<uint64_t>(1, done)), dp);
    }
};

}  // namespace

// Replicas of the (r, z) grid that the blocks add into, at most: every photon deposits most of
// its weight in the few bins at the beam (opt.tuning.mcmlRzReplicas overrides, for benchmarks).
constexpr uint32_t kRzReplicas = 32;
// The bins at the beam, where most sends of a pencil beam's photons go, in more replicas than the
// rest: the grid's first radial rows up to about kRzNearBins bins (at least one row), in up to
// kRzNearCopies replicas (a 16 MB budget); opt.tuning.mcmlRzNear* override, for benchmarks.
constexpr uint32_t kRzNearBins = 4096;
constexpr uint32_t kRzNearCopies = 256;
// Replicas of a time-resolved run's A(z,t), at most (a 16 MB budget).
constexpr uint32_t kZtReplicas = 256;

McmlTallies runMcmlCuda(const KernelInput& in, const McmlGrid& grid, const RunOptions& opt) {
    auto t0 = Clock::now();
    std::string why;
    if (!cudaDeviceAvailable(&why)) throw Error("kernel cuda: " + why);
    Stream s;
    DeviceInput dev(in, s);
    const MaterialTableSent::Lease materials = holdMaterials(in.materials, s);  // until the run returns
    const size_t nrz = size_t(grid.nr) * grid.nz, nra = size_t(grid.nr) * grid.na;
    // Replicas (CudaEngine.cuh): every lane adds into the same few layer cells, and photons
    // deposit most of their weight in the (r, z) bins at the beam.
    const size_t nCells = in.cells.size();
    const uint32_t cellCopies = replicaCount(nCells, 256), rzCopies = replicaCount(nrz, opt.tuning.mcmlRzReplicas ? opt.tuning.mcmlRzReplicas : kRzReplicas);
    DeviceBuffer<double> rz(rzCopies * nrz, "A(r,z) grid"), rd(nra, "Rd(r,a) grid"), tt(nra, "Tt(r,a) grid");
    DeviceBuffer<double> cells(cellCopies * nCells, "per-layer absorption");
    DeviceBuffer<DeviceTotals> totals(1, "ledger");
    for (auto* b : {&rz, &rd, &tt, &cells}) b->zero(s);
    totals.zero(s);
    // Only the plain run's tally (DeviceRzDifferenceTally) sends to the near replicas.
    const bool gated = opt.gates.on(), records = opt.detection && opt.detection->active();
    const size_t nearRows =
        std::clamp<uint32_t>((opt.tuning.mcmlRzNearBins ? opt.tuning.mcmlRzNearBins : kRzNearBins) / grid.nz, 1u, grid.nr);
    const uint32_t nearCopies =
        gated || records ? 1u
                         : replicaCount(nearRows * grid.nz, opt.tuning.mcmlRzNearCopies ? opt.tuning.mcmlRzNearCopies : kRzNearCopies,
                                        size_t(16) << 20);
    const size_t nearBins = nearCopies > 1 ? nearRows * grid.nz : 0;
    DeviceBuffer<double> rzNear(nearCopies * nearBins, "A(r,z) bins at the beam");
    rzNear.zero(s);

    const uint32_t layers = slabLayers(in);
    DeviceBuffer<SlabCell> slabs(in.slabs.size(), "slab cells");
    slabs.upload(in.slabs, s);
    DeviceSlabModel m;
    m.cells = nullptr;  // set per block to the shared copy (DeviceSlabModel::enterBlock)
    m.layers = layers;
    m.materials = nullptr;
    m.emitters = dev.model().emitters;
    m.cellsGlobal = slabs.get();
    DeviceSlabTallies sk;
    sk.rz = rz.get();
    sk.rzNear = rzNear.get();
    sk.nearBins = uint32_t(nearBins);
    sk.nearCopies = nearCopies;
    sk.reflected = rd.get();
    sk.transmitted = tt.get();
    sk.cells = cells.get();
    sk.nCells = uint32_t(nCells);
    // Time gates: Rd(r,t), Tt(r,t) (an add per exit: one copy each) and A(z,t) (an add per
    // interaction, most of them into the first gates' shallow bins: in replicas, as A(r,z),
    // except in a recording run, whose kernel has no register for the replica's offset).
    const size_t nrt = gated ? size_t(opt.gates.bins()) * grid.nr : 0, nzt = gated ? size_t(opt.gates.bins()) * grid.nz : 0;
    const uint32_t ztCopies = gated && !records ? replicaCount(nzt, kZtReplicas, size_t(16) << 20) : 1u;
    DeviceBuffer<double> rdt(nrt, "Rd(r,t) grid"), ttt(nrt, "Tt(r,t) grid"), azt(ztCopies * nzt, "A(z,t) grid");
    for (auto* b : {&rdt, &ttt, &azt}) b->zero(s);
    sk.reflectedRT = rdt.get();
    sk.transmittedRT = ttt.get();
    sk.absorbedZT = azt.get();
    sk.ztBins = uint32_t(nzt);
    sk.ztCopies = ztCopies;
    sk.gates = gateBins(opt.gates);
    BlockTallies bt;
    bt.replicate(0, sk.cells, nCells, cellCopies).replicate(1, sk.rz, nrz, rzCopies);
    DeviceRecords rec;
    if (records) rec.prepare(in, *opt.detection, layers, sk.detector, s);
    // The packets of o (opt, or a refill's chunk of it) through the kernel of the run's tallies.
    // Recording runs always group crossings (a photon's history does not depend on it).
    bool layerRows = false;
    auto launchAll = [&](const RunOptions& o) {
        auto run = [&](auto kernel, bool cellRows) {
            DeviceSlabTallies kt = sk;
            kt.cellRowStride = cellRows ? layerCellRows(kernel, nCells, o) : 0u;
            layerRows = kt.cellRowStride > 0;
            const size_t smem = sizeof(double) * kBlock * kt.cellRowStride;
            return runBatches(
                kernel, smem, o, s,
                [&](unsigned blocks, cudaStream_t on, uint64_t first, uint64_t n, unsigned long long* counter) {
                    kernel<<<blocks, kBlock, smem, on>>>(m, grid, o.params, first, n, kt, totals.get(), counter, bt);
                },
                nullptr, nullptr, kMcmlPacketsPerThread);
        };
        const bool group = o.tuning.mcmlGroupCrossings;
        if (records)
            return gated ? run(mcmlSlabKernel<kCrossGroup, DeviceMcmlTimeRecordTallies>, false)
                         : run(mcmlSlabKernel<kCrossGroup, DeviceMcmlRecordTallies>, false);
        return gated ? (group ? run(mcmlSlabKernel<kCrossGroup, DeviceMcmlTimeTallies>, false)
                              : run(mcmlSlabKernel<1, DeviceMcmlTimeTallies>, false))
                     : (group ? run(mcmlSlabKernel<kCrossGroup>, true) : run(mcmlSlabKernel<1>, true));
    };
#ifdef FM_MCML_LANE_STATS
    {
        unsigned long long z[8] = {};
        cudaMemcpyToSymbol(gLaneStats, z, sizeof z);
    }
#endif
    const BatchRun b = launchAll(opt);
#ifdef FM_MCML_LANE_STATS
    {
        unsigned long long v[8];
        cudaMemcpyFromSymbol(v, gLaneStats, sizeof v);
        const double it = double(v[6]);
        fprintf(stderr, "lane stats: warp iterations %.4e; per iteration: active %.3f live %.3f waiting %.3f hops %.3f "
                        "crossing %.3f starting %.3f\n",
                it, v[0] / it, v[1] / it, v[2] / it, v[3] / it, v[4] / it, v[5] / it);
    }
#endif

    McmlTallies t;
    t.kernel = "cuda";
    t.packetsRequested = opt.packets;
    t.packetsDone = b.packetsDone;
    t.kernelSeconds = b.seconds;
    t.cancelled = b.packetsDone < opt.packets;
    t.layerRows = layerRows;
    foldReplicas(rzNear, nearBins, s);
    addArrays(rz.get(), rzNear.get(), nearBins, s);
    t.absorbedRZ = downloadFolded(rz, nrz, s);
    t.reflectedRA = rd.download(s);
    t.transmittedRA = tt.download(s);
    t.absorbedCell = downloadFolded(cells, nCells, s);
    if (gated) {
        t.gates = opt.gates;
        t.reflectedRT = rdt.download(s);
        t.transmittedRT = ttt.download(s);
        t.absorbedZT = downloadFolded(azt, nzt, s);
    }
    RunResult r;
    totalsToResult(totals.download(s)[0], r);
    t.ledger = r.ledger;
    t.events = r.events;
    if (records) {  // after every tally is read: a refill's additions to them are dropped
        t.records = describeLayeredRun(in, opt, *opt.detection);
        rec.collect(opt, b.packetsDone, t.cancelled, launchAll, s, t.records);
    }
    t.seconds = since(t0);
    return t;
}

}  // namespace fm
