// SPDX-License-Identifier: GPL-3.0-or-later
#include "Kernels/CPU/CpuKernel.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <iostream>
#include <mutex>
#include <system_error>
#include <thread>

#include "Kernels/BatchMeans.hpp"
#include "Kernels/CPU/CpuBatches.hpp"
#include "Common/Errors.hpp"
#include "Common/ParallelFor.hpp"
#include "Kernels/CPU/CpuLanes.hpp"
#include "Kernels/PacketSource.hpp"
#include "Common/ResourceLimits.hpp"

namespace fm {
namespace {

// Packets a worker runs between looks at the cancel flag. Small enough that a run stops within
// a fraction of a second even when packets are slow (a large scattering model: ~1 ms each, or a
// sanitizer build), large enough that the per-chunk work (a look at the flag; a scorer copy and
// flush in the trace kernel) costs nothing (chunks of 4096 would let a Ctrl-C take several
// seconds). The lane
// loop keeps its packets in flight across chunks (forEachWorker), so the size costs it nothing.
constexpr uint64_t kChunk = 256;

}  // namespace

unsigned resolveThreads(unsigned requested) {
    if (requested) return requested;
    unsigned hw = std::thread::hardware_concurrency();
    return hw ? hw : 1;
}

namespace {

// One worker's range [b, e) in chunks of kChunk. A chunk counts as done when the next one is
// asked for (or the worker ends): the lane loop may still be finishing a few of its packets
// then, which only makes progress reports early by a fraction of a chunk. `failed` is set when
// another worker has thrown: the others stop as on a cancel.
struct WorkerChunks final : PacketChunks {
    const RunOptions& opt;
    const std::atomic<bool>& failed;
    std::atomic<uint64_t>& done;     // packets handed out and finished or in flight
    std::atomic<uint64_t>& dropped;  // packets abandoned by a cancel: not done
    uint64_t c, e, given = 0;
    WorkerChunks(const RunOptions& o, const std::atomic<bool>& f, std::atomic<uint64_t>& d, std::atomic<uint64_t>& x,
                 uint64_t begin, uint64_t end)
        : opt(o), failed(f), done(d), dropped(x), c(begin), e(end) {}
    bool next(uint64_t& begin, uint64_t& end) override {
        settle();
        if (c >= e || stopping()) return false;
        begin = c;
        end = std::min(e, c + kChunk);
        given = end - begin;
        c = end;
        return true;
    }
    bool stopping() const override {
        return failed.load(std::memory_order_relaxed) ||
               (opt.cancel && opt.cancel->load(std::memory_order_relaxed));
    }
    void abandon(uint64_t n) override { dropped += n; }
    void settle() {
        done += given;
        given = 0;
    }
};

// The workers' shared state: how many threads run (known once all were tried and the spare ones
// retired), the first exception a worker threw, and the flag that stops the others after it.
struct WorkerPool {
    std::mutex m;
    std::condition_variable cv;
    int started = -1;
    unsigned retireFrom = ~0u;  // workers w >= retireFrom leave before any work
    std::exception_ptr error;
    std::atomic<bool> failed{false};

