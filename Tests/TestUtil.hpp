// SPDX-License-Identifier: GPL-3.0-or-later
// Helpers shared by the test suites: statistics, data location, small models.
#pragma once
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <filesystem>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "Kernels/Dispatch.hpp"
#include "fm_config.h"

namespace fmtest {

inline std::string sharedData(const std::string& rel) {
    return std::string(FM_SHARED_DATA_DIR) + "/" + rel;
}
inline bool haveSharedData(const std::string& rel) {
    if (std::filesystem::exists(sharedData(rel))) return true;
    BOOST_TEST_MESSAGE("SKIP: reference data " << sharedData(rel) << " not present");
    return false;
}

// Every event count of two runs equal (the same histories).
inline void checkSameEvents(const fm::Events& a, const fm::Events& b) {
    const std::pair<uint64_t, uint64_t> pairs[] = {
        {a.launch, b.launch},     {a.absorb, b.absorb},   {a.scatter, b.scatter}, {a.boundary, b.boundary},
        {a.tir, b.tir},           {a.fresnel, b.fresnel}, {a.refract, b.refract}, {a.interface, b.interface},
        {a.exit, b.exit},         {a.die, b.die},         {a.win, b.win},         {a.abnormal, b.abnormal}};
    for (const auto& [x, y] : pairs) BOOST_CHECK_EQUAL(x, y);
}

// How many test cases of this process skipped for want of a GPU (Tests/CUDA/cuda_test_main.cpp
// then exits 77: ctest reports the suite skipped, not passed).
inline int& gpuSkips() {
    static int n = 0;
    return n;
}

// GPU tests skip (with the reason) where no CUDA device can be used.
inline bool haveGpu() {
    std::string why;
    if (fm::cudaAvailable(&why)) return true;
    BOOST_TEST_MESSAGE("SKIP: no GPU for this case: " << why);
    ++gpuSkips();
    return false;
}

// Normalised L1 distance sum|a-b| / sum|a| of two tallies: 0 for two all-zero tallies, infinity
// for tallies of different sizes or a non-zero one against an all-zero reference (never NaN,
// which would fail a "< tolerance" check for two equal all-zero tallies).
inline double l1(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
    double n = 0, d = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        n += std::fabs(a[i] - b[i]);
        d += std::fabs(a[i]);
    }
    if (d == 0) return n == 0 ? 0.0 : std::numeric_limits<double>::infinity();
    return n / d;
}

struct MeanSd {
    double mean, sdMean;  // sample mean and standard error of the mean
};
inline MeanSd meanSd(const std::vector<double>& x) {
    double m = std::accumulate(x.begin(), x.end(), 0.0) / x.size();
    double v = 0;
    for (double a : x) v += (a - m) * (a - m);
    v /= (x.size() - 1);
    return {m, std::sqrt(v / x.size())};
}

// |mean - expected| within k standard errors (k = 3 by default), reported on failure.
inline void checkWithinSigma(const std::string& what, const MeanSd& s, double expected, double k = 3) {
    double z = (s.mean - expected) / s.sdMean;
    BOOST_TEST_MESSAGE(what << ": " << s.mean << " +- " << s.sdMean << " vs " << expected << " (z = " << z << ")");
    BOOST_CHECK_MESSAGE(std::fabs(z) <= k, what << ": " << s.mean << " +- " << s.sdMean
                                                << " differs from " << expected << " by z = " << z);
}

}  // namespace fmtest
