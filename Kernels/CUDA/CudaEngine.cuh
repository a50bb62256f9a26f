// SPDX-License-Identifier: GPL-3.0-or-later
// The GPU engine shared by the CUDA entry points (standard tallies, MCML): the device-side
// model, upload of the packed input, the packet kernel templated on the scorer, and batched
// launches with progress and cancel. Included by each .cu; everything here is per translation
// unit (the constant-memory materials too), so the entry points stay independent.
#pragma once
#include <algorithm>
#include <array>
#include <chrono>
#include <future>
#include <memory>
#include <type_traits>
#include <vector>

#include "Kernels/CUDA/CudaSupport.cuh"
#include "Kernels/Core/CellLayout.hpp"
#include "Kernels/HostCellArrays.hpp"
#include "Kernels/Core/SlabModel.hpp"
#include "Kernels/Core/TallyScorer.hpp"
#include "Kernels/PacketSource.hpp"

namespace fm {
// Everything here is per translation unit (an unnamed namespace): the constant-memory materials
// are static, so host code that uploads them (DeviceInput) must not be an inline function shared
// between the .cu files: the linker would keep one copy, which uploads into the other file's
// materials.
namespace {

// static: each .cu that includes the engine has its own copy, filled by its own DeviceInput.
static __constant__ MaterialRecord c_materials[kMaxCudaMaterials];

// The model as the GPU reads it: cells through the read-only path (a hop reads the four planes
// as four 16-byte loads; a crossing reads the other fields it needs one by one), materials from
// constant memory (not a per-block shared copy: that was slower, docs/PERFORMANCE.md).
// The cells are in one of two layouts (Kernels/Core/CellLayout.hpp, made by DeviceMesh): the
// 112-byte records, or planes, crossing fields and face ids in arrays of their own. The fields
// are found through strides and offsets held here (kernel parameters, so no registers), one
// code path for both layouts.
struct DeviceModel {
    // A packet keeps its cell's material index between events (Core/Packet.hpp KeptMaterial)
    // instead of reading it from the cell record at every event.
    static constexpr int kKeepMaterial = 1;
    const uint32_t* __restrict__ faceIds;   // cell i's four face ids from faceIds + i * faceStride
    EmitterView emitters;
    const float4* __restrict__ planeRows;   // cell i's planes: 4 float4s from planeRows + i * planeStride
    const char* __restrict__ links;         // cell i's neighbours from links + i * linkStride bytes
    uint32_t planeStride;                   // float4s per cell
    uint32_t linkStride, materialAt, scoredAt, adjMaterialAt;  // bytes: per cell, then fields after adj
    uint32_t faceStride;                    // 32-bit words per cell

    // Called by every thread of a block before any packet (block-level set-up): nothing here.
    __device__ void enterBlock(uint32_t) {}
    // Four named 16-byte loads: writing through a cast pointer would force the planes into
    // local memory.
    __device__ CellPlanes planes(uint32_t i) const {
        const float4* f = planeRows + size_t(i) * planeStride;
        float4 nx = __ldg(f), ny = __ldg(f + 1), nz = __ldg(f + 2), c = __ldg(f + 3);
        return CellPlanes{{nx.x, nx.y, nx.z, nx.w}, {ny.x, ny.y, ny.z, ny.w}, {nz.x, nz.y, nz.z, nz.w},
                          {c.x, c.y, c.z, c.w}};
    }
    // cellExit leaves the exit face's normal out (Core/Physics.hpp exitFaceNearest); a crossing
    // that needs it (Fresnel) loads it from the record, usually still in L1.
    static constexpr bool kLazyNormals = true;
    // Faces f are 0..3 where these are called (a hop's face); f & 3 tells the compiler so, and
    // the address is then formed without the 64-bit sign extension of an int that may be -1.
    __device__ Vec3 faceNormal(uint32_t i, int f) const {
        const float* p = reinterpret_cast<const float*>(planeRows + size_t(i) * planeStride) + (f & 3);
        return Vec3{__ldg(p), __ldg(p + 4), __ldg(p + 8)};
    }
    __device__ const char* linksOf(uint32_t i) const { return links + size_t(i) * linkStride; }
    __device__ uint32_t adjacent(uint32_t i, int f) const {
        return __ldg(reinterpret_cast<const uint32_t*>(linksOf(i)) + (f & 3));
    }
    __device__ uint32_t adjacentMaterial(uint32_t i, int f) const {
        return __ldg(reinterpret_cast<const uint16_t*>(linksOf(i) + adjMaterialAt) + (f & 3));
    }
    __device__ uint32_t faceId(uint32_t i, int f) const { return __ldg(faceIds + size_t(i) * faceStride + (f & 3)); }
    __device__ uint32_t scoredFaces(uint32_t i) const {
        return __ldg(reinterpret_cast<const uint32_t*>(linksOf(i) + scoredAt));
    }
    __device__ uint32_t cellMaterial(uint32_t i) const {
        return __ldg(reinterpret_cast<const uint32_t*>(linksOf(i) + materialAt));
    }
    __device__ const MaterialRecord& material(uint32_t i) const { return c_materials[i]; }
};

// The compact layout (Kernels/Core/CellLayout.hpp CompactCell): a cell's planes in one 32-byte
// sector (two 16-byte loads), decoded at each event; its crossing fields in the next sector
// (DeviceModel's links, 64 bytes apart).
// The exit test uses the decoded normals at their own length (the distance is a ratio); a
// crossing that needs the normal (Fresnel) takes the plane's own, normalised, so a reflected
// packet moves away from the plane the exit test sees.
struct CompactDeviceModel : DeviceModel {
    const CompactCell* __restrict__ compact;

