// SPDX-License-Identifier: GPL-3.0-or-later
// Standard tallies on the GPU: thin glue over Kernels/CUDA/CudaEngine.cuh and Kernels/Core.
#include "Kernels/CUDA/CudaEngine.cuh"
#include "Kernels/CUDA/BatchFold.cuh"
#include "Kernels/CUDA/GateTotalsFold.cuh"
#include <atomic>
#include <cstdlib>
#include <memory>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <utility>
#include <thread>

#include "Common/ParallelFor.hpp"
#include "Kernels/Core/TallyScorer.hpp"
#include "Kernels/DeviceModelCache.hpp"
#include "Kernels/GatedTally.hpp"
#include "Kernels/DeviceVisibility.hpp"
#include "Kernels/MPI/MpiRun.hpp"
#include "Kernels/PacketSource.hpp"

namespace fm {

using namespace cuda_engine;

bool cudaDeviceAvailable(std::string* why) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        const std::string note = visibleDevicesNote();
        if (why) *why = (e != cudaSuccess ? std::string("no usable CUDA device: ") + cudaGetErrorString(e)
                                          : std::string("no CUDA device present")) +
                        (note.empty() ? std::string() : " (" + note + ")");
        cudaGetLastError();
        return false;
    }
    return true;
}


namespace {

// One GPU's share of a run: the mesh uploaded once, tallies and ledger accumulated over every
// packet range it is given, then added into the result. A batch keeps it and swaps materials
// and sources between runs (load), so the mesh crosses PCIe once per device.
class DeviceRun {
public:
    DeviceRun(const KernelInput& mesh, const OutputSelection& o, CellLayout layout,
              std::shared_future<HostCellArrays> made = {})
        : o_(o), mesh_(mesh.cells, s_, layout, std::move(made)), nVol_(o.volume ? mesh.cells.size() : 0), nSurf_(o.surface ? mesh.faceCount : 0),
          nDir_(o.directed ? 2 * size_t(mesh.faceCount) : 0), stride_(nVol_ + nSurf_ + nDir_),
          copies_(meshTallyCopies(stride_)),
          tallies_(stride_ * copies_, "tallies"), totals_(1, "ledger"), rare_(kRareLedgerCopies, "ledger replicas") {
        clear();
    }
    // Materials and sources of the next run; tallies start from zero.
    void load(const std::vector<MaterialRecord>& mats, const std::vector<EmitterRecord>& e,
              const std::vector<double>& ecdf, const std::vector<Piece>& p, const std::vector<double>& pcdf) {
        if (src_ && src_->emitters.size() == e.size() && src_->emitterCdf.size() == ecdf.size() &&
            src_->pieces.size() == p.size() && src_->pieceCdf.size() == pcdf.size()) {
            src_->emitters.upload(e, s_);  // the same shapes (e.g. one point source per run): no reallocation
            src_->emitterCdf.upload(ecdf, s_);
            src_->pieces.upload(p, s_);
            src_->pieceCdf.upload(pcdf, s_);
        } else {
            src_.reset();
            src_ = std::make_unique<DeviceSources>(e, ecdf, p, pcdf, s_);
        }
        if (loads_++ > 0) pinDownloads();
        materials_.release();  // before waiting for another table: a run never waits for itself
        materials_ = holdMaterials(mats, s_);
        nMaterials_ = uint32_t(mats.size());
        clear();
    }
    void load(const KernelInput& in) { load(in.materials, in.emitters, in.emitterCdf, in.pieces, in.pieceCdf); }
    // The time gates of the next runs (Kernels/GatedTally.hpp): their arrays allocated (or kept,
    // at the same size) and zeroed; none when `o` selects no gated output. A gated run's
    // DeviceRun keeps the volume and exit tallies (gatedOutputs). `gates` has its exit faces
    // (withExitFaces) where o.gatedSurface.
    void setGates(const OutputSelection& o, const TimeGates& gates, size_t cells) {
        if (o.gatedSurface && !gates.faces) throw Error("a time-gated exit tally without its exit faces (withExitFaces)");
        gates_ = gates;
        gatedCells_ = gatedVolumeStride(gates_, cells);
        nGV_ = o.gatedVolume ? size_t(gates_.bins()) * gatedCells_ : 0;
        keepSlots(gatedSlot_, gatedSlotsOf_, nGV_ ? gates_.tetras : nullptr, "time gate regions");
        gatedFaceCount_ = o.gatedSurface ? gatedSurfaceStride(gates_) : 0;
        nGS_ = size_t(gates_.bins()) * gatedFaceCount_;
        keepSlots(gatedFaceSlot_, gatedFaceSlotsOf_, nGS_ ? gates_.faces : nullptr, "gated exit faces");
        if (!gated_ || gated_->size() != nGV_ + nGS_) {
            gated_.reset();
            gatedFolds_.reset();
            if (nGV_ + nGS_) gated_ = std::make_unique<DeviceBuffer<double>>(nGV_ + nGS_, "time-gated tallies");
        }
        if (gated_) gated_->zero(s_);
        if (gatedFolds_) gatedFolds_->clear(s_);
        gateTotalFolds_.reset();  // the bins may have changed with the gates
    }
    // A gated tally's element map on the device (per-region gating's tetra -> element, the exit
    // faces' face id -> element; none: null), uploaded only where it differs from the map
    // already there: a batch's runs share one, and it crosses PCIe once.
    template <class Map>
    void keepSlots(std::unique_ptr<DeviceBuffer<int32_t>>& buf, std::shared_ptr<const Map>& of,
                   const std::shared_ptr<const Map>& m, const char* what) {
        if (!m) {
            buf.reset();
            of.reset();
            return;
        }
        if (buf && of && (of == m || of->slot == m->slot)) return;
        if (!buf || buf->size() != m->slot.size()) buf = std::make_unique<DeviceBuffer<int32_t>>(m->slot.size(), what);
        buf->upload(m->slot, s_);
        of = m;
    }
    // The packets of `part`, or with a feed its batches (BatchFeed: two slots of tallies and
    // ledger; not for gated runs, whose arrays have one slot).
    BatchRun run(const RunOptions& part, BatchFeed* feed = nullptr) {
        BatchRun b;
        if (nGV_ + nGS_) {
            // The pack has no VolumeTally: the gated tally's cache serves the CW volume tally too
            // (cwVolume), or, with every tetra gated, the CW volume is the sum of the bins.
            auto gatedRun = [&](auto D) {
                TallyScorer<false, true, decltype(D)::value, DeviceAtomicAdd, uint32_t, TimeGatedTally<DeviceAtomicAdd>> sc;
                sc.surface = tallies_.get() + nVol_;
                if constexpr (decltype(D)::value) sc.directed = tallies_.get() + nVol_ + nSurf_;
                sc.setReplicas(copies_ - 1, uint32_t(stride_));
                sc.gatedVolume = nGV_ ? gated_->get() : nullptr;
                sc.gatedSurface = nGS_ ? gated_->get() + nGV_ : nullptr;
                sc.gatedSlot = gatedSlot_ ? gatedSlot_->get() : nullptr;
                sc.gatedCells = uint32_t(gatedSlot_ ? gatedCells_ : nVol_);
                sc.gatedFaceSlot = gatedFaceSlot_ ? gatedFaceSlot_->get() : nullptr;
                sc.gatedFaces = uint32_t(gatedFaceCount_);
                sc.gates = gateBins(gates_);
                if (!volumeFromBins()) {
                    sc.cwVolume = tallies_.get();
                    sc.cwReplicas = TallyReplicas{copies_ - 1, uint32_t(stride_)};
                }
                const BlockTallies bt = BlockTallies::rows(nullptr, 0, sc.surface, nSurf_);
                const LaunchTarget<decltype(sc)> t{sc, totals_.get(), bt, rare_.get()};
                withDeviceModel(mesh_, src_->view(), [&](const auto& m) {
                    b = launchBatches(m, part, LaunchTargets<decltype(sc)>{t, t}, nMaterials_, s_, &scratch_);
                });
                if (volumeFromBins()) sumGateBins(gated_->get(), gates_.bins(), nVol_, tallies_.get(), s_);
            };
            if (o_.directed) gatedRun(std::true_type{});
            else gatedRun(std::false_type{});
            return b;
        }
        if (feed) slot1_.use(stride_ * copies_, s_);
        dispatchOutputs(o_.volume, o_.surface, o_.directed, [&](auto V, auto S, auto D) {
            using Scorer = TallyScorer<decltype(V)::value, decltype(S)::value, decltype(D)::value, DeviceAtomicAdd, uint32_t>;
            // Slot i's launches: its tallies (copies_ replicas), ledger totals and rare fields.
            auto target = [&](double* tallies, DeviceTotals* totals, Ledger* rare) {
                Scorer sc;
                double* vol = nVol_ ? tallies : nullptr;
                double* surf = nSurf_ ? tallies + nVol_ : nullptr;
                if constexpr (decltype(V)::value) sc.volume = vol;
                if constexpr (decltype(S)::value) sc.surface = surf;
                if constexpr (decltype(D)::value) sc.directed = nDir_ ? tallies + nVol_ + nSurf_ : nullptr;
                sc.setReplicas(copies_ - 1, uint32_t(stride_));
                return LaunchTarget<Scorer>{sc, totals, BlockTallies::rows(vol, nVol_, surf, nSurf_), rare};
            };
            const LaunchTarget<Scorer> t0 = target(tallies_.get(), totals_.get(), rare_.get());
            const LaunchTargets<Scorer> t{t0, feed ? target(slot1_.tallies.get(), slot1_.totals.get(), slot1_.rare.get()) : t0};
            withDeviceModel(mesh_, src_->view(), [&](const auto& m) {
                b = launchBatches(m, part, t, nMaterials_, s_, &scratch_, feed);
            });
        });
        return b;
    }
    // A gated run that gates every tetra's volume: its CW volume tally is the sum of the gated
    // bins (the early and late ones included), made after each run of packets, instead of a
    // second add per deposit.
    bool volumeFromBins() const { return nGV_ && !gatedSlot_ && nVol_; }
    // Whether this device can run batches back to back (runFed): the run is not gated, and the
    // second slot's tallies and the folds' two slots fit in its memory (allocated here, kept).
    // Where they do not (a mesh near the device's capacity), the batches run one at a time
    // (runBatch) in one slot.
    bool canFeed() {
        if (nGV_ + nGS_) return false;
        try {
            slot1_.reserve(stride_ * copies_);
            folds(2);
            return true;
        } catch (const Error&) {
            return false;
        }
    }
    // Batches of the standard errors back to back (BatchFeed), each folded when done: the
    // packets next(first, n) gives, batch by batch; finished(done, running) after each launch.
    // Only where canFeed() said so.
    template <class Next, class Finished>
    BatchRun runFed(const RunOptions& opt, Next next, Finished finished) {
        struct Feed final : BatchFeed {
            DeviceRun& d;
            Next next_;
            Finished finished_;
            Feed(DeviceRun& r, Next n, Finished f) : d(r), next_(std::move(n)), finished_(std::move(f)) {}
            bool next(uint64_t& first, uint64_t& n) override { return next_(first, n); }
            void fold(uint64_t index, uint64_t packets, cudaStream_t s) override {
                const unsigned slot = unsigned(index & 1);
                d.folds(2).fold(slot ? d.slot1_.tallies.get() : d.tallies_.get(), d.copies_, packets, s, slot);
                d.stageLedger(slot, s);
            }
            void settle(uint64_t index, uint64_t packets, cudaStream_t s) override {
                d.folds(2).foldLedger(d.stagedLedger(s), packets, unsigned(index & 1));
            }
            void finished(uint64_t done, bool running) override { finished_(done, running); }
        };
        Feed feed(*this, std::move(next), std::move(finished));
        folds(2);  // made (and zeroed on s_) before the launches and folds start: canFeed
        return run(opt, &feed);
    }
    // run(part) as one batch of the standard errors (Kernels/CUDA/BatchFold.cuh): folded when
    // it completes.
    BatchRun runBatch(const RunOptions& part) {
        BatchRun b = run(part);
        if (b.packetsDone == part.packets) {
            folds().fold(tallies_.get(), copies_, b.packetsDone, s_);
            folds().foldLedger(ledgerNow(), b.packetsDone);
            if (gated_) gatedFolds().fold(gated_->get(), 1, b.packetsDone, s_);
            if (gated_) gateTotalFolds().fold(*gated_, b.packetsDone, s_);
        }
        return b;
    }
    // This device's batch sums, for the standard errors.
    BatchSums batchSums() {
        DeviceBatchFold& f = folds();
        BatchSums sums;  // each array straight from the device into its own vector
        sums.volume.resize(nVol_);
        sums.surface.resize(nSurf_);
        sums.directed.resize(nDir_);
        f.qInto(sums.volume.data(), 0, nVol_, s_);
        f.qInto(sums.surface.data(), nVol_, nSurf_, s_);
        f.qInto(sums.directed.data(), nVol_ + nSurf_, nDir_, s_);
        if (gated_) {
            sums.gatedVolume.resize(nGV_);
            sums.gatedSurface.resize(nGS_);
            gatedFolds().qInto(sums.gatedVolume.data(), 0, nGV_, s_);
            gatedFolds().qInto(sums.gatedSurface.data(), nGV_, nGS_, s_);
        }
        cudaCheck(cudaStreamSynchronize(s_), "download");
        sums.ledger = f.ledgerQ();
        sums.batches = f.batches();
        if (gated_) {
            sums.gatedVolumeTotals = gateTotalFolds().volumeQ();
            sums.gatedSurfaceTotals = gateTotalFolds().exitQ();
        }
        return sums;
    }
    void addTo(RunResult& r) {
        auto add = [](std::vector<double>& into, const double* v, size_t n) {
            if (into.empty()) into.assign(v, v + n);
            else for (size_t i = 0; i < n; ++i) into[i] += v[i];
        };
        if (pinning_.valid()) pinning_.get();
        if (slot1_.used) {  // a fed run's second slot: added into the first replica of the first
            foldReplicas(slot1_.tallies, stride_, s_);
            addArrays(tallies_.get(), slot1_.tallies.get(), stride_, s_);
        }
        const double* t = downloadFoldedInto(tallies_, stride_, s_, pinned_);
        add(r.volume, t, nVol_);
        add(r.surface, t + nVol_, nSurf_);
        add(r.directed, t + nVol_ + nSurf_, nDir_);
        if (gated_) {  // straight into the result's arrays where they are empty (no copy of 8 B x bins x elements)
            auto take = [&](std::vector<double>& into, size_t from, size_t n) {
                std::vector<double> part;
                std::vector<double>& to = into.empty() ? into : part;
                to.resize(n);
                gated_->downloadTo(to.data(), n, s_, from);
                cudaCheck(cudaStreamSynchronize(s_), "download");
                if (&to == &part) add(into, part.data(), n);
            };
            take(r.gatedVolume, 0, nGV_);
            take(r.gatedSurface, nGV_, nGS_);
            r.gates = gates_;
        }
        // Each slot's ledger and event counts (the second only after a fed run).
        auto addSlot = [&](const DeviceBuffer<DeviceTotals>& totals, const DeviceBuffer<Ledger>& rare) {
            RunResult part;
            totalsToResult(totals.download(s_)[0], part);
            r.ledger.add(part.ledger);
            for (const Ledger& l : rare.download(s_)) r.ledger.add(l);
            r.events.add(part.events);
        };
        addSlot(totals_, rare_);
        if (slot1_.used) addSlot(slot1_.totals, slot1_.rare);
        materials_.release();  // the run's kernels are done (its tallies are downloaded)
    }
    // The page-locked buffer of the tallies' way back, reserved on a thread of its own (once):
    // a copy from page-locked memory saves a staged copy per run and does not contend with the
    // other devices' downloads, but cudaMallocHost takes milliseconds and the driver serialises
    // it with every device's calls (their uploads and material tables, their launches). So it is
    // asked for where nothing waits on it: by the second run a DeviceRun serves (a batch, a
    // loop, a kept model) and by runCuda while a launch is queued behind one that has finished;
    // a short single run downloads through ordinary memory. On the device thread only.
    void pinDownloads() {
        if (pinAsked_) return;
        pinAsked_ = true;
        int device = 0;
        cudaCheck(cudaGetDevice(&device), "current device");
        pinning_ = std::async(std::launch::async, [this, device, n = std::max<size_t>(stride_, 1)] {
            if (cudaSetDevice(device) == cudaSuccess) pinned_.reserve(n);
            cudaGetLastError();  // a refusal leaves the ordinary buffer, as reserve does
        });
    }

private:
    static Ledger ledgerOf(const DeviceBuffer<DeviceTotals>& totals, const DeviceBuffer<Ledger>& rare, cudaStream_t s) {
        RunResult part;
        totalsToResult(totals.download(s)[0], part);
        for (const Ledger& l : rare.download(s)) part.ledger.add(l);
        return part.ledger;
    }
    Ledger ledgerNow() { return ledgerOf(totals_, rare_, s_); }
    // A fed run's ledger of slot `slot` copied on s (after its batch, before the slot's next),
    // and read back once s has run it.
    void stageLedger(unsigned slot, cudaStream_t s) {
        if (!staged_.totals.size()) {
            staged_.totals.allocate(1, "ledger");
            staged_.rare.allocate(kRareLedgerCopies, "ledger replicas");
        }
        const DeviceTotals* t = slot ? slot1_.totals.get() : totals_.get();
        const Ledger* r = slot ? slot1_.rare.get() : rare_.get();
        cudaCheck(cudaMemcpyAsync(staged_.totals.get(), t, sizeof(DeviceTotals), cudaMemcpyDeviceToDevice, s), "ledger");
        cudaCheck(cudaMemcpyAsync(staged_.rare.get(), r, kRareLedgerCopies * sizeof(Ledger), cudaMemcpyDeviceToDevice, s),
                  "ledger");
    }
    Ledger stagedLedger(cudaStream_t s) { return ledgerOf(staged_.totals, staged_.rare, s); }
    void clear() {
        tallies_.zero(s_);
        totals_.zero(s_);
        rare_.zero(s_);
        slot1_.used = false;
        if (folds_) folds_->clear(s_);
        if (gated_) gated_->zero(s_);
        if (gatedFolds_) gatedFolds_->clear(s_);
        if (gateTotalFolds_) gateTotalFolds_->clear();
        cudaCheck(cudaStreamSynchronize(s_), "upload");
    }
    OutputSelection o_;
    Stream s_;
    DeviceMesh mesh_;
    std::unique_ptr<DeviceSources> src_;
    uint32_t nMaterials_ = 0;
    MaterialTableSent::Lease materials_;  // from load until the run's tallies are downloaded
    LaunchScratch scratch_;  // the launches' second stream, counters and events, kept between runs
    PinnedHost<double> pinned_;  // the tallies' way back to the host, kept between runs
    std::future<void> pinning_;  // pinned_ being reserved (waited for by addTo and the destructor)
    unsigned loads_ = 0;         // runs loaded (pinDownloads from the second on)
    bool pinAsked_ = false;      // pinDownloads has started
    // The tallies, volume then surface then directed (the ones selected), in copies_ replicas of
    // stride_ doubles: TallyScorer spreads its atomics over them, and they are summed on the
    // device at the end. A model small enough for
    // per-thread rows (BlockTallies) adds its rows' sums into the first replica; the others stay
    // zero.
    size_t nVol_, nSurf_, nDir_, stride_;
    uint32_t copies_;
    DeviceBuffer<double> tallies_;
    DeviceBuffer<DeviceTotals> totals_;
    DeviceBuffer<Ledger> rare_;  // the ledger's fields booked by reductions (SplitLedgerScorer)
    // A fed run's second slot (BatchFeed): tallies, totals and rare fields as above, allocated by
    // the first fed run and added into the first slot's by addTo.
    struct Slot {
        DeviceBuffer<double> tallies;
        DeviceBuffer<DeviceTotals> totals;
        DeviceBuffer<Ledger> rare;
        bool used = false;  // by a run since the last clear
        void reserve(size_t n) {
            tallies.resize(n, "the second slot of batched tallies");
            if (!totals.size()) {
                totals.allocate(1, "ledger");
                rare.allocate(kRareLedgerCopies, "ledger replicas");
            }
        }
        // Ready for a run with n doubles of tallies, zeroed on s, unless a run already uses it.
        void use(size_t n, cudaStream_t s) {
            if (used) return;
            reserve(n);
            tallies.zero(s);
            totals.zero(s);
            rare.zero(s);
            used = true;
        }
    } slot1_;
    struct {
        DeviceBuffer<DeviceTotals> totals;
        DeviceBuffer<Ledger> rare;
    } staged_;  // a fed run's ledger of the batch being folded
    // The standard errors' sums, allocated by the first batched run: a run without batches
    // leaves the device's memory as it was without them.
    std::unique_ptr<DeviceBatchFold> folds_;
    // Time-gated runs (setGates): the gated volume then exit arrays, one copy (no replicas), and
    // their folds.
    TimeGates gates_;
    size_t nGV_ = 0, nGS_ = 0;
    std::unique_ptr<DeviceBuffer<double>> gated_;
    std::unique_ptr<DeviceBuffer<int32_t>> gatedSlot_;  // per-region gating's map, or null
    std::shared_ptr<const GatedTetras> gatedSlotsOf_;    // the map gatedSlot_ holds
    std::unique_ptr<DeviceBuffer<int32_t>> gatedFaceSlot_;  // the gated exit tally's face map, or null
    std::shared_ptr<const GatedFaces> gatedFaceSlotsOf_;    // the map gatedFaceSlot_ holds
    size_t gatedFaceCount_ = 0;                             // the gated exit array's elements per bin
    size_t gatedCells_ = 0;                             // gated volume elements per bin
    std::unique_ptr<DeviceBatchFold> gatedFolds_;
    DeviceBatchFold& gatedFolds() {
        if (!gatedFolds_) {
            gatedFolds_ = std::make_unique<DeviceBatchFold>(nGV_ + nGS_);
            gatedFolds_->clear(s_);
        }
        return *gatedFolds_;
    }
    // The folds of the gated tallies' per-bin totals (their standard errors), as gatedFolds_.
    std::unique_ptr<DeviceGateTotalsFold> gateTotalFolds_;
    DeviceGateTotalsFold& gateTotalFolds() {
        if (!gateTotalFolds_) gateTotalFolds_ = std::make_unique<DeviceGateTotalsFold>(gates_.bins(), nGV_, nGS_);
        return *gateTotalFolds_;
    }
    // The batch folds, with room for `slots` slots of tallies (a fed run's two; kept once made).
    DeviceBatchFold& folds(unsigned slots = 1) {
        if (!folds_ || foldSlots_ < slots) {
            folds_.reset();
            folds_ = std::make_unique<DeviceBatchFold>(stride_, slots);
            foldSlots_ = slots;
            folds_->clear(s_);
        }
        return *folds_;
    }
    unsigned foldSlots_ = 0;
};

std::vector<int> resolveDevicesImpl(const std::vector<int>& requested) {
    int n = 0;
    cudaCheck(cudaGetDeviceCount(&n), "count devices");
    std::vector<int> ds = requested;
    if (ds.empty()) ds.push_back(0);
    if (ds.size() == 1 && ds[0] < 0) {  // -1: every device of the host
        ds.clear();
        for (int d = 0; d < n; ++d) ds.push_back(d);
    }
    const std::string note = visibleDevicesNote();
    for (int d : ds)
        if (d < 0 || d >= n)
            throw Error("CUDA device " + std::to_string(d) + " does not exist (" + std::to_string(n) + " present" +
                        (note.empty() ? std::string() : "; " + note) + ")");
    return ds;
}

// Uploaded models kept between runs (Kernels/DeviceModelCache.hpp). Never destroyed: at the
// process's exit the driver frees device memory anyway, and a static destructor would run after
// the CUDA runtime has shut down.
DeviceModelCache<DeviceRun>& deviceRunCache() {
    static auto* cache = new DeviceModelCache<DeviceRun>;
    return *cache;
}


DeviceModelKey deviceRunKey(int device, const KernelInput& mesh, const OutputSelection& o,
                            CellLayout layout = CellLayout::Record) {
    DeviceModelKey k;
    k.device = device;
    k.cells = mesh.cells.size();
    k.faces = mesh.faceCount;
    k.outputs = (o.volume ? 1u : 0u) | (o.surface ? 2u : 0u) | (o.directed ? 4u : 0u) | (o.gated() ? 8u : 0u);
    if (layout == CellLayout::Split) k.outputs |= 16u;  // a mesh uploaded in another layout is not reused
    if (layout == CellLayout::Compact) k.outputs |= 32u;
    return k;
}
// The cells' key (cellsKey). With the packer's identity it costs microseconds and is taken when
// needed; without, their content hash is computed on another thread while the mesh uploads and
// the run goes, and waited for before the upload only where the device holds a model of the
// same sizes. `mesh` must outlive the future (its last copy waits for the hash when destroyed).
std::shared_future<uint64_t> cellsHash(const KernelInput& mesh) {
    auto key = [&mesh] { return cellsKey(mesh.cells.data(), mesh.cells.size(), sizeof(TetraRecord), mesh.cellsIdentity); };
    if (mesh.cellsIdentity) return std::async(std::launch::deferred, key).share();
    return std::async(std::launch::async | std::launch::deferred, key).share();  // deferred: no thread to spare
}

// The model of `key` on the current device: the cached one, or a new upload (its cell arrays
// from `made` where valid: made for this layout). Fills key.hash.
std::unique_ptr<DeviceRun> takeDeviceRun(DeviceModelKey& key, std::shared_future<uint64_t> hash, const KernelInput& mesh,
                                         const OutputSelection& o, CellLayout layout = CellLayout::Record,
                                         std::shared_future<HostCellArrays> made = {}) {
    std::unique_ptr<DeviceRun> stale;
    if (deviceRunCache().mayMatch(key)) key.hash = hash.get();
    std::unique_ptr<DeviceRun> r = deviceRunCache().take(key, &stale);
    stale.reset();  // another mesh's memory freed before this one is allocated
    if (r) return r;
    r = std::make_unique<DeviceRun>(mesh, o, layout, std::move(made));
    deviceRunCache().built();
    return r;
}
// Back into the cache after a clean run (the current device is key.device).
void giveDeviceRun(DeviceModelKey key, std::shared_future<uint64_t> hash, std::unique_ptr<DeviceRun> r) {
    key.hash = hash.get();
    deviceRunCache().give(key, std::move(r)).reset();
}

}  // namespace

