// SPDX-License-Identifier: GPL-3.0-or-later
// Standard tallies on the GPU: thin glue over Kernels/CUDA/CudaEngine.cuh and Kernels/Core.
#include "Kernels/CUDA/CudaEngine.cuh"
#include <atomic>
#include <cstdlib>
#include <memory>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "Kernels/Core/TallyScorer.hpp"

namespace fm {

using namespace cuda_engine;

// At most this many replicas of a mesh's tallies (a power of two: TallyScorer picks one by a
// mask), so that the cells at a beam's entry or around a point source are not one address.
constexpr uint32_t kMeshReplicas = 32;

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

// One GPU's share of a run: the mesh uploaded once, tallies and ledger accumulated over every
// packet range it is given, then added into the result. A batch keeps it and swaps materials
// and sources between runs (load), so the mesh crosses PCIe once per device.
class DeviceRun {
public:
    DeviceRun(const KernelInput& mesh, const OutputSelection& o)
        : o_(o), mesh_(mesh.cells, s_), nVol_(o.volume ? mesh.cells.size() : 0), nSurf_(o.surface ? mesh.faceCount : 0),
          nDir_(o.directed ? 2 * size_t(mesh.faceCount) : 0), stride_(nVol_ + nSurf_ + nDir_),
          copies_(replicaCountPow2(stride_, kMeshReplicas)),
          tallies_(stride_ * copies_, "tallies"), totals_(1, "ledger"), rare_(kRareLedgerCopies, "ledger replicas") {
        clear();
    }
    // Materials and sources of the next run; tallies start from zero.
    void load(const std::vector<MaterialRecord>& mats, const std::vector<EmitterRecord>& e,
              const std::vector<double>& ecdf, const std::vector<Piece>& p, const std::vector<double>& pcdf) {
        src_.reset();
        src_ = std::make_unique<DeviceSources>(e, ecdf, p, pcdf, s_);
        uploadMaterials(mats, s_);
        nMaterials_ = uint32_t(mats.size());
        clear();
    }
    void load(const KernelInput& in) { load(in.materials, in.emitters, in.emitterCdf, in.pieces, in.pieceCdf); }
    BatchRun run(const RunOptions& part) {
        BatchRun b;
        dispatchOutputs(o_.volume, o_.surface, o_.directed, [&](auto V, auto S, auto D) {
            TallyScorer<decltype(V)::value, decltype(S)::value, decltype(D)::value, DeviceAtomicAdd, uint32_t> sc;
            sc.volume = nVol_ ? tallies_.get() : nullptr;
            sc.surface = nSurf_ ? tallies_.get() + nVol_ : nullptr;
            sc.directed = nDir_ ? tallies_.get() + nVol_ + nSurf_ : nullptr;
            sc.replicaMask = copies_ - 1;
            sc.replicaStride = uint32_t(stride_);
            const BlockTallies bt = BlockTallies::rows(sc.volume, nVol_, sc.surface, nSurf_);
            b = launchBatches(deviceModel(mesh_, *src_), part, sc, totals_.get(), nMaterials_, s_, bt, rare_.get());
        });
        return b;
    }
    void addTo(RunResult& r) {
        auto add = [](std::vector<double>& into, std::vector<double> v) {
            if (into.empty()) into = std::move(v);
            else for (size_t i = 0; i < v.size(); ++i) into[i] += v[i];
        };
        const std::vector<double> t = downloadFolded(tallies_, stride_, s_);
        add(r.volume, std::vector<double>(t.begin(), t.begin() + nVol_));
        add(r.surface, std::vector<double>(t.begin() + nVol_, t.begin() + nVol_ + nSurf_));
        add(r.directed, std::vector<double>(t.begin() + nVol_ + nSurf_, t.end()));
        RunResult part;
        totalsToResult(totals_.download(s_)[0], part);
        r.ledger.add(part.ledger);
        for (const Ledger& l : rare_.download(s_)) r.ledger.add(l);
        r.events.add(part.events);
    }

private:
    void clear() {
        tallies_.zero(s_);
        totals_.zero(s_);
        rare_.zero(s_);
        cudaCheck(cudaStreamSynchronize(s_), "upload");
    }
    OutputSelection o_;
    Stream s_;
    DeviceMesh mesh_;
    std::unique_ptr<DeviceSources> src_;
    uint32_t nMaterials_ = 0;
    // The tallies, volume then surface then directed (the ones selected), in copies_ replicas of
    // stride_ doubles: TallyScorer spreads its atomics over them, and they are summed on the
    // device at the end. A model small enough for
    // per-thread rows (BlockTallies) adds its rows' sums into the first replica; the others stay
    // zero.
    size_t nVol_, nSurf_, nDir_, stride_;
    uint32_t copies_;
    DeviceBuffer<double> tallies_;
    DeviceBuffer<DeviceTotals> totals_;
    DeviceBuffer<Ledger> rare_;  // the ledger's fields booked by reductions (SplitLedgerScorer)
};

std::vector<int> resolveDevicesImpl(const std::vector<int>& requested) {
    int n = 0;
    cudaCheck(cudaGetDeviceCount(&n), "count devices");
    std::vector<int> ds = requested;
    if (ds.empty()) ds.push_back(0);
    if (ds.size() == 1 && ds[0] < 0) {  // -1: every device of the host
        ds.clear();
        for (int d = 0; d < n; ++d) ds.push_back(d);
    }
    for (int d : ds)
        if (d < 0 || d >= n)
            throw Error("CUDA device " + std::to_string(d) + " does not exist (" + std::to_string(n) + " present)");
    return ds;
}

}  // namespace

