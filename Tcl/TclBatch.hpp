// SPDX-License-Identifier: GPL-3.0-or-later
// BatchRunner: a batch of runs over one mesh from Tcl (Kernels/Batch.hpp) — one run per source
// (and per material set, for a sweep), the mesh packed once, also across runSync calls (and
// uploaded once per GPU). Each run's results are an OutputDataCollection laid out as
// TetraSVKernel's without the directed map (EventCounts, ConservationCounts, VolumeEnergy,
// SurfaceExitEnergy), and the whole batch can be written as a fluence matrix
// (docs/FLUENCE_MATRIX.md):
//
//   BatchRunner B
//   B geometry $M; B materials MS; B source S1; B source S2; B packetCount 1e6
//   B runSync
//   set odc [B result 1]            ;# run 1 = source S2 (run = materialSet * sources + source)
//   B fluenceMatrix out/phi.fmm     ;# tetras x runs; out/phi.h5 writes HDF5 (HDF5 builds)
#pragma once
#include <string>

#ifndef SWIG
#include <memory>
#include <vector>

#include "Geometry/MaterialSet.hpp"
#include "Geometry/ModelFingerprint.hpp"
#include "Geometry/PackedModelCache.hpp"
#include "Geometry/Sources.hpp"
#include "Geometry/TetraMesh.hpp"
#include "Kernels/KernelInput.hpp"
#endif

class TetraMesh;
class MaterialSet;
class Source;
class OutputDataCollection;

class BatchRunner {
public:
    BatchRunner();
    ~BatchRunner();
    void geometry(TetraMesh* m);
    TetraMesh* geometry() const;
    void materials(MaterialSet* ms);     // the one material set (replaces any sweep)
    MaterialSet* materials() const;      // the first material set
    void addMaterials(MaterialSet* ms);  // one more material set of a sweep
    unsigned materialSetCount() const;
    void source(Source* s);              // one more source: one more run per material set
    unsigned sourceCount() const;
    void clearSources();
    void packetCount(double packets);          // per run
    unsigned long long packetCount() const;
    void threadCount(unsigned threads);        // CPU threads per run (0 = all)
    unsigned threadCount() const;
    void randSeed(unsigned long long seed); // every run uses it: run i = the single run of its source
    unsigned long long randSeed() const;
    void rouletteWMin(double wmin);
    double rouletteWMin() const;
    void roulettePrWin(double prwin);
    double roulettePrWin() const;
    void maxSteps(unsigned steps);
    unsigned maxSteps() const;
    void maxHits(unsigned hits);
    unsigned maxHits() const;
    void kernel(const std::string& k);   // "cpu" (default) or "cuda"
    std::string kernel() const;
    void devices(const std::string& list);  // CUDA devices: "0 1", "all"; "" = device 0
    std::string devices() const;
    void progress(bool enabled);
    bool progress() const;
    // Time gates of every run (as Kernel timeGates; 0 0 0 turns them off): each run's result then
    // holds VolumeEnergyGate<k>/Early/Late and SurfaceExitEnergyGate* maps.
    void timeGates(double start, double stop, double step);
    std::string timeGates() const;
    // Per-region gating (as Kernel timeGateRegions; "" = every tetra): the gated volume maps hold
    // the tetras of these regions, 0 elsewhere.
    void timeGateRegions(const std::string& ids);
    std::string timeGateRegions() const;

    void runSync();
    unsigned runCount() const;           // results held (after runSync)
    OutputDataCollection* result(unsigned run) const;
    double seconds() const;
    // Where the last runSync's seconds went, a dict: setup_seconds kernel_busy_seconds
    // kernel_gap_seconds tail_seconds deliver_seconds slot_idle_seconds slot_held_seconds.
    std::string timeSplit() const;
    std::string runsPerRank() const;
    // Times the mesh's cells were packed: once per mesh however many runSync calls (the cells
    // are kept; a runSync packs only the materials and sources).
    unsigned long long meshPacks() const;
    // Fluence per tetra per unit emitted energy (1/mm^2 for a mesh in mm), tetras x runs; a name
    // ending in .h5 writes HDF5 (where built), anything else the binary format.
    void fluenceMatrix(const std::string& file) const;
#ifndef SWIG
    BatchRunner(const BatchRunner&) = delete;
    BatchRunner& operator=(const BatchRunner&) = delete;
    // The sources of the last runSync, in run order (PlanOptimizer draws and names them).
    const std::vector<fm::SourcePtr>& sourcesRun() const { return ranSources_; }

private:
    void notRun() const;
    std::shared_ptr<fm::TetraMesh> mesh_;
    std::vector<std::shared_ptr<MaterialSet>> materials_;
    std::vector<fm::SourcePtr> sources_;
    fm::RunOptions opt_;
    double wmin_ = 1e-5, prwin_ = 0.1;
    std::vector<uint32_t> gateRegions_;  // timeGateRegions (empty: every tetra)
    fm::PackedModelCache packed_;        // the mesh's cells, kept between runSync calls
    std::string kernel_ = "cpu";
    bool progress_ = true;
    // After a run: the packed material sets and each run's result.
    std::vector<std::shared_ptr<const fm::MaterialSet>> built_;
    std::shared_ptr<const fm::TetraMesh> runMesh_;
    std::vector<std::shared_ptr<const fm::RunResult>> results_;
    size_t sourcesRun_ = 0;
    std::vector<fm::SourcePtr> ranSources_;
    fm::ModelFingerprint model_;  // of the last runSync's model (the matrix file carries it)
    double seconds_ = 0;
    std::string timeSplit_;
    std::vector<size_t> perRank_;
#endif
};