    __device__ CellPlanes planes(uint32_t i) const {
        const uint4* q = reinterpret_cast<const uint4*>(&compact[i].planes);
        const uint4 n = __ldg(q), c = __ldg(q + 1);
        const Vec3 n0 = decodeCompactNormal(n.x), n1 = decodeCompactNormal(n.y), n2 = decodeCompactNormal(n.z),
                   n3 = decodeCompactNormal(n.w);
        return CellPlanes{{n0.x, n1.x, n2.x, n3.x}, {n0.y, n1.y, n2.y, n3.y}, {n0.z, n1.z, n2.z, n3.z},
                          {__uint_as_float(c.x), __uint_as_float(c.y), __uint_as_float(c.z), __uint_as_float(c.w)}};
    }
    __device__ Vec3 faceNormal(uint32_t i, int f) const { return compactFaceNormal(__ldg(&compact[i].planes.normal[f & 3])); }
};

// The layered (MCML) model on the GPU: Core/SlabModel.hpp with the slab cells copied per
// block into shared memory (lanes in different layers read different cells without
// serialising), materials from constant memory.
struct DeviceSlabModel : SlabModel {
    const SlabCell* cellsGlobal;  // layers + 1 cells in device memory

    __device__ void enterBlock(uint32_t) {
        __shared__ SlabCell cs[kMaxCudaMaterials];
        for (uint32_t i = threadIdx.x; i < layers + 1u; i += blockDim.x) cs[i] = cellsGlobal[i];
        __syncthreads();
        cells = cs;
    }
    __device__ const MaterialRecord& material(uint32_t i) const { return c_materials[i]; }
};

// Threads per block of the packet kernels: whole warps (the mesh loop votes over warps), four
// blocks per SM at 64 registers a thread.
constexpr int kBlock = 256;
static_assert(kBlock % 32 == 0, "the warp loop votes over full warps: blocks of whole warps");
// Packets per thread of one launch: batches long enough that launch tails are a small part of
// each, short enough that progress and cancel are seen often.
#ifndef FM_CUDA_PACKETS_PER_THREAD  // a benchmark build's other launch length
#define FM_CUDA_PACKETS_PER_THREAD 128
#endif
constexpr uint64_t kPacketsPerThread = FM_CUDA_PACKETS_PER_THREAD;
// Resident blocks per SM that the packet kernels are compiled for (__launch_bounds__): caps
// them at 64 registers a thread without spills.
constexpr int kMinBlocksPerSm = 4;

// Tally addresses that every lane adds into (the cells of a layered model or of a few-tetra
// mesh, MCML's (r, z) bins at the beam) must not be added to in one global copy: same-address
// atomics serialise in L2 and the kernel would spend most of its time waiting there. Two
// remedies, per array:
//  - rows (arrays of up to kRowDoubles doubles in all): a row per thread in shared memory, added
//    to with plain loads and stores (each thread owns its row: no atomics), summed into the
//    global arrays once per block at the end. (A block-wide shared array would need atomics,
//    which for doubles in shared memory are a compare-and-swap loop run one lane at a time.)
//  - replicas: the array has `copies` replicas in global memory, block b adds into replica
//    b % copies (fire-and-forget reductions, contention divided by the copies), the host sums
//    them. For arrays of any size, as far as the memory budget allows (MCML's grid). A mesh's
//    tallies are replicated too, but their replica is picked per add by TallyScorer
//    (replicaOffset): a per-block pointer held in registers would be spilled on meshes.
constexpr uint32_t kRowDoubles = 31;  // per-thread row length (odd: rows of a warp avoid bank conflicts)
// This block's replica of an array laid out as `copies` replicas of n doubles (block b adds into
// replica b % copies).
__device__ inline double* blockReplica(double* p, size_t n, uint32_t copies) {
    return p + size_t(blockIdx.x % copies) * n;
}
// Doubles per thread row for n values: odd, so the 64-bit accesses of 16 lanes hit distinct bank pairs.
FM_HD constexpr uint32_t rowStride(uint32_t n) { return n | 1u; }
// At a block's end, its threads' rows (blockDim.x rows of `stride` doubles) added up column by
// column, the first n columns' non-zero sums handed to add(column, sum) once each (the barrier
// is here: every row add of the block comes before).
template <class Add>
__device__ void addRowColumns(const double* rows, uint32_t stride, uint32_t n, Add add) {
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
        double v = 0.0;
        for (uint32_t t = 0; t < blockDim.x; ++t) v += rows[t * stride + i];
        if (v != 0.0) add(i, v);
    }
}
struct BlockTallies {
    double* global[2] = {nullptr, nullptr};
    uint32_t n[2] = {0, 0};
    uint32_t copies[2] = {0, 0};  // > 0: array i is replicated (n[i] doubles per replica)
    // Rows for arrays a (volume or layer cells) and b (surface exits), either may be absent:
    // all or nothing, since the scorer then adds to both without atomics. Empty if they do not fit.
    static BlockTallies rows(double* a, size_t na, double* b, size_t nb) {
        BlockTallies bt;
        if (!a) na = 0;
        if (!b) nb = 0;
        if (na + nb == 0 || na + nb > kRowDoubles) return bt;
        bt.global[0] = na ? a : nullptr;
        bt.global[1] = nb ? b : nullptr;
        bt.n[0] = uint32_t(na);
        bt.n[1] = uint32_t(nb);
        return bt;
    }
    // Array i at p is laid out as `copies` replicas of n doubles (copies <= 1: not replicated).
    BlockTallies& replicate(int i, double* p, size_t count, uint32_t c) {
        if (c > 1) {
            global[i] = p;
            n[i] = uint32_t(count);
            copies[i] = c;
        }
        return *this;
    }
    FM_HD bool rowsOn() const { return copies[0] == 0 && copies[1] == 0 && n[0] + n[1] > 0; }
    FM_HD uint32_t stride() const { return rowsOn() ? rowStride(n[0] + n[1]) : 0u; }
    __device__ double* replica(int i) const { return blockReplica(global[i], n[i], copies[i]); }
};

// How many replicas of an array of n doubles: up to maxCopies within a memory budget.
inline uint32_t replicaCount(size_t n, uint32_t maxCopies, size_t budgetBytes = size_t(64) << 20) {
    const size_t fit = n ? budgetBytes / (n * sizeof(double)) : 0;
    return uint32_t(std::max<size_t>(1, std::min<size_t>(maxCopies, fit)));
}
// The same, rounded down to a power of two (TallyScorer picks a replica by a mask).
inline uint32_t replicaCountPow2(size_t n, uint32_t maxCopies) {
    uint32_t c = replicaCount(n, maxCopies);
    while (c & (c - 1)) c &= c - 1;
    return c;
}
// At most this many replicas of a mesh's tallies (a power of two: TallyScorer picks one by a
// mask), so that the cells at a beam's entry or around a point source are not one address.
constexpr uint32_t kMeshReplicas = 32;
// Tallies larger than this are not replicated: a clinical-scale mesh spreads its deposits over
// many cells, and the copies would only take L2 from the cell records (docs/PERFORMANCE.md,
// "Replicas on a clinical mesh").
constexpr size_t kReplicatedTallyMaxBytes = size_t(4) << 20;
// Replicas of a run's mesh tallies (`doubles` of them): a single run's, a detecting run's and
// each run's of a group alike.
inline uint32_t meshTallyCopies(size_t doubles) {
    return doubles * sizeof(double) > kReplicatedTallyMaxBytes ? 1u : replicaCountPow2(doubles, kMeshReplicas);
}
// Sum the replicas of n doubles (laid out one after the other, `copies` of them) into the first,
// on the device, in replica order.
__global__ void foldReplicasKernel(double* r, size_t n, uint32_t copies) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        double v = r[i];
        for (uint32_t c = 1; c < copies; ++c) v += r[c * n + i];
        r[i] = v;
    }
}
// The replicated array b (copies x n doubles) summed into its first n, on the device.
inline void foldReplicas(DeviceBuffer<double>& b, size_t n, cudaStream_t s) {
    const uint32_t copies = n ? uint32_t(b.size() / n) : 1u;
    if (copies > 1) {
        foldReplicasKernel<<<unsigned(std::min<size_t>((n + 255) / 256, 1024)), 256, 0, s>>>(b.get(), n, copies);
        cudaCheck(cudaGetLastError(), "fold replicas");
    }
}
__global__ void addArraysKernel(double* into, const double* from, size_t n) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        into[i] += from[i];
}
// into[i] += from[i] for i < n, on the device.
inline void addArrays(double* into, const double* from, size_t n, cudaStream_t s) {
    if (!n) return;
    addArraysKernel<<<unsigned(std::min<size_t>((n + 255) / 256, 1024)), 256, 0, s>>>(into, from, n);
    cudaCheck(cudaGetLastError(), "add arrays");
}
// The same sum, downloaded: n doubles cross PCIe.
inline std::vector<double> downloadFolded(DeviceBuffer<double>& b, size_t n, cudaStream_t s) {
    foldReplicas(b, n, s);
    return b.download(s, n);
}
// The same sum into host memory kept by the caller (synchronised; valid until the next call
// with `into`).
inline const double* downloadFoldedInto(DeviceBuffer<double>& b, size_t n, cudaStream_t s, PinnedHost<double>& into) {
    double* to = into.buffer(std::max<size_t>(n, 1));
    foldReplicas(b, n, s);
    b.downloadTo(to, n, s);
    cudaCheck(cudaStreamSynchronize(s), "download");
    return to;
}

