// SPDX-License-Identifier: GPL-3.0-or-later
// A batch over MPI ranks (Kernels/Batch.hpp): whole runs are claimed from one counter (an RMA
// fetch-and-add on rank 0; a fixed interleaving where the MPI library cannot create the window)
// and every finished run is sent to rank 0 as one message. Each rank ends with a message giving
// how many results it sent, so rank 0 knows when it has them all, even after a cancel or an error.
#include <cstdio>
#include <cstring>

#include "Common/Errors.hpp"
#include "Kernels/BatchTransport.hpp"
#include "Kernels/MPI/MpiRun.hpp"
#include "fm_config.h"
#if FM_HAVE_MPI
#include <mpi.h>
#include <climits>
#include <vector>
#endif

namespace fm {

#if FM_HAVE_MPI
namespace {

constexpr int kTagResult = 7101, kTagDone = 7102;

// RunResult <-> bytes (same binary on every rank: plain memcpy of the fields).
class Bytes {
public:
    template <class T>
    void put(const T& v) {
        const char* p = reinterpret_cast<const char*>(&v);
        b_.insert(b_.end(), p, p + sizeof(T));
    }
    void putVector(const std::vector<double>& v) {
        put(uint64_t(v.size()));
        const char* p = reinterpret_cast<const char*>(v.data());
        b_.insert(b_.end(), p, p + v.size() * sizeof(double));
    }
    std::vector<char>& data() { return b_; }

private:
    std::vector<char> b_;
};

class Reader {
public:
    explicit Reader(const std::vector<char>& b) : b_(b) {}
    template <class T>
    T get() {
        need(sizeof(T));
        T v;
        std::memcpy(&v, b_.data() + at_, sizeof(T));
        at_ += sizeof(T);
        return v;
    }
    std::vector<double> getVector() {
        uint64_t n = get<uint64_t>();
        need(n * sizeof(double));
        std::vector<double> v(n);
        if (n) std::memcpy(v.data(), b_.data() + at_, n * sizeof(double));
        at_ += n * sizeof(double);
        return v;
    }

private:
    void need(size_t n) const {
        if (at_ + n > b_.size()) throw Error("MPI batch: truncated result message");
    }
    const std::vector<char>& b_;
    size_t at_ = 0;
};

std::vector<char> pack(uint64_t run, const RunResult& r) {
    Bytes b;
    b.put(run);
    b.put(r.packetsRequested);
    b.put(r.packetsDone);
    b.put(uint64_t(r.cancelled));
    b.put(r.ledger);
    b.put(r.events);
    for (double s : {r.seconds, r.uploadSeconds, r.kernelSeconds, r.downloadSeconds}) b.put(s);
    b.put(uint64_t(r.kernel.size()));
    b.data().insert(b.data().end(), r.kernel.begin(), r.kernel.end());
    b.putVector(r.volume);
    b.putVector(r.surface);
    b.putVector(r.directed);
    return std::move(b.data());
}

RunResult unpack(const std::vector<char>& bytes, uint64_t& run) {
    Reader in(bytes);
    RunResult r;
    run = in.get<uint64_t>();
    r.packetsRequested = in.get<uint64_t>();
    r.packetsDone = in.get<uint64_t>();
    r.cancelled = in.get<uint64_t>() != 0;
    r.ledger = in.get<Ledger>();
    r.events = in.get<Events>();
    r.seconds = in.get<double>();
    r.uploadSeconds = in.get<double>();
    r.kernelSeconds = in.get<double>();
    r.downloadSeconds = in.get<double>();
    uint64_t n = in.get<uint64_t>();
    for (uint64_t i = 0; i < n; ++i) r.kernel += in.get<char>();
    r.volume = in.getVector();
    r.surface = in.getVector();
    r.directed = in.getVector();
    return r;
}

class MpiTransport : public BatchTransport {
public:
    MpiTransport(const MpiSession& mpi, size_t runs, BatchResultFn onResult)
        : rank_(mpi.rank()), size_(mpi.size()), runs_(runs), onResult_(std::move(onResult)),
          sent_(size_, 0), received_(size_, 0), doneFrom_(size_, false) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int ok = MPI_Win_create(rank_ == 0 ? &counter_ : nullptr, rank_ == 0 ? sizeof counter_ : 0,
                                sizeof counter_, MPI_INFO_NULL, MPI_COMM_WORLD, &win_) == MPI_SUCCESS;
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        int allOk = 0;
        MPI_Allreduce(&ok, &allOk, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        shared_ = allOk != 0;
    }
    ~MpiTransport() override {
        if (win_ != MPI_WIN_NULL) MPI_Win_free(&win_);
    }

