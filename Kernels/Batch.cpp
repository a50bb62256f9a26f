// SPDX-License-Identifier: GPL-3.0-or-later
#include "Kernels/Batch.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "Common/Errors.hpp"
#include "Kernels/BatchTransport.hpp"
#include "Kernels/DeviceVisibility.hpp"
#include "Kernels/Dispatch.hpp"
#include "Kernels/MultiRun.hpp"
#include "Common/ResourceLimits.hpp"
#include "Kernels/TimeGates.hpp"
#include "fm_config.h"
#if FM_HAVE_CUDA
#include "Kernels/CUDA/CudaKernel.hpp"
#include "Kernels/CUDA/CudaMultiRun.hpp"
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
    o.gates = opt.gates;
    o.tuning = opt.tuning;
    o.batches = 1;  // a batch's runs carry no standard errors: no per-run batching cost
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

// Runs a slot holds (the one it runs and the next, or two groups; one over MPI ranks) and the
// finished runs the dispatcher keeps before slots wait for it to write them: the bound on the
// results in memory at once (gatedBatchMemory counts them).
size_t queuedPerSlot(size_t ranks, size_t groupRuns) { return (ranks > 1 ? 1 : 2) * groupRuns; }
size_t resultsHeld(size_t slots, size_t queued) { return 4 + queued * slots; }

// ---- where a run executes: the CPU (all threads), one GPU holding the mesh, or several GPUs
// sharing each run's packets ----

class Slot {
public:
    virtual ~Slot() = default;
    virtual RunResult run(const BatchRunSpec& r, const RunOptions& o) = 0;
    // Most runs one call of runGroup takes (1: the slot runs one at a time).
    virtual size_t groupRuns() const { return 1; }
    virtual std::vector<RunResult> runGroup(const std::vector<const BatchRunSpec*>& r, const std::vector<RunOptions>& o) {
        std::vector<RunResult> out;
        for (size_t i = 0; i < r.size(); ++i) out.push_back(run(*r[i], o[i]));
        return out;
    }
};

// A whole packed input per run through runKernel: the CPU kernel, or one run split over several
// GPUs (each keeps the mesh between runs: Kernels/DeviceModelCache.hpp).
class WholeInputSlot : public Slot {
public:
    WholeInputSlot(const KernelInput& mesh, std::string kind, std::vector<int> devices)
        : kind_(std::move(kind)), devices_(std::move(devices)) {
        work_.cells = mesh.cells;
        work_.faceCount = mesh.faceCount;
        work_.cellsIdentity = mesh.cellsIdentity;
    }
    RunResult run(const BatchRunSpec& r, const RunOptions& o) override {
        applyVariant(work_, r.model);
        RunOptions split = o;
        split.devices = devices_;
        return runKernel(kind_, work_, split);
    }

private:
    KernelInput work_;
    std::string kind_;
    std::vector<int> devices_;
};

#if FM_HAVE_CUDA
class CudaSlot : public Slot {
public:
    CudaSlot(int device, const KernelInput& mesh, const OutputSelection& o, CellLayout layout)
        : dev_(device, mesh, o, layout) {}
    RunResult run(const BatchRunSpec& r, const RunOptions& o) override {
        validateRunOptions(o);
        return dev_.run(r.model, o);
    }

private:
    CudaModelOnDevice dev_;
};

// Runs of a group share one launch on one GPU (Kernels/CUDA/CudaMultiRun.hpp).
class CudaGroupSlot : public Slot {
public:
    CudaGroupSlot(int device, const KernelInput& mesh, const OutputSelection& o, size_t runs, CellLayout layout)
        : dev_(device, mesh, o, runs, layout) {}
    RunResult run(const BatchRunSpec& r, const RunOptions& o) override {
        return std::move(runGroup({&r}, {o})[0]);
    }
    size_t groupRuns() const override { return dev_.maxRuns(); }
    std::vector<RunResult> runGroup(const std::vector<const BatchRunSpec*>& r, const std::vector<RunOptions>& o) override {
        std::vector<const RunVariant*> v;
        for (size_t i = 0; i < r.size(); ++i) {
            validateRunOptions(o[i]);
            v.push_back(&r[i]->model);
        }
        return dev_.run(v, o);
    }

private:
    CudaRunGroupOnDevice dev_;
};
#endif

