// SPDX-License-Identifier: GPL-3.0-or-later
// Several runs of a batch in one launch (Kernels/CUDA/CudaMultiRun.hpp, Kernels/MultiRun.hpp):
// the packet loop of Kernels/CUDA/CudaEngine.cuh's packetKernel, with each thread's scorer
// switched between the runs' tallies as its packets cross from one run into the next.
#include "Kernels/CUDA/CudaEngine.cuh"
#include "Kernels/CUDA/CudaMultiRun.hpp"
#include "Kernels/CUDA/CudaKernel.hpp"

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <type_traits>

#include "Kernels/DeviceModelCache.hpp"
#include "Kernels/MultiRun.hpp"

namespace fm {
namespace {

using namespace cuda_engine;

// Replicas of each run's ledger and event totals: threads add into them one by one when they
// leave a run (no warp to reduce over), spread by block.
constexpr uint32_t kTotalsCopies = 32;
// Resident blocks per SM the group kernel is compiled for: three on a mesh whose cells fit the
// L2 (a thread's run is two 32-bit offsets, TallyReplicas::base and GroupLedgerScorer::rareRun;
// with the registers of three blocks a thread runs such a batch's packets faster than at four),
// four (64 registers, as the single-run kernel, no spills) on a mesh beyond the L2
// (cellsBeyondL2, as the cell layout's Auto), whose kernel waits on memory and needs every warp to
// hide it (docs/PERFORMANCE.md, "Run groups on a clinical mesh"). TuningKnobs::cudaGroupBlocksPerSm
// overrides.
constexpr int kMultiRunBlocksPerSm = 3;
constexpr int kMultiRunBlocksPerSmAlt = 4;
int groupBlocksPerSm(uint32_t knob, bool beyondL2) {
    if (knob) return int(knob);
    return beyondL2 ? kMultiRunBlocksPerSmAlt : kMultiRunBlocksPerSm;
}
// Device memory for the tallies of one group; groups of runs on larger meshes hold fewer runs.
constexpr size_t kGroupTallyBudget = size_t(1) << 30;
static_assert(kGroupTallyBudget / sizeof(double) <= UINT32_MAX, "a run's tally offset in a group is 32-bit");

// One thread's ledger into the totals without warp cooperation (a thread leaving a run).
__device__ inline void addLedgerUnaggregated(DeviceTotals* t, const Ledger& L) {
    const double l[7] = {L.launched, L.specular, L.absorbed, L.exited, L.rouletteGained, L.rouletteLost, L.abnormal};
#pragma unroll
    for (int i = 0; i < 7; ++i)
        if (l[i] != 0.0) atomicAdd(&t->ledger[i], l[i]);
}

// SplitLedgerScorer for a group: the rare ledger fields go to the thread's run's replicas,
// rareRun ledgers past the block's replica of run 0's (a 32-bit offset in a register: a
// per-run pointer there spills at four blocks per SM).
template <class Inner>
struct GroupLedgerScorer : SplitLedgerScorer<Inner> {
    uint32_t rareRun = 0;

    __device__ GroupLedgerScorer(const Inner& s, Ledger* blockRare) : SplitLedgerScorer<Inner>(s, blockRare) {}
    template <double Ledger::*F>
    __device__ void bookLedger(double v) {
        if constexpr (F == &Ledger::absorbed) this->absorbed += v;
        else DeviceAtomicAdd::add(&(this->rare[rareRun].*F), v);
    }
};

// Where a group's runs keep their sums (MultiRunLane's Sinks): run r's tallies (volume, surface,
// directed, in replicas) r * runStride doubles past run 0's (the scorer's pointers, which stay
// kernel parameters: a thread holds the run's 32-bit offset, TallyReplicas::base, not three
// pointers), its totals and its rare ledger fields.
template <class Inner>
struct DeviceRunSinks {
    uint32_t runStride;    // doubles per run, replicas included
    DeviceTotals* totals;  // kTotalsCopies per run
    Ledger* rare;          // kRareLedgerCopies per run

