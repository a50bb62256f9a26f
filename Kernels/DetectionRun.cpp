// SPDX-License-Identifier: GPL-3.0-or-later
// The detecting CPU run and the replay of detected packets: the scalar packet loop (runPacket)
// over the standard tallies plus DetectorTally, which sums the packet's moves per material (and
// per cell for replays) and tests its exit against the detectors.
#include "Kernels/Detection.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "Common/Errors.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Kernels/CPU/CpuLanes.hpp"
#include "Kernels/Core/Packet.hpp"
#include "Kernels/ResourceLimits.hpp"

namespace fm {
namespace {

// One packet's path: per material, and (when asked) per cell as (tetra, length) runs.
struct PacketPath {
    std::vector<double> region;                        // [material]
    std::vector<std::pair<uint32_t, double>> cells;    // consecutive moves in one cell merged
};

uint64_t detectorsAt(const DetectionSpec& spec, uint32_t face, Vec3 p);

// The detector tally (Kernels/Core/Tally.hpp hooks): the packet's path per material (and per
// cell for replays) from its moves, and at its exit the detectors that detect it, with the
// exit state. Per-packet state: one scorer runs one packet at a time.
struct DetectorTally {
    static constexpr bool kScoresFaces = true, kNeedsMoves = true, kNeedsClock = true;
    const DetectionSpec* spec = nullptr;
    PacketPath* path = nullptr;
    bool perCell = false;
    uint64_t hit = 0;  // detectors that detected the packet (bits); 0 until it exits on one
    Vec3 exitPos{0, 0, 0}, exitDir{0, 0, 0};
    float exitWeight = 0, opl = 0;
    uint32_t scatters = 0;