// The L2 size of `device` in bytes, asked of the runtime once per device in a process (it never
// changes, and a planning loop chooses a layout at every run). False where the device cannot be
// asked (not kept: asked again next time).
bool deviceL2Bytes(int device, double& l2Bytes) {
    static std::mutex m;
    static std::map<int, double> known;
    std::lock_guard<std::mutex> lock(m);
    auto it = known.find(device);
    if (it == known.end()) {
        int l2 = 0;
        if (cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device) != cudaSuccess) {
            (void)cudaGetLastError();
            return false;
        }
        it = known.emplace(device, double(l2)).first;
    }
    l2Bytes = it->second;
    return true;
}

CellLayout cudaCellLayoutFor(CellLayout wanted, size_t cells, int device) {
    if (wanted != CellLayout::Auto) return wanted;
    double l2 = 0;
    if (!deviceL2Bytes(device, l2)) return CellLayout::Record;
    return chooseCellLayout(wanted, cells, l2);
}

CudaModelCacheStats cudaModelCacheStats() {
    return CudaModelCacheStats{deviceRunCache().builds(), deviceRunCache().reuses()};
}

void cudaReleaseCachedModels() {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return;
    }
    for (int d = 0; d < n; ++d) {
        std::unique_ptr<DeviceRun> r = deviceRunCache().drop(d);
        if (r && cudaSetDevice(d) == cudaSuccess) r.reset();
    }
}