    __device__ DeviceTotals* totalsOf(uint32_t r) const {
        return totals + size_t(r) * kTotalsCopies + blockIdx.x % kTotalsCopies;
    }
    __device__ void open(uint32_t r, GroupLedgerScorer<Inner>& sc) const {
        sc.inner.setReplicaBase(r * runStride);
        sc.rareRun = r * kRareLedgerCopies;
    }
    __device__ void close(uint32_t r, GroupLedgerScorer<Inner>& sc) const {
        sc.flush();
        DeviceTotals* t = totalsOf(r);
        addLedgerUnaggregated(t, sc.ledger());
        addEventsUnaggregated(t, sc.events);
        sc.absorbed = 0.0;
        sc.events = EventCounts<uint32_t>{};
    }
};

// The warp loop (CudaEngine.cuh warpLoop) over `count` packets of
// the group's runs: MultiRunLane starts each packet in its run's scorer.
template <int MinBlocksPerSm, class Model, class Scorer>
__global__ void __launch_bounds__(kBlock, MinBlocksPerSm)
multiRunKernel(Model m, KernelParams kp, const MultiRunEntry* runs, uint64_t count, Scorer scIn,
               DeviceRunSinks<Scorer> sinks, unsigned long long* next) {
    GroupLedgerScorer<Scorer> sc(scIn, sinks.rare + blockIdx.x % kRareLedgerCopies);
    MultiRunLane lane;
    sinks.open(0, sc);
    warpLoop(
        m, kp, count, next, sc, [&](const EventCounts<uint32_t>& e) { addEventsUnaggregated(sinks.totalsOf(lane.run), e); },
        [&](uint64_t i, PacketState& st) { return lane.launch(m, kp, runs, i, st, sc, sinks); });
    // The last run of each thread: one reduction per warp where the whole warp ended in one run.
    sc.flush();
    const uint32_t r0 = __shfl_sync(0xffffffffu, lane.run, 0);
    if (__all_sync(0xffffffffu, lane.run == r0)) {
        addTotals(sinks.totalsOf(r0), sc.ledger(), sc.events);
    } else {
        addLedgerUnaggregated(sinks.totalsOf(lane.run), sc.ledger());
        addEventsUnaggregated(sinks.totalsOf(lane.run), sc.events);
    }
}

// A device buffer that keeps its allocation while what it must hold fits (a group's sources).
template <class T>
T* ensureSize(std::unique_ptr<DeviceBuffer<T>>& b, const std::vector<T>& v, const char* what, cudaStream_t s) {
    if (!b || b->size() < v.size()) {
        b.reset();
        b = std::make_unique<DeviceBuffer<T>>(v.size(), what);
    }
    b->upload(v, s);
    return b->get();
}

// The runs' sources laid end to end, each run's view pointing at its own part.
struct GroupSources {
    std::vector<EmitterRecord> emitters;
    std::vector<double> emitterCdf, pieceCdf;
    std::vector<Piece> pieces;
    std::vector<size_t> emitterAt, pieceAt;

