// SPDX-License-Identifier: GPL-3.0-or-later
#include "Kernels/Batch.hpp"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include "Common/Errors.hpp"
#include "Kernels/BatchTransport.hpp"
#include "Kernels/Dispatch.hpp"
#include "fm_config.h"
#if FM_HAVE_CUDA
#include "Kernels/CUDA/CudaKernel.hpp"
#endif

namespace fm {

void applyVariant(KernelInput& in, const RunVariant& v) {
    in.materials = v.materials;
    in.emitters = v.emitters;
    in.emitterCdf = v.emitterCdf;
    in.pieces = v.pieces;
    in.pieceCdf = v.pieceCdf;
}

RunVariant takeVariant(KernelInput& in) {
    RunVariant v;
    v.materials = std::move(in.materials);
    v.emitters = std::move(in.emitters);
    v.emitterCdf = std::move(in.emitterCdf);
    v.pieces = std::move(in.pieces);
    v.pieceCdf = std::move(in.pieceCdf);
    in.materials.clear();
    in.emitters.clear();
    in.emitterCdf.clear();
    in.pieces.clear();
    in.pieceCdf.clear();
    return v;
}

RunOptions singleRunOptions(const BatchOptions& opt, const BatchRunSpec& r) {
    RunOptions o;
    o.params = opt.params;
    o.params.seed = r.seed;
    o.packets = r.packets;
    o.firstPacket = 0;
    o.threads = opt.threads;
    o.outputs = opt.outputs;
    o.cancel = opt.cancel;
    return o;
}

namespace {

// ---- one process: runs in order ----

class LocalTransport : public BatchTransport {
public:
    LocalTransport(size_t n, BatchResultFn f) : n_(n), onResult_(std::move(f)) {}
    bool nextRun(size_t& run) override {
        if (next_ >= n_) return false;
        run = next_++;
        return true;
    }
    void deliver(size_t run, RunResult&& r) override {
        ++delivered_;
        if (onResult_) onResult_(run, std::move(r));
    }
    void poll() override {}
    void finish() override {}
    size_t ranks() const override { return 1; }
    bool root() const override { return true; }
    size_t delivered() const override { return delivered_; }
    std::vector<size_t> runsPerRank() const override { return {delivered_}; }

private:
    size_t n_, next_ = 0, delivered_ = 0;
    BatchResultFn onResult_;
};

// ---- where a run executes: the CPU (all threads), or one GPU holding the mesh ----

class Slot {
public:
    virtual ~Slot() = default;
    virtual RunResult run(const BatchRunSpec& r, const RunOptions& o) = 0;
};

class CpuSlot : public Slot {
public:
    explicit CpuSlot(const KernelInput& mesh) {
        work_.cells = mesh.cells;
        work_.faceCount = mesh.faceCount;
    }
    RunResult run(const BatchRunSpec& r, const RunOptions& o) override {
        applyVariant(work_, r.model);
        return runKernel("cpu", work_, o);
    }

private:
    KernelInput work_;
};

#if FM_HAVE_CUDA
class CudaSlot : public Slot {
public:
    CudaSlot(int device, const KernelInput& mesh, const OutputSelection& o) : dev_(device, mesh, o) {}
    RunResult run(const BatchRunSpec& r, const RunOptions& o) override {
        validateRunOptions(o);
        return dev_.run(r.model, o);
    }

private:
    CudaModelOnDevice dev_;
};
#endif

// Slot threads take runs the dispatcher (the calling thread) assigns and hand back results; the
// dispatcher alone talks to the transport.
class Dispatcher {
public:
    Dispatcher(const KernelInput& mesh, const std::vector<BatchRunSpec>& runs, const BatchOptions& opt,
               BatchTransport& t)
        : mesh_(mesh), runs_(runs), opt_(opt), t_(t) {}