// Packets are handed out in chunks from one counter, so a faster (or less busy) GPU takes more
// of them; every packet keeps its own index and random stream, so the tallies are the same
// (to summation order) however the chunks fall.
void warmUpCudaDevices(const std::vector<int>& devices) {
    std::vector<int> ids;
    try {
        ids = resolveDevicesImpl(devices);
    } catch (const std::exception&) {  // no device, or a bad id: the run reports it
        cudaGetLastError();
        return;
    }
    // One thread per device: contexts are created in parallel.
    std::vector<std::thread> threads;
    for (int d : ids)
        threads.emplace_back([d] {
            if (cudaSetDevice(d) == cudaSuccess) cudaFree(nullptr);  // creates the context
            cudaGetLastError();
        });
    for (auto& t : threads) t.join();
}

namespace {
// One device's view of a hybrid run's packet source: its launches take blocks as taker `k`.
class DeviceTaker final : public PacketSource {
public:
    DeviceTaker(PacketSource& s, unsigned k) : s_(s), k_(k) {}
    bool take(unsigned, uint64_t& begin, uint64_t& end) override { return s_.take(k_, begin, end); }
    bool takeLaunch(unsigned, uint64_t most, uint64_t& begin, uint64_t& end) override {
        return s_.takeLaunch(k_, most, begin, end);
    }
    void launchDone(unsigned, uint64_t packets) override { s_.launchDone(k_, packets); }

private:
    PacketSource& s_;
    unsigned k_;
};

// items[0].*field += items[k].*field for k = 1, 2, ... (the elements summed in that order), on
// the load threads; the other items' arrays are emptied.
template <class T>
void addInDeviceOrder(std::vector<T>& items, std::vector<double> T::*field) {
    if (items.size() < 2) return;
    std::vector<double>& into = items[0].*field;
    parallelFor(0, into.size(), [&](unsigned, size_t lo, size_t hi) {
        for (size_t k = 1; k < items.size(); ++k) {
            const std::vector<double>& v = items[k].*field;
            for (size_t i = lo; i < hi && i < v.size(); ++i) into[i] += v[i];
        }
    });
    for (size_t k = 1; k < items.size(); ++k) (items[k].*field).clear();
}
}  // namespace