// Slot threads take runs the dispatcher (the calling thread) assigns and hand back results; the
// dispatcher alone talks to the transport. In one process each slot holds two runs (the one it
// runs and the next), so that it starts the next run the moment one ends instead of waiting for
// the dispatcher, which meanwhile delivers (writes) the results of earlier runs. Over MPI ranks a
// slot holds one: runs claimed early would be missing from the ranks that finish first.
class Dispatcher {
    using Clock = std::chrono::steady_clock;

public:
    Dispatcher(const KernelInput& mesh, const std::vector<BatchRunSpec>& runs, const BatchOptions& opt,
               BatchTransport& t)
        : mesh_(mesh), runs_(runs), opt_(opt), t_(t) {}

    // `plan` gives one entry per slot: a GPU id, or -1 for a whole-input slot (the CPU, or every
    // GPU of `split` sharing each run). Returns false when cancelled. An exception from the
    // transport (a result that cannot be written or received) stops the runs in flight, joins
    // the slots and is rethrown.
    // groupRuns: runs per launch of the GPU slots (1: one at a time).
    bool run(const std::vector<int>& plan, const std::vector<int>& split, size_t groupRuns) {
        const size_t n = plan.size();
        slots_.resize(n);
        groupRuns_ = std::max<size_t>(groupRuns, 1);
        queued_ = queuedPerSlot(t_.ranks(), groupRuns_);
        maxResults_ = resultsHeld(n, queued_);
        try {
            for (size_t k = 0; k < n; ++k) threads_.emplace_back([this, k, &plan, &split] { slotLoop(k, plan[k], split); });
        } catch (const std::system_error& e) {  // process limits: stop the slots that started
            stopSlots();
            throw Error(std::string("batch: cannot start a worker thread (") + e.what() +
                        "); the process may not have more threads (ulimit -u, ulimit -v or a container "
                        "limit)");
        }
        bool cancelled = false;
        std::exception_ptr err;
        try {
            cancelled = dispatch();
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
    double idleSeconds() const { return idleSeconds_; }
    double heldSeconds() const { return heldSeconds_; }
    double deliverSeconds() const { return deliverSeconds_; }
    // The kernels' intervals (seconds since `start`) as the slots' clocks saw them, in any order.
    std::vector<std::pair<double, double>> kernelIntervals(std::chrono::steady_clock::time_point start) const {
        std::vector<std::pair<double, double>> v;
        for (const auto& [a, b] : kernels_)
            v.emplace_back(std::chrono::duration<double>(a - start).count(), std::chrono::duration<double>(b - start).count());
        return v;
    }

private:
    enum State { Starting, Ready, Dead };

    // Fills the queues of ready slots (lock held; released around the transport, which may block).
    void assign(std::unique_lock<std::mutex>& lock, bool& more) {
        for (size_t k = 0; k < slots_.size() && more; ++k) {
            while (more && slots_[k].state == Ready && slots_[k].queue.size() < queued_) {
                lock.unlock();
                size_t idx = 0;
                bool got = t_.nextRun(idx);
                lock.lock();
                if (!got) {
                    more = false;
                    noMoreRuns_ = true;
                    break;
                }
                if (slots_[k].state != Ready) {  // it failed meanwhile: the run is lost with the batch
                    more = false;
                    break;
                }
                slots_[k].queue.push_back(idx);
                ++inFlight_;
            }
        }
        cv_.notify_all();
    }

    // The calling thread's loop: hands runs to slots, delivers results, polls the transport.
    bool dispatch() {
        bool more = true, cancelled = false;
        std::unique_lock<std::mutex> lock(m_);
        for (;;) {
            if (!cancelled && opt_.cancel && opt_.cancel->load()) {
                cancelled = true;
                abort_ = true;  // the runs in flight stop within their kernels' cancel latency
            }
            const bool failed = !firstError_.empty();
            if (!cancelled && !failed) assign(lock, more);
            bool starting = false, anyReady = false;
            for (auto& s : slots_) {
                starting = starting || s.state == Starting;
                anyReady = anyReady || s.state == Ready;
            }
            if (inFlight_ == 0 && results_.empty() && (!more || cancelled || failed || (!anyReady && !starting)))
                return cancelled;
            // Woken by a result, a slot becoming ready or failing; the timeout only polls the
            // user's cancel flag and the MPI transport.
            cvMain_.wait_for(lock, std::chrono::milliseconds(20), [&] { return wake_; });
            wake_ = false;
            std::deque<std::pair<size_t, RunResult>> done;
            done.swap(results_);
            inFlight_ -= done.size();
            if (!done.empty()) cv_.notify_all();  // slots held back by a full result queue
            if (!cancelled && firstError_.empty()) assign(lock, more);  // refill before writing
            lock.unlock();
            const auto d0 = std::chrono::steady_clock::now();
            for (auto& [idx, r] : done) t_.deliver(idx, std::move(r));
            deliverSeconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - d0).count();
            t_.poll();
            if (opt_.progress && t_.root()) opt_.progress(t_.delivered(), runs_.size());
            lock.lock();
        }
    }
    struct SlotState {
        State state = Starting;
        std::deque<size_t> queue;  // runs assigned to it, the front one running
    };

    std::unique_ptr<Slot> makeSlot(int device, const std::vector<int>& split) {
#if FM_HAVE_CUDA
        const CellLayout layout = opt_.tuning.cudaCellLayout;
        if (device >= 0 && groupRuns_ > 1)
            return std::make_unique<CudaGroupSlot>(device, mesh_, opt_.outputs, groupRuns_, layout);
        if (device >= 0) return std::make_unique<CudaSlot>(device, mesh_, opt_.outputs, layout);
#endif
        return std::make_unique<WholeInputSlot>(mesh_, opt_.kernel, split);
    }

    void slotLoop(size_t k, int device, const std::vector<int>& split) {
        std::unique_ptr<Slot> slot;
        try {
            slot = makeSlot(device, split);
        } catch (const std::exception& e) {
            fail(k, device, e.what());
            return;
        }
        std::unique_lock<std::mutex> lock(m_);
        slots_[k].state = Ready;
        wake_ = true;
        cvMain_.notify_all();
        const size_t want = slot->groupRuns();
        std::deque<size_t>& queue = slots_[k].queue;
        for (;;) {
            // Waiting for a run while runs remain is idle time (the GPU has nothing to do). A
            // slot of groups waits for a whole group unless the batch has no more runs.
            // Waiting while the runs are there but too many finished ones wait for onResult is
            // time held back by the caller's writing (told from waiting for runs).
            auto waitStart = std::chrono::steady_clock::now();
            const bool held = !queue.empty() && results_.size() >= maxResults_;
            cv_.wait(lock, [&] {
                return stop_ || (!queue.empty() && results_.size() < maxResults_ &&
                                 (queue.size() >= want || noMoreRuns_ || abort_));
            });
            if (queue.empty()) return;
            (held ? heldSeconds_ : idleSeconds_) +=
                std::chrono::duration<double>(std::chrono::steady_clock::now() - waitStart).count();
            if (abort_) {  // cancelled or failed elsewhere: queued runs are dropped, not run
                queue.pop_front();
                --inFlight_;
                wake_ = true;
                cvMain_.notify_all();
                continue;
            }
            const std::vector<size_t> idx = nextGroup(queue, want);
            lock.unlock();
            std::vector<RunResult> r;
            std::string err;
            const auto runStart = std::chrono::steady_clock::now();
            try {
                r = runGroup(*slot, idx);
            } catch (const std::exception& e) {
                err = runNames(idx) + ": " + e.what();
            }
            const auto runEnd = std::chrono::steady_clock::now();
            lock.lock();
            if (err.empty()) kernels_.push_back(kernelInterval(r, runStart, runEnd));
            queue.erase(queue.begin(), queue.begin() + long(idx.size()));
            if (!err.empty()) {
                inFlight_ -= idx.size() + queue.size();  // finished, with nothing to deliver
                queue.clear();
                lock.unlock();
                fail(k, device, err);
                return;
            }
            for (size_t i = 0; i < idx.size(); ++i) results_.emplace_back(idx[i], std::move(r[i]));
            wake_ = true;
            cvMain_.notify_all();
        }
    }
    // The front runs of a queue that go in one launch (Kernels/MultiRun.hpp): consecutive,
    // short, with the first one's materials.
    std::vector<size_t> nextGroup(const std::deque<size_t>& queue, size_t want) const {
        MultiRunLimits lim;
        lim.maxRuns = want;
        const BatchRunSpec& first = runs_[queue.front()];
        const size_t n = want <= 1 ? 1 : multiRunGroupSize(
            queue.size(), lim, [&](size_t i) { return runs_[queue[i]].packets; },
            [&](size_t i) { return sameMaterials(runs_[queue[i]], first); });
        return std::vector<size_t>(queue.begin(), queue.begin() + long(n));
    }
    std::vector<RunResult> runGroup(Slot& slot, const std::vector<size_t>& idx) {
        std::vector<const BatchRunSpec*> specs;
        std::vector<RunOptions> opts;
        for (size_t i : idx) {
            specs.push_back(&runs_[i]);
            opts.push_back(singleRunOptions(opt_, runs_[i]));
            opts.back().cancel = &abort_;  // the user's cancel, or an error elsewhere in the batch
        }
        if (idx.size() == 1) {
            std::vector<RunResult> one;
            one.push_back(slot.run(*specs[0], opts[0]));
            return one;
        }
        return slot.runGroup(specs, opts);
    }
    // Where a group's kernel ran within its slot's call: between the upload and the download
    // (the GPU), or the whole call (the CPU, which reports no kernel time of its own).
    static std::pair<Clock::time_point, Clock::time_point> kernelInterval(const std::vector<RunResult>& r,
                                                                         Clock::time_point start, Clock::time_point end) {
        double kernel = 0, download = 0;
        for (const RunResult& x : r) {
            kernel += x.kernelSeconds;
            download += x.downloadSeconds;
        }
        if (kernel <= 0) return {start, end};
        const auto kernelEnd = end - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(download));
        const auto kernelStart = kernelEnd - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kernel));
        return {std::max(kernelStart, start), std::max(kernelEnd, start)};
    }
    static std::string runNames(const std::vector<size_t>& idx) {
        std::string s = idx.size() == 1 ? "run " : "runs ";
        for (size_t i = 0; i < idx.size(); ++i) s += (i ? ", " : "") + std::to_string(idx[i]);
        return s;
    }
    static bool sameMaterials(const BatchRunSpec& a, const BatchRunSpec& b) {
        const auto &x = a.model.materials, &y = b.model.materials;
        return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(x[0])) == 0);
    }
    void fail(size_t k, int device, const std::string& what) {
        std::lock_guard<std::mutex> g(m_);
        if (firstError_.empty())
            firstError_ = device >= 0 ? "GPU " + std::to_string(device) + ": " + what : what;
        slots_[k].state = Dead;
        abort_ = true;  // the other slots' runs stop early and their queued runs are dropped
        wake_ = true;
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
    size_t queued_ = 2;      // runs a slot holds (running and next, or two groups)
    size_t groupRuns_ = 1;   // runs per launch of a GPU slot
    bool noMoreRuns_ = false;  // the transport has handed out every run
    size_t maxResults_ = 8;  // finished runs not yet delivered: slots wait beyond this (memory bound)
    std::string firstError_;
    size_t inFlight_ = 0;  // runs assigned and not yet back
    bool stop_ = false, wake_ = false;
    double idleSeconds_ = 0;  // summed over slots: waiting for a run while runs remained
    double heldSeconds_ = 0;  // summed over slots: waiting for the dispatcher to deliver results
    double deliverSeconds_ = 0;  // the dispatcher in the transport's deliver (onResult)
    std::vector<std::pair<Clock::time_point, Clock::time_point>> kernels_;  // each group's kernel
    std::atomic<bool> abort_{false};
};

