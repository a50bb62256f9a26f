// MCML mode on the GPU: the same engine and packet loop as the standard tallies, with the MCML
// scorer (r-z absorption, r-angle exits) accumulating through double atomics, over the slab
// geometry computed from the layer bounds (DeviceSlabModel): no cell records are read.
#include "Kernels/CUDA/CudaEngine.cuh"
#include "Kernels/McmlKernel.hpp"

#include <cstdlib>

namespace fm {

using namespace cuda_engine;

// Replicas of the (r, z) grid (FM_CUDA_RZ_REPLICAS overrides, for benchmarks).
uint32_t mcmlRzReplicas() {
    const char* e = std::getenv("FM_CUDA_RZ_REPLICAS");
    return e && std::atoi(e) > 0 ? uint32_t(std::atoi(e)) : 32u;
}

McmlTallies runMcmlCuda(const KernelInput& in, const McmlGrid& grid, const RunOptions& opt) {
    auto t0 = Clock::now();
    std::string why;
    if (!cudaDeviceAvailable(&why)) throw Error("kernel cuda: " + why);
    Stream s;
    DeviceInput dev(in, s);
    const size_t nrz = size_t(grid.nr) * grid.nz, nra = size_t(grid.nr) * grid.na;
    // Replicas (CudaEngine.cuh): every lane adds into the same few layer cells, and photons
    // deposit most of their weight in the (r, z) bins at the beam.
    const size_t nCells = in.cells.size();
    const uint32_t cellCopies = replicaCount(nCells, 256), rzCopies = replicaCount(nrz, mcmlRzReplicas());
    DeviceBuffer<double> rz(rzCopies * nrz, "A(r,z) grid"), rd(nra, "Rd(r,a) grid"), tt(nra, "Tt(r,a) grid");
    DeviceBuffer<double> cells(cellCopies * nCells, "per-layer absorption");
    DeviceBuffer<DeviceTotals> totals(1, "ledger");
    for (auto* b : {&rz, &rd, &tt, &cells}) b->zero(s);
    totals.zero(s);

    McmlScorer<DeviceAtomicAdd, uint32_t> sc;
    sc.absorbedRZ = rz.get();
    sc.reflectedRA = rd.get();
    sc.transmittedRA = tt.get();
    sc.absorbedCell = cells.get();
    sc.grid = grid;
    const std::vector<float> z = slabBounds(in);
    DeviceBuffer<float> zDev(z.size(), "layer bounds");
    zDev.upload(z, s);
    DeviceSlabModel m;
    m.z = nullptr;  // set per block to the shared copy (DeviceSlabModel::enterBlock)
    m.layers = uint32_t(z.size() - 2);
    m.materials = nullptr;
    m.emitters = dev.model().emitters;
    m.zGlobal = zDev.get();
    BlockTallies bt;
    bt.replicate(0, sc.absorbedCell, nCells, cellCopies).replicate(1, sc.absorbedRZ, nrz, rzCopies);
    BatchRun b = launchBatches(m, opt, sc, totals.get(), uint32_t(in.materials.size()), s, bt);

    McmlTallies t;
    t.kernel = "cuda";
    t.packetsRequested = opt.packets;
    t.packetsDone = b.packetsDone;
    t.cancelled = b.packetsDone < opt.packets;
    t.absorbedRZ = downloadFolded(rz, nrz, s);
    t.reflectedRA = rd.download(s);
    t.transmittedRA = tt.download(s);
    t.absorbedCell = downloadFolded(cells, nCells, s);
    RunResult r;
    totalsToResult(totals.download(s)[0], r);
    t.ledger = r.ledger;
    t.events = r.events;
    t.seconds = since(t0);
    return t;
}

}  // namespace fm