// Packets are handed out in chunks from one counter, so a faster (or less busy) GPU takes more
// of them; every packet keeps its own index and random stream, so the tallies are the same
// (to summation order) however the chunks fall.
void warmUpCudaDevices(const std::vector<int>& devices) {
    std::vector<int> ids;
    try {
        ids = resolveDevicesImpl(devices);
    } catch (const std::exception&) {  // no device, or a bad id: the run reports it
        cudaGetLastError();
        return;
    }
    // One thread per device: contexts are created in parallel.
    std::vector<std::thread> threads;
    for (int d : ids)
        threads.emplace_back([d] {
            if (cudaSetDevice(d) == cudaSuccess) cudaFree(nullptr);  // creates the context
            cudaGetLastError();
        });
    for (auto& t : threads) t.join();
}

RunResult runCuda(const KernelInput& in, const RunOptions& opt) {
    auto t0 = Clock::now();
    std::string why;
    if (!cudaDeviceAvailable(&why)) throw Error("kernel cuda: " + why);
    const std::vector<int> devices = resolveDevicesImpl(opt.devices);
    RunResult r;
    r.kernel = devices.size() > 1 ? "cuda x" + std::to_string(devices.size()) : "cuda";
    r.packetsRequested = opt.packets;
    // Guided self-scheduling over several devices: each takes half its share of what is left
    // (at least minChunk), so early chunks are large (few launch tails) and the last ones small
    // (the devices finish together). One device: one chunk.
    const uint64_t minChunk = devices.size() == 1 ? opt.packets
                                                  : std::max<uint64_t>(1u << 20, opt.packets / (64 * devices.size()));
    std::atomic<uint64_t> nextChunk{0}, done{0};
    auto takeChunk = [&](uint64_t& begin, uint64_t& n) {
        uint64_t cur = nextChunk.load();
        for (;;) {
            if (cur >= opt.packets) return false;
            const uint64_t left = opt.packets - cur;
            const uint64_t size = std::min(left, std::max(minChunk, left / (2 * devices.size())));
            if (nextChunk.compare_exchange_weak(cur, cur + size)) {
                begin = cur;
                n = size;
                return true;
            }
        }
    };
    std::vector<std::unique_ptr<DeviceRun>> runs(devices.size());
    std::vector<std::string> errors(devices.size());
    std::vector<double> upload(devices.size()), kernel(devices.size());
    std::vector<int> blocksPerSm(devices.size());
    auto work = [&](size_t k) {
        try {
            cudaCheck(cudaSetDevice(devices[k]), "select device");
            auto tu = Clock::now();
            runs[k] = std::make_unique<DeviceRun>(in, opt.outputs);
            runs[k]->load(in);
            upload[k] = since(tu);
            for (;;) {
                if (opt.cancel && opt.cancel->load()) break;
                uint64_t begin = 0, n = 0;
                if (!takeChunk(begin, n)) break;
                RunOptions part = opt;
                part.firstPacket = opt.firstPacket + begin;
                part.packets = n;
                part.progress = devices.size() == 1 ? opt.progress
                    : std::function<void(uint64_t, uint64_t)>();  // several devices: reported below
                BatchRun b = runs[k]->run(part);
                done += b.packetsDone;
                kernel[k] += b.seconds;
                blocksPerSm[k] = b.blocksPerSm;
                if (b.packetsDone < part.packets) break;  // cancelled
            }
        } catch (const std::exception& e) {
            errors[k] = e.what();
        }
    };
    if (devices.size() == 1) {
        work(0);
    } else {
        std::vector<std::thread> pool;
        for (size_t k = 0; k < devices.size(); ++k) pool.emplace_back(work, k);
        // Progress every 100 ms; woken at once when the devices are done (a plain sleep would
        // keep every multi-GPU run up to 100 ms longer).
        std::mutex m;
        std::condition_variable cv;
        bool finished = false;
        std::thread reporter([&] {
            std::unique_lock<std::mutex> lock(m);
            while (!cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return finished; }))
                if (opt.progress) opt.progress(done.load(), opt.packets);
        });
        for (auto& t : pool) t.join();
        {
            std::lock_guard<std::mutex> lock(m);
            finished = true;
        }
        cv.notify_all();
        reporter.join();
    }
    for (size_t k = 0; k < devices.size(); ++k)
        if (!errors[k].empty()) throw Error("GPU " + std::to_string(devices[k]) + ": " + errors[k]);
    auto t1 = Clock::now();
    for (size_t k = 0; k < devices.size(); ++k) {
        cudaCheck(cudaSetDevice(devices[k]), "select device");
        runs[k]->addTo(r);
    }
    r.uploadSeconds = *std::max_element(upload.begin(), upload.end());
    r.kernelSeconds = *std::max_element(kernel.begin(), kernel.end());
    r.gpuBlocksPerSm = blocksPerSm[0];
    r.downloadSeconds = since(t1);
    r.packetsDone = done.load();
    r.cancelled = r.packetsDone < opt.packets;
    r.seconds = since(t0);
    return r;
}

