// SPDX-License-Identifier: GPL-3.0-or-later
// How the runs of a batch are shared out and their results gathered (Kernels/Batch.cpp): in one
// process, or over MPI ranks (Kernels/MPI/MpiBatch.cpp). Every call is made from the thread that
// called runBatch, so MPI is only ever used from one thread.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "Kernels/Batch.hpp"

namespace fm {

class BatchTransport {
public:
    virtual ~BatchTransport() = default;
    // Claims the next run for this process; false once none is left.
    virtual bool nextRun(size_t& run) = 0;
    // A run this process finished: rank 0 hands it to onResult, other ranks send it to rank 0.
    virtual void deliver(size_t run, RunResult&& r) = 0;
    // Rank 0: hands over results other ranks have sent. Never blocks.
    virtual void poll() = 0;
    // This process has no more runs: rank 0 waits for every other rank's results, the others
    // say they are done.
    virtual void finish() = 0;
    // After an unrecoverable error on this process: ends every process of the job (MPI_Abort),
    // printing `why` first; nothing in one process.
    virtual void abort(const std::string& why) { (void)why; }
    virtual size_t ranks() const = 0;
    virtual bool root() const = 0;
    virtual size_t delivered() const = 0;  // results handed to onResult so far (rank 0)
    virtual std::vector<size_t> runsPerRank() const = 0;  // rank 0: results from each rank
};

// One process: runs 0..n-1 in order, results straight to onResult.
std::unique_ptr<BatchTransport> makeLocalBatchTransport(size_t runs, const BatchResultFn& onResult);
// Several MPI ranks; nullptr where the session has one rank or the build has no MPI.
std::unique_ptr<BatchTransport> makeMpiBatchTransport(const MpiSession& mpi, size_t runs,
                                                      const BatchResultFn& onResult);

}  // namespace fm