    explicit GroupSources(const std::vector<const RunVariant*>& v) {
        for (const RunVariant* r : v) {
            emitterAt.push_back(emitters.size());
            pieceAt.push_back(pieces.size());
            emitters.insert(emitters.end(), r->emitters.begin(), r->emitters.end());
            emitterCdf.insert(emitterCdf.end(), r->emitterCdf.begin(), r->emitterCdf.end());
            pieces.insert(pieces.end(), r->pieces.begin(), r->pieces.end());
            pieceCdf.insert(pieceCdf.end(), r->pieceCdf.begin(), r->pieceCdf.end());
        }
    }
};

}  // namespace

bool cudaMultiRunSupports(const KernelInput& mesh, const OutputSelection& o) {
    // The mesh kernel's per-thread rows (BlockTallies::rows) take volume + surface arrays of
    // up to kRowDoubles doubles without directed tallies; groups use the global replicas only.
    const size_t nVol = o.volume ? mesh.cells.size() : 0, nSurf = o.surface ? mesh.faceCount : 0;
    if (o.gated()) return false;  // groups switch the standard tallies only
    return o.directed || nVol + nSurf > kRowDoubles;
}

// The mesh on one device, shared by the run groups there that hold the same packed cells in the
// same layout (a batch's two slots per device): uploaded once, freed with the last holder (which
// has made its device current). A second slot asking while the first uploads waits for it.
static std::shared_ptr<const DeviceMesh> sharedMesh(int device, const std::vector<TetraRecord>& cells, uint64_t identity,
                                             CellLayout layout, cudaStream_t s) {
    using Key = std::tuple<int, uint64_t, size_t, int>;
    static std::mutex m;
    static std::map<Key, std::weak_ptr<const DeviceMesh>> meshes;
    const Key key{device, cellsKey(cells.data(), cells.size(), sizeof(TetraRecord), identity), cells.size(), int(layout)};
    std::lock_guard<std::mutex> g(m);
    for (auto it = meshes.begin(); it != meshes.end();) it = it->second.expired() ? meshes.erase(it) : std::next(it);
    if (auto held = meshes[key].lock()) return held;
    auto mesh = std::make_shared<const DeviceMesh>(cells, s, layout);
    cudaCheck(cudaStreamSynchronize(s), "upload mesh");
    meshes[key] = mesh;
    return mesh;
}

struct CudaRunGroupOnDevice::Impl {
    int device = 0;
    OutputSelection outputs;
    Stream s;
    std::shared_ptr<const DeviceMesh> mesh;
    uint32_t nVol, nSurf, nDir;
    size_t stride;
    uint32_t copies;
    size_t maxRuns;
    DeviceBuffer<double> tallies;
    DeviceBuffer<DeviceTotals> totals;
    DeviceBuffer<Ledger> rare;
    DeviceBuffer<unsigned long long> counter;
    DeviceBuffer<MultiRunEntry> entries;
    std::unique_ptr<DeviceBuffer<EmitterRecord>> emitters;
    std::unique_ptr<DeviceBuffer<double>> emitterCdf, pieceCdf;
    std::unique_ptr<DeviceBuffer<Piece>> pieces;
    PinnedHost<double> pinned;  // the group's tallies on their way back, kept between groups
    cudaEvent_t done = nullptr;
    int sms = 0;  // the device's SMs, queried at the first launch
    bool beyondL2 = false;  // the mesh's cells exceed the device's L2 (groupBlocksPerSm)
    MaterialTableSent::Lease materials;  // from upload until the group's tallies are downloaded

    Impl(int dev, const KernelInput& in, const OutputSelection& o, size_t want, CellLayout layout)
        : device(dev), outputs(o), mesh(sharedMesh(dev, in.cells, in.cellsIdentity, cudaCellLayoutFor(layout, in.cells.size(), dev), s)), nVol(o.volume ? uint32_t(in.cells.size()) : 0u),
          nSurf(o.surface ? in.faceCount : 0u), nDir(o.directed ? 2u * in.faceCount : 0u),
          stride(size_t(nVol) + nSurf + nDir), copies(meshTallyCopies(stride)) {
        const size_t perRun = std::max<size_t>(1, stride * copies * sizeof(double));
        maxRuns = std::max<size_t>(1, std::min(want, kGroupTallyBudget / perRun));
        tallies.allocate(stride * copies * maxRuns, "tallies of a group of runs");
        totals.allocate(kTotalsCopies * maxRuns, "ledgers of a group of runs");
        rare.allocate(kRareLedgerCopies * maxRuns, "ledger replicas of a group of runs");
        counter.allocate(1, "packet counter");
        entries.allocate(maxRuns, "runs of a group");
        double l2 = 0;
        beyondL2 = deviceL2Bytes(dev, l2) && cellsBeyondL2(in.cells.size(), l2);
        cudaCheck(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "event");
        cudaCheck(cudaStreamSynchronize(s), "upload mesh");
    }
    ~Impl() {
        if (done) cudaEventDestroy(done);
    }