RunResult runCuda(const KernelInput& in, const RunOptions& opt) {
    auto t0 = Clock::now();
    std::string why;
    if (!cudaDeviceAvailable(&why)) throw Error("kernel cuda: " + why);
    const std::vector<int> devices = resolveDevicesImpl(opt.devices);
    RunResult r;
    r.kernel = devices.size() > 1 ? "cuda x" + std::to_string(devices.size()) : "cuda";
    r.packetsRequested = opt.packets;
    // Guided self-scheduling over several devices: each takes half its share of what is left
    // (at least minChunk), so early chunks are large (few launch tails) and the last ones small
    // (the devices finish together). One device: one chunk.
    // With standard errors each chunk is a batch (folded when done), and chunks are at most
    // 1/B of the packets, so a run has at least B batches (B on one device).
    const uint64_t batches = effectiveBatches(opt, true);
    const uint64_t maxChunk = batches > 1 ? (opt.packets + batches - 1) / batches : opt.packets;
    const uint64_t minChunk = guidedMinChunk(opt.packets, maxChunk, devices.size());
    std::atomic<uint64_t> nextChunk{0}, done{0};
    auto takeChunk = [&](size_t device, uint64_t& begin, uint64_t& n) {
        if (opt.packetSource) {  // a side of a hybrid run (Kernels/PacketSource.hpp)
            uint64_t b = 0, e = 0;
            if (!opt.packetSource->take(unsigned(device), b, e)) return false;
            begin = b - opt.firstPacket;
            n = e - b;
            return true;
        }
        uint64_t cur = nextChunk.load();
        for (;;) {
            if (cur >= opt.packets) return false;
            const uint64_t left = opt.packets - cur;
            const uint64_t size = guidedChunk(left, maxChunk, minChunk, devices.size());
            if (nextChunk.compare_exchange_weak(cur, cur + size)) {
                begin = cur;
                n = size;
                return true;
            }
        }
    };
    std::vector<std::unique_ptr<DeviceRun>> runs(devices.size());
    std::vector<DeviceModelKey> keys(devices.size());
    // A time-gated run keeps the volume and exit tallies (TimeGatedTally's pack), dropped below
    // where not selected.
    checkGatedRun(in, opt);
    const TimeGates gates = opt.outputs.gatedSurface ? withExitFaces(in, opt.gates) : opt.gates;
    OutputSelection kept = opt.outputs;
    if (kept.gated()) kept.volume = kept.surface = true;
    const std::shared_future<uint64_t> hash = cellsHash(in);
    std::vector<std::shared_future<uint64_t>> hashes(devices.size(), hash);  // a copy per device thread
    std::vector<CellLayout> layouts(devices.size());
    for (size_t k = 0; k < devices.size(); ++k) {
        layouts[k] = cudaCellLayoutFor(opt.tuning.cudaCellLayout, in.cells.size(), devices[k]);
        keys[k] = deviceRunKey(devices[k], in, kept, layouts[k]);
    }
    std::vector<std::string> errors(devices.size());
    std::vector<double> upload(devices.size()), kernel(devices.size()), download(devices.size());
    std::vector<int> blocksPerSm(devices.size());
    // Several devices: each brings its tallies back as soon as its own work is done, while the
    // others still run (and in parallel with them), into a part of its own; the parts are added
    // in device order below, as one device's would be.
    std::vector<RunResult> parts(devices.size() > 1 ? devices.size() : 0);
    std::vector<BatchSums> sums(parts.size());
    // The host arrays of the cells (HostCellArrays) where the devices upload the mesh in a layout
    // of its own arrays: made once for all devices of that layout, from the run's start (while
    // the device threads start and allocate) where no device holds the mesh from an earlier
    // run, else when a device first needs them.
    std::shared_future<HostCellArrays> made;
    if (layouts[0] != CellLayout::Record)
        made = std::async(deviceRunCache().mayMatch(keys[0]) ? std::launch::deferred
                                                             : std::launch::async | std::launch::deferred,
                          [&in, l = layouts[0]] { return hostCellArrays(in.cells, l); })
                   .share();
    // Device k's tallies into `into` and, with batches, its batch sums into `q`: the sums come
    // back on another thread while the tallies do.
    auto bringBack = [&](size_t k, RunResult& into, BatchSums& q) {
        std::future<void> f;
        if (batches > 1) f = std::async(std::launch::async | std::launch::deferred, [&, k] {
            cudaCheck(cudaSetDevice(devices[k]), "select device");
            q = runs[k]->batchSums();
        });
        runs[k]->addTo(into);
        if (f.valid()) f.get();
    };
    auto collect = [&](size_t k) {
        if (parts.empty()) return;
        const auto td = Clock::now();
        bringBack(k, parts[k], sums[k]);
        giveDeviceRun(keys[k], hashes[k], std::move(runs[k]));
        download[k] = since(td);
    };
    auto work = [&](size_t k) {
        try {
            cudaCheck(cudaSetDevice(devices[k]), "select device");
            auto tu = Clock::now();
            runs[k] = takeDeviceRun(keys[k], hashes[k], in, kept, layouts[k],  // kept from an earlier run, if any
                                    layouts[k] == layouts[0] ? made : std::shared_future<HostCellArrays>());
            runs[k]->load(in);
            runs[k]->setGates(opt.outputs, gates, in.cells.size());
            upload[k] = since(tu);
            if (opt.packetSource && batches == 1) {  // a hybrid run's GPU side: one pipelined run
                DeviceTaker taker(*opt.packetSource, unsigned(k));
                RunOptions part = opt;
                part.packetSource = &taker;
                part.progress = nullptr;
                const BatchRun b = runs[k]->run(part);
                done += b.packetsDone;
                kernel[k] += b.seconds;
                blocksPerSm[k] = b.blocksPerSm;
                collect(k);
                return;
            }
            if (batches > 1 && !opt.packetSource && runs[k]->canFeed()) {
                // The chunks as batches back to back (DeviceRun::runFed): the next is taken as
                // the last launch of the one before is queued. (A hybrid run's GPU side takes a
                // chunk only when the one before is done, which leaves the CPU's threads theirs.)
                const BatchRun b = runs[k]->runFed(
                    opt,
                    [&, k](uint64_t& first, uint64_t& n) {
                        uint64_t begin = 0;
                        if ((opt.cancel && opt.cancel->load()) || !takeChunk(k, begin, n)) return false;
                        first = opt.firstPacket + begin;
                        return true;
                    },
                    [&, k, last = uint64_t(0)](uint64_t d, bool running) mutable {
                        done += d - last;
                        last = d;
                        if (running) runs[k]->pinDownloads();
                        if (devices.size() == 1 && opt.progress) opt.progress(done.load(), opt.packets);
                    });
                kernel[k] += b.seconds;
                blocksPerSm[k] = b.blocksPerSm;
                collect(k);
                return;
            }
            for (;;) {
                if (opt.cancel && opt.cancel->load()) break;
                uint64_t begin = 0, n = 0;
                if (!takeChunk(k, begin, n)) break;
                RunOptions part = opt;
                part.packetSource = nullptr;  // the chunk is taken: its launches run just it
                part.firstPacket = opt.firstPacket + begin;
                part.packets = n;
                const uint64_t before = done.load();
                // After each launch: the page-locked download buffer asked for while the next
                // launch runs (DeviceRun::pinDownloads), and one device's progress (several
                // devices: reported below).
                part.progress = [&, before, k](uint64_t d, uint64_t chunk) {
                    if (d < chunk) runs[k]->pinDownloads();
                    if (devices.size() == 1 && opt.progress) opt.progress(before + d, opt.packets);
                };
                BatchRun b = batches > 1 ? runs[k]->runBatch(part) : runs[k]->run(part);
                done += b.packetsDone;
                kernel[k] += b.seconds;
                blocksPerSm[k] = b.blocksPerSm;
                if (b.packetsDone < part.packets) break;  // cancelled
            }
            collect(k);
        } catch (const std::exception& e) {
            errors[k] = e.what();
        }
    };
    if (devices.size() == 1) {
        work(0);
    } else {
        std::vector<std::thread> pool;
        for (size_t k = 0; k < devices.size(); ++k) pool.emplace_back(work, k);
        // Progress every 100 ms; woken at once when the devices are done (a plain sleep would
        // keep every multi-GPU run up to 100 ms longer).
        std::mutex m;
        std::condition_variable cv;
        bool finished = false;
        std::thread reporter([&] {
            std::unique_lock<std::mutex> lock(m);
            while (!cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return finished; }))
                if (opt.progress) opt.progress(done.load(), opt.packets);
        });
        for (auto& t : pool) t.join();
        {
            std::lock_guard<std::mutex> lock(m);
            finished = true;
        }
        cv.notify_all();
        reporter.join();
    }
    for (size_t k = 0; k < devices.size(); ++k)
        if (!errors[k].empty()) throw Error("GPU " + std::to_string(devices[k]) + ": " + errors[k]);
    auto t1 = Clock::now();
    BatchSums q;
    if (parts.empty()) {
        bringBack(0, r, q);  // q is empty: the one device's sums are the run's
        giveDeviceRun(keys[0], hashes[0], std::move(runs[0]));
    } else {
        // The large arrays first, element by element in device order on the load threads (the
        // sums accumulateResult and BatchSums::add would make, one part after another), then
        // moved into r and q; the ledgers, events and small sums are added as usual.
        for (auto f : {&RunResult::volume, &RunResult::surface, &RunResult::directed, &RunResult::gatedVolume,
                       &RunResult::gatedSurface}) {
            addInDeviceOrder(parts, f);
            r.*f = std::move(parts[0].*f);
            (parts[0].*f).clear();
        }
        for (auto f : {&BatchSums::volume, &BatchSums::surface, &BatchSums::directed, &BatchSums::gatedVolume,
                       &BatchSums::gatedSurface}) {
            addInDeviceOrder(sums, f);
            q.*f = std::move(sums[0].*f);
            (sums[0].*f).clear();
        }
        for (size_t k = 0; k < parts.size(); ++k) {
            parts[k].kernel = r.kernel;  // the ledger and events: a part's arrays are empty now
            accumulateResult(r, parts[k]);
            if (batches > 1) q.add(sums[k]);
        }
    }
    r.uploadSeconds = *std::max_element(upload.begin(), upload.end());
    r.kernelSeconds = *std::max_element(kernel.begin(), kernel.end());
    r.gpuBlocksPerSm = blocksPerSm[0];
    // Several devices: the longest device's own download and then the sum of the parts.
    r.downloadSeconds = *std::max_element(download.begin(), download.end()) + since(t1);
    r.packetsDone = done.load();
    if (opt.packetSource) r.packetsRequested = r.packetsDone;  // a side of a hybrid run: what it took
    r.cancelled = r.packetsDone < r.packetsRequested;
    if (batches > 1) setTallyErrors(r, q);
    if (!opt.outputs.volume) r.volume.clear(), r.standardError.volume.clear();
    if (!opt.outputs.surface) r.surface.clear(), r.standardError.surface.clear();
    r.seconds = since(t0);
    return r;
}

