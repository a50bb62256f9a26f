// SPDX-License-Identifier: GPL-3.0-or-later
// The data of packet traces, apart from the loop that records them (PacketTrace.hpp): the event
// codes, one trace point (TraceStep) and a run's traces (TraceSet). The writers
// (Storage/VTK/VTKTraceWriter) include this header alone, so they depend on no kernel.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace fm {

// What brought the packet to a trace point.
enum TraceEvent : uint8_t {
    kTraceLaunch = 0,         // first point: where the source emitted it
    kTraceCross = 1,          // crossed a face into the next tetra (refracted if n differs)
    kTraceReflect = 2,        // Fresnel or total internal reflection at a face; same tetra
    kTraceScatter = 3,        // interaction: weight dropped, then scattered
    kTraceRouletteWin = 4,    // interaction below wmin that won roulette (weight raised), scattered
    kTraceExit = 5,           // left the mesh through a boundary face (weight leaving)
    kTraceRouletteDeath = 6,  // interaction below wmin that lost roulette; weight 0
    kTraceAbnormal = 7,       // stopped by a guard (maxSteps, maxHits) or failed emission
};

inline const char* traceEventName(uint8_t e) {
    static const char* const names[] = {"launch", "cross", "reflect", "scatter",
                                        "roulettewin", "exit", "death", "abnormal"};
    return e < 8 ? names[e] : "unknown";
}

// One point of a trace. 36 bytes; a trace has (events + 1) of them.
struct TraceStep {
    float pos[3];     // mm
    float w;          // packet weight after the event
    float step;       // length of the straight segment ending here (mm; 0 at launch)
    float path;       // path length from launch (mm)
    float time;       // time of flight from launch (ns): sum of segment length * n / c
    uint32_t tetra;   // tetra the packet is in after the event (the last one inside at exit)
    uint16_t material;  // material (region) of that tetra
    uint8_t event;    // TraceEvent
    uint8_t pad = 0;
};

// Traces in packet-index order: trace i is steps[first[i] .. first[i+1]).
struct TraceSet {
    std::vector<TraceStep> steps;
    std::vector<uint64_t> first{0};
    size_t traceCount() const { return first.size() - 1; }
    size_t length(size_t i) const { return size_t(first[i + 1] - first[i]); }
    const TraceStep& step(size_t i, size_t j) const { return steps[size_t(first[i]) + j]; }
};

}  // namespace fm
