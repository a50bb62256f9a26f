#include "Kernels/CPU/McmlCpu.hpp"

#include <chrono>

#include "Geometry/Errors.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Kernels/CPU/CpuLanes.hpp"

namespace fm {
namespace {

// One worker's arrays; the scorer points into them.
struct WorkerTallies {
    std::vector<double> rz, reflected, transmitted, cells;
    HostMcmlScorer scorer;

    WorkerTallies(const McmlGrid& g, size_t cellCount)
        : rz(size_t(g.nr) * g.nz), reflected(size_t(g.nr) * g.na),
          transmitted(size_t(g.nr) * g.na), cells(cellCount) {
        scorer.absorbedRZ = rz.data();
        scorer.reflectedRA = reflected.data();
        scorer.transmittedRA = transmitted.data();
        scorer.absorbedCell = cells.data();
        scorer.grid = g;
    }
    WorkerTallies(WorkerTallies&&) = default;  // vectors keep their buffers: pointers stay valid
};

// Per-thread copies of a large grid could exhaust memory; say so instead of swapping.
void checkMemory(const McmlGrid& g, unsigned threads) {
    double bytes = 8.0 * threads * (double(g.nr) * g.nz + 2.0 * g.nr * g.na);
    if (bytes > 8e9)
        throw ParameterError("MCML grid nr*nz = " + std::to_string(size_t(g.nr) * g.nz) + " with " +
                             std::to_string(threads) + " threads needs " +
                             std::to_string(bytes / 1e9) + " GB of tallies; use fewer threads or bins");
}

void addInto(std::vector<double>& sum, const std::vector<double>& part) {
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += part[i];
}

}  // namespace

McmlTallies runMcmlCpu(const KernelInput& in, const McmlGrid& grid, const RunOptions& opt) {
    auto t0 = std::chrono::steady_clock::now();
    const unsigned threads = resolveThreads(opt.threads);
    checkMemory(grid, threads);
    // The packed cell records through the 8-packet lane loop (CPU/CpuLanes.hpp); the GPU reads
    // the same layers as Core/SlabModel.hpp (identical results: test_mcml).
    const ArrayModel model = in.view();
    const std::vector<uint8_t> crossing = plainCrossingBits(in);
    std::vector<WorkerTallies> workers;
    workers.reserve(threads);
    for (unsigned w = 0; w < threads; ++w) workers.emplace_back(grid, in.cells.size());

    McmlTallies t;
    t.kernel = "cpu";
    t.packetsRequested = opt.packets;
    t.packetsDone = forEachWorker(opt, threads, [&](unsigned w, PacketChunks& chunks) {
        HostMcmlScorer sc = workers[w].scorer;  // a local copy: no false sharing between workers
        runPacketLanes(model, opt.params, chunks, sc, uint32_t(in.materials.size()), crossing.data());
        workers[w].scorer = sc;
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
        t.ledger.add(w.scorer.ledger);
        t.events.add(w.scorer.events);
    }
    t.cancelled = t.packetsDone < opt.packets;
    t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return t;
}

}  // namespace fm
