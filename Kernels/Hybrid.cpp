// SPDX-License-Identifier: GPL-3.0-or-later
#include "Kernels/Hybrid.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "Common/Errors.hpp"
#include "Kernels/BatchMeans.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Kernels/Dispatch.hpp"
#include "Kernels/MPI/MpiRun.hpp"
#include "Kernels/PacketSource.hpp"
#include "fm_config.h"
#if FM_HAVE_CUDA
#include "Kernels/CUDA/CudaKernel.hpp"
#endif

namespace fm {
namespace {

using Clock = std::chrono::steady_clock;

// One counter over a run's packet indices, with a view (PacketSource) for each side. Each
// taker's rate is measured from its blocks: packets over the time from one take to its next, or
// for a GPU whose launches are queued (takeLaunch), its completed launches' packets over the time
// since its first take. Every block's size is chosen from those rates under one lock.
class HybridCounter {
public:
    HybridCounter(uint64_t first, uint64_t count, unsigned gpuTakers, unsigned cpuTakers, const HybridPolicy& p,
                  uint64_t gpuMaxChunk)
        : next_(first), end_(first + count), gpuMaxChunk_(std::max<uint64_t>(gpuMaxChunk, 1)),
          gpuMinChunk_(guidedMinChunk(count, gpuMaxChunk_, gpuTakers)), p_(p),
          gpu_(gpuTakers), cpu_(cpuTakers), gpuSide_(*this, true), cpuSide_(*this, false) {}

    PacketSource& gpuSide() { return gpuSide_; }
    PacketSource& cpuSide() { return cpuSide_; }

    // The CPU's time after its last block (summing its tallies), kept free before the run's end.
    void setCpuEndSeconds(double s) {
        std::lock_guard<std::mutex> g(m_);
        cpuEndSeconds_ = s;
    }
    // Every take from now on returns false (a side failed: the other stops after its block).
    void stop() {
        std::lock_guard<std::mutex> g(m_);
        stopped_ = true;
        cv_.notify_all();
    }
    // The GPU side has ended (its kernel returned or threw).
    void gpuEnded() {
        std::lock_guard<std::mutex> g(m_);
        gpuEnded_ = true;
        cv_.notify_all();
    }
    // Waits until a GPU's rate is measured or the GPU side has ended; returns the GPUs' predicted
    // time for what is left (0 when they have ended or nothing is left).
    double waitForGpuRate(const std::atomic<bool>* cancel) {
        std::unique_lock<std::mutex> lock(m_);
        while (!gpuEnded_ && !stopped_ && rate(gpu_) == 0 && !(cancel && cancel->load()))
            cv_.wait_for(lock, std::chrono::milliseconds(20));
        const double r = rate(gpu_);
        return gpuEnded_ || r == 0 ? 0.0 : double(end_ - next_) / r;
    }
    // True once the GPU side has ended; waits at most `wait` for it.
    bool waitForGpuEnd(std::chrono::milliseconds wait) {
        std::unique_lock<std::mutex> lock(m_);
        return cv_.wait_for(lock, wait, [&] { return gpuEnded_; });
    }
    uint64_t completed() {
        std::lock_guard<std::mutex> g(m_);
        return completed_;
    }

private:
    struct Taker {
        uint64_t size = 0;          // the block in hand (0: none)
        Clock::time_point start;
        double rate = 0;            // packets/s, 0 until its first block ends
        bool done = false;          // told to stop
        Clock::time_point firstLaunch;  // queued launches: the first one's take
        uint64_t launched = 0;          // queued launches: packets taken
        uint64_t launchesDone = 0;      // queued launches: packets completed
    };
    struct Side final : PacketSource {
        HybridCounter& c;
        bool gpu;
        Side(HybridCounter& counter, bool isGpu) : c(counter), gpu(isGpu) {}
        bool take(unsigned t, uint64_t& begin, uint64_t& end) override { return c.take(gpu, t, begin, end); }
        bool takeLaunch(unsigned t, uint64_t most, uint64_t& begin, uint64_t& end) override {
            return gpu ? c.takeLaunch(t, most, begin, end) : c.take(false, t, begin, end);
        }
        void launchDone(unsigned t, uint64_t packets) override {
            if (gpu) c.launchDone(t, packets);
        }
    };

    // The sum of the measured takers' rates, scaled to all those still taking.
    static double rate(const std::vector<Taker>& ts) {
        double sum = 0;
        unsigned measured = 0, active = 0;
        for (const Taker& t : ts) {
            if (t.done) continue;
            ++active;
            if (t.rate > 0) {
                sum += t.rate;
                ++measured;
            }
        }
        return measured ? sum * active / measured : 0.0;
    }

    // The taker's previous block is done: counted, and its rate updated (an average of the
    // last blocks, so that a side that slows down is seen within a block or two).
    void finish(Taker& t, Clock::time_point now) {
        if (!t.size) return;
        completed_ += t.size;
        const double dt = std::chrono::duration<double>(now - t.start).count();
        if (dt > 0) {
            const double r = double(t.size) / dt;
            t.rate = t.rate > 0 ? 0.5 * (t.rate + r) : r;
        }
        t.size = 0;
        cv_.notify_all();
    }

