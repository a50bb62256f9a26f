// SPDX-License-Identifier: GPL-3.0-or-later
// CUDA plumbing shared by the GPU kernels: error checks, owned device buffers, tally
// accumulation (atomics into global memory, plain adds into a thread's shared-memory row), and
// the warp-reduced ledger/event totals. The device-side models are in CudaEngine.cuh.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "Common/Errors.hpp"
#include "Kernels/Core/Packet.hpp"
#include "Kernels/CUDA/CudaKernel.hpp"
#include "Kernels/MaterialTableLease.hpp"

namespace fm {

inline void cudaCheck(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw Error(std::string("CUDA: ") + what + ": " + cudaGetErrorString(e));
}

// A device allocation that names what it holds when memory runs out.
template <class T>
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    DeviceBuffer(size_t n, const char* what) { allocate(n, what); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    ~DeviceBuffer() { if (p_) cudaFree(p_); }
    void allocate(size_t n, const char* what) {
        n_ = 0;
        if (n == 0) return;
        cudaError_t e = cudaMalloc(&p_, n * sizeof(T));
        if (e != cudaSuccess) {
            p_ = nullptr;
            size_t freeB = 0, totalB = 0;
            cudaMemGetInfo(&freeB, &totalB);
            cudaGetLastError();
            throw Error(std::string("CUDA: out of device memory for ") + what + ": needs " +
                        std::to_string(n * sizeof(T) / 1048576.0) + " MiB, " +
                        std::to_string(freeB / 1048576.0) + " MiB free of " +
                        std::to_string(totalB / 1048576.0) + " MiB");
        }
        n_ = n;
    }
    // n elements (their values undefined): reallocated where the size differs.
    void resize(size_t n, const char* what) {
        if (n == n_) return;
        if (p_) cudaFree(p_);
        p_ = nullptr;
        n_ = 0;
        allocate(n, what);
    }
    template <class A>
    void upload(const std::vector<T, A>& v, cudaStream_t s) {
        if (!v.empty()) cudaCheck(cudaMemcpyAsync(p_, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice, s), "upload");
    }
    void zero(cudaStream_t s) {
        if (n_) cudaCheck(cudaMemsetAsync(p_, 0, n_ * sizeof(T), s), "clear");
    }
    // The first `count` elements (default: all).
    std::vector<T> download(cudaStream_t s, size_t count = size_t(-1)) const {
        std::vector<T> v(std::min(count, n_));
        if (!v.empty()) {
            cudaCheck(cudaMemcpyAsync(v.data(), p_, v.size() * sizeof(T), cudaMemcpyDeviceToHost, s), "download");
            cudaCheck(cudaStreamSynchronize(s), "download");
        }
        return v;
    }
    // `count` elements from element `from` (default: the first) into host memory at `to` (queued
    // on s; synchronise before use).
    void downloadTo(T* to, size_t count, cudaStream_t s, size_t from = 0) const {
        if (count) cudaCheck(cudaMemcpyAsync(to, p_ + from, count * sizeof(T), cudaMemcpyDeviceToHost, s), "download");
    }
    T* get() const { return p_; }
    size_t size() const { return n_; }

private:
    T* p_ = nullptr;
    size_t n_ = 0;
};

// Host memory for tallies coming back from a device, page-locked once reserved where the host
// allows: a copy into it runs at the link's speed, where a copy into pageable memory goes
// through the driver's own staging buffer (and a fresh vector is zeroed first). Where the host
// refuses to lock more memory, or before anything is reserved (buffer), ordinary memory serves
// (the copy is then as before). Grows on demand and is kept, so the runs of a loop or a batch
// reuse it.
template <class T>
class PinnedHost {
public:
    PinnedHost() = default;
    PinnedHost(const PinnedHost&) = delete;
    PinnedHost& operator=(const PinnedHost&) = delete;
    ~PinnedHost() { release(); }
    // At least n elements, valid until the next reserve or buffer: the page-locked ones where
    // they hold n, else ordinary memory (page-locking is left to reserve).
    T* buffer(size_t n) {
        if (n <= n_) return p_;
        if (pinned_) return reserve(n);  // a larger page-locked buffer, as reserve gives
        pageable_.resize(n);
        p_ = pageable_.data();
        n_ = n;
        return p_;
    }
    // At least n elements, page-locked where the driver grants them, valid until the next reserve.
    // After a refusal, ordinary memory (the driver is not asked again).
    T* reserve(size_t n) {
        if (n <= n_ && (pinned_ || refused_)) return p_;
        release();
        void* p = nullptr;
        if (!refused_ && cudaMallocHost(&p, n * sizeof(T)) == cudaSuccess) {
            pinned_ = static_cast<T*>(p);
            p_ = pinned_;
        } else {
            cudaGetLastError();  // a refusal is not a sticky error
            refused_ = true;
            pageable_.resize(n);
            p_ = pageable_.data();
        }
        n_ = n;
        return p_;
    }

private:
    void release() {
        if (pinned_) cudaFreeHost(pinned_);
        pinned_ = p_ = nullptr;
        pageable_ = std::vector<T>();
        n_ = 0;
    }
    T* pinned_ = nullptr;
    bool refused_ = false;  // the driver refused to lock memory
    std::vector<T> pageable_;
    T* p_ = nullptr;
    size_t n_ = 0;
};

// The material table in each device's constant memory for one sender (a .cu file: each has its
// own table), lent to the runs that read it (Kernels/MaterialTableLease.hpp): runs with the same
// materials (a batch over sources, a Tcl loop moving a source) share it and send none; a run with
// other materials waits until the runs reading the table are done (two Tcl kernels started with
// startAsync on one GPU), so that no kernel's materials change under it. The copy completes
// before the lease is given: a run on another stream never launches over a table on its way.
class MaterialTableSent {
public:
    using Lease = MaterialTableLeases<MaterialRecord>::Lease;
    // Holds the current device's table equal to m; copy(m, s) queues the copy on stream s,
    // called only when m differs from the device's table. Keep the lease until the run's kernels
    // are done.
    template <class Copy>
    Lease hold(const std::vector<MaterialRecord>& m, cudaStream_t s, Copy copy) {
        int device = 0;
        cudaCheck(cudaGetDevice(&device), "get device");
        return leases_.hold(device, m, [&](const std::vector<MaterialRecord>& t) {
            copy(t, s);
            cudaCheck(cudaStreamSynchronize(s), "upload materials");
        });
    }

private:
    MaterialTableLeases<MaterialRecord> leases_;
};

// Tally accumulation into global arrays: a fire-and-forget double reduction (red.global: no
// generic-address fallback path).
struct DeviceAtomicAdd {
    static constexpr bool kReplicas = true;  // TallyScorer spreads its adds over replicas
    __device__ static void add(double* p, double v) {
        asm volatile("red.global.add.f64 [%0], %1;" ::"l"(__cvta_generic_to_global(p)), "d"(v) : "memory");
    }
};
// Tally accumulation into this thread's own row of shared memory (BlockTallies,
// CudaEngine.cuh): a plain add, no atomics, no accumulation cache.
struct DeviceRowAdd {
    static constexpr bool kCache = false;
    __device__ static void add(double* p, double v) {
        const unsigned a = unsigned(__cvta_generic_to_shared(p));  // shared-space loads and stores
        double x;
        asm("ld.shared.f64 %0, [%1];" : "=d"(x) : "r"(a) : "memory");
        asm("st.shared.f64 [%0], %1;" ::"r"(a), "d"(x + v) : "memory");
    }
};

// Totals every thread adds its ledger and events into, one atomic per warp.
struct DeviceTotals {
    double ledger[7];
    unsigned long long events[12];
};

__device__ inline double warpSum(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}
__device__ inline unsigned long long warpSum(unsigned long long v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

// Every thread of the block must call this (full-warp shuffles).
template <class Count>
__device__ inline void addTotals(DeviceTotals* t, const Ledger& L, const EventCounts<Count>& E) {
    const double l[7] = {L.launched, L.specular, L.absorbed, L.exited, L.rouletteGained, L.rouletteLost, L.abnormal};
    const unsigned long long e[12] = {(unsigned long long)E.launch, E.absorb, E.scatter, E.boundary, E.tir, E.fresnel,
                                      E.refract, E.interface, E.exit, E.die, E.win, E.abnormal};
    const bool lead = (threadIdx.x & 31) == 0;
#pragma unroll
    for (int i = 0; i < 7; ++i) {
        double s = warpSum(l[i]);
        if (lead && s != 0.0) atomicAdd(&t->ledger[i], s);
    }
#pragma unroll
    for (int i = 0; i < 12; ++i) {
        unsigned long long s = warpSum(e[i]);
        if (lead && s) atomicAdd(&t->events[i], s);
    }
}

// One thread's event counts into the totals without warp cooperation (rare path).
template <class Count>
__device__ inline void addEventsUnaggregated(DeviceTotals* t, const EventCounts<Count>& E) {
    const unsigned long long e[12] = {E.launch, E.absorb, E.scatter, E.boundary, E.tir, E.fresnel,
                                      E.refract, E.interface, E.exit, E.die, E.win, E.abnormal};
#pragma unroll
    for (int i = 0; i < 12; ++i)
        if (e[i]) atomicAdd(&t->events[i], e[i]);
}

inline void totalsToResult(const DeviceTotals& t, RunResult& r) {
    Ledger& L = r.ledger;
    L.launched = t.ledger[0]; L.specular = t.ledger[1]; L.absorbed = t.ledger[2]; L.exited = t.ledger[3];
    L.rouletteGained = t.ledger[4]; L.rouletteLost = t.ledger[5]; L.abnormal = t.ledger[6];
    Events& E = r.events;
    E.launch = t.events[0]; E.absorb = t.events[1]; E.scatter = t.events[2]; E.boundary = t.events[3];
    E.tir = t.events[4]; E.fresnel = t.events[5]; E.refract = t.events[6]; E.interface = t.events[7];
    E.exit = t.events[8]; E.die = t.events[9]; E.win = t.events[10]; E.abnormal = t.events[11];
}

}  // namespace fm