// ---- Batches (Kernels/Batch.hpp): one device keeps the mesh while runs come and go ----

std::vector<int> cudaResolveDevices(const std::vector<int>& requested) { return resolveDevicesImpl(requested); }

struct CudaModelOnDevice::Impl {
    int device;
    DeviceModelKey key;
    std::shared_future<uint64_t> hash;  // of the batch's mesh, which outlives this model
    std::unique_ptr<DeviceRun> run;
    bool clean = true;  // no run failed: the model may go back to the cache
    size_t cells = 0;  // of the mesh, for the gated arrays' sizes (setGates)
    std::shared_ptr<const GatedFaces> exitFaces;  // of the mesh, where the caller gates the exit tally
    OutputSelection selected;     // the caller's outputs (a gated model keeps volume and exit too)
};

CudaModelOnDevice::CudaModelOnDevice(int device, const KernelInput& mesh, const OutputSelection& outputs,
                                     CellLayout layout)
    : impl_(std::make_unique<Impl>()) {
    std::string why;
    if (!cudaDeviceAvailable(&why)) throw Error("kernel cuda: " + why);
    impl_->device = device;
    impl_->cells = mesh.cells.size();
    if (outputs.gatedSurface) impl_->exitFaces = gatedExitFaces(mesh);
    impl_->selected = outputs;
    OutputSelection kept = outputs;  // as runCuda: a gated run keeps the volume and exit tallies
    if (kept.gated()) kept.volume = kept.surface = true;
    cudaCheck(cudaSetDevice(device), "select device");
    const CellLayout cells = cudaCellLayoutFor(layout, mesh.cells.size(), device);
    impl_->key = deviceRunKey(device, mesh, kept, cells);
    impl_->hash = cellsHash(mesh);
    impl_->run = takeDeviceRun(impl_->key, impl_->hash, mesh, kept, cells);
}

