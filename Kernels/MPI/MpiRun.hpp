// SPDX-License-Identifier: GPL-3.0-or-later
// One run over several MPI ranks (optional component FM_USE_MPI). Ranks take chunks of packet
// indices from a shared counter (one-sided fetch-and-add on rank 0), so faster ranks do more;
// each packet keeps its index and random stream, so the reduced tallies equal a one-process
// run with the same seed to summation order. Tallies, ledger and events are reduced to rank 0.
#pragma once
#include <string>

#include "Kernels/KernelInput.hpp"

namespace fm {

class MpiSession {
public:
    MpiSession(int* argc, char*** argv);  // MPI_Init when built with MPI, else a 1-rank session
    ~MpiSession();
    MpiSession(const MpiSession&) = delete;
    MpiSession& operator=(const MpiSession&) = delete;
    int rank() const { return rank_; }
    int size() const { return size_; }
    // This rank among the ranks of its host (MPI_COMM_TYPE_SHARED): how ranks share the host's
    // GPUs (devicesOfLocalRank, Kernels/DeviceVisibility.hpp). 0 and 1 outside mpirun.
    int localRank() const { return localRank_; }
    int localSize() const { return localSize_; }
    // True when `ok` is true on every rank (collective: every rank must call it). Lets ranks
    // give up together when one of them cannot go on, instead of leaving the others waiting.
    bool allAgree(bool ok) const;
    // Rank 0's v on every rank (collective): a value one rank chooses, such as a seed drawn from
    // the clock, that every rank must run with.
    uint64_t fromRankZero(uint64_t v) const;

private:
    int rank_ = 0, size_ = 1, localRank_ = 0, localSize_ = 1;
    bool initialised_ = false;
};

// Runs `kernel` ("cpu" or "cuda") over the ranks of the session; the full result on rank 0,
// an empty one elsewhere. With one rank it is runKernel.
RunResult runDistributed(const MpiSession& mpi, const std::string& kernel, const KernelInput& in,
                         const RunOptions& opt);

// Adds part's tallies, ledger, events and packet counts into `into`.
void accumulateResult(RunResult& into, const RunResult& part);

}  // namespace fm
