// SPDX-License-Identifier: GPL-3.0-or-later
// Tcl-facing kernels with FullMonte's names and methods. All of them pack the model with
// Geometry/ModelPacker and run Kernels/Dispatch runKernel("cpu" | "cuda"); they differ only in
// which tallies they keep and how results are laid out in the OutputDataCollection.
#pragma once
#include <string>
#include <vector>

#ifndef SWIG
#include <atomic>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "Geometry/MaterialSet.hpp"
#include "Geometry/PackedModelCache.hpp"
#include "Geometry/Sources.hpp"
#include "Kernels/KernelInput.hpp"
#include "Tcl/TclOutputs.hpp"
#endif

class TetraMesh;
class MaterialSet;
class Source;
class OutputDataCollection;
class VolumeCellInRegionPredicate;

class Kernel {
public:
    virtual ~Kernel();
    void geometry(TetraMesh* m);
    TetraMesh* geometry() const;
    void materials(MaterialSet* ms);
    MaterialSet* materials() const;
    void source(Source* s);
    Source* source() const;
    void packetCount(double packets);  // a double so that 1e6 is accepted; must be a whole number
    unsigned long long packetCount() const;
    // Contiguous packet-index batches behind the standard errors (docs/TCL_API.md): default 10
    // (at most one per packet); 1 turns them off; more than packetCount is an error at run.
    void batchCount(double batches);
    unsigned long long batchCount() const;
    // Time-resolved tallies (docs/TIME_DOMAIN.md): gates of `step` ns from `start` to `stop`;
    // the run then also keeps its volume and exit tallies per gate (maps VolumeEnergyGate<k>,
    // ...Early, ...Late). timeGates 0 0 0 turns them off; timeGateCount is 0 then.
    void timeGates(double start, double stop, double step);
    std::string timeGates() const;
    unsigned timeGateCount() const;
    // Per-region gating: the gated volume maps only over the tetras of these regions ("1 3"; ""
    // = every tetra, the default); their other tetras read 0 in the VolumeEnergyGate* maps.
    void timeGateRegions(const std::string& ids);
    std::string timeGateRegions() const;
    void threadCount(unsigned threads);  // 0 = all hardware threads (the default)
    unsigned threadCount() const;
    void randSeed(unsigned long long seed);
    unsigned long long randSeed() const;
    void rouletteWMin(double wmin);
    double rouletteWMin() const;
    void roulettePrWin(double prwin);
    double roulettePrWin() const;
    void maxSteps(unsigned steps);
    unsigned maxSteps() const;
    void maxHits(unsigned hits);
    unsigned maxHits() const;
    void isEnergy_or_Power(const std::string& jw);  // "J" or "W"
    std::string isEnergy_or_Power() const;
    void energyPowerValue(double value);
    double energyPowerValue() const;

    void runSync();
    void startAsync();
    void finishAsync();
    bool done() const;
    double progressFraction() const;  // 0..1 while running, 1.0 once done (FullMonte: 100.0)
    OutputDataCollection* results() const;

    // Beyond FullMonte
    void progress(bool enabled);  // terminal progress bar in runSync (only shown on a terminal)
    bool progress() const;
    void cancel();           // stop an async run; finishAsync then raises an error
    bool running() const;
    double seconds() const;  // duration of the last run
    unsigned long long packetsDone() const;
    std::string device() const;  // "cpu" or "cuda"
    // GPUs a TetraCUDA* kernel's run is split over (issue 9): "0 1", "all"; default "0".
    void devices(const std::string& list);
    std::string devices() const;
    // TetraCUDA* kernels: the CPU's threads (threadCount; 0 = all but one per GPU) run packets of
    // the same run beside the GPUs where that pays (Kernels/Hybrid.hpp); default off.
    void hybrid(bool enabled);
    bool hybrid() const;
    unsigned long long cpuPacketsDone() const;  // of the last hybrid run: packets the CPU ran
#ifndef SWIG
    Kernel(const Kernel&) = delete;
    Kernel& operator=(const Kernel&) = delete;
    // A run's inputs, packed on the Tcl thread.
    struct Prepared {
        std::shared_ptr<const fm::TetraMesh> mesh;
        std::shared_ptr<const fm::MaterialSet> mats;
        std::shared_ptr<const fm::KernelInput> in;  // from the kernel's PackedModelCache
        fm::RunOptions opt;
    };
    const std::shared_ptr<fm::TetraMesh>& meshPtr() const { return mesh_; }
    const std::shared_ptr<MaterialSet>& materialsPtr() const { return materials_; }