// One slot per device with whole runs from a shared counter while the batch has at least as many
// runs as devices; with fewer runs (a few long ones), one slot that splits every run's packets
// over all the devices (Kernels/CUDA runCuda), so no device sits idle. The CPU: one slot.
// Two slots per device (BatchOptions::slotsPerDevice) only where every run has the same
// materials: the two slots then share the device's constant-memory material table (with other
// materials the second slot would wait for the first, Kernels/MaterialTableLease.hpp).
bool sameMaterials(const std::vector<BatchRunSpec>& runs) {
    for (const BatchRunSpec& r : runs) {
        const auto& a = r.model.materials;
        const auto& b = runs[0].model.materials;
        if (a.size() != b.size() || (!a.empty() && std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) != 0))
            return false;
    }
    return true;
}

unsigned slotsPerDevice(const BatchOptions& opt, size_t groupRuns) {
    unsigned n = opt.tuning.batchSlotsPerDevice ? opt.tuning.batchSlotsPerDevice : opt.slotsPerDevice;
    if (n == 0) n = groupRuns > 1 ? 2 : 1;
    return std::min(std::max(n, 1u), 2u);
}

// Runs per launch of the batch's GPU slots (BatchOptions::runsPerLaunch): 1 where groups do
// not apply (the CPU, MPI ranks, a run too long for a group, a model of a few cells).
size_t groupRuns(const BatchOptions& opt, const KernelInput& mesh, const std::vector<BatchRunSpec>& runs, bool ranks) {
    size_t n = opt.tuning.batchRunsPerLaunch ? opt.tuning.batchRunsPerLaunch : opt.runsPerLaunch;
    if (n == 0) n = kDefaultRunsPerLaunch;
    if (opt.kernel != "cuda" || ranks || runs.size() < 2 || n < 2) return 1;
    for (const BatchRunSpec& r : runs)
        if (r.packets > MultiRunLimits{}.maxPacketsPerRun) return 1;
#if FM_HAVE_CUDA
    if (!cudaMultiRunSupports(mesh, opt.outputs)) return 1;
#else
    (void)mesh;
#endif
    return std::min<size_t>(n, runs.size());
}