// The scorer that adds into the rows: the same one with DeviceRowAdd for the small arrays.
// Only scorers whose every array can be a row have one (not with directed surface tallies).
template <class Scorer>
struct RowScorer {
    static constexpr bool kOk = false;
};
template <bool V, bool S, class Count, class... Extra>
struct RowScorer<TallyScorer<V, S, false, DeviceAtomicAdd, Count, Extra...>> {
    static constexpr bool kOk = V || S;
    static auto make(const TallyScorer<V, S, false, DeviceAtomicAdd, Count, Extra...>& s) {
        return s.template withAcc<DeviceRowAdd>();
    }
};

// Point a scorer's small arrays at this thread's row, or its arrays at this block's replicas.
template <bool V, bool S, class Count, class... Extra>
__device__ void useBlockTallies(TallyScorer<V, S, false, DeviceRowAdd, Count, Extra...>& sc, const BlockTallies& bt,
                                double* row) {
    if constexpr (V) if (bt.n[0]) sc.volume = row;
    if constexpr (S) if (bt.n[1]) sc.surface = row + bt.n[0];
}
template <bool V, bool S, bool D, class Count, class... Extra>  // meshes: replicas, if any, are the scorer's own
__device__ void useBlockTallies(TallyScorer<V, S, D, DeviceAtomicAdd, Count, Extra...>&, const BlockTallies&, double*) {}

