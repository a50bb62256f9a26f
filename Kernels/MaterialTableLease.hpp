// SPDX-License-Identifier: GPL-3.0-or-later
// The material table in a device's constant memory, lent to the runs that read it. A GPU file
// (.cu) has one table per device; every kernel of that file on the device reads it while it runs.
// Two runs on one device with different materials (two Tcl kernels started with startAsync, a
// batch beside a script's run) must therefore not overlap: the second one's upload would change
// the first one's materials under its running kernels. A run holds a lease on the table from its
// upload until its kernels are done; runs with the same table share it (a batch's two slots per
// device, a loop moving a source), and a run with another table waits until the last holder
// releases it. Waiting runs go in arrival order, before runs that arrive after them with the
// held table, so a stream of same-material runs cannot keep one waiting for ever.
//
// Host-only and independent of CUDA (the copy is the caller's function), so the lending rules are
// tested on any machine (Tests/Kernels/test_material_lease.cpp).
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace fm {

template <class Record>
class MaterialTableLeases {
public:
    // Releases its hold on the table when destroyed or released (movable, not copyable).
    class Lease {
    public:
        Lease() = default;
        Lease(MaterialTableLeases* owner, int device) : owner_(owner), device_(device) {}
        Lease(Lease&& o) noexcept : owner_(std::exchange(o.owner_, nullptr)), device_(o.device_) {}
        Lease& operator=(Lease&& o) noexcept {
            if (this != &o) {
                release();
                owner_ = std::exchange(o.owner_, nullptr);
                device_ = o.device_;
            }
            return *this;
        }
        Lease(const Lease&) = delete;
        Lease& operator=(const Lease&) = delete;
        ~Lease() { release(); }
        void release() {
            if (owner_) std::exchange(owner_, nullptr)->release(device_);
        }
        bool held() const { return owner_ != nullptr; }

    private:
        MaterialTableLeases* owner_ = nullptr;
        int device_ = 0;
    };

    // Holds device's table equal to m: at once when no run waits and the device's table is m (no
    // copy) or unheld; else in arrival order, when the runs before it have had their turn and
    // the table is m or unheld. copy(m) makes the table m (the copy must be complete when copy
    // returns).
    template <class Copy>
    Lease hold(int device, const std::vector<Record>& m, Copy copy) {
        std::unique_lock<std::mutex> lock(mutex_);
        Device& d = devices_[device];
        if (!d.queue.empty() || !(d.holders == 0 || same(d, m))) {
            const uint64_t ticket = d.nextTicket++;
            d.queue.push_back(ticket);
            cv_.wait(lock, [&] { return d.queue.front() == ticket && (d.holders == 0 || same(d, m)); });
            d.queue.pop_front();
            cv_.notify_all();  // the next in line may share this table
        }
        ++d.holders;
        if (!same(d, m)) {
            // The copy runs without the lock, so that devices copy at the same time (each copy
            // also loads the file's device code into its context the first time). This run
            // holds the table meanwhile and the table is not known, so no other run of this
            // device passes the wait above until the copy is done.
            d.known = false;
            lock.unlock();
            try {
                copy(m);
            } catch (...) {
                lock.lock();
                --d.holders;
                cv_.notify_all();
                throw;
            }
            lock.lock();
            d.table = m;
            d.known = true;
            cv_.notify_all();  // runs of this table waiting for the copy
        }
        return Lease(this, device);
    }

    // Runs holding device's table now (tests).
    size_t holders(int device) {
        std::lock_guard<std::mutex> g(mutex_);
        return devices_[device].holders;
    }

private:
    struct Device {
        std::vector<Record> table;
        bool known = false;          // table is what the device holds
        size_t holders = 0;          // runs holding the table
        std::deque<uint64_t> queue;  // tickets of the runs waiting, in arrival order
        uint64_t nextTicket = 0;
    };
    static bool same(const Device& d, const std::vector<Record>& m) {
        return d.known && !m.empty() && d.table.size() == m.size() &&
               std::memcmp(d.table.data(), m.data(), m.size() * sizeof(Record)) == 0;
    }
    void release(int device) {
        std::lock_guard<std::mutex> g(mutex_);
        --devices_[device].holders;
        cv_.notify_all();
    }

    std::mutex mutex_;
    std::condition_variable cv_;
    std::map<int, Device> devices_;
};

}  // namespace fm