std::vector<int> slotPlan(const BatchOptions& opt, const std::vector<int>& devices, const std::vector<BatchRunSpec>& runs,
                          bool ranks, size_t groupRuns) {
    if (opt.kernel != "cuda") return {-1};
    if (devices.size() > 1 && runs.size() < devices.size() && !ranks) return {-1};
    std::vector<int> plan = devices;
    if (slotsPerDevice(opt, groupRuns) == 2 && runs.size() >= 2 * devices.size() && sameMaterials(runs))
        plan.insert(plan.end(), devices.begin(), devices.end());  // every device's first slot starts first
    return plan;
}

// A gated batch's tallies against the machine, before any run starts: each gated array within
// checkGatedSize, and the gated arrays of every result that may be in memory at once (one per
// slot just finished, the finished runs waiting to be written) within the available memory. Gated runs never share a GPU launch (groupRuns is 1 for them), so a launch
// holds one run's gated arrays.
void checkGatedBatch(const KernelInput& mesh, const std::vector<BatchRunSpec>& runs, const BatchOptions& opt,
                     size_t slots) {
    checkGatedRun(mesh, singleRunOptions(opt, runs.front()));
    const double perRun = (opt.outputs.gatedVolume ? gatedArrayBytes(opt.gates, gatedVolumeStride(opt.gates, mesh.cells.size())) : 0.0) +
                          (opt.outputs.gatedSurface ? gatedArrayBytes(opt.gates, gatedSurfaceStride(opt.gates)) : 0.0);
    const size_t queued = queuedPerSlot(1, 1);
    const size_t held = std::min(runs.size(), slots + resultsHeld(slots, queued));
    requireMemory(perRun * double(held),
                  "batch: the time-gated tallies of " + std::to_string(held) + " runs in memory at once (" +
                      std::to_string(slots) + " slot(s) and the finished runs waiting to be written; " +
                      bytesText(perRun) + " a run)",
                  "use fewer gates (a larger step or a shorter window), gate only the exit tally, or fewer devices");
}

}  // namespace