// A scorer whose ledger is split (Core/Packet.hpp book): the absorbed weight, booked at every
// interaction, in a register; the other fields, booked a few times per packet (launch,
// specular, exit, roulette, guards), by fire-and-forget reductions into this block's replica of
// them in global memory (`rare`, kRareLedgerCopies replicas summed after the run). That frees
// registers, so that four blocks of 256 threads fit on an SM without spills. (The ledger is not
// kept in shared memory: that would come out of the L1 that the cell records need.)
constexpr uint32_t kRareLedgerCopies = 256;
template <class Inner>
struct SplitLedgerScorer {
    static constexpr bool kScoresFaces = ScoresFaces<Inner>::value;
    static constexpr bool kNeedsMoves = NeedsMoves<Inner>::value;
    static constexpr bool kNeedsClock = NeedsClock<Inner>::value;
    static constexpr bool kBooksLedger = true;
    Inner inner;  // its own ledger goes unused
    EventCounts<uint32_t> events;
    double absorbed = 0.0;
    Ledger* rare;

    __device__ SplitLedgerScorer(const Inner& s, Ledger* r) : inner(s), events(s.events), rare(r) {}
    template <double Ledger::*F>
    __device__ void bookLedger(double v) {
        if constexpr (F == &Ledger::absorbed) absorbed += v;
        else DeviceAtomicAdd::add(&(rare->*F), v);
    }
    __device__ void launch(const PacketState& st) { onLaunch(inner, st); }
    __device__ void move(const PacketState& st, uint32_t mat, float dist) { onMove(inner, st, mat, dist); }
    __device__ void absorb(const PacketState& st, double dw) { onAbsorb(inner, st, dw); }
    __device__ void exit(const PacketState& st, uint32_t face) { onExit(inner, st, face); }
    __device__ void cross(const PacketState& st, uint32_t face) { onCross(inner, st, face); }
    __device__ void end(const PacketState& st) { onEnd(inner, st); }
    __device__ void flush() { onFlush(inner); }
    __device__ Ledger ledger() const {  // the part kept in registers; `rare` holds the rest
        Ledger l;
        l.absorbed = absorbed;
        return l;
    }
};

// The warp loop of the mesh kernels (packetKernel, DetectCuda.cu's detectKernel, MultiRunCuda.cu's
// multiRunKernel). Threads take packets one at a time from the launch's counter `next` until its
// `count` packets are used up, and advance them one event per loop iteration, so a lane whose
// packet ends starts the next one at once instead of waiting for the rest of its warp. A lane
// whose packets have run out stays in the loop, idle, until its whole warp is done: the warp's
// lanes vote at the top of the loop at every event (__all_sync) instead of each leaving the loop
// on its own (the MCML slab kernel does not: it is slower there, docs/PERFORMANCE.md).
// The kernel's own steps are callables: widen(events) adds the scorer's 32-bit event counts into
// 64-bit totals (long before they could wrap; the loop then zeroes them), launch(i, st) starts
// the launch's packet i (0..count-1) in st and says whether it is live.
template <class Model, class Scorer, class Widen, class Launch>
__device__ __forceinline__ void warpLoop(const Model& m, const KernelParams& kp, uint64_t count, unsigned long long* next,
                                         Scorer& sc, Widen widen, Launch launch) {
    PacketState st;
    KeptMaterial km;  // the packet's material between events, for models that keep it (Core/Packet.hpp)
    bool live = false;
    bool done = false;  // no packets left for this lane: it stays in the loop until its warp is done
    for (;;) {
        if (__all_sync(0xffffffffu, done)) break;  // the whole warp, back together at each event
        if (live) {
            live = advance(m, kp, st, km, sc);
            continue;
        }
        if (done) continue;
        if (sc.events.absorb > 0x40000000u || sc.events.boundary > 0x40000000u) {
            widen(sc.events);
            sc.events = EventCounts<uint32_t>{};
        }
        const uint64_t i = atomicAdd(next, 1ull);
        if (i >= count) {
            done = true;
            continue;
        }
        live = launch(i, st);
        if (live) km = keptMaterial(m, st.pk.tetra);
    }
}

// The packet kernel: warpLoop over packets first..first+count-1, with the ledger split
// (SplitLedgerScorer).
template <class Model, class Scorer>
__global__ void __launch_bounds__(kBlock, kMinBlocksPerSm)
packetKernel(Model m, KernelParams kp, uint64_t first, uint64_t count, Scorer scIn,
            DeviceTotals* totals, unsigned long long* next, uint32_t nMaterials, BlockTallies bt, Ledger* rare) {
    extern __shared__ double blockAcc[];  // blockDim.x rows of bt.stride() doubles (none for large models)
    const uint32_t stride = bt.stride(), nBlockAcc = stride ? bt.n[0] + bt.n[1] : 0u;
    double* row = blockAcc + threadIdx.x * stride;
    for (uint32_t i = 0; i < stride; ++i) row[i] = 0.0;
    useBlockTallies(scIn, bt, row);
    SplitLedgerScorer<Scorer> sc(scIn, rare + blockIdx.x % kRareLedgerCopies);
    m.enterBlock(nMaterials);
    warpLoop(
        m, kp, count, next, sc, [&](const EventCounts<uint32_t>& e) { addEventsUnaggregated(totals, e); },
        [&](uint64_t i, PacketState& st) { return launchPacket(m, kp, first + i, st, sc); });
    sc.flush();
    addTotals(totals, sc.ledger(), sc.events);
    if (nBlockAcc > 0)  // the rows' column sums into the global arrays
        addRowColumns(blockAcc, stride, nBlockAcc, [&](uint32_t i, double v) {
            atomicAdd(i < bt.n[0] ? bt.global[0] + i : bt.global[1] + (i - bt.n[0]), v);
        });
}

