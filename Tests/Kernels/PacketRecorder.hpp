// SPDX-License-Identifier: GPL-3.0-or-later
// A PacketSource that passes every request on to another and records the blocks it hands out,
// with the side that took them: hybrid tests check that the blocks tile the run's packet range
// exactly once and count each side's packets.
#pragma once
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "Kernels/Hybrid.hpp"
#include "Kernels/PacketSource.hpp"

namespace fmtest {

struct PacketBlock {
    uint64_t begin, end;
    bool gpu;
};

// The blocks of both sides of one run.
struct PacketBlocks {
    std::mutex m;
    std::vector<PacketBlock> blocks;
    void add(uint64_t b, uint64_t e, bool gpu) {
        std::lock_guard<std::mutex> g(m);
        blocks.push_back({b, e, gpu});
    }
    // Checks that the blocks tile [first, first + n) once each; returns the packets per side
    // (GPU, CPU).
    std::pair<uint64_t, uint64_t> checkTiling(uint64_t first, uint64_t n) {
        std::sort(blocks.begin(), blocks.end(), [](const PacketBlock& a, const PacketBlock& b) { return a.begin < b.begin; });
        BOOST_REQUIRE(!blocks.empty());
        uint64_t at = first, gpu = 0, cpu = 0;
        for (const PacketBlock& b : blocks) {
            BOOST_CHECK_EQUAL(b.begin, at);  // no gap, no overlap
            BOOST_CHECK_LT(b.begin, b.end);
            at = b.end;
            (b.gpu ? gpu : cpu) += b.end - b.begin;
        }
        BOOST_CHECK_EQUAL(at, first + n);
        return {gpu, cpu};
    }
};

class PacketRecorder final : public fm::PacketSource {
public:
    PacketRecorder(fm::PacketSource* inner, bool gpu, PacketBlocks& out) : inner_(inner), gpu_(gpu), out_(out) {}
    bool take(unsigned t, uint64_t& b, uint64_t& e) override {
        if (!inner_->take(t, b, e)) return false;
        out_.add(b, e, gpu_);
        return true;
    }
    bool takeLaunch(unsigned t, uint64_t most, uint64_t& b, uint64_t& e) override {
        ++launchTakes;
        if (!inner_->takeLaunch(t, most, b, e)) return false;
        out_.add(b, e, gpu_);
        return true;
    }
    void launchDone(unsigned t, uint64_t packets) override { inner_->launchDone(t, packets); }
    std::atomic<unsigned> launchTakes{0};  // calls of takeLaunch (a GPU's queued launches)

private:
    fm::PacketSource* inner_;
    bool gpu_;
    PacketBlocks& out_;
};

// `run` as a hybrid side whose blocks are recorded in `blocks`; launchTakes, when given,
// receives its calls of takeLaunch.
inline fm::HybridSideRunner recordedSide(PacketBlocks& blocks, bool gpu, fm::HybridSideRunner run,
                                         unsigned* launchTakes = nullptr) {
    return [&blocks, gpu, run, launchTakes](const fm::KernelInput& in, const fm::RunOptions& o) {
        PacketRecorder r(o.packetSource, gpu, blocks);
        fm::RunOptions p = o;
        p.packetSource = &r;
        fm::RunResult res = run(in, p);
        if (launchTakes) *launchTakes = r.launchTakes;
        return res;
    };
}

}  // namespace fmtest