    bool take(bool gpu, unsigned who, uint64_t& begin, uint64_t& end) {
        std::lock_guard<std::mutex> g(m_);
        std::vector<Taker>& side = gpu ? gpu_ : cpu_;
        if (who >= side.size()) throw Error("hybrid run: taker " + std::to_string(who) + " out of range");
        Taker& t = side[who];
        const Clock::time_point now = Clock::now();
        finish(t, now);
        const uint64_t rest = end_ - next_;
        const uint64_t size = rest == 0 || stopped_ || t.done ? 0 : gpu ? gpuChunk(rest, rest) : cpuBlock(t, rest);
        if (size == 0) {
            t.done = true;
            cv_.notify_all();
            return false;
        }
        begin = next_;
        end = next_ + size;
        next_ = end;
        t.size = size;
        t.start = now;
        return true;
    }

    // A GPU's chunk or launch block, at most `most`: on one GPU one batch of the standard errors
    // (the GPU alone runs the same batches, each ending with a drain); over several, guided as
    // runCuda guides them, so the GPUs finish together; at most policy.gpuChunk.
    uint64_t gpuChunk(uint64_t rest, uint64_t most) const {
        const uint64_t size = guidedChunk(rest, std::min(most, gpuMaxChunk_), gpuMinChunk_, gpu_.size());
        return p_.gpuChunk ? std::min(size, p_.gpuChunk) : size;
    }

    // A block for a GPU's next queued launch: what it asks for (one launch of the GPU alone; over
    // several GPUs guided, see gpuChunk). The GPU's launches stay queued, so taking costs it
    // nothing.
    bool takeLaunch(unsigned who, uint64_t most, uint64_t& begin, uint64_t& end) {
        std::lock_guard<std::mutex> g(m_);
        if (who >= gpu_.size()) throw Error("hybrid run: GPU taker " + std::to_string(who) + " out of range");
        Taker& t = gpu_[who];
        const uint64_t rest = end_ - next_;
        const uint64_t size = rest == 0 || stopped_ || t.done ? 0 : gpuChunk(rest, std::max<uint64_t>(most, 1));
        if (size == 0) {
            t.done = true;
            cv_.notify_all();
            return false;
        }
        if (t.launched == 0) t.firstLaunch = Clock::now();
        begin = next_;
        end = next_ + size;
        next_ = end;
        t.launched += size;
        return true;
    }
    // A queued launch has completed: the GPU's rate is its completed packets over the time since
    // its first take (the start of its first launch: a slight underestimate, on the safe side for
    // the CPU's deadline).
    void launchDone(unsigned who, uint64_t packets) {
        std::lock_guard<std::mutex> g(m_);
        if (who >= gpu_.size()) throw Error("hybrid run: GPU taker " + std::to_string(who) + " out of range");
        Taker& t = gpu_[who];
        completed_ += packets;
        t.launchesDone += packets;
        const double dt = std::chrono::duration<double>(Clock::now() - t.firstLaunch).count();
        if (dt > 0) t.rate = double(t.launchesDone) / dt;
        cv_.notify_all();
    }

    // A block this worker ends within cpuShareOfRest of the run's predicted rest (less the CPU's
    // end cost); 0 (stop) once that is shorter than cpuMinBlockSeconds. Never more than half the
    // rest: the GPUs always run the last packets.
    uint64_t cpuBlock(const Taker& t, uint64_t rest) const {
        const uint64_t most = rest / 2;
        const double rg = rate(gpu_), rc = rate(cpu_);
        if (rg + rc <= 0) return std::min<uint64_t>(most, p_.cpuFirstBlock);
        const double left = double(rest) / (rg + rc) - cpuEndSeconds_;  // seconds the CPU may still work
        if (t.rate == 0) {
            const bool fits = left * p_.cpuShareOfRest >= p_.cpuMinBlockSeconds;
            return fits ? std::min<uint64_t>(most, p_.cpuFirstBlock) : 0;
        }
        const double seconds = std::min(left * p_.cpuShareOfRest, p_.cpuMaxBlockSeconds);
        if (seconds < p_.cpuMinBlockSeconds) return 0;
        return std::min<uint64_t>(most, uint64_t(seconds * t.rate));
    }

