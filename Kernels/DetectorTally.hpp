// SPDX-License-Identifier: GPL-3.0-or-later
// The detector tally (Kernels/Core/Tally.hpp hooks) and where a worker keeps what it detects:
// the packet's path per material (and per cell for replays) from its moves, and at its exit the
// detectors that detect it, with the exit state. One tally runs one packet at a time (the lane
// loops copy the scorer into each lane, so each lane has its own path).
#pragma once
#include <algorithm>
#include <cstring>
#include <numeric>
#include <utility>
#include <vector>

#include "Kernels/CPU/CpuLanes.hpp"
#include "Kernels/DetectedOrder.hpp"
#include "Kernels/DetectedPackets.hpp"

namespace fm {

// One packet's path: per material, and (when asked) per cell as (tetra, length) runs; its
// scattering events per material.
struct PacketPath {
    std::vector<double> region;                        // [material]
    std::vector<uint32_t> scatters;                    // [material]
    std::vector<std::pair<uint32_t, double>> cells;    // consecutive moves in one cell merged
    // Room for `materials` materials (index 0 the exterior), zeroed.
    void size(size_t materials) {
        region.assign(materials, 0.0);
        scatters.assign(materials, 0u);
    }
};

// The detectors (bits) that detect an exit through boundary face `face` at `p`.
inline uint64_t detectorsAt(const DetectionSpec& spec, uint32_t face, Vec3 p) {
    uint64_t bits = face < spec.faceDetectors.size() ? spec.faceDetectors[face] : 0, hit = 0;
    for (; bits; bits &= bits - 1) {
        const int d = __builtin_ctzll(bits);
        const DetectorZone& z = spec.detectors[d];
        const double dx = p.x - z.centre[0], dy = p.y - z.centre[1], dz = p.z - z.centre[2];
        if (dx * dx + dy * dy + dz * dz <= z.radius2) hit |= uint64_t(1) << d;
    }
    return hit;
}

// A worker's detections: its records (at most 2 x keep between compactions, the lowest packet
// indices kept; the lane loops finish packets out of index order) and the detected weight per
// detector over all its detections, kept or not.
struct DetectorSink {
    uint32_t regions = 0;
    uint64_t keep = 0;     // records the run keeps (DetectionSpec::maxRecords)
    uint64_t current = 0;  // the packet handed out last (OnePacketChunks): the next launch's index
    std::vector<DetectedRecord> records;
    std::vector<float> paths;   // [record * regions + region - 1]
    std::vector<uint32_t> scatterCounts;  // as paths
    std::vector<double> weight; // [detector]: detected weight
    uint64_t found = 0;

    // Keeps the `keep` records of the lowest (packet index, detector), in that order (on this
    // worker's thread).
    void compact() {
        std::vector<DetectedRecord> rs;
        std::vector<float> ps;
        std::vector<uint32_t> cs;
        appendInRecordOrder(view(), ~uint64_t(0), keep, RecordArrays{rs, ps, cs}, 1);
        records = std::move(rs);
        paths = std::move(ps);
        scatterCounts = std::move(cs);
    }
    RecordBufferView view() const {
        return RecordBufferView{records.data(), paths.data(), scatterCounts.empty() ? nullptr : scatterCounts.data(),
                                records.size(), regions};
    }
};

struct DetectorTally {
    static constexpr bool kScoresFaces = true, kNeedsMoves = true, kNeedsClock = true;
    const DetectionSpec* spec = nullptr;
    DetectorSink* sink = nullptr;  // records kept there at each detected exit; null: read `hit`
    PacketPath path;
    bool perCell = false;
    uint64_t index = 0;  // the packet's (from sink->current at launch)
    uint64_t hit = 0;    // detectors that detected the packet (bits); 0 until it exits on one
    Vec3 exitPos{0, 0, 0}, exitDir{0, 0, 0};
    float exitWeight = 0, opl = 0;
    uint32_t scatters = 0;
    uint32_t material = 0;  // of the last move: where an interaction that follows it happens