    bool nextRun(size_t& run) override {
        uint64_t i = uint64_t(rank_) + claimed_ * uint64_t(size_);
        if (shared_) {
            const uint64_t one = 1;
            MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win_);
            MPI_Fetch_and_op(&one, &i, MPI_UINT64_T, 0, 0, MPI_SUM, win_);
            MPI_Win_unlock(0, win_);
        }
        ++claimed_;
        if (i >= runs_) return false;
        run = size_t(i);
        return true;
    }
    void deliver(size_t run, RunResult&& r) override {
        if (rank_ == 0) {
            ++ownDelivered_;
            hand(run, std::move(r));
            return;
        }
        std::vector<char> b = pack(run, r);
        if (b.size() > size_t(INT_MAX))
            throw Error("MPI batch: a run's result (" + std::to_string(b.size()) + " bytes) exceeds one MPI message");
        MPI_Send(b.data(), int(b.size()), MPI_BYTE, 0, kTagResult, MPI_COMM_WORLD);
        ++sentByMe_;
    }
    void poll() override {
        if (rank_ != 0) return;
        for (;;) {
            int flag = 0;
            MPI_Status st;
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
            if (!flag) return;
            receive(st);
        }
    }
    void finish() override {
        if (rank_ != 0) {
            uint64_t n = sentByMe_;
            MPI_Send(&n, 1, MPI_UINT64_T, 0, kTagDone, MPI_COMM_WORLD);
            return;
        }
        doneFrom_[0] = true;
        while (!allIn()) {
            MPI_Status st;
            MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            receive(st);
        }
    }
    void abort(const std::string& why) override {
        std::fprintf(stderr, "fullmonte: rank %d: %s; aborting the MPI job\n", rank_, why.c_str());
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    size_t ranks() const override { return size_t(size_); }
    bool root() const override { return rank_ == 0; }
    size_t delivered() const override { return delivered_; }
    std::vector<size_t> runsPerRank() const override {
        std::vector<size_t> n(received_.begin(), received_.end());
        n[0] = ownDelivered_;
        return n;
    }

private:
    void hand(size_t run, RunResult&& r) {
        ++delivered_;
        if (onResult_) onResult_(run, std::move(r));
    }
    void receive(const MPI_Status& st) {
        int src = st.MPI_SOURCE;
        if (st.MPI_TAG == kTagDone) {
            uint64_t n = 0;
            MPI_Recv(&n, 1, MPI_UINT64_T, src, kTagDone, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            sent_[src] = n;
            doneFrom_[src] = true;
            return;
        }
        int count = 0;
        MPI_Get_count(&st, MPI_BYTE, &count);
        std::vector<char> b(size_t(count > 0 ? count : 0));
        MPI_Recv(b.data(), count, MPI_BYTE, src, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (st.MPI_TAG != kTagResult) return;  // not ours
        uint64_t run = 0;
        RunResult r = unpack(b, run);
        ++received_[src];
        hand(size_t(run), std::move(r));
    }
    bool allIn() const {
        for (int k = 1; k < size_; ++k)
            if (!doneFrom_[k] || received_[k] < sent_[k]) return false;
        return true;
    }

    int rank_, size_;
    uint64_t runs_;
    BatchResultFn onResult_;
    uint64_t counter_ = 0, claimed_ = 0, sentByMe_ = 0;
    size_t delivered_ = 0, ownDelivered_ = 0;
    MPI_Win win_ = MPI_WIN_NULL;
    bool shared_ = false;
    std::vector<uint64_t> sent_, received_;
    std::vector<bool> doneFrom_;
};

}  // namespace

std::unique_ptr<BatchTransport> makeMpiBatchTransport(const MpiSession& mpi, size_t runs,
                                                      const BatchResultFn& onResult) {
    if (mpi.size() <= 1) return nullptr;
    return std::make_unique<MpiTransport>(mpi, runs, onResult);
}

#else  // no MPI in this build: one process

std::unique_ptr<BatchTransport> makeMpiBatchTransport(const MpiSession&, size_t, const BatchResultFn&) {
    return nullptr;
}

#endif

}  // namespace fm
