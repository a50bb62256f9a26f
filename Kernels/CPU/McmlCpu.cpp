// SPDX-License-Identifier: GPL-3.0-or-later
#include "Kernels/CPU/McmlCpu.hpp"

#include <chrono>

#include "Common/Errors.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Kernels/CPU/McmlLanes.hpp"
#include "Kernels/McmlSlabLoop.hpp"

namespace fm {
namespace {

// One worker's arrays; the sink points into them.
struct WorkerTallies {
    std::vector<double> rz, reflected, transmitted, cells;
    HostSlabSink sink;

    WorkerTallies(const McmlGrid& g, size_t cellCount)
        : rz(size_t(g.nr) * g.nz), reflected(size_t(g.nr) * g.na),
          transmitted(size_t(g.nr) * g.na), cells(cellCount) {
        sink = mcmlScorer<HostAdd>(g, rz.data(), reflected.data(), transmitted.data(), cells.data());
    }
    WorkerTallies(WorkerTallies&&) = default;  // vectors keep their buffers: pointers stay valid
};

void addInto(std::vector<double>& sum, const std::vector<double>& part) {
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += part[i];
}

}  // namespace

McmlTallies runMcmlCpu(const KernelInput& in, const McmlGrid& grid, const RunOptions& opt) {
    auto t0 = std::chrono::steady_clock::now();
    const unsigned threads = resolveThreads(opt.threads);
    // The slab photon loop (McmlSlabLoop.hpp) over the layers' bounds, as on the GPU, 32 photons
    // in AVX2 registers where the CPU has it (CPU/McmlLanes.hpp), over the slab cells: the same
    // histories as runPacket over the packed cell records (test_mcml).
    slabLayers(in);  // throws for a model without slab cells
    const SlabModel model = in.slabView();
    std::vector<WorkerTallies> workers;
    workers.reserve(threads);
    for (unsigned w = 0; w < threads; ++w) workers.emplace_back(grid, in.cells.size());

    McmlTallies t;
    t.kernel = "cpu";
    t.packetsRequested = opt.packets;
    t.packetsDone = forEachWorker(opt, threads, [&](unsigned w, PacketChunks& chunks) {
        HostSlabSink sk = workers[w].sink;  // a local copy: no false sharing between workers
        runSlabLanes(model, opt.params, chunks, sk, opt.tuning.cpuIsa);
        slabScatterCount(sk.events);
        workers[w].sink = sk;
    });
    t.absorbedRZ = std::move(workers[0].rz);
    t.reflectedRA = std::move(workers[0].reflected);
    t.transmittedRA = std::move(workers[0].transmitted);
    t.absorbedCell = std::move(workers[0].cells);
    for (unsigned w = 1; w < threads; ++w) {
        addInto(t.absorbedRZ, workers[w].rz);
        addInto(t.reflectedRA, workers[w].reflected);
        addInto(t.transmittedRA, workers[w].transmitted);
        addInto(t.absorbedCell, workers[w].cells);
    }
    for (const auto& w : workers) {
        t.ledger.add(w.sink.ledger);
        t.events.add(w.sink.events);
    }
    t.cancelled = t.packetsDone < opt.packets;
    t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return t;
}

}  // namespace fm