    std::mutex m_;
    std::condition_variable cv_;
    uint64_t next_, end_, completed_ = 0;
    const uint64_t gpuMaxChunk_, gpuMinChunk_;
    const HybridPolicy p_;
    std::vector<Taker> gpu_, cpu_;
    double cpuEndSeconds_ = 0;
    bool stopped_ = false, gpuEnded_ = false;
    Side gpuSide_, cpuSide_;
};

// Bytes of one copy of the run's tallies.
double tallyBytes(const KernelInput& in, const OutputSelection& o) {
    const double faces = double(in.faceCount);
    return 8.0 * ((o.volume ? double(in.cells.size()) : 0) + (o.surface ? faces : 0) + (o.directed ? 2 * faces : 0));
}

// A side's kernel on a thread of its own; its exception is kept for the caller.
struct SideThread {
    RunResult result;
    std::exception_ptr error;
    std::thread thread;
    bool started = false;
    template <class Fn>
    void start(Fn fn) {
        thread = std::thread([this, fn] {
            try {
                result = fn();
            } catch (...) {
                error = std::current_exception();
            }
        });
        started = true;
    }
    void join() {
        if (thread.joinable()) thread.join();
    }
};

}  // namespace

unsigned hybridCpuThreads(unsigned requested, unsigned gpus) {
    if (requested) return requested;
    const unsigned hw = resolveThreads(0);
    return hw > gpus ? hw - gpus : 1;
}

RunResult runHybridWith(const KernelInput& in, const RunOptions& opt, const HybridSides& sides,
                        const HybridPolicy& policy) {
    validateRunOptions(opt);
    if (!sides.gpu || !sides.cpu || sides.gpuTakers == 0 || sides.cpuThreads == 0)
        throw ParameterError("hybrid run: both sides need a kernel and at least one taker");
    const auto t0 = Clock::now();
    // The GPU's batches (Kernels/BatchMeans.hpp) for the whole run; each GPU chunk and each CPU
    // block is one batch or more, so both sides have their own estimate.
    const uint64_t batches = effectiveBatches(opt, true);
    const uint64_t gpuMaxChunk = batches > 1 ? (opt.packets + batches - 1) / batches : opt.packets;
    HybridCounter counter(opt.firstPacket, opt.packets, sides.gpuTakers, sides.cpuThreads, policy, gpuMaxChunk);
    RunOptions g = opt, c = opt;
    g.batches = c.batches = batches;
    g.progress = c.progress = nullptr;  // reported here, for both sides
    g.packetSource = &counter.gpuSide();
    c.packetSource = &counter.cpuSide();
    c.threads = sides.cpuThreads;
    const double bytes = tallyBytes(in, opt.outputs), threads = double(sides.cpuThreads);
    const double perThread = batches > 1 ? 3 : 1;  // a tally and, with batches, its two fold arrays
    const double endSeconds = (threads * perThread + 2) * bytes / policy.hostBytesPerSecond;
    const double fixedSeconds = policy.cpuStartSeconds + threads * perThread * bytes / policy.hostBytesPerSecond + endSeconds;
    counter.setCpuEndSeconds(endSeconds);

    SideThread gpu, cpu;
    gpu.start([&] {
        struct Ended {
            HybridCounter& c;
            ~Ended() { c.gpuEnded(); }
        } ended{counter};
        try {
            return sides.gpu(in, g);
        } catch (...) {
            counter.stop();
            throw;
        }
    });
    const double gpuRest = counter.waitForGpuRate(opt.cancel);
    if (gpuRest > policy.cpuWorthFactor * fixedSeconds) {
        try {
            cpu.start([&] {
                try {
                    return sides.cpu(in, c);
                } catch (...) {
                    counter.stop();
                    throw;
                }
            });
        } catch (const std::system_error&) {  // no thread to spare: the GPUs run everything
        }
    }
    // Progress every 50 ms until the GPU side ends; then the CPU's last blocks.
    while (!counter.waitForGpuEnd(std::chrono::milliseconds(50)))
        if (opt.progress) opt.progress(counter.completed(), opt.packets);
    gpu.join();
    cpu.join();
    if (gpu.error) std::rethrow_exception(gpu.error);
    if (cpu.error) std::rethrow_exception(cpu.error);

    RunResult r = std::move(gpu.result);  // the GPU side's arrays and timings, not copied
    const std::string gpuKernel = r.kernel;
    if (cpu.started && cpu.result.packetsDone > 0) {
        cpu.result.cpuPackets = cpu.result.packetsDone;
        accumulateResult(r, cpu.result);
    }
    r.packetsRequested = opt.packets;
    r.cancelled = r.packetsDone < opt.packets;
    if (r.cancelled) r.standardError = TallyErrors{};
    r.kernel = "hybrid (" + gpuKernel +
               (cpu.started ? " + cpu x" + std::to_string(sides.cpuThreads) : std::string("; the CPU did not join")) + ")";
    if (opt.progress) opt.progress(r.packetsDone, opt.packets);
    r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return r;
}

RunResult runHybrid(const KernelInput& in, const RunOptions& opt) {
#if FM_HAVE_CUDA
    std::string why;
    if (!cudaDeviceAvailable(&why)) throw Error("kernel hybrid: " + why);
    HybridSides s;
    s.gpu = runCuda;
    s.gpuTakers = unsigned(cudaResolveDevices(opt.devices).size());
    s.cpu = runCpu;
    s.cpuThreads = hybridCpuThreads(opt.threads, s.gpuTakers);
    return runHybridWith(in, opt, s);
#else
    (void)in;
    (void)opt;
    std::string why;
    cudaAvailable(&why);
    throw ParameterError("kernel hybrid: " + why);
#endif
}

}  // namespace fm