namespace cuda_engine {

using Clock = std::chrono::steady_clock;
inline double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Materials into this device's constant memory (ordered on stream s after earlier launches).
inline void uploadMaterials(const std::vector<MaterialRecord>& m, cudaStream_t s) {
    if (m.size() > kMaxCudaMaterials)
        throw Error("CUDA: " + std::to_string(m.size()) + " materials exceed the " +
                    std::to_string(kMaxCudaMaterials) + " that fit in constant memory");
    cudaCheck(cudaMemcpyToSymbolAsync(c_materials, m.data(), m.size() * sizeof(MaterialRecord), 0,
                                      cudaMemcpyHostToDevice, s), "upload materials");
}

// The materials of a run into this file's c_materials, lent to it until the lease is released
// (MaterialTableSent): each .cu that includes the engine has its own table and its own lender.
inline MaterialTableSent& materialLender() {
    static MaterialTableSent sent;
    return sent;
}
inline MaterialTableSent::Lease holdMaterials(const std::vector<MaterialRecord>& m, cudaStream_t s) {
    return materialLender().hold(m, s, [](const std::vector<MaterialRecord>& t, cudaStream_t on) { uploadMaterials(t, on); });
}

// The mesh part of the input: uploaded once and kept while runs change sources and materials
// (batches, Kernels/Batch.hpp). In the record layout the 112-byte records; in the split layout
// (Kernels/Core/CellLayout.hpp) the planes, the crossing fields and the face ids in arrays of
// their own (112 bytes per cell); in the compact layout CompactCells and the face ids (80 bytes
// per cell). The split and compact layouts do not upload the records.
struct DeviceMesh {
    DeviceBuffer<TetraRecord> cells;
    CellLayout layout;
    DeviceBuffer<CellPlanes> planes;
    DeviceBuffer<CellLinks> links;
    DeviceBuffer<CompactCell> compact;
    DeviceBuffer<CellFaces> faces;
    // `made`: the host arrays of c in layout l where the caller makes them (several devices
    // upload one mesh: made once for all, from the run's start), waited for after the device
    // allocations; none: made here.
    DeviceMesh(const std::vector<TetraRecord>& c, cudaStream_t s, CellLayout l = CellLayout::Record,
               std::shared_future<HostCellArrays> made = {})
        : cells(l == CellLayout::Record ? c.size() : 0, "tetra records"), layout(l),
          planes(l == CellLayout::Split ? c.size() : 0, "cell planes"),
          links(l == CellLayout::Split ? c.size() : 0, "cell links"),
          compact(l == CellLayout::Compact ? c.size() : 0, "compact cells"),
          faces(l == CellLayout::Record ? 0 : c.size(), "cell face ids") {
        if (layout == CellLayout::Record) {
            cells.upload(c, s);
            return;
        }
        HostCellArrays own;
        if (!made.valid()) own = hostCellArrays(c, layout);
        const HostCellArrays& a = made.valid() ? made.get() : own;
        planes.upload(a.planes, s);
        links.upload(a.links, s);
        compact.upload(a.compact, s);
        faces.upload(a.faces, s);
        cudaCheck(cudaStreamSynchronize(s), "upload cell arrays");  // `own` goes out of scope
    }
};

// The compiled sources of one run.
struct DeviceSources {
    DeviceBuffer<EmitterRecord> emitters;
    DeviceBuffer<double> emitterCdf, pieceCdf;
    DeviceBuffer<Piece> pieces;

    DeviceSources(const std::vector<EmitterRecord>& e, const std::vector<double>& ecdf,
                  const std::vector<Piece>& p, const std::vector<double>& pcdf, cudaStream_t s)
        : emitters(e.size(), "emitters"), emitterCdf(ecdf.size(), "emitter table"),
          pieceCdf(pcdf.size(), "source pieces"), pieces(p.size(), "source pieces") {
        emitters.upload(e, s);
        emitterCdf.upload(ecdf, s);
        pieceCdf.upload(pcdf, s);
        pieces.upload(p, s);
    }
    EmitterView view() const {
        return EmitterView{emitters.get(), emitterCdf.get(), uint32_t(emitters.size()), pieces.get(), pieceCdf.get()};
    }
};

inline DeviceModel deviceModel(const DeviceMesh& m, const EmitterView& emitters) {
    const uint32_t* faces = reinterpret_cast<const uint32_t*>(m.faces.get());
    constexpr uint32_t kFaceWords = sizeof(CellFaces) / 4;
    if (m.layout == CellLayout::Split)
        return DeviceModel{faces, emitters, reinterpret_cast<const float4*>(m.planes.get()),
                           reinterpret_cast<const char*>(m.links.get()), sizeof(CellPlanes) / 16, sizeof(CellLinks),
                           offsetof(CellLinks, material), offsetof(CellLinks, scoredFaces),
                           offsetof(CellLinks, adjMaterial), kFaceWords};
    if (m.layout == CellLayout::Compact)  // the planes from CompactDeviceModel, the links beside them
        return DeviceModel{faces, emitters, nullptr,
                           reinterpret_cast<const char*>(m.compact.get()) + offsetof(CompactCell, links), 0,
                           sizeof(CompactCell), offsetof(CellLinks, material), offsetof(CellLinks, scoredFaces),
                           offsetof(CellLinks, adjMaterial), kFaceWords};
    const char* adj = reinterpret_cast<const char*>(m.cells.get()) + offsetof(TetraRecord, adj);
    const uint32_t* recordFaces =
        reinterpret_cast<const uint32_t*>(reinterpret_cast<const char*>(m.cells.get()) + offsetof(TetraRecord, face));
    return DeviceModel{recordFaces, emitters, reinterpret_cast<const float4*>(m.cells.get()), adj,
                       sizeof(TetraRecord) / 16, sizeof(TetraRecord),
                       offsetof(TetraRecord, material) - offsetof(TetraRecord, adj),
                       offsetof(TetraRecord, scoredFaces) - offsetof(TetraRecord, adj),
                       offsetof(TetraRecord, adjMaterial) - offsetof(TetraRecord, adj), sizeof(TetraRecord) / 4};
}
inline DeviceModel deviceModel(const DeviceMesh& m, const DeviceSources& src) { return deviceModel(m, src.view()); }
// The model of a mesh uploaded in the compact layout.
inline CompactDeviceModel compactDeviceModel(const DeviceMesh& m, const EmitterView& emitters) {
    return CompactDeviceModel{deviceModel(m, emitters), m.compact.get()};
}
// f(model) with the model of m's layout (a kernel instantiation per model type).
template <class F>
void withDeviceModel(const DeviceMesh& m, const EmitterView& emitters, F&& f) {
    if (m.layout == CellLayout::Compact) f(compactDeviceModel(m, emitters));
    else f(deviceModel(m, emitters));
}

// A whole KernelInput's mesh and sources on the device (its materials: holdMaterials).
struct DeviceInput {
    DeviceMesh mesh;
    DeviceSources sources;