    // What a run leaves behind; `collect` turns it into the output items on the Tcl thread.
    struct Outcome {
        bool cancelled = false;
        uint64_t done = 0, requested = 0;
        double seconds = 0;
        std::function<std::shared_ptr<const OutputDataCollection::Items>()> collect;
    };
    // A run, prepared on the Tcl thread (so model errors are raised there) and executed on the
    // worker with the kernel's options (progress and cancel filled in).
    using Job = std::function<Outcome(const fm::RunOptions&)>;

protected:
    Kernel(std::string className, std::string device, fm::OutputSelection outputs);
    virtual Job makeJob() const;  // the tetra-mesh run; MCMLKernel has its own
    // Faces whose crossings the directed tally records (both sides).
    virtual std::vector<uint32_t> directedFaces(const fm::TetraMesh& mesh) const;
    // Appends this kernel's maps after EventCounts and ConservationCounts.
    virtual void addMaps(OutputDataCollection::Items& items, const fm::RunResult& r, const Prepared& p) const;
    void addGatedMaps(OutputDataCollection::Items& items, const std::string& name, const std::string& type,
                      const std::vector<double>& gated, const std::vector<double>& se, const fm::RunResult& r,
                      const Prepared& p) const;
    virtual void checkRunnable() const {}
    void notRunning(const char* what) const;
    void checkDevice() const;
    // Checks and packs the model (raises model errors); used by makeJob and TetraTraceKernel.
    std::shared_ptr<Prepared> prepare() const;
    const fm::RunOptions& options() const { return opt_; }
    std::string className_;
    std::string device_;
    bool hybrid_ = false;
    mutable std::atomic<uint64_t> cpuPackets_{0};  // set by the run's job (makeJob is const)

private:
    void launch(Job job);
    std::shared_ptr<const OutputDataCollection::Items> collect(const fm::RunResult& r, const Prepared& p) const;
    void waitWithProgress();

    fm::OutputSelection outputs_;
    // The cells of the last run's mesh, reused by the next run on the same mesh (a runSync loop
    // over sources or material values packs only those).
    mutable fm::PackedModelCache packed_;
    std::shared_ptr<fm::TetraMesh> mesh_;
    std::shared_ptr<MaterialSet> materials_;
    fm::SourcePtr source_;
    fm::RunOptions opt_;
    std::vector<uint32_t> gateRegions_;  // timeGateRegions (empty: every tetra)
    // As given (the kernels take floats; getters should print what the script set). The
    // defaults are the core's (Kernels/Core/Records.hpp KernelParams).
    double wmin_ = 1e-5, prwin_ = 0.1;
    std::string energyUnit_ = "J";
    double energyValue_ = 1.0;
    bool progress_ = true;

    std::thread worker_;
    std::mutex endMutex_;             // with ended_: the worker tells a waiting runSync it is done
    std::condition_variable ended_;
    std::atomic<uint64_t> done_{0}, total_{0};
    std::atomic<bool> running_{false}, finished_{false}, cancel_{false};
    std::exception_ptr error_;
    Outcome outcome_;
    std::shared_ptr<const OutputDataCollection::Items> results_;
    double seconds_ = 0;
    uint64_t packetsDone_ = 0;
#endif
};

class TetraVolumeKernel : public Kernel {
public:
    TetraVolumeKernel();
#ifndef SWIG
protected:
    TetraVolumeKernel(std::string name, std::string device);
#endif
};

class TetraSurfaceKernel : public Kernel {
public:
    TetraSurfaceKernel();
#ifndef SWIG
protected:
    TetraSurfaceKernel(std::string name, std::string device);
#endif
};

// Volume + surface exit + directed energy on every face between two regions (index 4).
class TetraSVKernel : public Kernel {
public:
    TetraSVKernel();
#ifndef SWIG
protected:
    TetraSVKernel(std::string name, std::string device);
    std::vector<uint32_t> directedFaces(const fm::TetraMesh& mesh) const override;
    void addMaps(OutputDataCollection::Items& items, const fm::RunResult& r, const Prepared& p) const override;

private:
    // The faces between regions of the last run's mesh (TetraMesh::identity), for the next run.
    mutable uint64_t directedMesh_ = 0;
    mutable std::vector<uint32_t> directed_;
#endif
};

class DirectedSurfaceScorer;

// Volume + surface exit + one DirectedSurface output per scored region boundary (index 4 on).
class TetraInternalKernel : public Kernel {
public:
    TetraInternalKernel();
    DirectedSurfaceScorer* directedSurfaceScorer() const;
    void addScoringRegionBoundary(VolumeCellInRegionPredicate* p);
    void clearScoringRegionBoundaries();
#ifndef SWIG
protected:
    TetraInternalKernel(std::string name, std::string device);
    std::vector<uint32_t> directedFaces(const fm::TetraMesh& mesh) const override;
    void addMaps(OutputDataCollection::Items& items, const fm::RunResult& r, const Prepared& p) const override;
private:
    std::shared_ptr<std::vector<unsigned>> regions_;
#endif
};

class DirectedSurfaceScorer {
public:
    void addScoringRegionBoundary(VolumeCellInRegionPredicate* p);
    unsigned count() const;
#ifndef SWIG
    explicit DirectedSurfaceScorer(std::shared_ptr<std::vector<unsigned>> r) : r_(std::move(r)) {}
private:
    std::shared_ptr<std::vector<unsigned>> r_;
#endif
};

// TetraTraceKernel (packet traces) is in Tcl/TclTraces.hpp.

class TetraCUDAVolumeKernel : public TetraVolumeKernel {
public:
    TetraCUDAVolumeKernel();
};
class TetraCUDASurfaceKernel : public TetraSurfaceKernel {
public:
    TetraCUDASurfaceKernel();
};
class TetraCUDASVKernel : public TetraSVKernel {
public:
    TetraCUDASVKernel();
};
class TetraCUDAInternalKernel : public TetraInternalKernel {
public:
    TetraCUDAInternalKernel();
};

// Free functions for FullMonte.tcl (::FullMonte::cudaAvailable etc.).
bool FullMonte_cudaAvailable();
std::string FullMonte_cudaStatus();
unsigned FullMonte_hardwareThreads();
