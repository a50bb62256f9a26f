// The GPU engine shared by the CUDA entry points (standard tallies, MCML): the device-side
// model, upload of the packed input, the packet kernel templated on the scorer, and batched
// launches with progress and cancel. Included by each .cu; everything here is per translation
// unit (the constant-memory materials too), so the entry points stay independent.
#pragma once
#include <algorithm>
#include <chrono>

#include "Kernels/CUDA/CudaSupport.cuh"

namespace fm {

// static: each .cu that includes the engine has its own copy, filled by its own DeviceInput.
static __constant__ MaterialRecord c_materials[kMaxCudaMaterials];

#ifndef FM_CUDA_SHARED_MATERIALS  // 1: materials copied to shared memory per block
#define FM_CUDA_SHARED_MATERIALS 0
#endif

// The model as the GPU reads it: cells through the read-only path as seven 16-byte loads,
// materials from constant memory (or a per-block shared copy: constant memory serialises when
// the threads of a warp read different materials).
struct DeviceModel {
    const TetraRecord* __restrict__ cells;
    EmitterView emitters;
    const MaterialRecord* mats;  // shared-memory copy, when FM_CUDA_SHARED_MATERIALS

    // Four named 16-byte loads: writing through a cast pointer would force the planes into
    // local memory.
    __device__ CellPlanes planes(uint32_t i) const {
        const float4* f = reinterpret_cast<const float4*>(cells + i);
        float4 nx = __ldg(f), ny = __ldg(f + 1), nz = __ldg(f + 2), c = __ldg(f + 3);
        return CellPlanes{{nx.x, nx.y, nx.z, nx.w}, {ny.x, ny.y, ny.z, ny.w}, {nz.x, nz.y, nz.z, nz.w},
                          {c.x, c.y, c.z, c.w}};
    }
    __device__ uint32_t adjacent(uint32_t i, int f) const { return __ldg(&cells[i].adj[f]); }
    __device__ uint32_t faceId(uint32_t i, int f) const { return __ldg(&cells[i].face[f]); }
    __device__ uint32_t scoredFaces(uint32_t i) const { return __ldg(&cells[i].scoredFaces); }
    __device__ uint32_t cellMaterial(uint32_t i) const { return __ldg(&cells[i].material); }
    __device__ const MaterialRecord& material(uint32_t i) const {
#if FM_CUDA_SHARED_MATERIALS
        return mats[i];
#else
        return c_materials[i];
#endif
    }
};

#ifndef FM_CUDA_BLOCK
#define FM_CUDA_BLOCK 256
#endif
#ifndef FM_CUDA_MIN_BLOCKS  // minimum resident blocks per SM: caps registers per thread
#define FM_CUDA_MIN_BLOCKS 3
#endif
#ifndef FM_CUDA_PACKETS_PER_THREAD  // per launch
#define FM_CUDA_PACKETS_PER_THREAD 128
#endif
constexpr int kBlock = FM_CUDA_BLOCK;

// Threads take packets one at a time from a shared counter until the batch is used up, and
// advance them one event per loop iteration, so a lane whose packet ends starts the next one
// at once instead of waiting for the rest of its warp.
template <class Scorer>
__global__ void __launch_bounds__(kBlock, FM_CUDA_MIN_BLOCKS)
packetKernel(DeviceModel m, KernelParams kp, uint64_t first, uint64_t count, Scorer sc,
            DeviceTotals* totals, unsigned long long* next, uint32_t nMaterials) {
#if FM_CUDA_SHARED_MATERIALS
    __shared__ MaterialRecord mats[kMaxCudaMaterials];
    for (uint32_t i = threadIdx.x; i < nMaterials; i += blockDim.x) mats[i] = c_materials[i];
    __syncthreads();
    m.mats = mats;
#endif
    PacketState st;
    bool live = false;
    for (;;) {
        if (live) {
            live = advance(m, kp, st, sc);
            continue;
        }
        // 32-bit per-thread counters: widen into the totals long before they could wrap.
        if (sc.events.absorb > 0x40000000u || sc.events.boundary > 0x40000000u) {
            addEventsUnaggregated(totals, sc.events);
            sc.events = EventCounts<uint32_t>{};
        }
        uint64_t i = atomicAdd(next, 1ull);
        if (i >= count) break;
        live = launchPacket(m, kp, first + i, st, sc);
    }
    sc.flush();
    addTotals(totals, sc.ledger, sc.events);
}

namespace cuda_engine {

using Clock = std::chrono::steady_clock;
inline double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct DeviceInput {
    DeviceBuffer<TetraRecord> cells;
    DeviceBuffer<EmitterRecord> emitters;
    DeviceBuffer<double> emitterCdf, pieceCdf;
    DeviceBuffer<Piece> pieces;

    DeviceInput(const KernelInput& in, cudaStream_t s)
        : cells(in.cells.size(), "tetra records"), emitters(in.emitters.size(), "emitters"),
          emitterCdf(in.emitterCdf.size(), "emitter table"), pieceCdf(in.pieceCdf.size(), "source pieces"),
          pieces(in.pieces.size(), "source pieces") {
        if (in.materials.size() > kMaxCudaMaterials)
            throw Error("CUDA: " + std::to_string(in.materials.size()) + " materials exceed the " +
                        std::to_string(kMaxCudaMaterials) + " that fit in constant memory");
        cudaCheck(cudaMemcpyToSymbolAsync(c_materials, in.materials.data(),
                                          in.materials.size() * sizeof(MaterialRecord), 0,
                                          cudaMemcpyHostToDevice, s), "upload materials");
        cells.upload(in.cells, s);
        emitters.upload(in.emitters, s);
        emitterCdf.upload(in.emitterCdf, s);
        pieceCdf.upload(in.pieceCdf, s);
        pieces.upload(in.pieces, s);
    }
    DeviceModel model() const {
        return DeviceModel{cells.get(),
                           EmitterView{emitters.get(), emitterCdf.get(), uint32_t(emitters.size()),
                                       pieces.get(), pieceCdf.get()},
                           nullptr};
    }
};

class Stream {
public:
    Stream() { cudaCheck(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking), "create stream"); }
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
};

template <class Scorer>
BatchRun launchBatches(const DeviceModel& m, const RunOptions& opt, Scorer sc, DeviceTotals* totals,
                       uint32_t nMaterials, cudaStream_t s) {
    int device = 0, sms = 0, perSm = 0;
    cudaCheck(cudaGetDevice(&device), "get device");
    cudaCheck(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "query SMs");
    cudaCheck(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, packetKernel<Scorer>, kBlock, 0), "occupancy");
    const uint64_t grid = uint64_t(sms) * std::max(perSm, 1);
    const uint64_t batch = grid * kBlock * FM_CUDA_PACKETS_PER_THREAD;
    const uint64_t nBatches = (opt.packets + batch - 1) / batch;
    DeviceBuffer<unsigned long long> counters(nBatches, "batch counters");
    counters.zero(s);
    std::vector<cudaEvent_t> done(nBatches);
    for (auto& e : done) cudaCheck(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "event");
    auto launch = [&](uint64_t b) {
        uint64_t begin = b * batch, n = std::min(batch, opt.packets - begin);
        unsigned blocks = unsigned(std::min<uint64_t>(grid, (n + kBlock - 1) / kBlock));
        packetKernel<Scorer><<<blocks, kBlock, 0, s>>>(m, opt.params, opt.firstPacket + begin, n, sc, totals,
                                                     counters.get() + b, nMaterials);
        cudaCheck(cudaGetLastError(), "launch");
        cudaCheck(cudaEventRecord(done[b], s), "event");
    };
    auto t0 = Clock::now();
    uint64_t launched = 0, finished = 0, packetsDone = 0;
    bool stop = false;
    while (finished < launched || (!stop && launched < nBatches)) {
        while (!stop && launched < nBatches && launched < finished + 2) launch(launched++);
        cudaCheck(cudaEventSynchronize(done[finished]), "packet kernel");
        packetsDone += std::min(batch, opt.packets - finished * batch);
        ++finished;
        if (opt.progress) opt.progress(packetsDone, opt.packets);
        if (opt.cancel && opt.cancel->load()) stop = true;
    }
    for (auto& e : done) cudaEventDestroy(e);
    return BatchRun{packetsDone, since(t0)};
}

}  // namespace cuda_engine

}  // namespace fm