    DeviceInput(const KernelInput& in, cudaStream_t s, CellLayout layout = CellLayout::Record)
        : mesh(in.cells, s, layout), sources(in.emitters, in.emitterCdf, in.pieces, in.pieceCdf, s) {}
    DeviceModel model() const { return deviceModel(mesh, sources); }
};

class Stream {
public:
    Stream() { cudaCheck(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking), "create stream"); }
    // A stream whose blocks the scheduler places before those of ordinary streams (the batch
    // folds, which the next batch's launches may wait for).
    struct First {};
    explicit Stream(First) {
        int least = 0, greatest = 0;
        cudaCheck(cudaDeviceGetStreamPriorityRange(&least, &greatest), "stream priorities");
        cudaCheck(cudaStreamCreateWithPriority(&s_, cudaStreamNonBlocking, greatest), "create stream");
    }
    ~Stream() { cudaStreamDestroy(s_); }
    operator cudaStream_t() const { return s_; }

private:
    cudaStream_t s_;
};

// Batches of packets, each a launch with its own counter; two are kept queued so the GPU never
// waits for the host, which reports progress and checks cancel as each batch completes.
struct BatchRun {
    uint64_t packetsDone = 0;
    double seconds = 0;
    int blocksPerSm = 0;  // thread blocks per SM of the launches
};

// What runBatches needs besides the kernel: the second stream, the launches' counters and
// events. A model kept between runs (a batch slot, a Tcl loop's cached model) keeps one, so that
// a run of a planning loop creates no stream, event or device buffer; grown, never shrunk.
struct LaunchScratch {
    Stream second;
    std::unique_ptr<DeviceBuffer<unsigned long long>> counters;
    std::vector<cudaEvent_t> done;
    cudaEvent_t fork = nullptr, join = nullptr;
    // A fed run's (BatchFeed) folds: their stream, made at the first such run, and per slot the
    // event after the last fold of that slot's tallies.
    std::unique_ptr<Stream> fold;
    cudaEvent_t folded[2] = {nullptr, nullptr};

    LaunchScratch() {
        cudaCheck(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming), "event");
        cudaCheck(cudaEventCreateWithFlags(&join, cudaEventDisableTiming), "event");
    }
    ~LaunchScratch() {
        for (cudaEvent_t e : done) cudaEventDestroy(e);
        if (fork) cudaEventDestroy(fork);
        if (join) cudaEventDestroy(join);
        for (cudaEvent_t e : folded)
            if (e) cudaEventDestroy(e);
    }
    cudaStream_t foldStream() {
        if (!fold) {
            fold = std::make_unique<Stream>(Stream::First{});
            for (cudaEvent_t& e : folded) cudaCheck(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "event");
        }
        return *fold;
    }
    LaunchScratch(const LaunchScratch&) = delete;
    LaunchScratch& operator=(const LaunchScratch&) = delete;
    // Room for n launches: counters (zeroed on s) and completion events.
    void prepare(uint64_t n, cudaStream_t s) {
        n = std::max<uint64_t>(n, 1);
        if (!counters || counters->size() < n) {
            counters.reset();
            counters = std::make_unique<DeviceBuffer<unsigned long long>>(n, "batch counters");
        }
        cudaCheck(cudaMemsetAsync(counters->get(), 0, n * sizeof(unsigned long long), s), "clear counters");
        while (done.size() < n) {
            cudaEvent_t e;
            cudaCheck(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "event");
            done.push_back(e);
        }
    }
};

// The batches of the standard errors run back to back on one device (DeviceRun's fed run):
// the batch after the current one starts while the current one's last packets finish (its
// launch tail), instead of after the GPU has drained. Successive batches add into two slots of
// tallies and ledger in turn (batch i into slot i % 2), so a batch's tallies are complete when
// its own launches are: its fold reads its slot while the next batch adds into the other, and
// the batch after that (the same slot) starts after the fold.
class BatchFeed {
public:
    // The next batch's packets [first, first + n) (absolute indices, n > 0); false when there
    // are no more (or the run is cancelled).
    virtual bool next(uint64_t& first, uint64_t& n) = 0;
    // Batch `index` of `packets` packets has completed: its slot's fold queued on stream s,
    // without waiting for it (the next launches are queued after this returns).
    virtual void fold(uint64_t index, uint64_t packets, cudaStream_t s) = 0;
    // What fold queued for batch `index` (of `packets` packets) has run (stream s
    // synchronised): its host side (the ledger's fold).
    virtual void settle(uint64_t index, uint64_t packets, cudaStream_t s) = 0;
    // After each finished launch: the device's packets done so far, and whether a launch is
    // still running.
    virtual void finished(uint64_t packetsDone, bool running) = 0;

protected:
    ~BatchFeed() = default;
};

