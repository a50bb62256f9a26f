// SPDX-License-Identifier: GPL-3.0-or-later
// One run on the host's CPU threads and its GPUs together (kernel "hybrid"). Both sides take
// blocks of packet indices from one counter (Kernels/PacketSource.hpp) on the host. A GPU takes
// a block for each of its launches as it queues them (two deep, as when it runs alone), so it
// launches as often as alone and never waits for the CPU; with standard errors it takes one
// batch at a time, as alone. Each CPU worker takes a block sized from the measured rates to end
// well before the run's predicted end (never more than half of what is left), so the GPUs run
// the last packets and the CPU never holds them up. The CPU joins only once the GPUs' rate is
// known and the run is long enough to pay for the CPU's fixed cost (its tallies allocated and
// summed); otherwise the GPUs run everything. Each side's tallies, ledger, events and standard
// errors are added as split runs add them (accumulateResult, Kernels/MPI/MpiRun.hpp): every
// packet keeps its index and random stream, so the result equals any other split's to
// summation order and to the float rounding that differs between the CPU and GPU kernels.
#pragma once
#include <cstdint>
#include <functional>

#include "Kernels/KernelInput.hpp"

namespace fm {

// The scheduler's constants (tests change them; users need not).
struct HybridPolicy {
    double cpuShareOfRest = 0.5;       // a CPU block lasts at most this part of the run's predicted rest
    double cpuMinBlockSeconds = 0.005; // a CPU worker stops once its block would be shorter
    double cpuMaxBlockSeconds = 0.25;  // longer blocks would adapt too slowly to the rates
    uint64_t cpuFirstBlock = 1024;     // packets of a CPU worker's first block (measures its rate)
    // A GPU's block for one launch (or, with standard errors, one batch) is at most this many
    // packets; 0: no limit beyond the launch or batch (tests force small blocks with it).
    uint64_t gpuChunk = 0;
    // The CPU's fixed cost: thread start plus its tallies allocated, summed over its threads and
    // added to the GPUs', at hostBytesPerSecond. The CPU joins only where the GPUs' predicted rest
    // is cpuWorthFactor times that cost.
    double cpuStartSeconds = 0.01;
    double hostBytesPerSecond = 2e9;
    double cpuWorthFactor = 2;
};

// A side's kernel: runs the packets its RunOptions::packetSource hands out.
using HybridSideRunner = std::function<RunResult(const KernelInput&, const RunOptions&)>;

struct HybridSides {
    HybridSideRunner gpu;      // runCuda, or a stand-in in tests
    unsigned gpuTakers = 1;    // its takers (devices): the taker indices it passes to take()
    HybridSideRunner cpu;      // runCpu
    unsigned cpuThreads = 1;   // its worker threads (RunOptions::threads of the CPU side)
};

// CPU threads of a hybrid run: `requested`, or for 0 all hardware threads but one per GPU (each
// GPU's host thread launches and waits for its kernels), at least one.
unsigned hybridCpuThreads(unsigned requested, unsigned gpus);

// runCuda on opt.devices with runCpu on hybridCpuThreads(opt.threads) threads. Throws naming
// the kernel when there is no CUDA device or the build has no CUDA.
RunResult runHybrid(const KernelInput& in, const RunOptions& opt);
// The same over any two sides (tests stand a second CPU kernel in for the GPU).
RunResult runHybridWith(const KernelInput& in, const RunOptions& opt, const HybridSides& sides,
                        const HybridPolicy& policy = HybridPolicy{});

}  // namespace fm
