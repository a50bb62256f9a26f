// SPDX-License-Identifier: GPL-3.0-or-later
// The CPU packet loop: 32 packets advanced in lockstep, one event each per iteration, so that
// the event physics (Core moveEvent + interactEvent: step draw, exit face, drop, roulette,
// spin) runs in vector registers (one AVX2 register holds a float of each of 8 packets; four
// registers' worth give the core independent chains to overlap), while the
// bookkeeping (tallies, ledger, face crossings, launches) runs per packet in scalar code (Core
// bookEvent), except the drops and the plain face crossings, booked for all lanes in one pass.
// The same Core functions as the GPU's advance(), called per lane: one physics source.
//
// Each packet keeps its own random stream and draws from it in the same order as advance(), so
// a packet's history does not depend on which lane or thread runs it, and results do not
// depend on the thread count. The lane loop is compiled with AVX2 (CpuLanesAvx2.cpp, chosen at
// run time when the CPU has it; -march stays generic) and without floating-point contraction,
// so every packet has exactly the history the scalar advance() gives it: the baseline build
// (CpuLanesGeneric.cpp) runs that one packet at a time, and both agree to summation order
// (Tests/Kernels/test_cpu_kernel.cpp, lane_loop_matches_scalar_packet_loop).
#pragma once
#include <memory>

#include "Kernels/Core/ArrayModel.hpp"
#include "Kernels/Core/Packet.hpp"
#include "Kernels/Core/TallyScorer.hpp"
#include "Kernels/GatedTally.hpp"
#include "Kernels/KernelInput.hpp"

