// SPDX-License-Identifier: GPL-3.0-or-later
// MCML mode on the GPU: the engine's batched launches (CudaEngine.cuh) of the slab photon loop
// (Kernels/McmlSlabLoop.hpp: the common packet loop's physics written out for layers) over the
// slab geometry computed from the layer bounds (DeviceSlabModel): no cell records are read.
// Tallies accumulate through double atomics into replicas (CudaEngine.cuh).
#include "Kernels/CUDA/CudaEngine.cuh"
#include "Kernels/McmlKernel.hpp"
#include "Kernels/McmlSlabLoop.hpp"
#include "Kernels/McmlTimeTally.hpp"

#include <string>

namespace fm {

using namespace cuda_engine;

namespace {

// The MCML arrays in device memory: A(r,z) and the layer cells replicated (CudaEngine.cuh).
struct DeviceSlabTallies {
    double* rz = nullptr;
    double* reflected = nullptr;
    double* transmitted = nullptr;
    double* cells = nullptr;
    // Time-resolved runs (McmlTimeTally.hpp): Rd(r,t), Tt(r,t), A(z,t), by atomics; else null.
    double* reflectedRT = nullptr;
    double* transmittedRT = nullptr;
    double* absorbedZT = nullptr;
    GateBins gates;
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

    __device__ void deposit(uint32_t i, double dw) {
        if (i != rzBin) {
            if (rzSum != 0.0) DeviceAtomicAdd::add(absorbedRZ + rzBin, rzSum);
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

// MCML's tallies on the GPU (Kernels/McmlScorer.hpp): A(r,z) as above, the layer cells (into
// this block's replica) and the exits into the (r, angle) grids by atomics.
using DeviceMcmlTallies = TallyPack<uint32_t, DeviceRzTally, McmlExitTally<DeviceAtomicAdd>, McmlLayerTally<DeviceAtomicAdd>>;
// The same with the time-resolved tallies (a run with time gates).
using DeviceMcmlTimeTallies = TallyPack<uint32_t, DeviceRzTally, McmlExitTally<DeviceAtomicAdd>,
                                        McmlLayerTally<DeviceAtomicAdd>, McmlTimeTally<DeviceAtomicAdd>>;

template <class Tallies>
__device__ Tallies deviceMcmlTallies(const DeviceSlabTallies& t, const McmlGrid& g) {
    Tallies p;
    p.absorbedRZ = t.rz;
    p.rzGrid = g;
    p.reflectedRA = t.reflected;
    p.transmittedRA = t.transmitted;
    p.raGrid = g;
    p.absorbedCell = t.cells;
    if constexpr (NeedsClock<Tallies>::value) {
        p.reflectedRT = t.reflectedRT;
        p.transmittedRT = t.transmittedRT;
        p.absorbedZT = t.absorbedZT;
        p.timeGrid = g;
        p.timeBins = t.gates;
    }
    return p;
}

// The slab loop's sink (McmlSlabLoop.hpp): the tallies' hooks; the ledger and event counts it
// books only at rare events (launches, crossings, ends, roulette), so they live in shared
// memory, one slot per thread, instead of in registers.
template <class Tallies>
struct DeviceSlabSink {
    static constexpr bool kScoresFaces = Tallies::kScoresFaces;
    static constexpr bool kNeedsClock = Tallies::kNeedsClock;
    static_assert(!Tallies::kNeedsMoves, "a tally that needs moves: forward move() here");
    Tallies tallies;
    Ledger& ledger;
    EventCounts<uint32_t>& events;

    __device__ void launch(const PacketState& st) { tallies.launch(st); }
    __device__ void absorbStep(const PacketState& st, double dw) { tallies.absorbStep(st, dw); }
    __device__ void visit(const PacketState& st, double w) { tallies.visit(st, w); }
    __device__ void exit(const PacketState& st, uint32_t face) { tallies.exit(st, face); }
    __device__ void end(const PacketState& st) { tallies.end(st); }
    __device__ void flush() { tallies.flush(); }
};

// Layer crossings are rare (a few per cent of events, about one lane per warp iteration) and
// cost about a hundred instructions (Fresnel, a draw, refraction, the next layer's properties)
// that the warp issues
// for the one or two lanes taking them. A lane that reaches a face waits there (moved onto it,
// crossing not done) until kCrossGroup lanes of its warp wait, or for at most kCrossWait
// iterations, and the waiting lanes cross together; one vote of the whole warp per iteration
// decides. A photon's history is the same (its own draws, in the same order): only the
// interleaving of lanes changes (test_cuda checks the event counts).
constexpr uint32_t kCrossGroup = 4;  // lanes that cross together (tuned on the seven-layer skin)
constexpr uint32_t kCrossWait = 8;   // iterations a lane waits at most for the group

// Threads take photons from the batch's counter and advance them one event per iteration, as
// packetKernel does with packets; kMinBlocksPerSm blocks per SM, as the mesh kernels. The ledger
// and event counts live in shared memory, one slot per thread (booked only at rare events:
// registers freed). kGroup: lanes that cross together (1: each lane crosses at once). Tallies:
// DeviceMcmlTallies, or DeviceMcmlTimeTallies for a run with time gates.
template <uint32_t kGroup, class Tallies = DeviceMcmlTallies>
__global__ void __launch_bounds__(kBlock, kMinBlocksPerSm)
mcmlSlabKernel(DeviceSlabModel m, McmlGrid g, KernelParams kp, uint64_t first, uint64_t count, DeviceSlabTallies t,
               DeviceTotals* totals, unsigned long long* next, BlockTallies bt) {
    if (bt.copies[0]) t.cells = bt.replica(0);
    if (bt.copies[1]) t.rz = bt.replica(1);
    __shared__ Ledger ledgers[kBlock];
    __shared__ EventCounts<uint32_t> counts[kBlock];
    Ledger& ledger = ledgers[threadIdx.x];
    EventCounts<uint32_t>& events = counts[threadIdx.x];
    ledger = Ledger{};
    events = EventCounts<uint32_t>{};
    DeviceSlabSink<Tallies> sk{deviceMcmlTallies<Tallies>(t, g), ledger, events};
    m.enterBlock(0);
    SlabPhoton p;
    uint32_t state = kSlabEnded, waited = 0;
    for (;;) {
        if (state == kSlabLive) state = slabStep(m, kp, p, sk);
        if (kGroup > 1) {
            const unsigned atFace = __ballot_sync(__activemask(), state == kSlabAtFace);
            if (atFace != 0u && (__popc(atFace) >= kGroup || ++waited > kCrossWait)) {
                waited = 0;
                if (state == kSlabAtFace) state = crossSlab(m, p, sk) ? kSlabLive : kSlabEnded;
            }
        } else if (state == kSlabAtFace) {
            state = crossSlab(m, p, sk) ? kSlabLive : kSlabEnded;
        }
        if (state != kSlabEnded) continue;
        if (events.absorb > 0x40000000u || events.boundary > 0x40000000u) {  // widen 32-bit counts
            slabScatterCount(events);
            addEventsUnaggregated(totals, events);
            events = EventCounts<uint32_t>{};
        }
        const uint64_t i = atomicAdd(next, 1ull);
        if (i >= count) break;
        state = startSlabPhoton(m, kp, first + i, p, sk) ? kSlabLive : kSlabEnded;
    }
    sk.flush();
    slabScatterCount(events);
    addTotals(totals, Ledger(ledger), EventCounts<uint32_t>(events));
}

}  // namespace

// Replicas of the (r, z) grid that the blocks add into, at most: every photon deposits most of
// its weight in the few bins at the beam (opt.tuning.mcmlRzReplicas overrides, for benchmarks).
constexpr uint32_t kRzReplicas = 32;

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
    sk.reflected = rd.get();
    sk.transmitted = tt.get();
    sk.cells = cells.get();
    // Time gates: Rd(r,t), Tt(r,t), A(z,t), one copy each (atomics).
    const bool gated = opt.gates.on();
    const size_t nrt = gated ? size_t(opt.gates.bins()) * grid.nr : 0, nzt = gated ? size_t(opt.gates.bins()) * grid.nz : 0;
    DeviceBuffer<double> rdt(nrt, "Rd(r,t) grid"), ttt(nrt, "Tt(r,t) grid"), azt(nzt, "A(z,t) grid");
    for (auto* b : {&rdt, &ttt, &azt}) b->zero(s);
    sk.reflectedRT = rdt.get();
    sk.transmittedRT = ttt.get();
    sk.absorbedZT = azt.get();
    sk.gates = gateBins(opt.gates);
    BlockTallies bt;
    bt.replicate(0, sk.cells, nCells, cellCopies).replicate(1, sk.rz, nrz, rzCopies);
    auto run = [&](auto kernel) {
        return runBatches(kernel, 0, opt, s,
                          [&](unsigned blocks, cudaStream_t on, uint64_t first, uint64_t n, unsigned long long* counter) {
                              kernel<<<blocks, kBlock, 0, on>>>(m, grid, opt.params, first, n, sk, totals.get(), counter, bt);
                          });
    };
    const bool group = opt.tuning.mcmlGroupCrossings;
    const BatchRun b = gated ? (group ? run(mcmlSlabKernel<kCrossGroup, DeviceMcmlTimeTallies>)
                                      : run(mcmlSlabKernel<1, DeviceMcmlTimeTallies>))
                             : (group ? run(mcmlSlabKernel<kCrossGroup>) : run(mcmlSlabKernel<1>));

    McmlTallies t;
    t.kernel = "cuda";
    t.packetsRequested = opt.packets;
    t.packetsDone = b.packetsDone;
    t.cancelled = b.packetsDone < opt.packets;
    t.absorbedRZ = downloadFolded(rz, nrz, s);
    t.reflectedRA = rd.download(s);
    t.transmittedRA = tt.download(s);
    t.absorbedCell = downloadFolded(cells, nCells, s);
    if (gated) {
        t.gates = opt.gates;
        t.reflectedRT = rdt.download(s);
        t.transmittedRT = ttt.download(s);
        t.absorbedZT = azt.download(s);
    }
    RunResult r;
    totalsToResult(totals.download(s)[0], r);
    t.ledger = r.ledger;
    t.events = r.events;
    t.seconds = since(t0);
    return t;
}

}  // namespace fm
