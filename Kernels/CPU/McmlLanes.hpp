// SPDX-License-Identifier: GPL-3.0-or-later
// The CPU's MCML photon loop: the slab photon loop (Kernels/McmlSlabLoop.hpp) with 32 photons
// in lockstep, one event each per iteration, so that the step, the move to the interaction
// site and the interaction (drop, Henyey-Greenstein spin) run in vector registers, and the
// deposit's (r, z) bins are computed for all lanes at once; the rare events (layer crossings, roulette,
// guards, launches) run per photon through the slab loop's own functions. Each photon keeps its
// stream and draws in the slab loop's order, so it has runSlabPhoton's history whichever lane
// or thread runs it (test_mcml checks the grids and every event count against it). Compiled
// per instruction set like the mesh lane loop (Kernels/CPU/CpuLanes.hpp): AVX2 where the CPU
// has it, else one photon at a time through runSlabPhoton.
#pragma once
#include "Kernels/CPU/CpuLanes.hpp"
#include "Kernels/Core/SlabModel.hpp"
#include "Kernels/McmlScorer.hpp"

namespace fm {

// The slab loop's sink on the host: MCML's tallies (McmlScorer.hpp), plain adds into one
// worker's arrays.
using HostSlabSink = McmlScorer<HostAdd>;

// Runs the photons of every chunk through the slab loop into sk (its ledger and events
// accumulate; events.scatter is left to the caller: slabScatterCount). `isa`: which loop
// (CpuLanes.hpp cpuLaneIsa).
void runSlabLanes(const SlabModel& m, const KernelParams& kp, PacketChunks& chunks,
                  HostSlabSink& sk, CpuIsa isa = CpuIsa::Best);

}  // namespace fm