    // Returns false when cancelled. An exception from the transport (a result that cannot be
    // written or received) stops the runs in flight, joins the slots and is rethrown.
    bool run(const std::vector<int>& devices) {
        const size_t n = opt_.kernel == "cuda" ? devices.size() : 1;
        slots_.resize(n);
        try {
            for (size_t k = 0; k < n; ++k)
                threads_.emplace_back([this, k, &devices] { slotLoop(k, opt_.kernel == "cuda" ? devices[k] : -1); });
        } catch (const std::system_error& e) {  // process limits: stop the slots that started
            stopSlots();
            throw Error(std::string("batch: cannot start a worker thread (") + e.what() +
                        "); the process may not have more threads (ulimit -u, ulimit -v or a container "
                        "limit)");
        }
        bool cancelled = false;
        std::exception_ptr err;
        try {
            cancelled = dispatch(n);
        } catch (...) {
            err = std::current_exception();
            abort_ = true;
        }
        stopSlots();
        if (err) std::rethrow_exception(err);
        return !cancelled;
    }
    void stopSlots() {
        {
            std::lock_guard<std::mutex> g(m_);
            stop_ = true;
        }
        cv_.notify_all();
        for (auto& th : threads_) th.join();
    }
    const std::string& error() const { return firstError_; }

private:
    enum State { Starting, Ready, Dead };

    // The calling thread's loop: hands runs to idle slots, delivers results, polls the transport.
    bool dispatch(size_t n) {
        bool more = true, cancelled = false;
        std::unique_lock<std::mutex> lock(m_);
        for (;;) {
            if (!cancelled && opt_.cancel && opt_.cancel->load()) {
                cancelled = true;
                abort_ = true;  // the runs in flight stop within their kernels' cancel latency
            }
            bool failed = !firstError_.empty();
            // Idle, ready slots get the next run (claimed without the lock: MPI may block).
            for (size_t k = 0; k < n && more && !cancelled && !failed; ++k) {
                if (slots_[k].state != Ready || slots_[k].job) continue;
                lock.unlock();
                size_t idx = 0;
                bool got = t_.nextRun(idx);
                lock.lock();
                if (!got) { more = false; break; }
                slots_[k].job = idx;
                ++inFlight_;
                cv_.notify_all();
            }
            bool starting = false, anyReady = false;
            for (auto& s : slots_) {
                starting = starting || s.state == Starting;
                anyReady = anyReady || s.state == Ready;
            }
            if (inFlight_ == 0 && !starting && (!more || cancelled || failed || !anyReady)) return cancelled;
            cvMain_.wait_for(lock, std::chrono::milliseconds(20), [&] { return !results_.empty(); });
            std::deque<std::pair<size_t, RunResult>> done;
            done.swap(results_);
            inFlight_ -= done.size();
            lock.unlock();
            for (auto& [idx, r] : done) t_.deliver(idx, std::move(r));
            t_.poll();
            if (opt_.progress && t_.root()) opt_.progress(t_.delivered(), runs_.size());
            lock.lock();
        }
    }
    struct SlotState {
        State state = Starting;
        std::optional<size_t> job;
    };

    void slotLoop(size_t k, int device) {
        std::unique_ptr<Slot> slot;
        try {
#if FM_HAVE_CUDA
            if (device >= 0) slot = std::make_unique<CudaSlot>(device, mesh_, opt_.outputs);
#endif
            if (!slot) slot = std::make_unique<CpuSlot>(mesh_);
        } catch (const std::exception& e) {
            fail(k, device, e.what());
            return;
        }
        std::unique_lock<std::mutex> lock(m_);
        slots_[k].state = Ready;
        cvMain_.notify_all();
        for (;;) {
            cv_.wait(lock, [&] { return stop_ || slots_[k].job.has_value(); });
            if (!slots_[k].job) return;
            size_t idx = *slots_[k].job;
            lock.unlock();
            RunResult r;
            std::string err;
            try {
                RunOptions o = singleRunOptions(opt_, runs_[idx]);
                o.cancel = &abort_;  // the user's cancel, or an error elsewhere in the batch
                r = slot->run(runs_[idx], o);
            } catch (const std::exception& e) {
                err = "run " + std::to_string(idx) + ": " + e.what();
            }
            lock.lock();
            slots_[k].job.reset();
            if (!err.empty()) {
                --inFlight_;  // finished, with nothing to deliver
                lock.unlock();
                fail(k, device, err);
                return;
            }
            results_.emplace_back(idx, std::move(r));
            cvMain_.notify_all();
        }
    }
    void fail(size_t k, int device, const std::string& what) {
        std::lock_guard<std::mutex> g(m_);
        if (firstError_.empty())
            firstError_ = device >= 0 ? "GPU " + std::to_string(device) + ": " + what : what;
        slots_[k].state = Dead;
        cvMain_.notify_all();
    }

