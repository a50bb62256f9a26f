#include "Kernels/CPU/CpuKernel.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "Kernels/CPU/CpuLanes.hpp"

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
// then, which only makes progress reports early by a fraction of a chunk.
struct WorkerChunks final : PacketChunks {
    const RunOptions& opt;
    std::atomic<uint64_t>& done;
    uint64_t c, e, given = 0;
    WorkerChunks(const RunOptions& o, std::atomic<uint64_t>& d, uint64_t begin, uint64_t end)
        : opt(o), done(d), c(begin), e(end) {}
    bool next(uint64_t& begin, uint64_t& end) override {
        settle();
        if (c >= e || (opt.cancel && opt.cancel->load(std::memory_order_relaxed))) return false;
        begin = c;
        end = std::min(e, c + kChunk);
        given = end - begin;
        c = end;
        return true;
    }
    void settle() {
        done += given;
        given = 0;
    }
};

}  // namespace

uint64_t forEachWorker(const RunOptions& opt, unsigned threads,
                       const std::function<void(unsigned, PacketChunks&)>& body) {
    std::atomic<uint64_t> done{0};
    std::atomic<unsigned> running{threads};
    std::vector<std::thread> pool;
    const uint64_t first = opt.firstPacket, n = opt.packets;
    for (unsigned w = 0; w < threads; ++w) {
        uint64_t b = first + n * w / threads, e = first + n * (w + 1) / threads;
        pool.emplace_back([&, w, b, e] {
            WorkerChunks chunks(opt, done, b, e);
            body(w, chunks);
            chunks.settle();
            --running;
        });
    }
    while (running.load() > 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        if (opt.progress) opt.progress(done.load(), n);
    }
    for (auto& t : pool) t.join();
    if (opt.progress) opt.progress(done.load(), n);
    return done.load();
}

uint64_t forEachPacketRange(const RunOptions& opt, unsigned threads,
                            const std::function<void(unsigned, uint64_t, uint64_t)>& body) {
    return forEachWorker(opt, threads, [&](unsigned w, PacketChunks& chunks) {
        for (uint64_t b, e; chunks.next(b, e);) body(w, b, e);
    });
}

RunResult runCpu(const KernelInput& in, const RunOptions& opt) {
    auto t0 = std::chrono::steady_clock::now();
    const unsigned threads = resolveThreads(opt.threads);
    const ArrayModel model = in.view();
    const std::vector<uint8_t> crossing = plainCrossingBits(in);
    const size_t nv = in.cells.size(), ns = in.faceCount, nd = 2 * size_t(in.faceCount);

    RunResult r;
    r.kernel = "cpu";
    r.packetsRequested = opt.packets;
    const auto& o = opt.outputs;
    dispatchOutputs(o.volume, o.surface, o.directed, [&](auto V, auto S, auto D) {
        using Scorer = HostTallyScorer<decltype(V)::value, decltype(S)::value, decltype(D)::value>;
        std::vector<std::vector<double>> vol(threads), surf(threads), dir(threads);
        std::vector<Scorer> scorers(threads);
        for (unsigned w = 0; w < threads; ++w) {
            if (V) vol[w].assign(nv, 0.0);
            if (S) surf[w].assign(ns, 0.0);
            if (D) dir[w].assign(nd, 0.0);
            scorers[w].volume = vol[w].data();
            scorers[w].surface = surf[w].data();
            scorers[w].directed = dir[w].data();
        }
        r.packetsDone = forEachWorker(opt, threads, [&](unsigned w, PacketChunks& chunks) {
            Scorer sc = scorers[w];  // a local copy: no false sharing between workers
            runPacketLanes(model, opt.params, chunks, sc, uint32_t(in.materials.size()), crossing.data());
            scorers[w] = sc;
        });
        auto reduce = [&](std::vector<std::vector<double>>& parts, std::vector<double>& out) {
            if (parts.empty() || parts[0].empty()) return;
            out = std::move(parts[0]);
            for (unsigned w = 1; w < threads; ++w)
                for (size_t i = 0; i < out.size(); ++i) out[i] += parts[w][i];
        };
        reduce(vol, r.volume);
        reduce(surf, r.surface);
        reduce(dir, r.directed);
        for (auto& sc : scorers) {
            r.ledger.add(sc.ledger);
            r.events.add(sc.events);
        }
    });
    r.cancelled = r.packetsDone < opt.packets;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

}  // namespace fm
