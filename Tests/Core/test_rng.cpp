// SPDX-License-Identifier: GPL-3.0-or-later
// Random streams: uniformity, independence of packet streams, reproducibility.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <vector>

#include "Kernels/Core/Rng.hpp"

using fm::PacketRng;

namespace {
// Upper 1e-4 quantile of chi-square with k degrees of freedom (Wilson-Hilferty).
double chi2Critical(double k) {
    double z = 3.719;
    double t = 1 - 2 / (9 * k) + z * std::sqrt(2 / (9 * k));
    return k * t * t * t;
}
}  // namespace

BOOST_AUTO_TEST_SUITE(rng)

BOOST_AUTO_TEST_CASE(same_key_same_stream_different_key_different) {
    PacketRng a(42, 7), b(42, 7), c(42, 8), d(43, 7);
    int sameC = 0, sameD = 0;
    for (int i = 0; i < 1000; ++i) {
        uint32_t x = a.next();
        BOOST_REQUIRE_EQUAL(x, b.next());
        sameC += (x == c.next());
        sameD += (x == d.next());
    }
    BOOST_CHECK_LT(sameC, 3);
    BOOST_CHECK_LT(sameD, 3);
}

BOOST_AUTO_TEST_CASE(uniform_chi_square) {
    const int bins = 100, n = 1000000;
    std::vector<double> count(bins, 0);
    PacketRng r(1, 0);
    for (int i = 0; i < n; ++i) {
        float u = r.uniform();
        BOOST_REQUIRE(u >= 0.f && u < 1.f);
        count[int(u * bins)]++;
    }
    double chi2 = 0, e = double(n) / bins;
    for (double c : count) chi2 += (c - e) * (c - e) / e;
    BOOST_TEST_MESSAGE("uniform chi2 = " << chi2 << " (dof " << bins - 1 << ")");
    BOOST_CHECK_LT(chi2, chi2Critical(bins - 1));
}

BOOST_AUTO_TEST_CASE(open_interval_never_zero) {
    PacketRng r(3, 99);
    for (int i = 0; i < 200000; ++i) {
        float u = r.uniformOpen();
        BOOST_REQUIRE(u > 0.f && u <= 1.f);
    }
}

// Neighbouring packets (the worst case for a counter-based generator keyed by index) must be
// uncorrelated: first draws of packets i and i+1 form a uniform 2-D histogram.
BOOST_AUTO_TEST_CASE(adjacent_streams_independent) {
    const int side = 16, n = 400000;
    std::vector<double> count(side * side, 0);
    double sxy = 0, sx = 0, sy = 0, sxx = 0, syy = 0;
    for (int i = 0; i < n; ++i) {
        PacketRng a(5, uint64_t(i)), b(5, uint64_t(i) + 1);
        double x = a.uniform(), y = b.uniform();
        count[int(x * side) * side + int(y * side)]++;
        sxy += x * y; sx += x; sy += y; sxx += x * x; syy += y * y;
    }
    double chi2 = 0, e = double(n) / (side * side);
    for (double c : count) chi2 += (c - e) * (c - e) / e;
    BOOST_CHECK_LT(chi2, chi2Critical(side * side - 1));
    double cov = sxy / n - (sx / n) * (sy / n);
    double corr = cov / std::sqrt((sxx / n - (sx / n) * (sx / n)) * (syy / n - (sy / n) * (sy / n)));
    BOOST_TEST_MESSAGE("adjacent stream correlation " << corr);
    BOOST_CHECK_LT(std::fabs(corr), 4.0 / std::sqrt(double(n)));  // ~4 sigma for rho = 0
}

BOOST_AUTO_TEST_CASE(double_uniform_range) {
    PacketRng r(9, 1);
    double mn = 1, mx = 0, sum = 0;
    for (int i = 0; i < 100000; ++i) {
        double u = r.uniformDouble();
        mn = std::min(mn, u); mx = std::max(mx, u); sum += u;
    }
    BOOST_CHECK(mn >= 0 && mx < 1);
    BOOST_CHECK_CLOSE(sum / 100000, 0.5, 1.0);  // 1% relative: sigma of the mean is 0.18%
}

BOOST_AUTO_TEST_SUITE_END()
