// SPDX-License-Identifier: GPL-3.0-or-later
// The detecting CPU run (the lane loop over the standard tallies plus DetectorTally, which sums
// the packet's moves per material and tests its exit against the detectors) and the replay of
// detected packets (the scalar packet loop, the tally also summing the moves per cell).
#include "Kernels/Detection.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "Common/Errors.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Kernels/BatchMeans.hpp"
#include "Kernels/CPU/CpuBatches.hpp"
#include "Kernels/CPU/CpuLanes.hpp"
#include "Kernels/DetectorTally.hpp"
#include "Kernels/Core/CellLayout.hpp"
#include "Kernels/Core/Packet.hpp"
#include "Common/ResourceLimits.hpp"

namespace fm {
namespace {

DetectorTally detectorTally(const DetectionSpec& spec, uint32_t materials, bool perCell, DetectorSink* sink) {
    DetectorTally t;
    t.spec = &spec;
    t.sink = sink;
    t.path.size(materials);
    t.perCell = perCell;
    return t;
}

// Runs packet `index` through the scalar loop; returns the detectors that detected it.
template <class Scorer>
uint64_t runDetected(const ArrayModel& m, const KernelParams& kp, uint64_t index, Scorer& sc) {
    DetectorTally& d = sc.template tally<DetectorTally>();
    d.reset();
    runPacket(m, kp, index, sc);
    return d.hit;
}

void checkSpec(const KernelInput& in, const DetectionSpec& spec) {
    if (spec.detectors.size() > kMaxDetectors)
        throw ParameterError("detectors: " + std::to_string(spec.detectors.size()) + " given, at most " +
                             std::to_string(kMaxDetectors) + " per run");
    if (spec.faceDetectors.size() != in.faceCount)
        throw ParameterError("detectors: compiled for a mesh of " + std::to_string(spec.faceDetectors.size()) +
                             " faces, the model has " + std::to_string(in.faceCount));
}

void describeRun(const KernelInput& in, const RunOptions& opt, const DetectionSpec& spec, DetectedPackets& dp) {
    dp.regions = uint32_t(in.materials.size() - 1);
    dp.detectors = spec.detectors;
    dp.packets = opt.packets;
    dp.seed = opt.params.seed;
    for (size_t r = 1; r < in.materials.size(); ++r) {
        const MaterialRecord& M = in.materials[r];
        const double mua = double(M.mu_t) * M.absorbFraction;
        dp.mua.push_back(mua);
        dp.mus.push_back(double(M.mu_t) - mua);
        dp.g.push_back(M.g);
        dp.n.push_back(M.n);
    }
}

// One worker's batch folds of its tallies and ledger, and of its detected weight per detector.
struct DetectingFolds {
    WorkerFolds tallies;
    BatchFold detected;
};

// The records of the workers, the lowest (packet index, detector) first, at most maxRecords.
void mergeRecords(std::vector<DetectorSink>& sinks, uint64_t maxRecords, DetectedPackets& dp) {
    DetectorSink all;
    all.regions = dp.regions;
    dp.detectedWeight.assign(dp.detectors.size(), 0.0);
    for (DetectorSink& s : sinks) {
        dp.detected += s.found;
        for (size_t d = 0; d < s.weight.size(); ++d) dp.detectedWeight[d] += s.weight[d];
        all.records.insert(all.records.end(), s.records.begin(), s.records.end());
        all.paths.insert(all.paths.end(), s.paths.begin(), s.paths.end());
        all.scatterCounts.insert(all.scatterCounts.end(), s.scatterCounts.begin(), s.scatterCounts.end());
        s = DetectorSink{};
    }
    dp.records.clear();
    dp.pathLengths.clear();
    dp.scatterCounts.clear();
    appendInRecordOrder(all.view(), ~uint64_t(0), maxRecords, RecordArrays{dp.records, dp.pathLengths, dp.scatterCounts});
}

void setDetectingErrors(RunResult& r, std::vector<DetectingFolds>& folds) {
    BatchSums q;
    std::vector<double> qDetected;
    for (DetectingFolds& f : folds) {
        q.add(f.tallies.take());
        if (qDetected.empty()) qDetected.assign(f.detected.q().size(), 0.0);
        for (size_t d = 0; d < qDetected.size() && d < f.detected.q().size(); ++d) qDetected[d] += f.detected.q()[d];
    }
    setTallyErrors(r, q);
    if (q.batches >= 2 && !r.cancelled)
        r.detected.detectedWeightError = batchTotalErrors(qDetected, r.detected.detectedWeight, r.packetsDone, q.batches);
}

}  // namespace

RunResult runCpuDetecting(const KernelInput& in, const RunOptions& opt, const DetectionSpec& spec) {
    checkSpec(in, spec);
    const auto t0 = std::chrono::steady_clock::now();
    const unsigned threads = resolveThreads(opt.threads);
    const ArrayModel model = in.view();
    const std::vector<uint8_t> crossing = plainCrossingBits(in);
    const size_t nv = in.cells.size(), ns = in.faceCount, nd = 2 * size_t(in.faceCount);
    const auto& o = opt.outputs;
    const uint64_t batches = effectiveBatches(opt);
    const bool batched = batches > 1;
    const double tallyBytes = 8.0 * double((o.volume ? nv : 0) + (o.surface ? ns : 0) + (o.directed ? nd : 0));
    const double recordBytes = double(sizeof(DetectedRecord)) + 8.0 * double(in.materials.size());  // paths, counts
    requireMemory(tallyBytes * ((batched ? 3 : 1) * threads + 2) +
                      recordBytes * double(spec.maxRecords) * (2 * threads + 2),
                  "a detecting CPU run with " + std::to_string(threads) + " threads keeping up to " +
                      std::to_string(spec.maxRecords) + " records (twice that per thread)",
                  "keep fewer records (maxRecords) or use fewer threads");
    RunResult r;
    r.kernel = "cpu";
    r.packetsRequested = opt.packets;
    DetectedPackets& dp = r.detected;
    describeRun(in, opt, spec, dp);
    std::vector<DetectorSink> sinks(threads);
    std::vector<DetectingFolds> folds(batched ? threads : 0);
    dispatchOutputs(o.volume, o.surface, o.directed, [&](auto V, auto S, auto D) {
        using Scorer = DetectingHostScorer<decltype(V)::value, decltype(S)::value, decltype(D)::value>;
        std::vector<std::vector<double>> vol(threads), surf(threads), dir(threads);
        std::vector<Scorer> scorers(threads);
        for (unsigned w = 0; w < threads; ++w) {
            if (V) vol[w].assign(nv, 0.0);
            if (S) surf[w].assign(ns, 0.0);
            if (D) dir[w].assign(nd, 0.0);
            if constexpr (decltype(V)::value) scorers[w].volume = vol[w].data();
            if constexpr (decltype(S)::value) scorers[w].surface = surf[w].data();
            if constexpr (decltype(D)::value) scorers[w].directed = dir[w].data();
            sinks[w].regions = dp.regions;
            sinks[w].keep = spec.maxRecords;
            sinks[w].weight.assign(spec.detectors.size(), 0.0);
            scorers[w].template tally<DetectorTally>() =
                detectorTally(spec, uint32_t(in.materials.size()), false, &sinks[w]);
        }
        r.packetsDone = forEachWorkerRange(opt, threads, [&](unsigned w, uint64_t b, uint64_t e, PacketChunks& chunks) {
            Scorer sc = scorers[w];
            auto run = [&](PacketChunks& c) {
                OnePacketChunks one(c, sinks[w]);
                runDetectingLanes(model, opt.params, one, sc, uint32_t(in.materials.size()), crossing.data(),
                                  opt.tuning.cpuIsa);
            };
            if (!batched) {
                run(chunks);
            } else {
                WorkerFolds& f = folds[w].tallies;
                if (f.ledger.q().empty()) {
                    f.volume.reset(vol[w].size());
                    f.surface.reset(surf[w].size());
                    f.directed.reset(dir[w].size());
                    f.ledger.reset(7);
                    folds[w].detected.reset(spec.detectors.size());
                }
                runWorkerBatches(chunks, b, e, workerBatches(batches, e - b, opt.packets), run, [&](uint64_t n, bool last) {
                    const bool final = last && !opt.packetSource;  // another range may follow from a packet source
                    f.volume.fold(vol[w].data(), n, final);
                    f.surface.fold(surf[w].data(), n, final);
                    f.directed.fold(dir[w].data(), n, final);
                    f.ledger.fold(ledgerFields(sc.ledger).data(), n, final);
                    folds[w].detected.fold(sinks[w].weight.data(), n, final);
                    ++f.batches;
                });
            }
            scorers[w] = sc;
        });
        addWorkerArrays(vol, r.volume, threads);
        addWorkerArrays(surf, r.surface, threads);
        addWorkerArrays(dir, r.directed, threads);
        for (auto& sc : scorers) {
            r.ledger.add(sc.ledger);
            r.events.add(sc.events);
        }
    });
    mergeRecords(sinks, spec.maxRecords, dp);
    r.cancelled = r.packetsDone < opt.packets;
    if (batched) setDetectingErrors(r, folds);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

ReplayPackets replayPackets(const DetectedPackets& dp) {
    std::vector<std::pair<uint64_t, size_t>> order;
    for (size_t k = 0; k < dp.records.size(); ++k) order.emplace_back(dp.records[k].index, k);
    std::sort(order.begin(), order.end());
    ReplayPackets l;
    for (const auto& [index, k] : order) {
        if (l.index.empty() || l.index.back() != index) {
            l.index.push_back(index);
            l.detectors.push_back(0);
            l.weight.push_back(dp.records[k].weight);
        }
        l.detectors.back() |= uint64_t(1) << dp.records[k].detector;
    }
    return l;
}

void checkDetectionSpec(const KernelInput& in, const DetectionSpec& spec) { checkSpec(in, spec); }

void mergeWorkerRecords(std::vector<DetectorSink>& sinks, uint64_t maxRecords, DetectedPackets& dp) {
    mergeRecords(sinks, maxRecords, dp);
}

DetectedPackets describeDetectingRun(const KernelInput& in, const RunOptions& opt, const DetectionSpec& spec) {
    DetectedPackets dp;
    describeRun(in, opt, spec, dp);
    return dp;
}

void checkReplayInput(const KernelInput& in, const RunOptions& opt, const DetectionSpec& spec,
                      const DetectedPackets& dp) {
    checkSpec(in, spec);
    if (dp.regions + 1 != in.materials.size())
        throw ParameterError("replay: the records have " + std::to_string(dp.regions) + " regions, the model " +
                             std::to_string(in.materials.size() - 1));
    DetectedPackets model;
    describeRun(in, opt, spec, model);
    for (uint32_t r = 0; r < dp.regions; ++r)
        if (model.mua[r] != dp.mua[r] || model.mus[r] != dp.mus[r] || model.g[r] != dp.g[r] || model.n[r] != dp.n[r])
            throw ParameterError("replay: material " + std::to_string(r + 1) +
                                 " differs from the detecting run's (mu_a, mu_s, g, n must be the same)");
    for (const DetectedRecord& rec : dp.records)
        if (rec.detector >= spec.detectors.size())
            throw ParameterError("replay: a record of packet " + std::to_string(rec.index) + " names detector " +
                                 std::to_string(rec.detector) + "; the run has " +
                                 std::to_string(spec.detectors.size()) + " detectors");
}

std::string recordedCells(CellLayout used) { return used == CellLayout::Compact ? "compact" : "record"; }

CellLayout replayCellLayout(const DetectedPackets& dp, CellLayout asked) {
    const CellLayout recorded = dp.cells == "compact" ? CellLayout::Compact : CellLayout::Record;
    if (asked == CellLayout::Auto || asked == recorded) return recorded;
    if (asked == CellLayout::Split && recorded == CellLayout::Record) return asked;  // the same planes
    const char* askedName = asked == CellLayout::Compact ? "compact" : asked == CellLayout::Split ? "split" : "record";
    throw ParameterError("replay of " + (dp.file.empty() ? std::string("the records") : dp.file) +
                         ": the records were made in the GPU's " + dp.cells + " cell layout (the file's 'cells'), "
                         "FM_CUDA_CELL_LAYOUT=" + askedName + " asks for the " + askedName +
                         " layout, whose histories differ; unset FM_CUDA_CELL_LAYOUT (a replay follows its records) "
                         "or set it to " + (recorded == CellLayout::Compact ? "compact" : "record"));
}

ReplayResult replayJacobian(const KernelInput& in, const RunOptions& opt, const DetectionSpec& spec,
                            const DetectedPackets& dp) {
    checkReplayInput(in, opt, spec, dp);
    const ReplayPackets list = replayPackets(dp);
    const unsigned threads = resolveThreads(opt.threads);
    const size_t nv = in.cells.size(), nDet = spec.detectors.size();
    requireMemory(8.0 * double(nv) * double(nDet) * (threads + 1),
                  "a Jacobian replay over " + std::to_string(nv - 1) + " tetras for " + std::to_string(nDet) +
                      " detectors with " + std::to_string(threads) + " threads",
                  "use fewer threads or fewer detectors per replay");
    ReplayResult out;
    out.jacobian.assign(nDet, std::vector<double>(nv, 0.0));
    if (list.index.empty()) return out;
    std::vector<std::vector<std::vector<double>>> parts(threads);
    std::vector<uint64_t> mismatched(threads, 0);
    RunOptions ro = opt;
    ro.packets = list.index.size();
    ro.firstPacket = 0;
    const ArrayModel cells = in.view();
    using Scorer = HostTallyScorer<false, false, false, DetectorTally>;
    out.replayed = forEachPacketRange(ro, threads, [&](unsigned w, uint64_t b, uint64_t e) {
        auto& J = parts[w];
        if (J.empty()) J.assign(nDet, std::vector<double>(nv, 0.0));
        Scorer sc;
        sc.template tally<DetectorTally>() = detectorTally(spec, uint32_t(in.materials.size()), true, nullptr);
        for (uint64_t k = b; k < e; ++k) {
            const uint64_t hit = runDetected(cells, opt.params, list.index[k], sc);
            const DetectorTally& d = sc.template tally<DetectorTally>();
            // A record set cut by maxRecords may hold only some of a packet's detectors.
            if ((hit & list.detectors[k]) != list.detectors[k] || d.exitWeight != list.weight[k]) ++mismatched[w];
            for (uint64_t bits = hit & list.detectors[k]; bits; bits &= bits - 1) {
                std::vector<double>& Jd = J[__builtin_ctzll(bits)];
                for (const auto& [cell, len] : d.path.cells) Jd[cell] -= double(d.exitWeight) * len;
            }
        }
    });
    out.cancelled = out.replayed < list.index.size();
    for (unsigned w = 0; w < threads; ++w) {
        out.mismatched += mismatched[w];
        for (size_t d = 0; d < parts[w].size(); ++d)
            for (size_t t = 0; t < nv; ++t) out.jacobian[d][t] += parts[w][d][t];
    }
    return out;
}

}  // namespace fm