void timeKernels(std::vector<std::pair<double, double>> k, BatchSummary& s) {
    if (k.empty()) {
        s.setupSeconds = s.seconds;
        s.kernelBusySeconds = s.kernelGapSeconds = s.tailSeconds = 0;
        return;
    }
    std::sort(k.begin(), k.end());
    double busy = 0, start = k[0].first, end = k[0].first, reach = k[0].first;
    for (const auto& [a, b] : k) {  // the union of the intervals, in order of their starts
        busy += std::max(0.0, b - std::max(a, reach));
        reach = std::max(reach, b);
        end = std::max(end, b);
    }
    s.setupSeconds = start;
    s.kernelBusySeconds = busy;
    s.kernelGapSeconds = std::max(0.0, end - start - busy);
    s.tailSeconds = std::max(0.0, s.seconds - end);
}

std::vector<std::pair<std::string, double>> batchTimeSplit(const BatchSummary& s) {
    return {{"setup_seconds", s.setupSeconds},           {"kernel_busy_seconds", s.kernelBusySeconds},
            {"kernel_gap_seconds", s.kernelGapSeconds},  {"tail_seconds", s.tailSeconds},
            {"deliver_seconds", s.deliverSeconds},       {"slot_idle_seconds", s.idleSeconds},
            {"slot_held_seconds", s.heldSeconds}};
}