    // Sources and run table of the group on the device; returns the group's packet count.
    uint64_t upload(const std::vector<const RunVariant*>& v, const std::vector<RunOptions>& opt) {
        const GroupSources g(v);
        const EmitterRecord* em = ensureSize(emitters, g.emitters, "emitters", s);
        const double* ecdf = ensureSize(emitterCdf, g.emitterCdf, "emitter table", s);
        const Piece* pc = ensureSize(pieces, g.pieces, "source pieces", s);
        const double* pcdf = ensureSize(pieceCdf, g.pieceCdf, "source pieces", s);
        std::vector<MultiRunEntry> e(v.size());
        uint64_t end = 0;
        for (size_t r = 0; r < v.size(); ++r) {
            end += opt[r].packets;
            e[r].end = end;
            e[r].firstPacket = opt[r].firstPacket;
            e[r].seed = opt[r].params.seed;
            e[r].emitters = EmitterView{em + g.emitterAt[r], ecdf + g.emitterAt[r], uint32_t(v[r]->emitters.size()),
                                        pc + g.pieceAt[r], pcdf + g.pieceAt[r]};
        }
        entries.upload(e, s);
        materials.release();  // before waiting for another table: a group never waits for itself
        materials = holdMaterials(v[0]->materials, s);
        const size_t n = v.size();
        cudaCheck(cudaMemsetAsync(tallies.get(), 0, n * stride * copies * sizeof(double), s), "clear");
        cudaCheck(cudaMemsetAsync(totals.get(), 0, n * kTotalsCopies * sizeof(DeviceTotals), s), "clear");
        cudaCheck(cudaMemsetAsync(rare.get(), 0, n * kRareLedgerCopies * sizeof(Ledger), s), "clear");
        counter.zero(s);
        return end;
    }

    // One launch over the group's packets; returns the thread blocks per SM.
    int launch(const RunOptions& o, uint64_t count) {
        int perSm = 0;
        dispatchOutputs(outputs.volume, outputs.surface, outputs.directed, [&](auto V, auto S, auto D) {
            using Scorer = TallyScorer<decltype(V)::value, decltype(S)::value, decltype(D)::value, DeviceAtomicAdd, uint32_t>;
            Scorer sc;
            double* t = tallies.get();
            if constexpr (decltype(V)::value) sc.volume = t;
            if constexpr (decltype(S)::value) sc.surface = t + nVol;
            if constexpr (decltype(D)::value) sc.directed = t + nVol + nSurf;
            sc.setReplicas(copies - 1, uint32_t(stride));
            const DeviceRunSinks<Scorer> sinks{uint32_t(stride * copies), totals.get(), rare.get()};
            withDeviceModel(*mesh, EmitterView{}, [&](const auto& model) {
                using Model = std::decay_t<decltype(model)>;
                auto* kernel = groupBlocksPerSm(o.tuning.cudaGroupBlocksPerSm, beyondL2) == kMultiRunBlocksPerSmAlt
                                   ? multiRunKernel<kMultiRunBlocksPerSmAlt, Model, Scorer>
                                   : multiRunKernel<kMultiRunBlocksPerSm, Model, Scorer>;
                if (sms == 0)
                    cudaCheck(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "query SMs");
                int fit = 0;
                cudaCheck(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, kBlock, 0), "occupancy");
                fit = std::max(fit, 1);
                perSm = o.tuning.cudaBlocksPerSm ? std::min(int(o.tuning.cudaBlocksPerSm), fit) : fit;
                const unsigned blocks =
                    unsigned(std::min<uint64_t>(uint64_t(sms) * perSm, (count + kBlock - 1) / kBlock));
                kernel<<<blocks, kBlock, 0, s>>>(model, o.params, entries.get(), count, sc, sinks, counter.get());
                cudaCheck(cudaGetLastError(), "launch");
            });
        });
        cudaCheck(cudaEventRecord(done, s), "event");
        cudaCheck(cudaEventSynchronize(done), "packet kernel");
        return perSm;
    }