    // Before each packet (launch() is not called when emission fails).
    void reset() {
        hit = 0;
        std::fill(path.region.begin(), path.region.end(), 0.0);
        std::fill(path.scatters.begin(), path.scatters.end(), 0u);
        path.cells.clear();
    }
    void launch(const PacketState&) {
        reset();
        if (sink) index = sink->current;
    }
    void move(const PacketState& st, uint32_t m, float dist) {
        material = m;
        path.region[m] += dist;
        if (!perCell) return;
        if (!path.cells.empty() && path.cells.back().first == st.pk.tetra) path.cells.back().second += dist;
        else path.cells.emplace_back(st.pk.tetra, dist);
    }
    // Every interaction (the loops book each one's drop, 0 included, right after its move); a
    // detected packet survived all of its interactions, so its counts sum to its steps.
    void absorb(const PacketState&, double) { ++path.scatters[material]; }
    void exit(const PacketState& st, uint32_t face) {
        hit = detectorsAt(*spec, face & ~kFaceSideBit, st.pk.pos);
        exitPos = st.pk.pos;
        exitDir = st.pk.dir;
        exitWeight = st.pk.w;
        opl = st.opl;
        scatters = st.steps;
        if (hit && sink) keepRecords();
    }

    // One record per detector in `hit` into the sink; its time of flight from the packet clock.
    void keepRecords() {
        DetectorSink& s = *sink;
        for (uint64_t bits = hit; bits; bits &= bits - 1) {
            ++s.found;
            DetectedRecord rec;
            rec.index = index;
            rec.detector = uint32_t(__builtin_ctzll(bits));
            s.weight[rec.detector] += double(exitWeight);
            rec.scatters = scatters;
            rec.weight = exitWeight;
            rec.time = float(opl / kLightSpeedMmPerNs);
            const float pos[3] = {exitPos.x, exitPos.y, exitPos.z}, dir[3] = {exitDir.x, exitDir.y, exitDir.z};
            std::memcpy(rec.pos, pos, sizeof pos);
            std::memcpy(rec.dir, dir, sizeof dir);
            s.records.push_back(rec);
            for (uint32_t r = 0; r < s.regions; ++r) s.paths.push_back(float(path.region[r + 1]));
            const auto counts = path.scatters.begin() + 1;
            s.scatterCounts.insert(s.scatterCounts.end(), counts, counts + s.regions);
        }
        if (s.records.size() >= 2 * std::max<uint64_t>(s.keep, 1)) s.compact();
    }
};

// A worker's chunks one packet at a time, each packet's index left in sink.current for the
// launch that follows it (the lane loops launch a packet right after they take it).
struct OnePacketChunks final : PacketChunks {
    PacketChunks& inner;
    DetectorSink& sink;
    uint64_t b = 0, e = 0;  // what is left of the inner chunk
    OnePacketChunks(PacketChunks& c, DetectorSink& s) : inner(c), sink(s) {}
    bool next(uint64_t& begin, uint64_t& end) override {
        if (b == e && !inner.next(b, e)) return false;
        sink.current = b;
        begin = b++;
        end = b;
        return true;
    }
    bool stopping() const override { return inner.stopping(); }
    void abandon(uint64_t n) override {
        inner.abandon(n + (e - b));
        b = e;
    }
};

// The workers' records into dp (its regions and detectors set): the lowest (packet index,
// detector) first, at most maxRecords; dp's detected count and detected weight per detector over
// all their detections. Empties the sinks.
void mergeWorkerRecords(std::vector<DetectorSink>& sinks, uint64_t maxRecords, DetectedPackets& dp);

// The standard tallies V, S, D and the detector tally, on the host.
template <bool V, bool S, bool D>
using DetectingHostScorer = HostTallyScorer<V, S, D, DetectorTally>;

// The lane loop (AVX2 where built and `isa` allows, else one packet at a time) for the
// detecting scorers (CPU/CpuLanesDetecting*.cpp).
template <class Scorer>
void runDetectingLanes(const ArrayModel& m, const KernelParams& kp, PacketChunks& chunks, Scorer& sc,
                       uint32_t materialCount, const uint8_t* crossing, CpuIsa isa);

}  // namespace fm
