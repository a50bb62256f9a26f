// SPDX-License-Identifier: GPL-3.0-or-later
// The lending rules of a device's constant-memory material table (Kernels/MaterialTableLease.hpp),
// on the host: runs with the same table share it without a copy, a run with another table waits
// until the last holder releases (two Tcl kernels started with startAsync on one GPU must not
// change each other's materials mid-run), a waiting run goes before later arrivals with the held
// table, and devices are independent.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "Kernels/MaterialTableLease.hpp"

using namespace fm;
using Table = std::vector<int>;
using Leases = MaterialTableLeases<int>;

namespace {

// A run that holds `table` on device 0 from another thread, and when it got it.
struct Waiter {
    std::atomic<bool> got{false};
    std::atomic<int> order{0};
    Leases::Lease lease;
    std::thread th;
    Waiter(Leases& l, Table table, std::atomic<int>& counter, std::vector<Table>& copies, int device = 0)
        : th([&l, table, &counter, &copies, device, this] {
              lease = l.hold(device, table, [&](const Table& t) { copies.push_back(t); });
              order = ++counter;
              got = true;
          }) {}
    ~Waiter() {
        if (th.joinable()) th.join();
    }
};

bool becomes(const std::atomic<bool>& flag, int ms) {
    for (int i = 0; i < ms && !flag; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return flag;
}

}  // namespace

BOOST_AUTO_TEST_CASE(material_lease_same_table_shared_without_copy) {
    Leases l;
    std::vector<Table> copies;
    auto copy = [&](const Table& t) { copies.push_back(t); };
    Leases::Lease a = l.hold(0, {1, 2, 3}, copy);
    Leases::Lease b = l.hold(0, {1, 2, 3}, copy);
    BOOST_TEST(l.holders(0) == 2u);
    BOOST_REQUIRE_EQUAL(copies.size(), 1u);  // the second run sends nothing
    a.release();
    b.release();
    BOOST_TEST(l.holders(0) == 0u);
    Leases::Lease c = l.hold(0, {1, 2, 3}, copy);  // still on the device: no copy
    BOOST_TEST(copies.size() == 1u);
}

BOOST_AUTO_TEST_CASE(material_lease_other_table_waits_for_the_runs_reading_it) {
    Leases l;
    std::vector<Table> copies;
    std::atomic<int> counter{0};
    Leases::Lease a = l.hold(0, {1}, [&](const Table& t) { copies.push_back(t); });
    Waiter b(l, {2}, counter, copies);
    // While run a's kernels read table {1}, b must not replace it.
    BOOST_TEST(!becomes(b.got, 150));
    BOOST_REQUIRE_EQUAL(copies.size(), 1u);
    a.release();
    BOOST_REQUIRE(becomes(b.got, 5000));
    b.th.join();
    BOOST_REQUIRE_EQUAL(copies.size(), 2u);
    BOOST_TEST(copies[1] == Table{2});
}

BOOST_AUTO_TEST_CASE(material_lease_waiting_run_goes_before_later_same_table_runs) {
    Leases l;
    std::vector<Table> copies;
    std::atomic<int> counter{0};
    Leases::Lease a = l.hold(0, {1}, [&](const Table& t) { copies.push_back(t); });
    Waiter b(l, {2}, counter, copies);
    BOOST_TEST(!becomes(b.got, 50));
    Waiter c(l, {1}, counter, copies);  // the held table, but after b asked for another
    BOOST_TEST(!becomes(c.got, 100));
    a.release();
    BOOST_REQUIRE(becomes(b.got, 5000));
    BOOST_TEST(!becomes(c.got, 100));  // c waits for b's run
    BOOST_TEST(b.order == 1);
    b.th.join();
    b.lease.release();
    BOOST_REQUIRE(becomes(c.got, 5000));
    c.th.join();
    BOOST_REQUIRE_EQUAL(copies.size(), 3u);
    BOOST_TEST(copies[2] == Table{1});
}

BOOST_AUTO_TEST_CASE(material_lease_devices_independent_and_copy_failure) {
    Leases l;
    std::vector<Table> copies;
    auto copy = [&](const Table& t) { copies.push_back(t); };
    Leases::Lease a = l.hold(0, {1}, copy);
    Leases::Lease b = l.hold(1, {2}, copy);  // another device: no wait
    BOOST_TEST(l.holders(0) == 1u);
    BOOST_TEST(l.holders(1) == 1u);
    a.release();
    // A copy that fails leaves no lease and no table believed sent: the next run copies again.
    BOOST_CHECK_THROW(l.hold(0, {3}, [](const Table&) { throw std::runtime_error("device lost"); }), std::runtime_error);
    BOOST_TEST(l.holders(0) == 0u);
    Leases::Lease c = l.hold(0, {3}, copy);
    BOOST_TEST(copies.back() == Table{3});
    // A moved lease is released once.
    Leases::Lease d = std::move(c);
    BOOST_TEST(!c.held());
    BOOST_TEST(d.held());
    d.release();
    BOOST_TEST(l.holders(0) == 0u);
}

// Copies to different devices run at the same time (a multi-GPU run's devices upload their
// tables together): each copy waits, up to 10 s, for the other device's copy to have begun.
BOOST_AUTO_TEST_CASE(material_lease_devices_copy_at_the_same_time) {
    Leases l;
    std::mutex m;
    std::condition_variable cv;
    int inside = 0;
    bool together[2] = {false, false};
    auto copyOn = [&](int k) {
        return [&, k](const Table&) {
            std::unique_lock<std::mutex> g(m);
            ++inside;
            cv.notify_all();
            together[k] = cv.wait_for(g, std::chrono::seconds(10), [&] { return inside == 2; });
        };
    };
    Leases::Lease a, b;
    std::thread t0([&] { a = l.hold(0, {1}, copyOn(0)); });
    std::thread t1([&] { b = l.hold(1, {2}, copyOn(1)); });
    t0.join();
    t1.join();
    BOOST_TEST(together[0]);
    BOOST_TEST(together[1]);
    BOOST_TEST(l.holders(0) == 1u);
    BOOST_TEST(l.holders(1) == 1u);
}

// While one run's copy is under way, a run of the same device with the same table waits for
// it and shares it (no second copy), and a run with another table waits for both to release.
BOOST_AUTO_TEST_CASE(material_lease_same_device_waits_for_a_copy_under_way) {
    Leases l;
    std::vector<Table> copies;
    std::atomic<bool> copying{false};
    std::promise<void> gate;
    std::shared_future<void> open = gate.get_future().share();
    Leases::Lease first;
    std::thread t([&] {
        first = l.hold(0, {7}, [&](const Table& tab) {
            copying = true;
            open.wait();
            copies.push_back(tab);
        });
    });
    BOOST_REQUIRE(becomes(copying, 5000));
    std::atomic<int> counter{0};
    Waiter same(l, {7}, counter, copies);
    BOOST_TEST(!becomes(same.got, 100));  // the copy is not done
    gate.set_value();
    t.join();
    BOOST_REQUIRE(becomes(same.got, 5000));
    BOOST_TEST(copies.size() == 1u);  // shared, not copied again
    Waiter other(l, {8}, counter, copies);  // after `same` has its lease: queued behind nobody
    BOOST_TEST(!becomes(other.got, 100));   // two runs hold table 7
    first.release();
    same.lease.release();
    BOOST_REQUIRE(becomes(other.got, 5000));
    BOOST_TEST(copies.size() == 2u);
    BOOST_TEST(copies.back() == Table{8});
}