namespace fm {

// The lane loops hold each packet's state field by field (CpuLanesImpl.hpp LaneState,
// McmlLanesImpl.hpp SlabLaneState) and rebuild a PacketState from the fields by position: a
// field added to Packet or PacketState needs its lane array there, or it would start every event
// from zero. These sizes stop the build until then.
static_assert(sizeof(Packet) == 2 * sizeof(Vec3) + sizeof(uint32_t) + sizeof(float),
              "Packet changed: update the lane states (CpuLanesImpl.hpp, McmlLanesImpl.hpp)");
static_assert(sizeof(PacketState) == sizeof(Packet) + sizeof(PacketRng) + 2 * sizeof(float) + 2 * sizeof(uint32_t),
              "PacketState changed: update the lane states (CpuLanesImpl.hpp, McmlLanesImpl.hpp)");

// Tally accumulation on the host: plain adds into per-thread arrays, no accumulation cache.
struct HostAdd {
    static constexpr bool kCache = false;
    FM_HD static void add(double* p, double v) { *p += v; }
};
// The standard tallies that are on, then the tallies Extra (Core/Tally.hpp), on the host.
template <bool V, bool S, bool D, class... Extra>
using HostTallyScorer = TallyScorer<V, S, D, HostAdd, uint64_t, Extra...>;
// Time-resolved runs (Kernels/GatedTally.hpp): the volume and exit tallies with their gated
// copies, with or without the directed tally.
using TimeGatedHostScorer = HostTallyScorer<true, true, false, TimeGatedTally<HostAdd>>;
using TimeGatedDirectedHostScorer = HostTallyScorer<true, true, true, TimeGatedTally<HostAdd>>;
// X(V, S, D) for each of runCpu's eight output choices: the HostTallyScorer instantiations.
#define FM_FOR_EACH_HOST_OUTPUTS(X) \
    X(false, false, false) X(false, false, true) X(false, true, false) X(false, true, true) \
    X(true, false, false) X(true, false, true) X(true, true, false) X(true, true, true)
// X(Scorer) for each further scorer the lane loops (runPacketLanes) are compiled for: a tally
// that runs through runCpu registers its pack here by a name without commas (a using-alias,
// its header included above), e.g. X(TimeGatedHostScorer).
#define FM_FOR_EACH_EXTRA_LANE_SCORER(X) X(TimeGatedHostScorer) X(TimeGatedDirectedHostScorer)

// A worker's packet indices, handed out a chunk at a time: next() sets [begin, end) to the next
// chunk and returns true, or returns false when there is none (range done, or run cancelled).
// stopping() says the run is being cancelled: the lane loops ask it every kStopCheckEvents
// events and then end the packets in flight (booked abnormal) and report them, with those of
// the chunk not yet started, to abandon(n): a packet trapped under a raised guard (maxSteps,
// maxHits) never holds a cancelled run, and packets not finished are not counted as done.
class PacketChunks {
public:
    virtual bool next(uint64_t& begin, uint64_t& end) = 0;
    virtual bool stopping() const { return false; }
    virtual void abandon(uint64_t) {}

protected:
    ~PacketChunks() = default;
};

// The indices of a worker's chunks one at a time, on across chunk ends: the lane loops refill
// a lane from the next chunk instead of draining their lanes at the end of each.
class PacketCursor {
public:
    explicit PacketCursor(PacketChunks& chunks) : chunks_(chunks) {}
    bool next(uint64_t& index) {  // false when no chunk is left
        if (next_ == end_ && !chunks_.next(next_, end_)) return false;
        index = next_++;
        return true;
    }
    bool stopping() const { return chunks_.stopping(); }
    // A cancel ends n packets in flight: they, and the packets of the current chunk not yet
    // started, are not done. No packet is handed out after this.
    void abandon(uint64_t n) {
        chunks_.abandon(n + (end_ - next_));
        next_ = end_;
    }

private:
    PacketChunks& chunks_;
    uint64_t next_ = 0, end_ = 0;  // what is left of the current chunk
};

// Events (lane-loop iterations, or events of one packet in the scalar loops) between looks at
// PacketChunks::stopping(): a few milliseconds at most.
constexpr uint32_t kStopCheckEvents = 1024;

// The loops without AVX2: the packets of every chunk one at a time, from start(i) (false:
// nothing to run) through event() (false: the packet has ended). A cancel seen every
// kStopCheckEvents events ends the packet with abandon() (which books it abnormal), as in the
// lane loops.
template <class Start, class Event, class Abandon>
void runOneByOne(PacketChunks& chunks, Start start, Event event, Abandon abandon) {
    // False when a cancel ended packet i: it and the rest of its chunk [i, e) are not done.
    auto runOne = [&](uint64_t i, uint64_t e) {
        if (!start(i)) return true;
        for (uint32_t n = 1; event(); ++n)
            if (n % kStopCheckEvents == 0 && chunks.stopping()) {
                abandon();
                chunks.abandon(e - i);
                return false;
            }
        return true;
    };
    bool live = true;
    for (uint64_t b, e; live && chunks.next(b, e);)
        for (uint64_t i = b; live && i < e; ++i) live = runOne(i, e);
}

// Per cell, what a hop through each face is, from Core plainCrossing (scored faces counted as
// not plain): bit f set where crossing face f is plain, bit 4 + f where it is plain and enters
// another material. The lane loop then books a plain crossing from the cell it leaves (in
// cache) instead of waiting for the neighbour's record to come from memory to find out.
std::vector<uint8_t> plainCrossingBits(const KernelInput& in);
// The same bits, kept for the next run of the same cells (KernelInput::cellsIdentity, non-zero)
// and refractive indices: a loop of runs over one mesh computes them once.
std::shared_ptr<const std::vector<uint8_t>> keptPlainCrossingBits(const KernelInput& in);

// Runs the packets of every chunk of `chunks` through the lane loop: lanes whose packet ends
// start the next packet of the chunk, then of the next chunk, so lanes idle only at the very end.
// `crossing`: plainCrossingBits of the model, or null (then each hop reads its neighbour).
// `isa`: which loop (cpuLaneIsa(isa) names it).
template <class Scorer>
void runPacketLanes(const ArrayModel& m, const KernelParams& kp, PacketChunks& chunks, Scorer& sc,
                    uint32_t materialCount = 0, const uint8_t* crossing = nullptr, CpuIsa isa = CpuIsa::Best);

// Runs packets [begin, end) of a run through the lane loop, booking into sc (whose ledger and
// events accumulate; its tallies are flushed on return). Scorer: a HostTallyScorer (MCML runs
// have their own lane loop: CPU/McmlLanes.hpp). materialCount (the size of m.materials, 0 if
// unknown) lets the AVX2 loop keep a table of up to 8 materials in registers.
template <class Scorer>
void runPacketLanes(const ArrayModel& m, const KernelParams& kp, uint64_t begin, uint64_t end, Scorer& sc,
                    uint32_t materialCount = 0);

// "avx2" (the lane loop, 8 packets per register) or "generic" (one packet at a time): what
// runPacketLanes and runSlabLanes use for `requested` on this CPU (CpuIsa::Generic forces the
// latter: same histories, so the same results to summation order).
const char* cpuLaneIsa(CpuIsa requested = CpuIsa::Best);

}  // namespace fm