    // The number of workers that run, or 0 for a worker that is retired.
    unsigned waitForStart(unsigned w) {
        std::unique_lock<std::mutex> lock(m);
        cv.wait(lock, [&] { return started >= 0 || w >= retireFrom; });
        return w >= retireFrom ? 0 : unsigned(started);
    }
    void retire(unsigned from) {
        {
            std::lock_guard<std::mutex> lock(m);
            retireFrom = from;
        }
        cv.notify_all();
    }
    void setStarted(unsigned n) {
        {
            std::lock_guard<std::mutex> lock(m);
            started = int(n);
        }
        cv.notify_all();
    }
    void fail(std::exception_ptr e) {
        std::lock_guard<std::mutex> lock(m);
        if (!error) error = e;
        failed = true;
    }
};

// Starts up to `threads` threads running fn(w); returns how many started. A thread that cannot
// be created (EAGAIN under process or container limits) ends the starting there.
std::vector<std::thread> startThreads(unsigned threads, const std::function<void(unsigned)>& fn, std::string& why) {
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (unsigned w = 0; w < threads; ++w) {
        try {
            if (workerStartHookForTests) workerStartHookForTests(w);
            pool.emplace_back(fn, w);
        } catch (const std::system_error& e) {
            why = e.what();
            break;
        }
    }
    return pool;
}

}  // namespace

std::function<void(unsigned)> workerStartHookForTests;

unsigned workersAfterFailedStart(unsigned asked, unsigned started) {
    if (started == asked || started < 2) return started;
    return started - std::max(1u, started / 4);
}

uint64_t forEachWorker(const RunOptions& opt, unsigned threads,
                       const std::function<void(unsigned, PacketChunks&)>& body) {
    return forEachWorkerRange(opt, threads, [&](unsigned w, uint64_t, uint64_t, PacketChunks& c) { body(w, c); });
}

uint64_t forEachWorkerRange(const RunOptions& opt, unsigned threads,
                            const std::function<void(unsigned, uint64_t, uint64_t, PacketChunks&)>& body) {
    std::atomic<uint64_t> done{0}, dropped{0};
    std::atomic<unsigned> running{threads};
    // The last worker to finish wakes the calling thread at once (progress is reported every
    // 20 ms meanwhile): a fixed sleep would add up to 20 ms to every run, which a batch of short
    // runs pays per run.
    std::mutex endMutex;
    std::condition_variable ended;
    auto finishWorker = [&] {
        if (--running == 0) {
            std::lock_guard<std::mutex> g(endMutex);
            ended.notify_all();
        }
    };
    WorkerPool shared;
    const uint64_t first = opt.firstPacket, n = opt.packets;
    // Ranges are split once the number of threads that started is known.
    auto worker = [&](unsigned w) {
        const unsigned count = shared.waitForStart(w);
        if (count == 0) return;  // retired: a spare thread's resources go to the others' work
        // In 128 bits: n (up to 2^53) times w (up to 4096) does not fit in 64.
        auto split = [&](unsigned k) { return uint64_t((unsigned __int128)n * k / count); };
        auto runRange = [&](uint64_t b, uint64_t e) {
            WorkerChunks chunks(opt, shared.failed, done, dropped, b, e);
            try {
                body(w, b, e, chunks);
            } catch (...) {
                shared.fail(std::current_exception());
            }
            chunks.settle();
            return !chunks.stopping();
        };
        if (!opt.packetSource) runRange(first + split(w), first + split(w + 1));
        else  // blocks from a shared source (Kernels/PacketSource.hpp), each run as a range
            for (uint64_t b, e; opt.packetSource->take(w, b, e) && runRange(b, e);) {}
        finishWorker();
    };
    std::string why;
    std::vector<std::thread> pool = startThreads(threads, worker, why);
    const unsigned tried = unsigned(pool.size());
    const unsigned count = workersAfterFailedStart(threads, tried);
    if (count < tried) {  // the spare threads leave (and free their stacks) before any work starts
        shared.retire(count);
        for (unsigned w = count; w < tried; ++w) pool[w].join();
        pool.resize(count);
    }
    running -= threads - count;
    shared.setStarted(count);
    if (count == 0)
        throw Error("cannot start a worker thread (" + why +
                    "); the process may not have more threads (ulimit -u, ulimit -v or a container limit)");
    if (count < threads)
        std::cerr << "fullmonte: warning: started " << tried << " of " << threads << " worker threads (" << why
                  << "); running on " << count << "\n";
    {
        std::unique_lock<std::mutex> lock(endMutex);
        while (!ended.wait_for(lock, std::chrono::milliseconds(20), [&] { return running.load() == 0; }))
            if (opt.progress) opt.progress(done.load(), n);
    }
    for (auto& t : pool) t.join();
    if (shared.error) std::rethrow_exception(shared.error);
    const uint64_t finished = done.load() - dropped.load();
    if (opt.progress) opt.progress(finished, n);
    return finished;
}

uint64_t forEachPacketRange(const RunOptions& opt, unsigned threads,
                            const std::function<void(unsigned, uint64_t, uint64_t)>& body) {
    return forEachWorker(opt, threads, [&](unsigned w, PacketChunks& chunks) {
        for (uint64_t b, e; chunks.next(b, e);) body(w, b, e);
    });
}

void addWorkerArrays(std::vector<std::vector<double>>& parts, std::vector<double>& out, unsigned threads) {
    // The first non-empty part is the sum's start (an empty out takes it whole, as BatchSums::add
    // does), the later ones are added over the length they share with it.
    size_t first = 0;
    while (first < parts.size() && parts[first].empty()) ++first;
    if (first == parts.size()) return;
    out = std::move(parts[first]);
    // Each element sums the parts in their order, whatever the threads: the same bits as one
    // thread, in contiguous ranges of elements on the run's threads (a gated run's arrays are
    // large, and there is one a worker).
    parallelChunks(0, out.size(), chunkCount(out.size(), size_t(1) << 16, threads), [&](unsigned, size_t lo, size_t hi) {
        for (size_t w = first + 1; w < parts.size(); ++w) {
            const size_t end = std::min(hi, parts[w].size());
            for (size_t i = lo; i < end; ++i) out[i] += parts[w][i];
        }
    });
    for (size_t w = first + 1; w < parts.size(); ++w) std::vector<double>().swap(parts[w]);
}

BatchSums addWorkerSums(std::vector<BatchSums>& parts, unsigned threads) {
    BatchSums s;
    for (auto m : batchSumArrays()) {
        std::vector<std::vector<double>> v;
        for (BatchSums& p : parts) v.push_back(std::move(p.*m));
        addWorkerArrays(v, s.*m, threads);
    }
    for (const BatchSums& p : parts) s.batches += p.batches;
    return s;
}

RunResult runCpu(const KernelInput& in, const RunOptions& opt) {
    auto t0 = std::chrono::steady_clock::now();
    const unsigned threads = resolveThreads(opt.threads);
    const ArrayModel model = in.view();
    const std::shared_ptr<const std::vector<uint8_t>> crossing = keptPlainCrossingBits(in);
    const size_t nv = in.cells.size(), ns = in.faceCount, nd = 2 * size_t(in.faceCount);
    const auto& sel = opt.outputs;
    // Per-thread tallies, plus the reduced result and one derived copy (fluence) of the caller.
    // With batches, each thread also keeps a fold array per tally (BatchFold's q), and a copy of
    // its tallies between folds where it runs several batches (fewer threads than batches, or a
    // packet source's ranges).
    const uint64_t batches = effectiveBatches(opt);
    const bool batched = batches > 1;
    const unsigned perThread = !batched ? 1 : batches <= threads && !opt.packetSource ? 2 : 3;
    const bool gated = sel.gated();  // runs the time-gated pack: the volume and exit tallies on
    checkGatedRun(in, opt);
    const TimeGates gates = sel.gatedSurface ? withExitFaces(in, opt.gates) : opt.gates;  // the result's, with its exit faces
    const size_t ngc = gatedVolumeStride(gates, nv);  // gated volume elements per bin (per-region gating: fewer)
    const size_t ngf = gatedSurfaceStride(gates);     // gated exit elements per bin
    const size_t ngv = sel.gatedVolume ? gates.bins() * ngc : 0, ngs = sel.gatedSurface ? gates.bins() * ngf : 0;
    const double tallyBytes = 8.0 * double((sel.volume || gated ? nv : 0) + (sel.surface || gated ? ns : 0) +
                                           (sel.directed ? nd : 0) + ngv + ngs);
    // What shrinks the need: fewer threads (each keeps its own tallies), one batch (no fold
    // arrays), fewer time gates or gated regions (the gated tallies, where they dominate).
    std::string advice = threads > 1 ? "use fewer threads" : "";
    if (batched) advice += std::string(advice.empty() ? "" : ", ") + "run one batch (--batches 1: no standard errors)";
    if (ngv + ngs > nv + ns)
        advice += std::string(advice.empty() ? "" : ", ") +
                  "use fewer time gates or gate fewer regions (--time-gate-regions; the gated tallies take " +
                  std::to_string(int(100.0 * 8.0 * double(ngv + ngs) / tallyBytes)) + "% of the tallies)";
    if (advice.empty()) advice = "the tallies of this mesh do not fit: run on a machine with more memory";
    requireMemory(tallyBytes * (perThread * threads + 2),
                  "a CPU run over " + std::to_string(nv - 1) + " tetras with " + std::to_string(threads) +
                      (threads == 1 ? " thread" : " threads"),
                  advice);

    RunResult r;
    r.kernel = "cpu";
    r.packetsRequested = opt.packets;
    const auto& o = opt.outputs;
    // The standard pack for V, S, D, or (G) the time-gated one (TimeGatedHostScorer: volume and
    // exit on, then dropped from the result where not selected).
    auto body = [&](auto V, auto S, auto D, auto G) {
        using Scorer = std::conditional_t<decltype(G)::value,
                                          std::conditional_t<decltype(D)::value, TimeGatedDirectedHostScorer, TimeGatedHostScorer>,
                                          HostTallyScorer<decltype(V)::value, decltype(S)::value, decltype(D)::value>>;
        std::vector<std::vector<double>> vol(threads), surf(threads), dir(threads), gvol(threads), gsurf(threads);
        std::vector<Scorer> scorers(threads);
        // Worker w's arrays, allocated and zeroed by the worker itself at its first range (in
        // parallel: a gated run's are large), and its scorer pointed at them.
        std::vector<char> ready(threads, 0);
        auto allocate = [&](unsigned w) {
            ready[w] = 1;
            if (V) vol[w].assign(nv, 0.0);
            if (S) surf[w].assign(ns, 0.0);
            if (D) dir[w].assign(nd, 0.0);
            if constexpr (decltype(V)::value) scorers[w].volume = vol[w].data();
            if constexpr (decltype(S)::value) scorers[w].surface = surf[w].data();
            if constexpr (decltype(D)::value) scorers[w].directed = dir[w].data();
            if constexpr (decltype(G)::value) {
                gvol[w].assign(ngv, 0.0);
                gsurf[w].assign(ngs, 0.0);
                scorers[w].gatedVolume = ngv ? gvol[w].data() : nullptr;
                scorers[w].gatedSurface = ngs ? gsurf[w].data() : nullptr;
                scorers[w].gatedSlot = gatedVolumeSlots(gates);
                scorers[w].gatedFaceSlot = ngs ? gates.faces->slot.data() : nullptr;
                scorers[w].gatedCells = uint32_t(ngc);
                scorers[w].gatedFaces = uint32_t(ngf);
                scorers[w].gates = gateBins(gates);
            }
        };
        std::vector<WorkerFolds> folds(batched ? threads : 0);
        r.packetsDone = forEachWorkerRange(opt, threads, [&](unsigned w, uint64_t b, uint64_t e, PacketChunks& chunks) {
            if (!ready[w]) allocate(w);
            Scorer sc = scorers[w];  // a local copy: no false sharing between workers
            auto run = [&](PacketChunks& c) {
                runPacketLanes(model, opt.params, c, sc, uint32_t(in.materials.size()), crossing->data(), opt.tuning.cpuIsa);
            };
            if (!batched) {
                run(chunks);
            } else {
                WorkerFolds& f = folds[w];
                if (f.ledger.q().empty()) {  // the worker's first range (a packet source gives several)
                    f.volume.reset(vol[w].size());
                    f.surface.reset(surf[w].size());
                    f.directed.reset(dir[w].size());
                    f.ledger.reset(7);
                    f.gatedVolume.reset(gvol[w].size());
                    f.gatedSurface.reset(gsurf[w].size());
                    f.gatedVolumeTotals.reset(ngv ? gates.bins() : 0);
                    f.gatedSurfaceTotals.reset(ngs ? gates.bins() : 0);
                }
                // The worker's last fold keeps no copy of its tallies (BatchFold), unless a
                // packet source may give it another range.
                runWorkerBatches(chunks, b, e, workerBatches(batches, e - b, opt.packets), run, [&](uint64_t n, bool last) {
                    const bool final = last && !opt.packetSource;
                    f.volume.fold(vol[w].data(), n, final);
                    f.surface.fold(surf[w].data(), n, final);
                    f.directed.fold(dir[w].data(), n, final);
                    f.ledger.fold(ledgerFields(sc.ledger).data(), n, final);
                    f.gatedVolume.fold(gvol[w].data(), n, final);
                    f.gatedSurface.fold(gsurf[w].data(), n, final);
                    f.gatedVolumeTotals.fold(gateBinTotals(gates, gvol[w]).data(), n, final);
                    f.gatedSurfaceTotals.fold(gateBinTotals(gates, gsurf[w]).data(), n, final);
                    ++f.batches;
                });
            }
            scorers[w] = sc;
        });
        if (opt.packetSource) r.packetsRequested = r.packetsDone;  // a side of a hybrid run: what it took
        addWorkerArrays(vol, r.volume, threads);
        addWorkerArrays(surf, r.surface, threads);
        addWorkerArrays(dir, r.directed, threads);
        addWorkerArrays(gvol, r.gatedVolume, threads);
        addWorkerArrays(gsurf, r.gatedSurface, threads);
        // Zeros where no worker started (a run cancelled before any range): the tallies keep
        // their sizes.
        auto sized = [](std::vector<double>& v, size_t n) {
            if (v.empty()) v.assign(n, 0.0);
        };
        if (V) sized(r.volume, nv);
        if (S) sized(r.surface, ns);
        if (D) sized(r.directed, nd);
        if (G) sized(r.gatedVolume, ngv), sized(r.gatedSurface, ngs);
        if (G) r.gates = gates;
        for (auto& sc : scorers) {
            r.ledger.add(sc.ledger);
            r.events.add(sc.events);
        }
        if (batched) {
            std::vector<BatchSums> parts;
            for (WorkerFolds& f : folds) parts.push_back(f.take());
            setTallyErrors(r, addWorkerSums(parts, threads));
        }
    };
    if (gated) {
        if (o.directed) body(std::true_type{}, std::true_type{}, std::true_type{}, std::true_type{});
        else body(std::true_type{}, std::true_type{}, std::false_type{}, std::true_type{});
        // The CW tallies the gated pack keeps but the run did not select.
        if (!o.volume) r.volume.clear(), r.standardError.volume.clear();
        if (!o.surface) r.surface.clear(), r.standardError.surface.clear();
    } else {
        dispatchOutputs(o.volume, o.surface, o.directed, [&](auto V, auto S, auto D) { body(V, S, D, std::false_type{}); });
    }
    r.cancelled = r.packetsDone < r.packetsRequested;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

}  // namespace fm
