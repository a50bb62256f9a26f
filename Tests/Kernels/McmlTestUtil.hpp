// SPDX-License-Identifier: GPL-3.0-or-later
// Helpers for the MCML-mode tests: batch runs (independent packet ranges of one seed) and
// batch statistics of MCMLResult values and arrays against a reference.
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <iomanip>
#include <sstream>
#include <string>
#include <vector>

#include "Storage/MCML/MCMLKernelRun.hpp"
#include "Tests/TestUtil.hpp"

namespace fmtest {

inline std::string mcmlTestData(const std::string& name) {
    return std::string(FM_SOURCE_DIR) + "/Tests/MCML/data/" + name;
}

struct McmlBatches {
    std::vector<MCMLResult> results;
    double seconds = 0;
    uint64_t photons = 0;
};

// `batches` runs of `perBatch` photons, batch b taking packets [b*perBatch, (b+1)*perBatch).
inline McmlBatches runMcmlBatches(const MCMLRun& run, uint64_t perBatch, int batches, unsigned threads = 2) {
    McmlBatches out;
    fm::LayeredModel model = fm::layeredFromMcml(run);
    auto t0 = std::chrono::steady_clock::now();
    for (int b = 0; b < batches; ++b) {
        fm::RunOptions opt = fm::mcmlRunOptions(run);
        opt.packets = perBatch;
        opt.firstPacket = uint64_t(b) * perBatch;
        opt.threads = threads;
        fm::McmlTallies raw;
        out.results.push_back(fm::runMcml("cpu", model, run, opt, &raw));
        BOOST_REQUIRE_SMALL(raw.ledger.imbalance() / raw.ledger.launched, 1e-9);
        BOOST_REQUIRE_EQUAL(raw.ledger.abnormal, 0.0);
    }
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out.photons = perBatch * uint64_t(batches);
    return out;
}

inline MeanSd batchStat(const McmlBatches& b, const std::function<double(const MCMLResult&)>& f) {
    std::vector<double> x;
    for (const MCMLResult& r : b.results) x.push_back(f(r));
    return meanSd(x);
}

// Bin-by-bin agreement of an output array with a reference over the well-sampled bins (batch
// standard error below maxRelSe of the mean, reference > 0). refNoise is the reference's own
// standard error as a fraction of ours (sqrt(N_ours / N_ref)). A kernel that is right gives
// about 99% of bins within 3 sigma, a mean z^2 near 1 and no |z| beyond 6; a wrong
// normalisation, a misplaced bin or a biased region fails at least one of those.
// (The checks below: at most max(2, 5%) of bins beyond 3 sigma, mean z^2 <= 2.5, max |z| <= 6.)
struct BinAgreement {
    size_t used = 0, within3 = 0;
    double meanZ2 = 0, maxAbsZ = 0;
    std::string profile;  // relative error and z along the array, for the log
};

inline BinAgreement compareBins(const McmlBatches& b, const std::function<const std::vector<double>&(const MCMLResult&)>& arr,
                                const std::vector<double>& ref, double refNoise, double maxRelSe,
                                double binWidth, const char* unit, size_t printEvery, size_t firstBin = 0) {
    BinAgreement a;
    std::ostringstream prof;
    prof << std::setprecision(4);
    for (size_t i = firstBin; i < ref.size(); ++i) {
        std::vector<double> x;
        for (const MCMLResult& r : b.results) x.push_back(arr(r)[i]);
        MeanSd s = meanSd(x);
        if (!(ref[i] > 0 && s.mean > 0 && s.sdMean < maxRelSe * s.mean)) continue;
        double z = (s.mean - ref[i]) / (s.sdMean * std::sqrt(1 + refNoise * refNoise));
        ++a.used;
        a.within3 += std::fabs(z) <= 3;
        a.meanZ2 += z * z;
        a.maxAbsZ = std::max(a.maxAbsZ, std::fabs(z));
        if (i % printEvery == 0)
            prof << "\n  " << std::setw(7) << (i + 0.5) * binWidth << ' ' << unit << "  ours "
                 << std::setw(10) << s.mean << "  ref " << std::setw(10) << ref[i] << "  rel.err "
                 << std::showpos << std::setw(8) << 100 * (s.mean / ref[i] - 1) << "%  (se "
                 << std::noshowpos << 100 * s.sdMean / s.mean << "%)  z " << std::showpos << z
                 << std::noshowpos;
    }
    if (a.used) a.meanZ2 /= double(a.used);
    a.profile = prof.str();
    return a;
}

inline void checkBins(const std::string& what, const BinAgreement& a, size_t minUsed) {
    double frac = a.used ? double(a.within3) / double(a.used) : 0;
    BOOST_TEST_MESSAGE(what << ": " << a.used << " well-sampled bins, " << 100 * frac
                            << "% within 3 sigma, mean z^2 " << a.meanZ2 << ", max |z| " << a.maxAbsZ
                            << "\n relative-error profile (bin centre, ours, reference):" << a.profile);
    BOOST_CHECK_MESSAGE(a.used >= minUsed, what << ": only " << a.used << " well-sampled bins");
    // 5% outside 3 sigma, but at least 2: with 20 batches a right kernel puts ~0.7% of bins
    // there, and a few dozen bins must not fail on one unlucky bin.
    size_t outside = a.used - a.within3;
    BOOST_CHECK_MESSAGE(double(outside) <= std::max(2.0, 0.05 * double(a.used)),
                        what << ": " << outside << " of " << a.used << " bins beyond 3 sigma");
    BOOST_CHECK_MESSAGE(a.meanZ2 <= 2.5, what << ": mean z^2 = " << a.meanZ2 << " (about 1 expected)");
    BOOST_CHECK_MESSAGE(a.maxAbsZ <= 6, what << ": a bin is off by " << a.maxAbsZ << " sigma");
}

}  // namespace fmtest