    // Each run's replicas summed on the device, then the runs' tallies and totals downloaded.
    void download(std::vector<RunResult>& out) {
        const size_t n = out.size();
        const size_t runStride = stride * copies;
        if (copies > 1)
            for (size_t r = 0; r < n; ++r)
                foldReplicasKernel<<<unsigned(std::min<size_t>((stride + 255) / 256, 1024)), 256, 0, s>>>(
                    tallies.get() + r * runStride, stride, copies);
        cudaCheck(cudaGetLastError(), "fold replicas");
        // The runs' summed tallies side by side in page-locked memory, one copy each into its
        // run's result.
        double* t = pinned.reserve(std::max<size_t>(n * stride, 1));
        if (stride && copies == 1)
            cudaCheck(cudaMemcpyAsync(t, tallies.get(), n * stride * sizeof(double), cudaMemcpyDeviceToHost, s), "download");
        else
            for (size_t r = 0; r < n && stride; ++r)
                cudaCheck(cudaMemcpyAsync(t + r * stride, tallies.get() + r * runStride, stride * sizeof(double),
                                          cudaMemcpyDeviceToHost, s), "download");
        const std::vector<DeviceTotals> tot = totals.download(s, n * kTotalsCopies);
        const std::vector<Ledger> rl = rare.download(s, n * kRareLedgerCopies);
        for (size_t r = 0; r < n; ++r) {
            RunResult& R = out[r];
            const double* tr = t + r * stride;
            R.volume.assign(tr, tr + nVol);
            R.surface.assign(tr + nVol, tr + nVol + nSurf);
            R.directed.assign(tr + nVol + nSurf, tr + stride);
            for (uint32_t c = 0; c < kTotalsCopies; ++c) {
                RunResult part;
                totalsToResult(tot[r * kTotalsCopies + c], part);
                R.ledger.add(part.ledger);
                R.events.add(part.events);
            }
            for (uint32_t c = 0; c < kRareLedgerCopies; ++c) R.ledger.add(rl[r * kRareLedgerCopies + c]);
        }
        materials.release();  // the group's kernel is done
    }
};

CudaRunGroupOnDevice::CudaRunGroupOnDevice(int device, const KernelInput& mesh, const OutputSelection& outputs,
                                           size_t maxRuns, CellLayout layout) {
    std::string why;
    if (!cudaDeviceAvailable(&why)) throw Error("kernel cuda: " + why);
    if (!cudaMultiRunSupports(mesh, outputs)) throw Error("CUDA run groups: the model's tallies are too small for groups");
    cudaCheck(cudaSetDevice(device), "select device");
    impl_ = std::make_unique<Impl>(device, mesh, outputs, std::max<size_t>(maxRuns, 1), layout);
}

CudaRunGroupOnDevice::~CudaRunGroupOnDevice() {
    if (impl_ && cudaSetDevice(impl_->device) == cudaSuccess) impl_.reset();
}

size_t CudaRunGroupOnDevice::maxRuns() const { return impl_->maxRuns; }

std::vector<RunResult> CudaRunGroupOnDevice::run(const std::vector<const RunVariant*>& v,
                                                 const std::vector<RunOptions>& opt) {
    auto t0 = Clock::now();
    if (v.empty() || v.size() != opt.size() || v.size() > impl_->maxRuns)
        throw Error("CUDA run groups: " + std::to_string(v.size()) + " runs for a group of at most " +
                    std::to_string(impl_->maxRuns));
    const std::vector<MaterialRecord>& mats = v[0]->materials;
    for (const RunVariant* r : v)
        if (r->materials.size() != mats.size() ||
            std::memcmp(r->materials.data(), mats.data(), mats.size() * sizeof(MaterialRecord)) != 0)
            throw Error("CUDA run groups: the runs of a group must share their materials");
    cudaCheck(cudaSetDevice(impl_->device), "select device");
    std::vector<RunResult> out(v.size());
    for (size_t r = 0; r < v.size(); ++r) {
        out[r].kernel = "cuda";
        out[r].packetsRequested = opt[r].packets;
    }
    if (opt[0].cancel && opt[0].cancel->load()) {
        for (RunResult& r : out) r.cancelled = true;
        return out;
    }
    const uint64_t count = impl_->upload(v, opt);
    const double up = since(t0);
    auto tk = Clock::now();
    const int perSm = count ? impl_->launch(opt[0], count) : 0;
    const double kernel = since(tk);
    auto td = Clock::now();
    impl_->download(out);
    const double down = since(td), all = since(t0);
    // The group's times shared out by packets, so that the runs' times add up to the group's.
    for (size_t r = 0; r < v.size(); ++r) {
        const double f = count ? double(opt[r].packets) / double(count) : 1.0 / double(v.size());
        RunResult& R = out[r];
        R.packetsDone = opt[r].packets;
        R.uploadSeconds = f * up;
        R.kernelSeconds = f * kernel;
        R.downloadSeconds = f * down;
        R.seconds = f * all;
        R.gpuBlocksPerSm = perSm;
    }
    return out;
}

}  // namespace fm
