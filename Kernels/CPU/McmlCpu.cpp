// SPDX-License-Identifier: GPL-3.0-or-later
#include "Kernels/CPU/McmlCpu.hpp"

#include <chrono>
#include <type_traits>

#include "Common/Errors.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Kernels/CPU/McmlLanes.hpp"
#include "Kernels/DetectorTally.hpp"
#include "Kernels/McmlRecords.hpp"
#include "Kernels/McmlSlabLoop.hpp"
#include "Kernels/McmlTimeTally.hpp"
#include "Common/ResourceLimits.hpp"

namespace fm {
namespace {

// MCML's packs with the per-photon records (the detector tally, over layeredDetection's
// detectors), without and with the time-resolved tallies.
using McmlRecordScorer = TallyPack<uint64_t, McmlAbsorbTally<HostAdd>, McmlExitTally<HostAdd>,
                                   McmlLayerTally<HostAdd>, DetectorTally>;
using McmlTimeRecordScorer = TallyPack<uint64_t, McmlAbsorbTally<HostAdd>, McmlExitTally<HostAdd>,
                                       McmlLayerTally<HostAdd>, McmlTimeTally<HostAdd>, DetectorTally>;
template <class Sink>
constexpr bool kTimed = std::is_base_of_v<McmlTimeTally<HostAdd>, Sink>;
template <class Sink>
constexpr bool kRecords = std::is_base_of_v<DetectorTally, Sink>;

// One worker's arrays; the sink points into them. The time-resolved arrays are empty unless
// the run has time gates (then the sink has McmlTimeTally), the records unless it records
// (then it has DetectorTally, pointed at `records` by runWorkers).
template <class Sink>
struct WorkerTallies {
    std::vector<double> rz, reflected, transmitted, cells, reflectedRT, transmittedRT, absorbedZT;
    DetectorSink records;
    Sink sink;

    WorkerTallies(const McmlGrid& g, const KernelInput& in, const RunOptions& opt)
        : rz(size_t(g.nr) * g.nz), reflected(size_t(g.nr) * g.na),
          transmitted(size_t(g.nr) * g.na), cells(in.cells.size()) {
        const TimeGates& gates = opt.gates;
        sink.absorbedRZ = rz.data();
        sink.rzGrid = g;
        sink.reflectedRA = reflected.data();
        sink.transmittedRA = transmitted.data();
        sink.raGrid = g;
        sink.absorbedCell = cells.data();
        if constexpr (kTimed<Sink>) {
            reflectedRT.assign(size_t(gates.bins()) * g.nr, 0.0);
            transmittedRT.assign(size_t(gates.bins()) * g.nr, 0.0);
            absorbedZT.assign(size_t(gates.bins()) * g.nz, 0.0);
            sink.reflectedRT = reflectedRT.data();
            sink.transmittedRT = transmittedRT.data();
            sink.absorbedZT = absorbedZT.data();
            sink.timeGrid = g;
            sink.timeBins = gateBins(gates);
        }
        if constexpr (kRecords<Sink>) {
            records.regions = slabLayers(in);
            records.keep = opt.detection->maxRecords;
            records.weight.assign(opt.detection->detectors.size(), 0.0);
            sink.spec = opt.detection;
            sink.path.size(in.materials.size());
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
    for (unsigned w = 0; w < threads; ++w) workers.emplace_back(grid, in, opt);
    McmlTallies t;
    t.kernel = "cpu";
    t.packetsRequested = opt.packets;
    t.packetsDone = forEachWorker(opt, threads, [&](unsigned w, PacketChunks& chunks) {
        Sink sk = workers[w].sink;  // a local copy: no false sharing between workers
        if constexpr (kRecords<Sink>) sk.sink = &workers[w].records;
        runChunks(sk, chunks);
        slabScatterCount(sk.events);
        workers[w].sink = sk;
    });
    gatherWorkers(workers, t);
    if constexpr (kTimed<Sink>) t.gates = opt.gates;
    if constexpr (kRecords<Sink>) {
        t.records = describeLayeredRun(in, opt, *opt.detection);
        std::vector<DetectorSink> sinks;
        for (auto& w : workers) sinks.push_back(std::move(w.records));
        mergeWorkerRecords(sinks, opt.detection->maxRecords, t.records);
    }
    t.cancelled = t.packetsDone < opt.packets;
    t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return t;
}

// The scalar slab loop, one photon at a time, over a pack with the detector tally: its sink is
// told each photon's index before the photon launches.
template <class Sink>
McmlTallies runRecording(const KernelInput& in, const McmlGrid& grid, const RunOptions& opt) {
    const SlabModel model = in.slabView();
    const unsigned threads = resolveThreads(opt.threads);
    const double recordBytes = double(sizeof(DetectedRecord)) + 4.0 * double(in.materials.size());
    requireMemory(recordBytes * double(opt.detection->maxRecords) * (2 * threads + 2),
                  "an MCML run with " + std::to_string(threads) + " threads keeping up to " +
                      std::to_string(opt.detection->maxRecords) + " records (twice that per thread)",
                  "keep fewer records (--max-detected) or use fewer threads");
    return runWorkers<Sink>(in, grid, opt, [&](Sink& sk, PacketChunks& chunks) {
        DetectorSink& records = *sk.template tally<DetectorTally>().sink;
        for (uint64_t b, e; chunks.next(b, e);)
            for (uint64_t i = b; i < e; ++i) {
                records.current = i;
                runSlabPhoton(model, opt.params, i, sk);
            }
    });
}

}  // namespace

McmlTallies runMcmlCpu(const KernelInput& in, const McmlGrid& grid, const RunOptions& opt) {
    slabLayers(in);  // throws for a model without slab cells
    if (opt.detection && opt.detection->active()) {
        // Per-photon records: the scalar slab loop with the detector tally (the lanes are
        // compiled for MCML's standard pack); the same histories as the lanes.
        if (opt.gates.on()) return runRecording<McmlTimeRecordScorer>(in, grid, opt);
        return runRecording<McmlRecordScorer>(in, grid, opt);
    }
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
