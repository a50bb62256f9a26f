// SPDX-License-Identifier: GPL-3.0-or-later
// Several runs' packets in one launch (planning loops, issue 29): the runs of a group are laid
// end to end in one index space, the persistent threads take packets from one counter across
// them, and a thread whose next packet belongs to a later run first closes the run it was
// scoring (its caches, ledger and counts into that run's sums) and opens the new one (its
// scorer's pointers to the new run's tallies). A packet keeps its run's seed and its own index
// in that run, so every run gets the histories of the same run made alone; only the order of
// the sums differs. A launch of one run per group drains once per run (its last packets leave
// most of the GPU idle); a group drains once.
//
// Host and device code without CUDA types: the GPU kernel (Kernels/CUDA/MultiRunCuda.cu) and
// the host tests (Tests/Kernels/test_multirun.cpp) run the same lane logic.
#pragma once
#include <cstddef>
#include <cstdint>

#include "Kernels/Core/Packet.hpp"

namespace fm {

// One run of a group, as a thread reads it.
struct MultiRunEntry {
    uint64_t end = 0;          // group-wide index one past the run's last packet
    uint64_t firstPacket = 0;  // the run's own index of its first packet (RunOptions::firstPacket)
    uint64_t seed = 1;
    EmitterView emitters{};
};

// The run holding group-wide packet g, searched forward from run r (a thread's packets come in
// increasing order, so it never looks back). g must be below the last run's end.
FM_HD uint32_t multiRunOf(const MultiRunEntry* runs, uint32_t r, uint64_t g) {
    while (g >= runs[r].end) ++r;
    return r;
}

// Packet g's index within its run r (the index its random stream is keyed by).
FM_HD uint64_t multiRunPacket(const MultiRunEntry* runs, uint32_t r, uint64_t g) {
    const uint64_t begin = r ? runs[r - 1].end : 0;
    return runs[r].firstPacket + (g - begin);
}

// A thread's side of a group: the run its scorer points at. Sinks is the kernel's policy with
//   void open(uint32_t run, Scorer&) const   (point the scorer at the run's tallies)
//   void close(uint32_t run, Scorer&) const  (flush the scorer into the run's sums, reset it)
// The caller opens run 0 before the first packet and closes `run` after the last.
struct MultiRunLane {
    uint32_t run = 0;

    // Starts group-wide packet g (the thread has no live packet): as launchPacket for the
    // packet's run, after switching the scorer to that run if it is another.
    template <class Model, class Scorer, class Sinks>
    FM_HD bool launch(const Model& m, const KernelParams& kp, const MultiRunEntry* runs, uint64_t g,
                      PacketState& st, Scorer& sc, const Sinks& sinks) {
        const uint32_t r = multiRunOf(runs, run, g);
        if (r != run) {
            sinks.close(run, sc);
            run = r;
            sinks.open(r, sc);
        }
        Model mr = m;
        mr.emitters = runs[r].emitters;
        KernelParams kr = kp;
        kr.seed = runs[r].seed;
        return launchPacket(mr, kr, multiRunPacket(runs, r, g), st, sc);
    }
};

// How a batch's runs are grouped (host side): consecutive runs, each short enough for a group,
// as many as maxRuns and maxPackets allow (at least one), all with the materials of the first
// (a group shares one material table on the device). sameMaterials(i) tells whether run i has
// the first run's materials; packets(i) is run i's packet count.
struct MultiRunLimits {
    size_t maxRuns = 8;                       // runs per group (BatchOptions::runsPerLaunch)
    uint64_t maxPacketsPerRun = 1ull << 24;   // longer runs go alone (they drain rarely anyway)
    uint64_t maxPackets = 1ull << 25;         // per group: bounds the cancel latency of a launch
};

template <class Packets, class SameMaterials>
size_t multiRunGroupSize(size_t available, const MultiRunLimits& lim, Packets packets, SameMaterials sameMaterials) {
    if (available == 0) return 0;
    if (packets(0) > lim.maxPacketsPerRun) return 1;
    size_t n = 1;
    uint64_t total = packets(0);
    while (n < available && n < lim.maxRuns && packets(n) <= lim.maxPacketsPerRun &&
           total + packets(n) <= lim.maxPackets && sameMaterials(n)) {
        total += packets(n);
        ++n;
    }
    return n;
}

}  // namespace fm
