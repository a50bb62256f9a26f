// SPDX-License-Identifier: GPL-3.0-or-later
// Standard errors of tallies by batch means. A run's packets are split into B contiguous
// packet-index batches; packets are independent and identically distributed (each has its own
// random stream), so a batch's tally X_j over n_j packets has variance n_j s^2 (s^2: one
// packet's variance), whatever the batch sizes. From q = sum_j X_j^2 / n_j and the total
// T = sum_j X_j over N packets,
//     s^2 ~ (q - T^2 / N) / (B - 1)   (unbiased),   Var(T) = N s^2,
// which for equal batches is B^2 times the squared standard error of the batch mean. Kernels
// keep q per tally element (BatchFold) beside the running tally, so the total itself is the
// ordinary tally.
#pragma once
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "Kernels/Core/Records.hpp"

namespace fm {

struct TallyErrors;
struct RunResult;

// Batches a run uses unless told otherwise (RunOptions::batches); 1 turns the estimate off.
constexpr uint64_t kDefaultBatches = 10;
// A GPU batch ends with the drain of its launches and a fold of the tallies, a fixed cost per
// batch, so the GPU's default splits a run only where every batch holds at least this many
// packets (docs/PERFORMANCE.md); smaller GPU runs get no estimate unless asked.
constexpr uint64_t kGpuPacketsPerDefaultBatch = 10000000;

struct RunOptions;
// The batches a run uses: opt.batches, or for 0 the default: kDefaultBatches (at most one per
// packet) on the CPU; on the GPU kDefaultBatches where the run has kDefaultBatches x
// kGpuPacketsPerDefaultBatch packets or more, else 1.
uint64_t effectiveBatches(const RunOptions& opt, bool gpu = false);
// Throws ParameterError naming `what` unless 1 <= batches <= packets.
void validateBatches(uint64_t batches, uint64_t packets, const std::string& what = "batches");
// Parses a batch count given as text (Tcl, command line, JSON): a whole number >= 1, else a
// ParameterError naming `what`.
uint64_t parseBatches(const std::string& text, const std::string& what = "batches");

// Sub-batches of a worker's range of `count` packets out of `total` when the run asks for
// `batches`: its share of them, at least one (none for an empty range), so every thread's
// batches are whole and the run has about `batches` of them (more where threads outnumber them).
uint64_t workerBatches(uint64_t batches, uint64_t count, uint64_t total);

// q = sum over batches of (tally now - tally at the previous fold)^2 / packets of the batch,
// per element. The running tally is never changed, so the total is the ordinary tally. The
// tally at the previous fold is kept only between folds: the first fold's is zero, and a fold
// marked final keeps none (a CPU worker's only batch, the usual case with many threads, then
// costs no copy of its tallies; a gated run's are large).
class BatchFold {
public:
    void reset(size_t n) {
        std::vector<double>().swap(last_);
        q_.assign(n, 0.0);
        folded_ = finished_ = false;
    }
    // `final`: no fold follows (logic_error if one does).
    void fold(const double* tally, uint64_t packets, bool final = false);
    const std::vector<double>& q() const { return q_; }
    std::vector<double>& q() { return q_; }

private:
    std::vector<double> last_, q_;
    bool folded_ = false, finished_ = false;
};

// The ledger's fields as an array (launched, specular, absorbed, exited, rouletteGained,
// rouletteLost, abnormal) and back.
std::array<double, 7> ledgerFields(const Ledger& l);
Ledger ledgerFromFields(const std::array<double, 7>& a);

// Standard error of a total T over N packets from q (above) over B >= 2 batches; a rounding
// slightly below zero is zero.
double batchTotalError(double q, double total, uint64_t N, uint64_t B);
// Element by element; an empty `q` gives an empty result.
std::vector<double> batchTotalErrors(const std::vector<double>& q, const std::vector<double>& totals, uint64_t N,
                                     uint64_t B);

// Sums of q over a run's batches, per tally (empty: tally not kept) and for the ledger's fields.
struct BatchSums {
    std::vector<double> volume, surface, directed, ledger;
    uint64_t batches = 0;
    // The time-gated tallies and their per-bin totals over the elements (gateBinTotals).
    std::vector<double> gatedVolume, gatedSurface, gatedVolumeTotals, gatedSurfaceTotals;
    void add(const BatchSums& o);  // another worker's or device's batches
};
// BatchSums' arrays, for the code that treats each alike (add, the CPU's parallel sum).
inline const std::array<std::vector<double> BatchSums::*, 8>& batchSumArrays() {
    static const std::array<std::vector<double> BatchSums::*, 8> a{
        &BatchSums::volume,      &BatchSums::surface,      &BatchSums::directed,          &BatchSums::gatedVolume,
        &BatchSums::gatedSurface, &BatchSums::gatedVolumeTotals, &BatchSums::gatedSurfaceTotals, &BatchSums::ledger};
    return a;
}
// Sets r.standardError from the q sums of its batches and its totals; none when fewer than two
// batches or a cancelled run (r.packetsDone < r.packetsRequested).
void setTallyErrors(RunResult& r, const BatchSums& q);

// The relative error of a set of elements weighted by their values: sum of SE over sum of values
// of the elements i (from 1: index 0 is the dummy) for which pick(i) holds; NaN values are
// skipped; NaN when there is no SE or the values sum to 0. For a region of a volume map, the
// energy-weighted mean of its tetras' relative errors.
template <class Pick>
double weightedRelativeError(const std::vector<double>& v, const std::vector<double>& se, Pick pick) {
    double s = 0, e = 0;
    for (size_t i = 1; i < v.size() && i < se.size(); ++i)
        if (pick(i) && v[i] == v[i] && se[i] == se[i]) {
            s += v[i];
            e += se[i];
        }
    return s > 0 ? e / s : std::numeric_limits<double>::quiet_NaN();
}

// Standard error of the mean of equally weighted batch values (sample sd / sqrt(K)); NaN for
// fewer than 2 values. The same estimate as batchTotalError / N for equal batches.
double batchMeanError(const std::vector<double>& perBatch);

// Adds the errors of an independent part of a run (another packet range) into `into`: the
// variances add. A part without an estimate leaves `into` without one.
void addIndependentErrors(TallyErrors& into, const TallyErrors& part, bool intoIsEmpty);

}  // namespace fm
