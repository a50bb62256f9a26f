// GPU glue over Kernels/Core: upload the packed model, launch the shared packet loop in batches
// over packet-index ranges, download tallies into the RunResult the CPU kernel also fills.
#include <algorithm>
#include <chrono>

#include "Kernels/CUDA/CudaSupport.cuh"
#include "Kernels/Core/TallyScorer.hpp"

namespace fm {

__constant__ MaterialRecord c_materials[kMaxCudaMaterials];

// The model as the GPU reads it: cells through the read-only path as seven 16-byte loads,
// materials from constant memory.
struct DeviceModel {
    const TetraRecord* __restrict__ cells;
    EmitterView emitters;

    // Field by field from named vector loads: writing through a cast pointer would force the
    // record into local memory.
    __device__ TetraRecord cell(uint32_t i) const {
        const float4* f = reinterpret_cast<const float4*>(cells + i);
        const uint4* u = reinterpret_cast<const uint4*>(cells + i);
        float4 nx = __ldg(f), ny = __ldg(f + 1), nz = __ldg(f + 2), c = __ldg(f + 3);
        uint4 adj = __ldg(u + 4), face = __ldg(u + 5), misc = __ldg(u + 6);
        return TetraRecord{{nx.x, nx.y, nx.z, nx.w}, {ny.x, ny.y, ny.z, ny.w}, {nz.x, nz.y, nz.z, nz.w},
                           {c.x, c.y, c.z, c.w}, {adj.x, adj.y, adj.z, adj.w},
                           {face.x, face.y, face.z, face.w}, misc.x, misc.y, {misc.z, misc.w}};
    }
    __device__ uint32_t cellMaterial(uint32_t i) const { return __ldg(&cells[i].material); }
    __device__ const MaterialRecord& material(uint32_t i) const { return c_materials[i]; }
};

#ifndef FM_CUDA_BLOCK
#define FM_CUDA_BLOCK 256
#endif
#ifndef FM_CUDA_MIN_BLOCKS  // minimum resident blocks per SM: caps registers per thread
#define FM_CUDA_MIN_BLOCKS 1
#endif
#ifndef FM_CUDA_PACKETS_PER_THREAD  // per launch
#define FM_CUDA_PACKETS_PER_THREAD 64
#endif
constexpr int kBlock = FM_CUDA_BLOCK;

template <class Scorer>
__global__ void __launch_bounds__(kBlock, FM_CUDA_MIN_BLOCKS) tallyKernel(DeviceModel m, KernelParams kp, uint64_t first,
                                                     uint64_t count, Scorer sc, DeviceTotals* totals) {
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
        runPacket(m, kp, first + i, sc);
    sc.flush();
    addTotals(totals, sc.ledger, sc.events);
}

bool cudaDeviceAvailable(std::string* why) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        if (why) *why = e != cudaSuccess ? std::string("no usable CUDA device: ") + cudaGetErrorString(e)
                                         : std::string("no CUDA device present");
        cudaGetLastError();
        return false;
    }
    return true;
}

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

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
        return DeviceModel{cells.get(), EmitterView{emitters.get(), emitterCdf.get(), uint32_t(emitters.size()),
                                                    pieces.get(), pieceCdf.get()}};
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

template <class Scorer>
void launchBatches(const DeviceModel& m, const RunOptions& opt, Scorer sc, DeviceTotals* totals,
                   cudaStream_t s, RunResult& r) {
    int device = 0, sms = 0, perSm = 0;
    cudaCheck(cudaGetDevice(&device), "get device");
    cudaCheck(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "query SMs");
    cudaCheck(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, tallyKernel<Scorer>, kBlock, 0), "occupancy");
    const uint64_t grid = uint64_t(sms) * std::max(perSm, 1);
    // Batches of ~64 packets per thread: long enough to amortise the launch and the tail of
    // each batch, short enough to report progress and honour cancel a few times a second.
    const uint64_t batch = grid * kBlock * FM_CUDA_PACKETS_PER_THREAD;
    uint64_t done = 0;
    auto t0 = Clock::now();
    while (done < opt.packets) {
        if (opt.cancel && opt.cancel->load()) break;
        uint64_t n = std::min(batch, opt.packets - done);
        unsigned blocks = unsigned(std::min<uint64_t>(grid, (n + kBlock - 1) / kBlock));
        tallyKernel<Scorer><<<blocks, kBlock, 0, s>>>(m, opt.params, opt.firstPacket + done, n, sc, totals);
        cudaCheck(cudaGetLastError(), "launch");
        cudaCheck(cudaStreamSynchronize(s), "packet kernel");
        done += n;
        if (opt.progress) opt.progress(done, opt.packets);
    }
    r.kernelSeconds = since(t0);
    r.packetsDone = done;
}

}  // namespace

RunResult runCuda(const KernelInput& in, const RunOptions& opt) {
    auto t0 = Clock::now();
    std::string why;
    if (!cudaDeviceAvailable(&why)) throw Error("kernel cuda: " + why);
    RunResult r;
    r.kernel = "cuda";
    r.packetsRequested = opt.packets;
    Stream s;
    DeviceInput dev(in, s);
    const auto& o = opt.outputs;
    DeviceBuffer<double> vol(o.volume ? in.cells.size() : 0, "volume tally");
    DeviceBuffer<double> surf(o.surface ? in.faceCount : 0, "surface tally");
    DeviceBuffer<double> dir(o.directed ? 2 * size_t(in.faceCount) : 0, "directed surface tally");
    DeviceBuffer<DeviceTotals> totals(1, "ledger");
    vol.zero(s);
    surf.zero(s);
    dir.zero(s);
    totals.zero(s);
    cudaCheck(cudaStreamSynchronize(s), "upload");
    r.uploadSeconds = since(t0);

    dispatchOutputs(o.volume, o.surface, o.directed, [&](auto V, auto S, auto D) {
        TallyScorer<decltype(V)::value, decltype(S)::value, decltype(D)::value, DeviceAtomicAdd> sc;
        sc.volume = vol.get();
        sc.surface = surf.get();
        sc.directed = dir.get();
        launchBatches(dev.model(), opt, sc, totals.get(), s, r);
    });

    auto t1 = Clock::now();
    r.volume = vol.download(s);
    r.surface = surf.download(s);
    r.directed = dir.download(s);
    totalsToResult(totals.download(s)[0], r);
    r.downloadSeconds = since(t1);
    r.cancelled = r.packetsDone < opt.packets;
    r.seconds = since(t0);
    return r;
}

}  // namespace fm
