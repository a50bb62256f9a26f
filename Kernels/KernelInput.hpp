// SPDX-License-Identifier: GPL-3.0-or-later
// What every kernel consumes and produces: packed records in, raw tallies out.
// Built by Geometry/ (ModelPacker, SourceCompiler); kernels never see files or meshes.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>
#include "Kernels/Core/ArrayModel.hpp"
#include "Kernels/Core/SlabModel.hpp"
#include "Kernels/TimeGates.hpp"
#include "Kernels/DetectedPackets.hpp"
#include "Kernels/Tuning.hpp"

namespace fm {

class PacketSource;  // Kernels/PacketSource.hpp

struct KernelInput {
    std::vector<TetraRecord> cells;         // index 0 is a dummy (the exterior)
    std::vector<MaterialRecord> materials;  // index 0 = exterior material
    std::vector<EmitterRecord> emitters;
    std::vector<double> emitterCdf;
    std::vector<Piece> pieces;
    std::vector<double> pieceCdf;
    uint32_t faceCount = 0;                 // face ids run 1..faceCount-1; 0 is a dummy
    // What the packer knows makes `cells` what they are (Geometry/ModelPacker: the mesh's
    // identity, the matched-boundary flag and the directed faces), or 0 when unknown: equal
    // non-zero values mean equal cells, so a GPU holding them need not hash them again
    // (Kernels/DeviceModelCache.hpp cellsKey). Code that changes `cells` must set it to 0.
    uint64_t cellsIdentity = 0;
    // A layered model (Geometry/Layered.hpp packLayered) also as slab cells, layer i = slabs[i]
    // (slabs[0] unused), for the MCML kernels; empty for meshes.
    std::vector<SlabCell> slabs;
    // What the source compiler found that a user must see (parts of sources outside the mesh,
    // a point on the surface...): one line each, shown by the CLI and Tcl, kept in summary.json.
    std::vector<std::string> warnings;

    ArrayModel view() const {
        return ArrayModel{cells.data(), materials.data(),
                          EmitterView{emitters.data(), emitterCdf.data(),
                                      uint32_t(emitters.size()), pieces.data(),
                                      pieceCdf.data()}};
    }
    SlabModel slabView() const {
        return SlabModel{slabs.data(), slabs.empty() ? 0u : uint32_t(slabs.size() - 1), materials.data(),
                         view().emitters};
    }
};

// Which tallies a run keeps. Each one off costs nothing (compile-time scorer selection).
struct OutputSelection {
    bool volume = true;    // VolumeEnergy per tetra
    bool surface = true;   // SurfaceExitEnergy per face id (boundary faces only are non-zero)
    bool directed = false; // DirectedSurfaceEnergy per face id and side (faces flagged in cells)
    // Per time gate (RunOptions::gates; Kernels/TimeGates.hpp): volume energy per tetra and
    // exit energy per exit (boundary) face, each of the gates plus an early and a late bin.
    bool gatedVolume = false;
    bool gatedSurface = false;
    bool gated() const { return gatedVolume || gatedSurface; }
};

// The most packets one run launches, whichever front end asks (command line, Tcl, Python; checked
// by validateRunOptions): 2^53 - 1, the largest count a double holds together with every smaller
// whole number, so a count read as a double (Tcl's packetCount, 1e6 in a script) is never a
// rounded one, and the conservation ledger's sums of whole packets stay exact.
constexpr uint64_t kMaxPackets = (uint64_t(1) << 53) - 1;

struct RunOptions {
    KernelParams params;
    uint64_t packets = 1000000;
    uint64_t firstPacket = 0;   // packet indices [firstPacket, firstPacket+packets): split runs
    unsigned threads = 0;       // 0 = all hardware threads
    std::vector<int> devices;   // CUDA devices (empty: device 0; {-1}: every device)
    OutputSelection outputs;
    // Contiguous packet-index batches for the standard errors (Kernels/BatchMeans.hpp): 1 turns
    // them off; at most `packets`; 0 = the default (kDefaultBatches, at most one per packet).
    // The CPU gives each worker thread its share (a run with more threads than batches has one
    // batch per thread).
    uint64_t batches = 0;
    // Called from a worker now and then with packets done so far; must be thread-safe.
    std::function<void(uint64_t done, uint64_t total)> progress;
    const std::atomic<bool>* cancel = nullptr;  // set to true to stop early
    TuningKnobs tuning;         // speed only: results do not depend on them (Kernels/Tuning.hpp)
    // Set by a hybrid run (Kernels/Hybrid.hpp) for each side: the packets come from it, block by
    // block; `packets` stays the run's total (batch sizes). The result's packetsRequested is
    // then what the side took.
    PacketSource* packetSource = nullptr;
    TimeGates gates;            // of the gated outputs (outputs.gatedVolume, gatedSurface)
    // Surface detectors (Kernels/Detection.hpp): when set and active, the run also records the
    // packets they detect (RunResult::detected); CPU kernel only.
    const DetectionSpec* detection = nullptr;
};

// Batch-means standard errors (Kernels/BatchMeans.hpp) of RunResult's tallies, element by
// element, in the tallies' units. Empty, with batches = 0, when there is no estimate: a run of
// one batch, or a cancelled run.
struct TallyErrors {
    uint64_t batches = 0;             // batches the estimate rests on
    std::vector<double> volume;       // [tetra]
    std::vector<double> surface;      // [face id]
    std::vector<double> directed;     // [2*face id + side]
    std::vector<double> gatedVolume;  // as RunResult::gatedVolume
    std::vector<double> gatedSurface; // as RunResult::gatedSurface
    std::vector<double> gatedVolumeTotals;   // [bin]: of the gated volume tally's sum over tetras
    std::vector<double> gatedSurfaceTotals;  // [bin]: of the gated exit tally's sum over its faces
    Ledger ledger;                    // of each ledger field
    bool available() const { return batches >= 2; }
};

struct RunResult {
    std::vector<double> volume;    // [tetra], energy in packet-weight units
    std::vector<double> surface;   // [face id]
    std::vector<double> directed;  // [2*face id + side]
    // Time-resolved tallies (empty unless selected): bin-major, bin b of element i at
    // [b * elements + i], elements = cells (tetras, index 0 the exterior; with per-region gating
    // the chosen tetras + 1, gates.tetras) or the exit faces + 1 (gates.faces: face id
    // faces[i], element 0 a dummy); bins as TimeGates (the gates, then early, then late), so the
    // sum over the bins of an element is its CW tally.
    TimeGates gates;
    std::vector<double> gatedVolume;   // [bin * cells + tetra]
    std::vector<double> gatedSurface;  // [bin * gates.faces->faces.size() + element]
    Ledger ledger;
    Events events;
    TallyErrors standardError;   // of volume, surface, directed and ledger
    DetectedPackets detected;    // runs with RunOptions::detection
    uint64_t packetsRequested = 0;
    uint64_t packetsDone = 0;
    double seconds = 0;          // whole run, wall clock
    double uploadSeconds = 0;    // GPU only: model upload
    double kernelSeconds = 0;    // GPU only: packet kernels
    double downloadSeconds = 0;  // GPU only: tallies back to the host
    int gpuBlocksPerSm = 0;      // GPU only: thread blocks per SM of the packet kernel (the
                                 // first device's: as many as fit, or tuning.cudaBlocksPerSm)
    bool cancelled = false;
    uint64_t cpuPackets = 0;       // hybrid runs: packets the CPU's threads ran (the rest: GPUs)
    std::string kernel;            // "cpu", "cuda" or "hybrid"
};

}  // namespace fm
