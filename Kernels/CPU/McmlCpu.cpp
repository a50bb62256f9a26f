// SPDX-License-Identifier: GPL-3.0-or-later
#include "Kernels/CPU/McmlCpu.hpp"

#include <chrono>

#include "Common/Errors.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Kernels/CPU/McmlLanes.hpp"
#include "Kernels/McmlSlabLoop.hpp"
#include "Kernels/McmlTimeTally.hpp"

namespace fm {
namespace {

// One worker's arrays; the sink points into them. The time-resolved arrays are empty unless
// the run has time gates (then the sink is a McmlTimeScorer).
template <class Sink>
struct WorkerTallies {
    std::vector<double> rz, reflected, transmitted, cells, reflectedRT, transmittedRT, absorbedZT;
    Sink sink;

    WorkerTallies(const McmlGrid& g, size_t cellCount, const TimeGates& gates)
        : rz(size_t(g.nr) * g.nz), reflected(size_t(g.nr) * g.na),
          transmitted(size_t(g.nr) * g.na), cells(cellCount) {
        sink.absorbedRZ = rz.data();
        sink.rzGrid = g;
        sink.reflectedRA = reflected.data();
        sink.transmittedRA = transmitted.data();
        sink.raGrid = g;
        sink.absorbedCell = cells.data();
        if constexpr (NeedsClock<Sink>::value) {
            reflectedRT.assign(size_t(gates.bins()) * g.nr, 0.0);
            transmittedRT.assign(size_t(gates.bins()) * g.nr, 0.0);
            absorbedZT.assign(size_t(gates.bins()) * g.nz, 0.0);
            sink.reflectedRT = reflectedRT.data();
            sink.transmittedRT = transmittedRT.data();
            sink.absorbedZT = absorbedZT.data();
            sink.timeGrid = g;
            sink.timeBins = gateBins(gates);
        }
    }
    WorkerTallies(WorkerTallies&&) = default;  // vectors keep their buffers: pointers stay valid
};

void addInto(std::vector<double>& sum, const std::vector<double>& part) {
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += part[i];
}

// The workers' tallies into t: summed in worker order.
template <class Sink>
void gatherWorkers(std::vector<WorkerTallies<Sink>>& workers, McmlTallies& t) {
    WorkerTallies<Sink>& w0 = workers[0];
    t.absorbedRZ = std::move(w0.rz);
    t.reflectedRA = std::move(w0.reflected);
    t.transmittedRA = std::move(w0.transmitted);
    t.absorbedCell = std::move(w0.cells);
    t.reflectedRT = std::move(w0.reflectedRT);
    t.transmittedRT = std::move(w0.transmittedRT);
    t.absorbedZT = std::move(w0.absorbedZT);
    for (size_t w = 1; w < workers.size(); ++w) {
        addInto(t.absorbedRZ, workers[w].rz);
        addInto(t.reflectedRA, workers[w].reflected);
        addInto(t.transmittedRA, workers[w].transmitted);
        addInto(t.absorbedCell, workers[w].cells);
        addInto(t.reflectedRT, workers[w].reflectedRT);
        addInto(t.transmittedRT, workers[w].transmittedRT);
        addInto(t.absorbedZT, workers[w].absorbedZT);
    }
    for (const auto& w : workers) {
        t.ledger.add(w.sink.ledger);
        t.events.add(w.sink.events);
    }
}

// The run on `threads` workers, each running its chunks through runChunks(sink, chunks).
template <class Sink, class RunChunks>
McmlTallies runWorkers(const KernelInput& in, const McmlGrid& grid, const RunOptions& opt, RunChunks runChunks) {
    auto t0 = std::chrono::steady_clock::now();
    const unsigned threads = resolveThreads(opt.threads);
    std::vector<WorkerTallies<Sink>> workers;
    workers.reserve(threads);
    for (unsigned w = 0; w < threads; ++w) workers.emplace_back(grid, in.cells.size(), opt.gates);
    McmlTallies t;
    t.kernel = "cpu";
    t.packetsRequested = opt.packets;
    t.packetsDone = forEachWorker(opt, threads, [&](unsigned w, PacketChunks& chunks) {
        Sink sk = workers[w].sink;  // a local copy: no false sharing between workers
        runChunks(sk, chunks);
        slabScatterCount(sk.events);
        workers[w].sink = sk;
    });
    gatherWorkers(workers, t);
    if constexpr (NeedsClock<Sink>::value) t.gates = opt.gates;
    t.cancelled = t.packetsDone < opt.packets;
    t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return t;
}

}  // namespace

McmlTallies runMcmlCpu(const KernelInput& in, const McmlGrid& grid, const RunOptions& opt) {
    slabLayers(in);  // throws for a model without slab cells
    const SlabModel model = in.slabView();
    if (opt.gates.on()) {
        // Time-resolved: the scalar slab loop over McmlTimeScorer, one photon at a time (the
        // lanes are compiled for MCML's standard pack); the same histories as the lanes.
        return runWorkers<McmlTimeScorer<HostAdd>>(in, grid, opt, [&](McmlTimeScorer<HostAdd>& sk, PacketChunks& chunks) {
            for (uint64_t b, e; chunks.next(b, e);)
                for (uint64_t i = b; i < e; ++i) runSlabPhoton(model, opt.params, i, sk);
        });
    }
    // The slab photon loop (McmlSlabLoop.hpp) over the layers' bounds, as on the GPU, 32 photons
    // in AVX2 registers where the CPU has it (CPU/McmlLanes.hpp), over the slab cells: the same
    // histories as runPacket over the packed cell records (test_mcml).
    return runWorkers<HostSlabSink>(in, grid, opt, [&](HostSlabSink& sk, PacketChunks& chunks) {
        runSlabLanes(model, opt.params, chunks, sk, opt.tuning.cpuIsa);
    });
}

}  // namespace fm