    // Before each packet (launch() is not called when emission fails).
    void reset() {
        hit = 0;
        std::fill(path->region.begin(), path->region.end(), 0.0);
        path->cells.clear();
    }
    void move(const PacketState& st, uint32_t material, float dist) {
        path->region[material] += dist;
        if (!perCell) return;
        if (!path->cells.empty() && path->cells.back().first == st.pk.tetra) path->cells.back().second += dist;
        else path->cells.emplace_back(st.pk.tetra, dist);
    }
    void exit(const PacketState& st, uint32_t face) {
        hit = detectorsAt(*spec, face & ~kFaceSideBit, st.pk.pos);
        exitPos = st.pk.pos;
        exitDir = st.pk.dir;
        exitWeight = st.pk.w;
        opl = st.opl;
        scatters = st.steps;
    }
};

DetectorTally detectorTally(const DetectionSpec& spec, PacketPath& path, bool perCell) {
    DetectorTally t;
    t.spec = &spec;
    t.path = &path;
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

// The detectors (bits) that detect an exit through `face` at `p`.
uint64_t detectorsAt(const DetectionSpec& spec, uint32_t face, Vec3 p) {
    uint64_t bits = face < spec.faceDetectors.size() ? spec.faceDetectors[face] : 0, hit = 0;
    for (; bits; bits &= bits - 1) {
        const int d = __builtin_ctzll(bits);
        const DetectorZone& z = spec.detectors[d];
        const double dx = p.x - z.centre[0], dy = p.y - z.centre[1], dz = p.z - z.centre[2];
        if (dx * dx + dy * dy + dz * dz <= z.radius2) hit |= uint64_t(1) << d;
    }
    return hit;
}

void checkSpec(const KernelInput& in, const DetectionSpec& spec) {
    if (spec.detectors.size() > kMaxDetectors)
        throw ParameterError("detectors: " + std::to_string(spec.detectors.size()) + " given, at most " +
                             std::to_string(kMaxDetectors) + " per run");
    if (spec.faceDetectors.size() != in.faceCount)
        throw ParameterError("detectors: compiled for a mesh of " + std::to_string(spec.faceDetectors.size()) +
                             " faces, the model has " + std::to_string(in.faceCount));
}

// A worker's detected packets, in its (increasing) packet order.
struct WorkerRecords {
    std::vector<DetectedRecord> records;
    std::vector<float> paths;
    uint64_t found = 0;
};

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

// Appends the records of one detected packet (one per detector in `hit`) to w; its time of
// flight from the packet clock.
void keepRecords(const DetectedPackets& dp, uint64_t hit, uint64_t index, const DetectorTally& sc,
                 uint64_t maxRecords, WorkerRecords& w) {
    const double time = sc.opl / kLightSpeedMmPerNs;
    const PacketPath& path = *sc.path;
    for (; hit; hit &= hit - 1) {
        ++w.found;
        if (w.records.size() >= maxRecords) continue;
        DetectedRecord rec;
        rec.index = index;
        rec.detector = uint32_t(__builtin_ctzll(hit));
        rec.scatters = sc.scatters;
        rec.weight = sc.exitWeight;
        rec.time = float(time);
        const Vec3 p = sc.exitPos, d = sc.exitDir;
        const float pos[3] = {p.x, p.y, p.z}, dir[3] = {d.x, d.y, d.z};
        std::memcpy(rec.pos, pos, sizeof pos);
        std::memcpy(rec.dir, dir, sizeof dir);
        w.records.push_back(rec);
        for (uint32_t r = 0; r < dp.regions; ++r) w.paths.push_back(float(path.region[r + 1]));
    }
}

}  // namespace

RunResult runCpuDetecting(const KernelInput& in, const RunOptions& opt, const DetectionSpec& spec) {
    checkSpec(in, spec);
    const auto t0 = std::chrono::steady_clock::now();
    const unsigned threads = resolveThreads(opt.threads);
    const ArrayModel model = in.view();
    const size_t nv = in.cells.size(), ns = in.faceCount, nd = 2 * size_t(in.faceCount);
    const auto& o = opt.outputs;
    const double tallyBytes = 8.0 * double((o.volume ? nv : 0) + (o.surface ? ns : 0) + (o.directed ? nd : 0));
    const double recordBytes = double(sizeof(DetectedRecord)) + 4.0 * double(in.materials.size());
    requireMemory(tallyBytes * (threads + 2) + recordBytes * double(spec.maxRecords) * (threads + 1),
                  "a detecting CPU run with " + std::to_string(threads) + " threads keeping up to " +
                      std::to_string(spec.maxRecords) + " records per thread",
                  "keep fewer records (maxRecords) or use fewer threads");
    RunResult r;
    r.kernel = "cpu";
    r.packetsRequested = opt.packets;
    DetectedPackets& dp = r.detected;
    describeRun(in, opt, spec, dp);
    std::vector<WorkerRecords> parts(threads);
    dispatchOutputs(o.volume, o.surface, o.directed, [&](auto V, auto S, auto D) {
        using Scorer = HostTallyScorer<decltype(V)::value, decltype(S)::value, decltype(D)::value, DetectorTally>;
        std::vector<std::vector<double>> vol(threads), surf(threads), dir(threads);
        std::vector<Scorer> scorers(threads);
        for (unsigned w = 0; w < threads; ++w) {
            if (V) vol[w].assign(nv, 0.0);
            if (S) surf[w].assign(ns, 0.0);
            if (D) dir[w].assign(nd, 0.0);
            if constexpr (decltype(V)::value) scorers[w].volume = vol[w].data();
            if constexpr (decltype(S)::value) scorers[w].surface = surf[w].data();
            if constexpr (decltype(D)::value) scorers[w].directed = dir[w].data();
        }
        r.packetsDone = forEachPacketRange(opt, threads, [&](unsigned w, uint64_t b, uint64_t e) {
            Scorer sc = scorers[w];
            PacketPath path;
            path.region.assign(in.materials.size(), 0.0);
            sc.template tally<DetectorTally>() = detectorTally(spec, path, false);
            for (uint64_t i = b; i < e; ++i) {
                if (const uint64_t hit = runDetected(model, opt.params, i, sc))
                    keepRecords(dp, hit, i, sc.template tally<DetectorTally>(), spec.maxRecords, parts[w]);
            }
            sc.flush();
            scorers[w] = sc;
        });
        addWorkerArrays(vol, r.volume);
        addWorkerArrays(surf, r.surface);
        addWorkerArrays(dir, r.directed);
        for (auto& sc : scorers) {
            r.ledger.add(sc.ledger);
            r.events.add(sc.events);
        }
    });
    // Workers hold contiguous, increasing packet ranges, each keeping its first maxRecords: in
    // worker order, the first maxRecords of them are the lowest-index detections of the run.
    for (WorkerRecords& w : parts) {
        dp.detected += w.found;
        const size_t room = spec.maxRecords - std::min<size_t>(spec.maxRecords, dp.records.size());
        const size_t take = std::min(room, w.records.size());
        dp.records.insert(dp.records.end(), w.records.begin(), w.records.begin() + take);
        dp.pathLengths.insert(dp.pathLengths.end(), w.paths.begin(), w.paths.begin() + take * dp.regions);
        w = WorkerRecords{};
    }
    r.cancelled = r.packetsDone < opt.packets;
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
        PacketPath path;
        path.region.assign(in.materials.size(), 0.0);
        sc.template tally<DetectorTally>() = detectorTally(spec, path, true);
        for (uint64_t k = b; k < e; ++k) {
            const uint64_t hit = runDetected(cells, opt.params, list.index[k], sc);
            const DetectorTally& d = sc.template tally<DetectorTally>();
            // A record set cut by maxRecords may hold only some of a packet's detectors.
            if ((hit & list.detectors[k]) != list.detectors[k] || d.exitWeight != list.weight[k]) ++mismatched[w];
            for (uint64_t bits = hit & list.detectors[k]; bits; bits &= bits - 1) {
                std::vector<double>& Jd = J[__builtin_ctzll(bits)];
                for (const auto& [cell, len] : path.cells) Jd[cell] -= double(d.exitWeight) * len;
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