// Runs opt.packets packets through launchOne(blocks, stream, firstPacket, count, counter), a
// launch of `kernel` (smem bytes of dynamic shared memory per block) of kBlock threads each, as
// many blocks per SM as fit (opt.tuning.cudaBlocksPerSm = N launches at most N per SM:
// benchmarks, tests; results do not depend on it, only the order of the atomic additions changes).
// With a feed, the packets are the feed's batches instead (opt.packets, opt.firstPacket unused)
// and launchOne takes the batch's slot (0 or 1) as a sixth argument. A launch takes at most
// packetsPerThread packets per thread.
template <class Kernel, class LaunchOne>
BatchRun runBatches(Kernel kernel, size_t smem, const RunOptions& opt, cudaStream_t s, LaunchOne launchOne,
                    LaunchScratch* kept = nullptr, BatchFeed* feed = nullptr,
                    uint64_t packetsPerThread = kPacketsPerThread) {
    int device = 0, sms = 0, fit = 0;
    cudaCheck(cudaGetDevice(&device), "get device");
    cudaCheck(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "query SMs");
    cudaCheck(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, kBlock, smem), "occupancy");
    fit = std::max(fit, 1);
    const int forced = int(opt.tuning.cudaBlocksPerSm);
    const int perSm = forced ? std::min(forced, fit) : fit;
    const uint64_t batch = uint64_t(sms) * perSm * kBlock * packetsPerThread;
    // With opt.packetSource (a hybrid run's GPU side, Kernels/PacketSource.hpp) each launch's
    // range is taken from the source as the launch is queued, so the launches stay two deep
    // however the packets fall between the GPU and the CPU; opt.packets is then an upper bound.
    PacketSource* const src = feed ? nullptr : opt.packetSource;
    const bool streamed = src || feed;
    const uint64_t nBatches = feed ? 0 : (opt.packets + batch - 1) / batch;
    // One counter and completion event per launch slot. A streamed run may launch more often
    // (smaller blocks): its slots are reused, the counter zeroed on the launch's stream (an even
    // slot count keeps a slot on one stream) and the event only after its launch has finished.
    const uint64_t slots = streamed ? std::max<uint64_t>(2, nBatches + (nBatches & 1)) : std::max<uint64_t>(nBatches, 1);
    std::unique_ptr<LaunchScratch> own;
    if (!kept) own = std::make_unique<LaunchScratch>();
    LaunchScratch& sc = kept ? *kept : *own;
    sc.prepare(slots, s);
    cudaStream_t const foldOn = feed ? sc.foldStream() : nullptr;
    auto t0 = Clock::now();
    uint64_t packetsDone = 0;
    std::vector<uint64_t> firsts, sizes;  // each launch's range
    // A fed run's launches: each one's batch, and whether it is its batch's last.
    std::vector<uint64_t> batchOf;
    std::vector<char> lastOfBatch;
    uint64_t batchCount = 0, batchFirst = 0, batchLeft = 0;
    std::vector<uint64_t> batchPackets;
    if (!streamed)
        for (uint64_t b = 0; b < nBatches; ++b) {
            firsts.push_back(opt.firstPacket + b * batch);
            sizes.push_back(std::min(batch, opt.packets - b * batch));
        }
    // Launches alternate between s and a second stream, so that the next launch's blocks start
    // on the SMs that the last packets of the one before leave idle (its tail), instead of
    // after it. Both streams start after what was queued on s (uploads) and s waits for both
    // before what comes next (downloads). Tallies are added atomically, so launches may overlap.
    cudaStream_t second = sc.second;
    cudaCheck(cudaEventRecord(sc.fork, s), "event");
    cudaCheck(cudaStreamWaitEvent(second, sc.fork, 0), "stream wait");
    if (feed) cudaCheck(cudaStreamWaitEvent(foldOn, sc.fork, 0), "stream wait");
    bool exhausted = false;  // a streamed run's source has no more for this GPU
    auto launch = [&](uint64_t b) {
        cudaStream_t on = (b & 1) ? second : s;
        if (src) {
            uint64_t first = 0, end = 0;
            if (!src->takeLaunch(0, batch, first, end)) return false;
            firsts.push_back(first);
            sizes.push_back(end - first);
        } else if (feed) {
            if (batchLeft == 0) {
                uint64_t first = 0, n = 0;
                if (!feed->next(first, n) || n == 0) return false;
                batchFirst = first;
                batchLeft = n;
                batchPackets.push_back(n);
                // The slot's previous batch has been folded before this one adds into it.
                if (++batchCount > 2) cudaCheck(cudaStreamWaitEvent(on, sc.folded[(batchCount - 1) & 1], 0), "stream wait");
            }
            const uint64_t n = std::min(batch, batchLeft);
            firsts.push_back(batchFirst);
            sizes.push_back(n);
            batchFirst += n;
            batchLeft -= n;
            batchOf.push_back(batchCount - 1);
            lastOfBatch.push_back(batchLeft == 0);
        }
        const uint64_t n = sizes[b];
        unsigned long long* counter = sc.counters->get() + b % slots;
        if (b >= slots) cudaCheck(cudaMemsetAsync(counter, 0, sizeof(unsigned long long), on), "counter");
        const unsigned blocks = unsigned(std::min<uint64_t>(uint64_t(sms) * perSm, (n + kBlock - 1) / kBlock));
        if constexpr (std::is_invocable_v<LaunchOne, unsigned, cudaStream_t, uint64_t, uint64_t, unsigned long long*,
                                          unsigned>)
            launchOne(blocks, on, firsts[b], n, counter, feed ? unsigned(batchOf[b] & 1) : 0u);
        else
            launchOne(blocks, on, firsts[b], n, counter);
        cudaCheck(cudaGetLastError(), "launch");
        cudaCheck(cudaEventRecord(sc.done[b % slots], on), "event");
        return true;
    };
    uint64_t launched = 0, finished = 0;
    bool stop = false;
    auto more = [&] { return !stop && !exhausted && (streamed || launched < nBatches); };
    auto topUp = [&] {
        while (more() && launched < finished + 2) {
            if (launch(launched)) ++launched;
            else exhausted = true;
        }
    };
    while (finished < launched || more()) {
        topUp();
        if (finished == launched) break;
        cudaCheck(cudaEventSynchronize(sc.done[finished % slots]), "packet kernel");
        const uint64_t f = finished++;
        packetsDone += sizes[f];
        if (src) src->launchDone(0, sizes[f]);
        if (feed) {
            // A batch's launches finish in order: its last one done, it is complete. Its fold
            // is queued before the next launches (the batch after next waits for it), and its
            // host side waits until they are queued.
            const bool ends = lastOfBatch[f];
            if (ends) {
                feed->fold(batchOf[f], batchPackets[batchOf[f]], foldOn);
                cudaCheck(cudaEventRecord(sc.folded[batchOf[f] & 1], foldOn), "event");
            }
            if (opt.cancel && opt.cancel->load()) stop = true;
            topUp();
            if (ends) {
                cudaCheck(cudaStreamSynchronize(foldOn), "batch fold");
                feed->settle(batchOf[f], batchPackets[batchOf[f]], foldOn);
            }
            feed->finished(packetsDone, finished < launched);
            continue;
        }
        if (opt.progress) opt.progress(packetsDone, opt.packets);
        if (opt.cancel && opt.cancel->load()) stop = true;
    }
    cudaCheck(cudaEventRecord(sc.join, second), "event");
    cudaCheck(cudaStreamWaitEvent(s, sc.join, 0), "stream wait");
    return BatchRun{packetsDone, since(t0), perSm};
}