    const KernelInput& mesh_;
    const std::vector<BatchRunSpec>& runs_;
    const BatchOptions& opt_;
    BatchTransport& t_;
    std::vector<SlotState> slots_;
    std::vector<std::thread> threads_;
    std::mutex m_;
    std::condition_variable cv_, cvMain_;
    std::deque<std::pair<size_t, RunResult>> results_;
    std::string firstError_;
    size_t inFlight_ = 0;  // runs assigned and not yet back
    bool stop_ = false;
    std::atomic<bool> abort_{false};
};

}  // namespace

std::unique_ptr<BatchTransport> makeLocalBatchTransport(size_t runs, const BatchResultFn& onResult) {
    return std::make_unique<LocalTransport>(runs, onResult);
}

BatchSummary runBatch(const KernelInput& mesh, const std::vector<BatchRunSpec>& runs, const BatchOptions& opt,
                      const BatchResultFn& onResult, const MpiSession* mpi) {
    auto t0 = std::chrono::steady_clock::now();
    if (opt.kernel != "cpu" && opt.kernel != "cuda")
        throw ParameterError("unknown kernel '" + opt.kernel + "' (use cpu or cuda)");
    if (mesh.cells.size() < 2) throw ParameterError("batch: the mesh has no tetras");
    for (size_t i = 0; i < runs.size(); ++i) {
        const BatchRunSpec& r = runs[i];
        try {
            validateRunOptions(singleRunOptions(opt, r));
        } catch (const ParameterError& e) {
            throw ParameterError("batch run " + std::to_string(i) + ": " + e.what());
        }
        if (r.model.emitters.empty()) throw ParameterError("batch run " + std::to_string(i) + ": no source");
        if (r.model.materials.empty()) throw ParameterError("batch run " + std::to_string(i) + ": no materials");
    }
    std::vector<int> devices;
    if (opt.kernel == "cuda") {
#if FM_HAVE_CUDA
        std::string why;
        if (!cudaAvailable(&why)) throw ParameterError("kernel cuda: " + why);
        devices = cudaResolveDevices(opt.devices);
#else
        std::string why;
        cudaAvailable(&why);
        throw ParameterError("kernel cuda: " + why);
#endif
    }
    std::unique_ptr<BatchTransport> t;
    if (mpi) t = makeMpiBatchTransport(*mpi, runs.size(), onResult);
    if (!t) t = makeLocalBatchTransport(runs.size(), onResult);

    Dispatcher d(mesh, runs, opt, *t);
    bool complete = false;
    try {
        complete = d.run(devices);
    } catch (const std::exception& e) {
        // A result this rank could not write or receive: with other ranks waiting on it, end
        // the whole job rather than leave them hanging.
        if (t->ranks() > 1) t->abort(std::string("batch: ") + e.what());
        throw;
    }
    t->finish();  // also after a slot error: rank 0 must not wait for a rank that gave up
    if (!d.error().empty()) throw Error("batch: " + d.error());

    BatchSummary s;
    s.runs = runs.size();
    s.delivered = t->delivered();
    s.ranks = t->ranks();
    s.runsPerRank = t->runsPerRank();
    s.slots = opt.kernel == "cuda" ? devices.size() : 1;
    s.cancelled = !complete || (t->root() && s.delivered < s.runs);
    s.kernel = opt.kernel == "cuda" && devices.size() > 1 ? "cuda x" + std::to_string(devices.size()) : opt.kernel;
    if (s.ranks > 1) s.kernel += " x" + std::to_string(s.ranks) + " ranks";
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return s;
}

}  // namespace fm
