// SPDX-License-Identifier: GPL-3.0-or-later
// The CPU kernel: std::thread workers over packet-index ranges.
#pragma once
#include <functional>
#include <vector>

#include "Kernels/KernelInput.hpp"

namespace fm {

class PacketChunks;  // CPU/CpuLanes.hpp

// Splits packets [first, first+count) into one contiguous range per worker (fixed for a given
// thread count, so results are bit-identical run to run), runs body(worker, begin, end) on each
// in chunks, reports progress from the calling thread and honours cancel between chunks.
// Returns the number of packets completed.
uint64_t forEachPacketRange(const RunOptions& opt, unsigned threads,
                            const std::function<void(unsigned, uint64_t, uint64_t)>& body);

// The same split, but body(worker, chunks) is called once per worker and pulls its chunks
// itself (PacketChunks, CPU/CpuLanes.hpp): the lane loop keeps its packets in flight from one
// chunk to the next instead of draining its lanes at the end of each. Cancel is honoured
// between chunks (next() returns false); the packets already started are completed and counted.
uint64_t forEachWorker(const RunOptions& opt, unsigned threads,
                       const std::function<void(unsigned, PacketChunks&)>& body);
// The same, body(worker, begin, end, chunks) also told the worker's range [begin, end).
uint64_t forEachWorkerRange(const RunOptions& opt, unsigned threads,
                            const std::function<void(unsigned, uint64_t, uint64_t, PacketChunks&)>& body);

// Worker threads that cannot be created (process limits) leave the run to those that started,
// with a warning on stderr; none at all is an Error. An exception thrown in a worker stops the
// others (as a cancel does) and is rethrown on the calling thread once all have ended.

// How many of the `started` threads run when fewer than `asked` could start: a limit stopped the
// starting (threads or address space), so a quarter of them (at least one of two or more) leave
// again before any work, freeing their stacks for the allocations the run still makes.
unsigned workersAfterFailedStart(unsigned asked, unsigned started);

// Tests only: called with each worker's index before its thread is created; it may throw
// std::system_error, as std::thread does when the process may not have more threads.
extern std::function<void(unsigned)> workerStartHookForTests;

unsigned resolveThreads(unsigned requested);

// The workers' per-thread arrays added into out, element by element in worker order, over
// `threads` threads (out takes the first non-empty part's storage, the others are freed; nothing
// when there are none or all are empty).
void addWorkerArrays(std::vector<std::vector<double>>& parts, std::vector<double>& out, unsigned threads);
// The workers' batch sums (BatchSums::add in worker order, the same bits) over `threads` threads.
struct BatchSums;  // Kernels/BatchMeans.hpp
BatchSums addWorkerSums(std::vector<BatchSums>& parts, unsigned threads);

// Runs the standard tallies (volume/surface/directed per opt.outputs, ledger, events) and, with
// opt.batches > 1, their standard errors: each worker runs its range as its share of the
// batches (whole batches per worker), draining its lanes at each batch end.
RunResult runCpu(const KernelInput& in, const RunOptions& opt);

}  // namespace fm
