// SPDX-License-Identifier: GPL-3.0-or-later
#include "Kernels/BatchMeans.hpp"

#include <cmath>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <stdexcept>

#include "Common/Errors.hpp"
#include "Common/ParallelFor.hpp"
#include "Kernels/KernelInput.hpp"

namespace fm {

uint64_t effectiveBatches(const RunOptions& opt, bool gpu) {
    if (opt.batches) return opt.batches;
    if (gpu) return opt.packets >= kDefaultBatches * kGpuPacketsPerDefaultBatch ? kDefaultBatches : 1;
    return std::min(kDefaultBatches, std::max<uint64_t>(opt.packets, 1));
}

void validateBatches(uint64_t batches, uint64_t packets, const std::string& what) {
    if (batches < 1)
        throw ParameterError(what + " must be at least 1 (1 turns the standard errors off), got " +
                             std::to_string(batches));
    if (batches > packets)
        throw ParameterError(what + " = " + std::to_string(batches) + " exceeds the packets (" +
                             std::to_string(packets) + "): every batch needs at least one packet");
}

uint64_t parseBatches(const std::string& text, const std::string& what) {
    const char* s = text.c_str();
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(s, &end, 10);
    const bool whole = end != s && *end == '\0' && errno == 0 && text.find_first_not_of("+0123456789") == std::string::npos;
    if (!whole || v < 1)
        throw ParameterError(what + " must be a whole number >= 1 (1 turns the standard errors off), got '" + text +
                             "'");
    return uint64_t(v);
}

uint64_t workerBatches(uint64_t batches, uint64_t count, uint64_t total) {
    if (count == 0 || total == 0) return 0;
    const unsigned __int128 share = (unsigned __int128)batches * count;
    const uint64_t k = uint64_t((share + total - 1) / total);  // ceil(batches * count / total)
    return std::max<uint64_t>(1, std::min(k, count));
}

void BatchFold::fold(const double* tally, uint64_t packets, bool final) {
    if (finished_) throw std::logic_error("BatchFold: a fold after the one marked final");
    const double inv = 1.0 / double(packets);
    const size_t n = q_.size();
    if (!folded_) {  // the tally at the previous fold is zero
        for (size_t i = 0; i < n; ++i) q_[i] += tally[i] * tally[i] * inv;
    } else {
        for (size_t i = 0; i < n; ++i) {
            const double x = tally[i] - last_[i];
            q_[i] += x * x * inv;
        }
    }
    folded_ = true;
    finished_ = final;
    if (final) std::vector<double>().swap(last_);
    else last_.assign(tally, tally + n);
}

std::array<double, 7> ledgerFields(const Ledger& l) {
    return {l.launched, l.specular, l.absorbed, l.exited, l.rouletteGained, l.rouletteLost, l.abnormal};
}

Ledger ledgerFromFields(const std::array<double, 7>& a) {
    Ledger l;
    l.launched = a[0];
    l.specular = a[1];
    l.absorbed = a[2];
    l.exited = a[3];
    l.rouletteGained = a[4];
    l.rouletteLost = a[5];
    l.abnormal = a[6];
    return l;
}

double batchTotalError(double q, double total, uint64_t N, uint64_t B) {
    if (B < 2 || N == 0) return NAN;
    const double var = (q - total * (total / double(N))) * (double(N) / double(B - 1));
    return var > 0 ? std::sqrt(var) : 0.0;
}

std::vector<double> batchTotalErrors(const std::vector<double>& q, const std::vector<double>& totals, uint64_t N,
                                     uint64_t B) {
    std::vector<double> se(q.size());
    parallelFor(0, q.size(), [&](unsigned, size_t lo, size_t hi) {
        for (size_t i = lo; i < hi; ++i) se[i] = batchTotalError(q[i], totals[i], N, B);
    }, 65536);
    return se;
}

void BatchSums::add(const BatchSums& o) {
    auto add = [](std::vector<double>& a, const std::vector<double>& b) {
        if (a.empty()) a = b;
        else for (size_t i = 0; i < a.size() && i < b.size(); ++i) a[i] += b[i];
    };
    for (auto m : batchSumArrays()) add(this->*m, o.*m);
    batches += o.batches;
}

void setTallyErrors(RunResult& r, const BatchSums& q) {
    r.standardError = TallyErrors{};
    const uint64_t B = q.batches, N = r.packetsDone;
    if (B < 2 || N < r.packetsRequested || q.ledger.size() != 7) return;
    TallyErrors& se = r.standardError;
    se.batches = B;
    se.volume = batchTotalErrors(q.volume, r.volume, N, B);
    se.surface = batchTotalErrors(q.surface, r.surface, N, B);
    se.directed = batchTotalErrors(q.directed, r.directed, N, B);
    se.gatedVolume = batchTotalErrors(q.gatedVolume, r.gatedVolume, N, B);
    se.gatedSurface = batchTotalErrors(q.gatedSurface, r.gatedSurface, N, B);
    if (r.gates.on()) {
        se.gatedVolumeTotals = batchTotalErrors(q.gatedVolumeTotals, gateBinTotals(r.gates, r.gatedVolume), N, B);
        se.gatedSurfaceTotals = batchTotalErrors(q.gatedSurfaceTotals, gateBinTotals(r.gates, r.gatedSurface), N, B);
    }
    const std::array<double, 7> total = ledgerFields(r.ledger);
    std::array<double, 7> l{};
    for (size_t i = 0; i < l.size(); ++i) l[i] = batchTotalError(q.ledger[i], total[i], N, B);
    se.ledger = ledgerFromFields(l);
}

double batchMeanError(const std::vector<double>& x) {
    const size_t K = x.size();
    if (K < 2) return NAN;
    double m = 0, s = 0;
    for (double v : x) m += v / double(K);
    for (double v : x) s += (v - m) * (v - m);
    return std::sqrt(s / double(K - 1) / double(K));
}

void addIndependentErrors(TallyErrors& into, const TallyErrors& part, bool intoIsEmpty) {
    if (intoIsEmpty) {
        into = part;
        return;
    }
    if (!into.available() || !part.available()) {
        into = TallyErrors{};
        return;
    }
    auto add = [](std::vector<double>& a, const std::vector<double>& b) {
        for (size_t i = 0; i < a.size() && i < b.size(); ++i) a[i] = std::hypot(a[i], b[i]);
    };
    add(into.volume, part.volume);
    add(into.surface, part.surface);
    add(into.directed, part.directed);
    add(into.gatedVolume, part.gatedVolume);
    add(into.gatedSurface, part.gatedSurface);
    add(into.gatedVolumeTotals, part.gatedVolumeTotals);
    add(into.gatedSurfaceTotals, part.gatedSurfaceTotals);
    std::array<double, 7> a = ledgerFields(into.ledger), b = ledgerFields(part.ledger);
    for (size_t i = 0; i < a.size(); ++i) a[i] = std::hypot(a[i], b[i]);
    into.ledger = ledgerFromFields(a);
    into.batches += part.batches;
}

}  // namespace fm