// Where one slot's launches add (BatchFeed): the scorer's arrays, the ledger's totals and
// replicas of its rare fields (SplitLedgerScorer), and the arrays of per-thread rows.
template <class Scorer>
struct LaunchTarget {
    Scorer sc;
    DeviceTotals* totals = nullptr;
    BlockTallies bt;
    Ledger* rare = nullptr;
};
template <class Scorer>
using LaunchTargets = std::array<LaunchTarget<Scorer>, 2>;

template <class Model, class Scorer>
BatchRun launchBatchesAs(const Model& m, const RunOptions& opt, const LaunchTargets<Scorer>& t, uint32_t nMaterials,
                         cudaStream_t s, LaunchScratch* scratch, BatchFeed* feed) {
    auto kernel = packetKernel<Model, Scorer>;
    const size_t smem = sizeof(double) * kBlock * t[0].bt.stride();
    if (smem > 48 * 1024)  // above the default limit of dynamic shared memory: opt in
        cudaCheck(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)),
                  "shared memory for per-thread tallies");
    return runBatches(kernel, smem, opt, s,
                      [&](unsigned blocks, cudaStream_t on, uint64_t first, uint64_t n, unsigned long long* counter,
                          unsigned slot) {
                          const LaunchTarget<Scorer>& x = t[slot];
                          kernel<<<blocks, kBlock, smem, on>>>(m, opt.params, first, n, x.sc, x.totals, counter,
                                                               nMaterials, x.bt, x.rare);
                      },
                      scratch, feed);
}

// Launches with the small tallies bt in per-thread rows when it names any (and the scorer has a
// row form), else straight into the global arrays. t: where each slot adds (slot 0 only without
// a feed): the scorer, the ledger's totals and kRareLedgerCopies ledgers, zeroed, that receive
// the ledger's fields other than the absorbed weight (SplitLedgerScorer), and the rows' arrays.
// scratch: the caller's kept LaunchScratch, or none (one made for this call). feed: the batches
// of a fed run (runBatches), or none.
template <class Model, class Scorer>
BatchRun launchBatches(const Model& m, const RunOptions& opt, const LaunchTargets<Scorer>& t, uint32_t nMaterials,
                       cudaStream_t s, LaunchScratch* scratch = nullptr, BatchFeed* feed = nullptr) {
    if constexpr (RowScorer<Scorer>::kOk) {
        if (t[0].bt.rowsOn()) {
            using Row = decltype(RowScorer<Scorer>::make(t[0].sc));
            LaunchTargets<Row> r;
            for (int i = 0; i < 2; ++i) r[i] = {RowScorer<Scorer>::make(t[i].sc), t[i].totals, t[i].bt, t[i].rare};
            return launchBatchesAs(m, opt, r, nMaterials, s, scratch, feed);
        }
    }
    LaunchTargets<Scorer> u = t;
    for (auto& x : u)
        if (x.bt.rowsOn()) x.bt = BlockTallies{};
    return launchBatchesAs(m, opt, u, nMaterials, s, scratch, feed);
}

}  // namespace cuda_engine

}  // namespace
}  // namespace fm
