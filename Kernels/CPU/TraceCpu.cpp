// SPDX-License-Identifier: GPL-3.0-or-later
#include "Kernels/CPU/TraceCpu.hpp"

#include <atomic>
#include <chrono>
#include <string>

#include "Common/Errors.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Kernels/Core/TallyScorer.hpp"
#include "Common/ResourceLimits.hpp"

namespace fm {
namespace {

struct TraceHostAdd {
    static void add(double* p, double v) { *p += v; }
};

// One worker's packets: their steps back to back and each packet's step count.
struct WorkerTraces {
    std::vector<TraceStep> steps;
    std::vector<uint64_t> lengths;
};

}  // namespace

TracedRunResult runCpuTraced(const KernelInput& in, const RunOptions& opt, uint64_t maxPoints) {
    auto t0 = std::chrono::steady_clock::now();
    const unsigned threads = resolveThreads(opt.threads);
    const ArrayModel model = in.view();
    const size_t nv = in.cells.size(), ns = in.faceCount;

    auto overflowMessage = [&] {
        return "trace run: the traces of " + std::to_string(opt.packets) + " packets exceed " +
               std::to_string(maxPoints) + " points (" + bytesText(double(traceMemoryBytes(maxPoints))) +
               "); trace fewer packets or raise maxTracePoints";
    };
    TracedRunResult out;
    RunResult& r = out.run;
    r.kernel = "cpu";
    r.packetsRequested = opt.packets;
    std::atomic<uint64_t> points{0};
    std::atomic<bool> overflow{false};
    std::vector<WorkerTraces> parts(threads);
    const auto& o = opt.outputs;
    dispatchOutputs(o.volume, o.surface, false, [&](auto V, auto S, auto) {
        // The packet clock on: the traces' times are read from it.
        using Scorer = TallyScorer<decltype(V)::value, decltype(S)::value, false, TraceHostAdd, uint64_t, PacketClock>;
        std::vector<std::vector<double>> vol(threads), surf(threads);
        std::vector<Scorer> scorers(threads);
        for (unsigned w = 0; w < threads; ++w) {
            if (V) vol[w].assign(nv, 0.0);
            if (S) surf[w].assign(ns, 0.0);
            if constexpr (decltype(V)::value) scorers[w].volume = vol[w].data();
            if constexpr (decltype(S)::value) scorers[w].surface = surf[w].data();
        }
        r.packetsDone = forEachPacketRange(opt, threads, [&](unsigned w, uint64_t b, uint64_t e) {
            if (overflow.load(std::memory_order_relaxed)) return;
            Scorer sc = scorers[w];
            WorkerTraces& wt = parts[w];
            for (uint64_t i = b; i < e; ++i) {
                const size_t before = wt.steps.size();
                // A packet whose trace alone passes the limit (a raised guard) stops here.
                const uint64_t before0 = points.load(std::memory_order_relaxed);
                tracePacket(model, opt.params, i, sc, [&](const TraceStep& s) {
                    if (before0 + (wt.steps.size() - before) >= maxPoints) throw ParameterError(overflowMessage());
                    wt.steps.push_back(s);
                });
                const uint64_t n = wt.steps.size() - before;
                wt.lengths.push_back(n);
                if (points.fetch_add(n, std::memory_order_relaxed) + n > maxPoints) {
                    overflow = true;
                    break;
                }
            }
            sc.flush();
            scorers[w] = sc;
        });
        auto reduce = [&](std::vector<std::vector<double>>& p, std::vector<double>& dst) {
            if (p.empty() || p[0].empty()) return;
            dst = std::move(p[0]);
            for (unsigned w = 1; w < threads; ++w)
                for (size_t i = 0; i < dst.size(); ++i) dst[i] += p[w][i];
        };
        reduce(vol, r.volume);
        reduce(surf, r.surface);
        for (auto& sc : scorers) {
            r.ledger.add(sc.ledger);
            r.events.add(sc.events);
        }
    });
    if (overflow) throw ParameterError(overflowMessage());
    // Workers hold contiguous, increasing packet ranges: concatenated in worker order they give
    // the traces in packet-index order.
    TraceSet& ts = out.traces;
    ts.steps.reserve(points.load());
    for (auto& wt : parts) {
        ts.steps.insert(ts.steps.end(), wt.steps.begin(), wt.steps.end());
        for (uint64_t n : wt.lengths) ts.first.push_back(ts.first.back() + n);
        wt = WorkerTraces{};
    }
    r.cancelled = r.packetsDone < opt.packets;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
}

}  // namespace fm
