// SPDX-License-Identifier: GPL-3.0-or-later
// Launch records drawn from compiled sources as the kernels draw them (packet i uses stream
// (seed, i)), for the tests of source distributions.
#pragma once
#include <vector>

#include "Kernels/Core/Emitters.hpp"
#include "Kernels/KernelInput.hpp"

namespace fmtest {

inline std::vector<fm::LaunchRecord> sampleLaunches(const fm::KernelInput& in, int n, uint64_t seed) {
    fm::ArrayModel m = in.view();
    std::vector<fm::LaunchRecord> out;
    for (int i = 0; i < n; ++i) {
        fm::PacketRng rng(seed, uint64_t(i));
        out.push_back(fm::emit(m, m.emitters, rng));
    }
    return out;
}

}  // namespace fmtest
