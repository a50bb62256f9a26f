// SPDX-License-Identifier: GPL-3.0-or-later
#include "Kernels/MPI/MpiRun.hpp"

#include "Common/Errors.hpp"
#include "Common/Interrupt.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <exception>
#include <string>

#include "Kernels/BatchMeans.hpp"
#include "Kernels/Dispatch.hpp"
#include "fm_config.h"
#if FM_HAVE_MPI
#include <mpi.h>
#endif

namespace fm {

void accumulateResult(RunResult& into, const RunResult& part) {
    auto add = [](std::vector<double>& a, const std::vector<double>& b) {
        if (a.empty()) a = b;
        else for (size_t i = 0; i < b.size(); ++i) a[i] += b[i];
    };
    addIndependentErrors(into.standardError, part.standardError, into.packetsDone == 0);
    add(into.volume, part.volume);
    add(into.surface, part.surface);
    add(into.directed, part.directed);
    add(into.gatedVolume, part.gatedVolume);
    add(into.gatedSurface, part.gatedSurface);
    if (part.gates.on()) into.gates = part.gates;
    into.ledger.add(part.ledger);
    into.events.add(part.events);
    into.packetsDone += part.packetsDone;
    into.cpuPackets += part.cpuPackets;
    into.cancelled = into.cancelled || part.cancelled;
    into.kernel = part.kernel;
}

#if FM_HAVE_MPI

// Started by mpirun (OpenMPI or a PMI launcher)? A plain start stays a one-rank session without
// MPI_Init, so a single-process run never depends on the MPI runtime's environment.
static bool launchedByMpirun() {
    for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
        if (std::getenv(v)) return true;
    return false;
}

MpiSession::MpiSession(int* argc, char*** argv) {
    if (!launchedByMpirun()) return;
    int flag = 0;
    MPI_Initialized(&flag);
    if (!flag) {
        // Funneled: batches (Kernels/Batch.cpp) run kernels on worker threads while the calling
        // thread alone makes MPI calls.
        int provided = 0;
        MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
        initialised_ = true;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm host = MPI_COMM_NULL;
    if (size_ > 1 && MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &host) == MPI_SUCCESS &&
        host != MPI_COMM_NULL) {
        MPI_Comm_rank(host, &localRank_);
        MPI_Comm_size(host, &localSize_);
        MPI_Comm_free(&host);
    }
}

MpiSession::~MpiSession() {
    if (!initialised_) return;
    if (!stopRequested()) {
        MPI_Finalize();
        return;
    }
    // After SIGINT/SIGTERM the launcher is tearing the job down: MPI_Finalize would wait for
    // daemons that are gone (until the stop watchdog ends the process), and the launcher kills
    // the job as soon as one rank ends without it. So the ranks wait for each other here (rank 0
    // has then written its interrupted summary) and end without finalising.
    MPI_Barrier(MPI_COMM_WORLD);
}

bool MpiSession::allAgree(bool ok) const {
    if (size_ == 1) return ok;
    int mine = ok ? 1 : 0, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all != 0;
}

uint64_t MpiSession::fromRankZero(uint64_t v) const {
    if (size_ > 1) MPI_Bcast(&v, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    return v;
}

namespace {

// Sums a vector onto rank 0 in place (sizes agree on every rank: same model, same outputs).
void reduceVector(std::vector<double>& v, int rank) {
    if (v.empty()) return;
    if (rank == 0) MPI_Reduce(MPI_IN_PLACE, v.data(), int(v.size()), MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    else MPI_Reduce(v.data(), nullptr, int(v.size()), MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
}

// The ranks' standard errors: their variances add on rank 0 (their packets are independent);
// any rank without an estimate leaves the result without one.
void reduceErrors(RunResult& r, int rank) {
    TallyErrors& se = r.standardError;
    const bool none = !se.available() && r.packetsDone > 0;  // a rank that ran nothing has no say
    se.volume.resize(r.volume.size());  // the same sizes on every rank for the reductions
    se.surface.resize(r.surface.size());
    se.directed.resize(r.directed.size());
    se.gatedVolume.resize(r.gatedVolume.size());
    se.gatedSurface.resize(r.gatedSurface.size());
    // The per-bin totals' errors: kept by the CPU kernel only (every rank runs the same kernel).
    const bool totals = r.kernel == "cpu";
    se.gatedVolumeTotals.resize(totals && !r.gatedVolume.empty() ? r.gates.bins() : 0);
    se.gatedSurfaceTotals.resize(totals && !r.gatedSurface.empty() ? r.gates.bins() : 0);
    uint64_t mine[2] = {se.batches, none ? 1u : 0u}, all[2] = {0, 0};
    MPI_Reduce(mine, all, 2, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    std::array<double, 7> l = ledgerFields(se.ledger);
    std::vector<double> ledger(l.begin(), l.end());
    for (std::vector<double>* v : {&se.volume, &se.surface, &se.directed, &se.gatedVolume, &se.gatedSurface,
                                     &se.gatedVolumeTotals, &se.gatedSurfaceTotals, &ledger}) {
        for (double& x : *v) x *= x;
        reduceVector(*v, rank);
        for (double& x : *v) x = std::sqrt(x);
    }
    if (rank != 0) return;
    std::copy(ledger.begin(), ledger.end(), l.begin());
    se.ledger = ledgerFromFields(l);
    se.batches = all[0];
    if (all[1] > 0) se = TallyErrors{};
}

// A rank that took no chunk (a run of fewer chunks than ranks) has empty tallies: every rank
// takes the largest size, so that each reduction below has the same count on every rank.
void agreeSizes(RunResult& r) {
    std::vector<double>* v[5] = {&r.volume, &r.surface, &r.directed, &r.gatedVolume, &r.gatedSurface};
    uint64_t mine[5], all[5];
    for (int i = 0; i < 5; ++i) mine[i] = v[i]->size();
    MPI_Allreduce(mine, all, 5, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    for (int i = 0; i < 5; ++i) v[i]->resize(size_t(all[i]), 0.0);
}

void reduceResult(RunResult& r, int rank) {
    agreeSizes(r);
    reduceErrors(r, rank);
    reduceVector(r.volume, rank);
    reduceVector(r.surface, rank);
    reduceVector(r.directed, rank);
    reduceVector(r.gatedVolume, rank);
    reduceVector(r.gatedSurface, rank);
    std::vector<double> ledger{r.ledger.launched, r.ledger.specular, r.ledger.absorbed, r.ledger.exited,
                               r.ledger.rouletteGained, r.ledger.rouletteLost, r.ledger.abnormal};
    reduceVector(ledger, rank);
    Events& e = r.events;
    uint64_t ev[15] = {e.launch, e.absorb, e.scatter, e.boundary, e.tir, e.fresnel, e.refract, e.interface,
                       e.exit, e.die, e.win, e.abnormal, r.packetsDone, r.cancelled ? 1u : 0u, r.cpuPackets};
    uint64_t sum[15];
    MPI_Reduce(ev, sum, 15, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank != 0) return;
    Ledger& L = r.ledger;
    L.launched = ledger[0]; L.specular = ledger[1]; L.absorbed = ledger[2]; L.exited = ledger[3];
    L.rouletteGained = ledger[4]; L.rouletteLost = ledger[5]; L.abnormal = ledger[6];
    e = Events{sum[0], sum[1], sum[2], sum[3], sum[4], sum[5], sum[6], sum[7], sum[8], sum[9], sum[10], sum[11]};
    r.packetsDone = sum[12];
    r.cancelled = sum[13] > 0;
    r.cpuPackets = sum[14];
}

// Collective: where any rank failed, every rank throws (the lowest failing rank's message, which
// that rank rethrows as it was), so that no rank is left waiting in a collective for one that
// has gone.
void throwIfAnyRankFailed(const MpiSession& mpi, const std::exception_ptr& failure) {
    const int size = mpi.size();
    int mineFirst = failure ? mpi.rank() : size, first = size;
    MPI_Allreduce(&mineFirst, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == size) return;
    std::string why;
    if (mpi.rank() == first) try {
            std::rethrow_exception(failure);
        } catch (const std::exception& e) {
            why = e.what();
        }
    uint64_t n = why.size();
    MPI_Bcast(&n, 1, MPI_UINT64_T, first, MPI_COMM_WORLD);
    why.resize(size_t(n));
    MPI_Bcast(why.data(), int(std::min<uint64_t>(n, uint64_t(INT_MAX))), MPI_CHAR, first, MPI_COMM_WORLD);
    if (failure) std::rethrow_exception(failure);
    throw Error("MPI rank " + std::to_string(first) + " failed: " + why);
}

}  // namespace

RunResult runDistributed(const MpiSession& mpi, const std::string& kernel, const KernelInput& in,
                         const RunOptions& given) {
    if (mpi.size() == 1) return runKernel(kernel, in, given);
    validateRunOptions(given);
    RunOptions opt = given;  // with the gated exit tally's faces, made once for every chunk and the result
    if (opt.outputs.gatedSurface) opt.gates = withExitFaces(in, opt.gates);
    auto t0 = std::chrono::steady_clock::now();
    // Chunks small enough to balance uneven ranks, large enough to keep a GPU busy.
    const uint64_t chunk = std::max<uint64_t>(4096, opt.packets / (8 * uint64_t(mpi.size())));
    // The shared counter is an RMA window on rank 0. Where the MPI build cannot create one
    // (no one-sided transport), every rank falls back to a fixed interleaving of the chunks.
    uint64_t counter = 0;
    MPI_Win win = MPI_WIN_NULL;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int ok = MPI_Win_create(mpi.rank() == 0 ? &counter : nullptr, mpi.rank() == 0 ? sizeof counter : 0,
                            sizeof counter, MPI_INFO_NULL, MPI_COMM_WORLD, &win) == MPI_SUCCESS;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    int allOk = 0;
    MPI_Allreduce(&ok, &allOk, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    RunResult mine;
    mine.kernel = kernel;
    if (opt.outputs.gated()) mine.gates = opt.gates;  // also on a rank that takes no chunk
    std::exception_ptr failure;  // this rank's error: every rank still reaches the collectives below
    for (uint64_t k = 0;; ++k) {
        uint64_t begin = (k * uint64_t(mpi.size()) + uint64_t(mpi.rank())) * chunk;
        if (allOk) {
            MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
            MPI_Fetch_and_op(&chunk, &begin, MPI_UINT64_T, 0, 0, MPI_SUM, win);
            MPI_Win_unlock(0, win);
        }
        if (begin >= opt.packets) break;
        RunOptions part = opt;
        part.firstPacket = opt.firstPacket + begin;
        part.packets = std::min(chunk, opt.packets - begin);
        part.batches = std::min(effectiveBatches(opt, kernel != "cpu"), part.packets);
        if (mpi.rank() != 0) part.progress = nullptr;
        try {
            accumulateResult(mine, runKernel(kernel, in, part));
        } catch (const std::exception&) {
            failure = std::current_exception();
            if (allOk) {  // the other ranks find the counter spent and stop at their next chunk
                const uint64_t spent = opt.packets;
                uint64_t was = 0;
                MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
                MPI_Fetch_and_op(&spent, &was, MPI_UINT64_T, 0, 0, MPI_REPLACE, win);
                MPI_Win_unlock(0, win);
            }
            break;
        }
        if (mine.cancelled) break;
    }
    if (win != MPI_WIN_NULL) MPI_Win_free(&win);
    throwIfAnyRankFailed(mpi, failure);
    reduceResult(mine, mpi.rank());
    mine.packetsRequested = opt.packets;
    mine.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (mpi.rank() != 0) return RunResult{};
    mine.kernel = kernel + " x" + std::to_string(mpi.size()) + " ranks";
    return mine;
}

#else  // no MPI: a one-rank session

MpiSession::MpiSession(int*, char***) {}
MpiSession::~MpiSession() = default;
bool MpiSession::allAgree(bool ok) const { return ok; }
uint64_t MpiSession::fromRankZero(uint64_t v) const { return v; }

RunResult runDistributed(const MpiSession&, const std::string& kernel, const KernelInput& in,
                         const RunOptions& opt) {
    return runKernel(kernel, in, opt);
}

#endif

}  // namespace fm