// ---- Batches (Kernels/Batch.hpp): one device keeps the mesh while runs come and go ----

std::vector<int> cudaResolveDevices(const std::vector<int>& requested) { return resolveDevicesImpl(requested); }

struct CudaModelOnDevice::Impl {
    int device;
    std::unique_ptr<DeviceRun> run;
};

CudaModelOnDevice::CudaModelOnDevice(int device, const KernelInput& mesh, const OutputSelection& outputs)
    : impl_(std::make_unique<Impl>()) {
    std::string why;
    if (!cudaDeviceAvailable(&why)) throw Error("kernel cuda: " + why);
    impl_->device = device;
    cudaCheck(cudaSetDevice(device), "select device");
    impl_->run = std::make_unique<DeviceRun>(mesh, outputs);
}

CudaModelOnDevice::~CudaModelOnDevice() {
    if (impl_ && impl_->run) {
        cudaSetDevice(impl_->device);
        impl_->run.reset();
    }
}

int CudaModelOnDevice::device() const { return impl_->device; }

// The same steps as runCuda on one device (so the same tallies), without the mesh upload.
RunResult CudaModelOnDevice::run(const RunVariant& v, const RunOptions& opt) {
    auto t0 = Clock::now();
    cudaCheck(cudaSetDevice(impl_->device), "select device");
    DeviceRun& d = *impl_->run;
    d.load(v.materials, v.emitters, v.emitterCdf, v.pieces, v.pieceCdf);
    RunResult r;
    r.kernel = "cuda";
    r.packetsRequested = opt.packets;
    r.uploadSeconds = since(t0);
    BatchRun b = d.run(opt);
    r.kernelSeconds = b.seconds;
    auto t1 = Clock::now();
    d.addTo(r);
    r.downloadSeconds = since(t1);
    r.packetsDone = b.packetsDone;
    r.cancelled = r.packetsDone < opt.packets;
    r.seconds = since(t0);
    return r;
}

}  // namespace fm