std::unique_ptr<BatchTransport> makeLocalBatchTransport(size_t runs, const BatchResultFn& onResult) {
    return std::make_unique<LocalTransport>(runs, onResult);
}

BatchSummary runBatch(const KernelInput& mesh, const std::vector<BatchRunSpec>& runs, const BatchOptions& given,
                      const BatchResultFn& onResult, const MpiSession* mpi) {
    auto t0 = std::chrono::steady_clock::now();
    BatchOptions opt = given;  // with the gated exit tally's faces, made once for every run
    if (opt.outputs.gatedSurface) opt.gates = withExitFaces(mesh, opt.gates);
    if (opt.kernel == "hybrid")  // a batch already keeps the CPU and every GPU busy with whole runs
        throw ParameterError("kernel hybrid runs one run at a time; a batch takes kernel cpu or cuda");
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
        // Every device requested: only as many as the batch's work is worth (a short batch on
        // one device: each extra device's context costs more than it saves).
        double packets = 0;
        for (const BatchRunSpec& r : runs) packets += double(r.packets);
        devices.resize(devicesForWork(opt.devices, devices.size(), packets, mesh.cells.size()));
#else
        std::string why;
        cudaAvailable(&why);
        throw ParameterError("kernel cuda: " + why);
#endif
    }
    std::unique_ptr<BatchTransport> t;
    if (mpi) t = makeMpiBatchTransport(*mpi, runs.size(), onResult);
    if (!t) t = makeLocalBatchTransport(runs.size(), onResult);
    if (opt.outputs.gated() && t->ranks() > 1)  // a rank sends rank 0 the CW tallies only
        throw ParameterError("batch: time-gated tallies need the batch in one process (not over " +
                             std::to_string(t->ranks()) + " MPI ranks); run it without mpirun");

    Dispatcher d(mesh, runs, opt, *t);
    const size_t group = groupRuns(opt, mesh, runs, t->ranks() > 1);
    const std::vector<int> plan = slotPlan(opt, devices, runs, t->ranks() > 1, group);
    const bool whole = plan.size() == 1 && plan[0] < 0;  // the CPU, or each run split over the GPUs
    if (opt.outputs.gated()) checkGatedBatch(mesh, runs, opt, plan.size());
    bool complete = false;
    try {
        complete = d.run(plan, devices, whole ? 1 : group);
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
    s.splitRuns = plan.size() == 1 && plan[0] < 0 && devices.size() > 1;
    s.slotsPerDevice = devices.empty() ? 1 : unsigned(std::max<size_t>(1, plan.size() / devices.size()));
    s.runsPerLaunch = unsigned(whole ? 1 : group);
    s.idleSeconds = d.idleSeconds();
    s.heldSeconds = d.heldSeconds();
    s.deliverSeconds = d.deliverSeconds();
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    timeKernels(d.kernelIntervals(t0), s);
    s.cancelled = !complete || (t->root() && s.delivered < s.runs);
    s.kernel = opt.kernel == "cuda" && devices.size() > 1 ? "cuda x" + std::to_string(devices.size()) : opt.kernel;
    if (s.ranks > 1) s.kernel += " x" + std::to_string(s.ranks) + " ranks";
    return s;
}

}  // namespace fm