CudaModelOnDevice::~CudaModelOnDevice() {
    if (impl_ && impl_->run && cudaSetDevice(impl_->device) == cudaSuccess) {
        if (impl_->clean) giveDeviceRun(impl_->key, impl_->hash, std::move(impl_->run));
        impl_->run.reset();
    }
}

int CudaModelOnDevice::device() const { return impl_->device; }

// The same steps as runCuda on one device (so the same tallies), without the mesh upload.
RunResult CudaModelOnDevice::run(const RunVariant& v, const RunOptions& opt) {
    auto t0 = Clock::now();
    cudaCheck(cudaSetDevice(impl_->device), "select device");
    DeviceRun& d = *impl_->run;
    impl_->clean = false;  // until this run ends without an error
    d.load(v.materials, v.emitters, v.emitterCdf, v.pieces, v.pieceCdf);
    TimeGates gates = opt.gates;
    if (opt.outputs.gatedSurface) gates.faces = impl_->exitFaces;
    d.setGates(opt.outputs, gates, impl_->cells);
    RunResult r;
    r.kernel = "cuda";
    r.packetsRequested = opt.packets;
    r.uploadSeconds = since(t0);
    // The batches of runCuda on one device: equal contiguous parts, each folded when done.
    const uint64_t batches = effectiveBatches(opt, true);
    auto at = [&](uint64_t k) { return uint64_t((unsigned __int128)opt.packets * k / batches); };
    // Back to back where their tallies may take two slots (DeviceRun::runFed).
    const bool fed = batches > 1 && d.canFeed();
    BatchRun b;
    if (fed) {
        b = d.runFed(
            opt,
            [&, j = uint64_t(0)](uint64_t& first, uint64_t& n) mutable {
                if (j == batches || (opt.cancel && opt.cancel->load())) return false;
                first = opt.firstPacket + at(j);
                n = at(j + 1) - at(j);
                ++j;
                return true;
            },
            [&](uint64_t done, bool) {
                if (opt.progress) opt.progress(done, opt.packets);
            });
    }
    for (uint64_t j = 0; j < batches && !fed; ++j) {
        RunOptions part = opt;
        part.firstPacket = opt.firstPacket + at(j);
        part.packets = at(j + 1) - at(j);
        const uint64_t before = b.packetsDone;
        if (opt.progress) part.progress = [&, before](uint64_t n, uint64_t) { opt.progress(before + n, opt.packets); };
        const BatchRun p = batches > 1 ? d.runBatch(part) : d.run(part);
        b.packetsDone += p.packetsDone;
        b.seconds += p.seconds;
        b.blocksPerSm = p.blocksPerSm;
        if (p.packetsDone < part.packets) break;  // cancelled
    }
    r.kernelSeconds = b.seconds;
    auto t1 = Clock::now();
    d.addTo(r);
    r.downloadSeconds = since(t1);
    r.packetsDone = b.packetsDone;
    r.cancelled = r.packetsDone < opt.packets;
    if (batches > 1) setTallyErrors(r, d.batchSums());
    if (!impl_->selected.volume) r.volume.clear(), r.standardError.volume.clear();
    if (!impl_->selected.surface) r.surface.clear(), r.standardError.surface.clear();
    r.seconds = since(t0);
    impl_->clean = true;
    return r;
}

}  // namespace fm
