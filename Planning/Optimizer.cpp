// SPDX-License-Identifier: GPL-3.0-or-later
#include "Planning/Optimizer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <sstream>

#include "Common/Errors.hpp"
#include "Geometry/Queries.hpp"
#include "Planning/LinearProgram.hpp"
#include "Planning/Metrics.hpp"

namespace fm::planning {

namespace {

std::string fmtNum(double v) {
    std::ostringstream o;
    o.precision(4);
    o << v;
    return o.str();
}

std::string percentName(double f) { return "D" + fmtNum(100 * f); }

// A region's tetras with a defined dose (mu_a > 0), their volumes and total volume.
struct RegionTetras {
    std::vector<uint32_t> tetra;
    std::vector<double> volume;
    double total = 0;
};

// A named hard constraint: its rows (each relaxed by one shared elastic variable) and how to
// evaluate it on a dose.
struct Group {
    std::string name, unit;
    double limit = 0;
    bool upper = true;
    std::vector<int> rows;
    enum Kind { DoseVolume, TotalEnergy, SourceMin, SourceMax } kind = DoseVolume;
    uint32_t region = 0;
    double fraction = 0;
    size_t source = 0;
};

// The per-tetra rows of one region and one purpose: w_i >= sign (d_i - theta) priced in the
// objective (Hinge) or in a tail row (Tail, the conditional value at risk), or a hard limit
// sign (d_i - theta) <= 0 (Hard: maximum or minimum dose). The LP holds each tetra's row in one of
// three states: Explicit (its row), Linear (w_i = sign (d_i - theta) substituted, the tetra assumed
// on that side) or Omitted (w_i = 0 assumed; a hard row left out). Both substitutions bound the
// hinge from below, so the reduced LP is a relaxation of the full one; once every substituted
// tetra lies on its assumed side at the reduced optimum, that optimum is the full LP's.
struct Family {
    enum Kind { Hinge, Tail, Hard } kind = Hinge;
    const RegionTetras* R = nullptr;
    double sign = 1;       // +1: dose above theta counts (excess); -1: below it (shortfall)
    double theta = 0;      // threshold or limit, J/cm^2 (Tail: the value of thetaCol)
    int thetaCol = -1;     // Tail: the tau column
    int group = -1;        // Hard: its group (in the elastic LP its slack moves theta)
};
enum TetraState : uint8_t { Omitted, Linear, Explicit };

// Families of fewer tetras stay whole; larger ones start from a sample of this many.
constexpr size_t kReduceAbove = 2000, kSampleRows = 1000;

// The identities of the LP's rows and columns across the builds of one builder (the families
// and groups come in the same order each time), by which each LP starts from the previous basis.
enum class Part : uint64_t {
    Source = 1, TetraColumn, TauColumn, ElasticColumn, TetraRow, TailRow, EnergyRow, SourceMinRow, SourceMaxRow
};
uint64_t keyOf(Part part, size_t a, size_t b = 0) { return uint64_t(part) << 58 | uint64_t(a) << 36 | uint64_t(b); }

class LpBuilder {
public:
    LpBuilder(const PlanProblem& p) : p_(p), S_(p.matrix->sources) {}

    // The LP for these weights; elastic: hard constraints relaxed by priced slack, no penalties.
    // Each family's tetras enter in their current state (all Explicit unless p.reduceLp).
    void build(const std::vector<double>& weights, const std::vector<bool>& fixedZero, bool elastic) {
        lp_ = LinearProgram{};
        groups_.clear();
        hingeCols_.clear();
        families_.clear();
        constant_ = 0, missingRows_ = 0, missingColumns_ = 0;
        elastic_ = elastic, reduced_ = false;
        const auto& src = *p_.sources;
        for (size_t j = 0; j < S_; ++j) {
            double lo = elastic || fixedZero[j] ? 0 : src[j].minEnergy;
            double hi = fixedZero[j] ? 0 : elastic ? kInf : src[j].maxEnergy;
            lp_.addColumn(lo, hi, 0, src[j].name, keyOf(Part::Source, j));
        }
        const Prescription& rx = *p_.prescription;
        for (size_t t = 0; t < rx.targets.size(); ++t) addTarget(rx.targets[t], weights[t], elastic);
        for (const OrganSpec& o : rx.organs) addOrgan(o, elastic);
        if (std::isfinite(rx.maxTotalEnergy)) {
            LinearProgram::Row r;
            for (size_t j = 0; j < S_; ++j) r.index.push_back(int(j)), r.value.push_back(1.0);
            r.upper = rx.maxTotalEnergy;
            r.key = keyOf(Part::EnergyRow, 0);
            addGroup("total energy <= " + fmtNum(rx.maxTotalEnergy) + " J", "J", rx.maxTotalEnergy, true, {lp_.addRow(r)},
                     Group::TotalEnergy);
        }
        if (elastic) addSourceBoundGroups(fixedZero);
        if (elastic) addElasticColumns();
        sampled_ = false;
    }

    LinearProgram& lp() { return lp_; }
    const std::vector<Group>& groups() const { return groups_; }
    std::vector<int> elasticCols;
    // The objective's constant part (from Linear hinge tetras), to add to the LP's optimum.
    double constant() const { return constant_; }
    // The size of the unreduced LP, and whether the last build left tetras out of it.
    size_t fullRows() const { return lp_.rows.size() + missingRows_; }
    size_t fullColumns() const { return lp_.columns() + missingColumns_; }
    bool reduced() const { return reduced_; }
    // Every tetra Explicit from the next build on: the full LP.
    void makeWhole() {
        for (auto& st : states_) std::fill(st.begin(), st.end(), uint8_t(Explicit));
    }

    // Moves tetras between states after a solve x: free (after the sampled first solve) puts
    // every substituted tetra on the side x gives it; otherwise a tetra found on the wrong side
    // (or a hard row at or past its limit) becomes Explicit. Returns whether any state changed.
    bool updateStates(const std::vector<double>& x, bool free) {
        std::vector<double> e(x.begin(), x.begin() + S_);
        for (double& v : e) v = std::max(0.0, v);
        std::vector<double> dose = p_.matrix->dose(e);
        bool changed = false;
        for (size_t f = 0; f < families_.size(); ++f) {
            const Family& F = families_[f];
            double theta = F.thetaCol >= 0 ? x[F.thetaCol] : F.theta;
            if (F.kind == Family::Hard && elastic_) theta += F.sign * x[elasticCols[F.group]];
            const double tol = 1e-7 * std::max(1.0, std::fabs(theta));
            std::vector<uint8_t>& st = states_[f];
            for (size_t k = 0; k < st.size(); ++k) {
                if (st[k] == Explicit) continue;
                double v = F.sign * (dose[F.R->tetra[k]] - theta);
                uint8_t want = st[k];
                if (F.kind == Family::Hard) want = v > -tol ? Explicit : Omitted;
                else if (free) want = v > 0 ? Linear : Omitted;
                else if (st[k] == Linear ? v < -tol : v > tol) want = Explicit;
                changed |= want != st[k];
                st[k] = want;
            }
        }
        return changed;
    }
    void startSampled() { sampled_ = true; }
    // The tetras' states, to carry into the next solve of the same prescription (any states give
    // a relaxation, so the previous solve's are a valid start that skips the sampled solve).
    std::vector<std::vector<uint8_t>>& states() { return states_; }

private:
    const RegionTetras& tetras(uint32_t region) {
        auto it = regions_.find(region);
        if (it != regions_.end()) return it->second;
        RegionTetras& r = regions_[region];
        const TetraMesh& m = *p_.mesh;
        for (uint32_t t = 1; t <= m.tetraCount(); ++t) {
            if (m.region(t) != region) continue;
            bool defined = true;
            for (size_t j = 0; j < S_ && defined; ++j) defined = std::isfinite(p_.matrix->meanFluence(j, t));
            if (!defined) continue;
            r.tetra.push_back(t);
            r.volume.push_back(m.volume(t));
            r.total += m.volume(t);
        }
        return r;
    }
    // Dose of tetra t (J/cm^2) as a row over the source columns.
    LinearProgram::Row doseRow(uint32_t t) const {
        LinearProgram::Row r;
        for (size_t j = 0; j < S_; ++j) {
            double a = kJcm2PerJmm2 * p_.matrix->meanFluence(j, t);
            if (a != 0) r.index.push_back(int(j)), r.value.push_back(a);
        }
        return r;
    }
    void addGroup(std::string name, std::string unit, double limit, bool upper, std::vector<int> rows, Group::Kind k,
                  uint32_t region = 0, double fraction = 0, size_t source = 0) {
        Group g;
        g.name = std::move(name), g.unit = std::move(unit), g.limit = limit, g.upper = upper, g.rows = std::move(rows);
        g.kind = k, g.region = region, g.fraction = fraction, g.source = source;
        groups_.push_back(std::move(g));
    }
    // The state vector of the next family (kept from the previous build of this builder): all
    // Explicit, or for a large family a sample Explicit and the rest Omitted.
    std::vector<uint8_t>& nextFamily(Family F) {
        size_t f = families_.size();
        families_.push_back(F);
        if (states_.size() <= f) {
            size_t n = F.R->tetra.size();
            bool reduce = p_.reduceLp && n > kReduceAbove;
            std::vector<uint8_t> st(n, reduce ? Omitted : Explicit);
            if (reduce)
                for (size_t k = 0; k < n; k += (n + kSampleRows - 1) / kSampleRows) st[k] = Explicit;
            states_.push_back(std::move(st));
        }
        size_t left = std::count_if(states_[f].begin(), states_[f].end(), [](uint8_t s) { return s != Explicit; });
        reduced_ |= left > 0;
        missingRows_ += left;
        if (F.kind != Family::Hard) missingColumns_ += left;
        return states_[f];
    }
    // The scale of an Explicit tetra's price in the sampled first solve: the sample stands for
    // the whole region there.
    double sampleScale(const std::vector<uint8_t>& st) const {
        if (!sampled_) return 1;
        size_t n = std::count(st.begin(), st.end(), uint8_t(Explicit));
        return n ? double(st.size()) / double(n) : 1;
    }
    // Adds c x dose row of tetra t to the dense coefficients acc over the sources.
    void accumulateDose(std::vector<double>& acc, uint32_t t, double c) const {
        for (size_t j = 0; j < S_; ++j) acc[j] += c * kJcm2PerJmm2 * p_.matrix->meanFluence(j, t);
    }
    // Penalty rows: dose + u >= threshold (under) or dose - u <= threshold (over), u >= 0 priced
    // by weight x volume / region volume, so the objective is a volume-weighted mean in J/cm^2.
    // A Linear tetra adds its priced sign (dose - threshold) to the objective directly.
    void addHinge(const RegionTetras& R, double threshold, double weight, bool under) {
        Family F;
        F.kind = Family::Hinge, F.R = &R, F.sign = under ? -1 : 1, F.theta = threshold;
        const std::vector<uint8_t>& st = nextFamily(F);
        const size_t f = families_.size() - 1;
        const double scale = sampleScale(st);
        std::vector<double> linear(S_, 0.0);
        for (size_t k = 0; k < R.tetra.size(); ++k) {
            double c = weight * R.volume[k] / R.total;
            if (st[k] == Linear) {
                accumulateDose(linear, R.tetra[k], F.sign * c);
                constant_ -= F.sign * c * threshold;
            }
            if (st[k] != Explicit) continue;
            LinearProgram::Row r = doseRow(R.tetra[k]);
            int u = lp_.addColumn(0, kInf, scale * c, {}, keyOf(Part::TetraColumn, f, k));
            hingeCols_.push_back(u);
            r.index.push_back(u), r.value.push_back(under ? 1.0 : -1.0);
            r.pairedColumn = u;
            (under ? r.lower : r.upper) = threshold;
            r.key = keyOf(Part::TetraRow, f, k);
            lp_.addRow(r);
        }
        for (size_t j = 0; j < S_; ++j) lp_.cost[j] += linear[j];
    }
    // D_f <= Y (upper) or D_f >= X (lower) through the conditional value at risk of the tail of
    // volume fraction alpha: Y >= tau + sum v_i s_i / (alpha V), s_i >= d_i - tau (upper);
    // X <= tau - sum v_i s_i / (alpha V), s_i >= tau - d_i (lower). alpha = 0: every tetra.
    // A Linear tetra puts v_i (d_i - tau) / (alpha V) into the tail row directly (both sides).
    std::vector<int> addDoseVolume(const RegionTetras& R, double alpha, double bound, bool upper) {
        std::vector<int> rows;
        Family F;
        F.R = &R, F.sign = upper ? 1 : -1;
        if (alpha <= 1e-12) {
            F.kind = Family::Hard, F.theta = bound, F.group = int(groups_.size());
            const std::vector<uint8_t>& st = nextFamily(F);
            const size_t f = families_.size() - 1;
            for (size_t k = 0; k < R.tetra.size(); ++k) {
                if (st[k] != Explicit) continue;
                LinearProgram::Row r = doseRow(R.tetra[k]);
                (upper ? r.upper : r.lower) = bound;
                r.key = keyOf(Part::TetraRow, f, k);
                rows.push_back(lp_.addRow(r));
            }
            return rows;
        }
        const size_t f = families_.size();
        int tau = lp_.addColumn(-kInf, kInf, 0, {}, keyOf(Part::TauColumn, f));
        F.kind = Family::Tail, F.thetaCol = tau;
        const std::vector<uint8_t>& st = nextFamily(F);
        std::vector<double> linear(S_, 0.0);
        double tauCoef = 1;
        LinearProgram::Row tail;
        for (size_t k = 0; k < R.tetra.size(); ++k) {
            const double c = R.volume[k] / (alpha * R.total);
            if (st[k] == Linear) accumulateDose(linear, R.tetra[k], c), tauCoef -= c;
            if (st[k] != Explicit) continue;
            int s = lp_.addColumn(0, kInf, 0, {}, keyOf(Part::TetraColumn, f, k));
            LinearProgram::Row r = doseRow(R.tetra[k]);
            for (double& v : r.value) v = upper ? -v : v;          // upper: s - d + tau >= 0
            r.index.push_back(s), r.value.push_back(1.0);           // lower: s + d - tau >= 0
            r.pairedColumn = s;
            r.index.push_back(tau), r.value.push_back(upper ? 1.0 : -1.0);
            r.lower = 0;
            r.key = keyOf(Part::TetraRow, f, k);
            lp_.addRow(r);
            tail.index.push_back(s), tail.value.push_back((upper ? 1.0 : -1.0) * c);
        }
        for (size_t j = 0; j < S_; ++j)
            if (linear[j] != 0) tail.index.push_back(int(j)), tail.value.push_back(linear[j]);
        tail.index.push_back(tau), tail.value.push_back(tauCoef);
        (upper ? tail.upper : tail.lower) = bound;
        tail.key = keyOf(Part::TailRow, f);
        rows.push_back(lp_.addRow(tail));
        return rows;
    }
    void addTarget(const TargetSpec& t, double weight, bool elastic) {
        const RegionTetras& R = tetras(t.region);
        if (R.tetra.empty())
            throw ParameterError("target region " + name(t.region) +
                                 " has no tetras with a defined dose (its mu_a is 0: fluence is absorbed energy / "
                                 "(volume x mu_a)); give it its tissue's mu_a");
        if (!elastic) addHinge(R, t.threshold, weight, true);
        for (const auto& d : t.minDoses)
            addGroup(name(t.region) + " " + percentName(d.fraction) + " >= " + fmtNum(d.dose) + " J/cm^2", "J/cm^2", d.dose,
                     false, addDoseVolume(R, 1 - d.fraction, d.dose, false), Group::DoseVolume, t.region, d.fraction);
    }
    void addOrgan(const OrganSpec& o, bool elastic) {
        const RegionTetras& R = tetras(o.region);
        if (R.tetra.empty()) {
            if (o.maxDoses.empty() && !std::isfinite(o.threshold)) return;  // nothing asked of it
            throw ParameterError("organ at risk " + name(o.region) +
                                 " has no tetras with a defined dose (its mu_a is 0: fluence is absorbed energy / "
                                 "(volume x mu_a)), so its dose limits cannot be planned; give it its tissue's mu_a");
        }
        if (!elastic && std::isfinite(o.threshold)) addHinge(R, o.threshold, o.weight, false);
        for (const auto& d : o.maxDoses) {
            std::string what = d.fraction > 0 ? percentName(d.fraction) : std::string("max dose");
            addGroup(name(o.region) + " " + what + " <= " + fmtNum(d.dose) + " J/cm^2", "J/cm^2", d.dose, true,
                     addDoseVolume(R, d.fraction, d.dose, true), Group::DoseVolume, o.region, d.fraction);
        }
    }
    void addSourceBoundGroups(const std::vector<bool>& fixedZero) {
        const auto& src = *p_.sources;
        for (size_t j = 0; j < S_; ++j) {
            if (fixedZero[j]) continue;
            LinearProgram::Row r;
            r.index = {int(j)}, r.value = {1.0};
            if (src[j].minEnergy > 0) {
                r.lower = src[j].minEnergy;
                r.key = keyOf(Part::SourceMinRow, j);
                addGroup(src[j].name + " energy >= " + fmtNum(src[j].minEnergy) + " J", "J", src[j].minEnergy, false,
                         {lp_.addRow(r)}, Group::SourceMin, 0, 0, j);
                r.lower = -kInf;
            }
            if (std::isfinite(src[j].maxEnergy)) {
                r.upper = src[j].maxEnergy;
                r.key = keyOf(Part::SourceMaxRow, j);
                addGroup(src[j].name + " energy <= " + fmtNum(src[j].maxEnergy) + " J", "J", src[j].maxEnergy, true,
                         {lp_.addRow(r)}, Group::SourceMax, 0, 0, j);
            }
        }
    }
    // One slack per group, priced relative to its limit so that constraints of different units
    // and sizes compare: the elastic optimum is the least relative relaxation.
    void addElasticColumns() {
        elasticCols.clear();
        for (const Group& g : groups_) {
            int e = lp_.addColumn(0, kInf, 1.0 / std::max(std::fabs(g.limit), 1e-9), {},
                                  keyOf(Part::ElasticColumn, elasticCols.size()));
            elasticCols.push_back(e);
            for (int row : g.rows) {
                auto& r = lp_.rows[row];
                r.index.push_back(e), r.value.push_back(std::isfinite(r.lower) ? 1.0 : -1.0);
            }
        }
    }
    std::string name(uint32_t r) const {
        auto it = p_.regionNames->find(r);
        return it == p_.regionNames->end() ? "region " + std::to_string(r) : it->second;
    }

    const PlanProblem& p_;
    size_t S_;
    LinearProgram lp_;
    std::vector<Group> groups_;
    std::vector<int> hingeCols_;
    std::map<uint32_t, RegionTetras> regions_;
    std::vector<Family> families_;
    std::vector<std::vector<uint8_t>> states_;  // per family, per tetra: a TetraState
    double constant_ = 0;
    size_t missingRows_ = 0, missingColumns_ = 0;
    bool elastic_ = false, sampled_ = false, reduced_ = false;
};

// Solves the LP by row generation over the families' tetras: first on a sample of each large
// family (standing for the whole), then with every other tetra substituted on the side that
// solution gives it, then adding the tetras found on the wrong side until none is. Each LP after
// the first is a relaxation of the full one, so an infeasible one means the full LP is; an
// unbounded one (substituted shortfalls can pay without limit when energies are unbounded) falls
// back to the full LP. Each LP starts from basis (the previous LP's) where given. rounds counts
// the LPs solved, warmRounds those started from a basis.
LpSolution solveReduced(LpBuilder& b, const std::vector<double>& weights, const std::vector<bool>& fixedZero,
                        bool elastic, const std::string& solver, LpBasis* basis, size_t& rounds, size_t& warmRounds) {
    const bool warm = !b.states().empty();
    const bool trace = std::getenv("FM_PLAN_TRACE") != nullptr;
    auto timedSolve = [&] {
        auto t0 = std::chrono::steady_clock::now();
        LpSolution x = solve(b.lp(), solver, basis);
        if (trace)
            std::fprintf(stderr, "LP %zu: %zu rows x %zu columns, %s%s, %.2f s\n", rounds, b.lp().rows.size(),
                         b.lp().columns(), toString(x.status).c_str(), x.warmStarted ? " (warm)" : "",
                         std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        ++rounds;
        warmRounds += x.warmStarted;
        return x;
    };
    if (!warm) b.startSampled();
    b.build(weights, fixedZero, elastic);
    LpSolution s = timedSolve();
    if (!b.reduced()) return s;
    for (bool first = !warm;; first = false) {
        if (s.status == LpStatus::Infeasible) return s;
        if (s.status != LpStatus::Optimal) break;
        if (!b.updateStates(s.x, first) && !first) {
            s.objective += b.constant();
            return s;
        }
        b.build(weights, fixedZero, elastic);
        s = timedSolve();
    }
    b.makeWhole();
    b.build(weights, fixedZero, elastic);
    return timedSolve();
}

double evaluate(const Group& g, const PlanProblem& p, const std::vector<double>& dose, const std::vector<double>& e) {
    switch (g.kind) {
    case Group::TotalEnergy: {
        double s = 0;
        for (double v : e) s += v;
        return s;
    }
    case Group::SourceMin:
    case Group::SourceMax: return e[g.source];
    default: {
        DoseHistogram h = doseHistogram(*p.mesh, dose, g.region);
        if (h.dose.empty()) return NAN;
        if (g.upper && g.fraction <= 0) return h.dose.back();
        if (!g.upper && g.fraction >= 1) return h.dose.front();
        return h.doseAtFraction(g.fraction);
    }
    }
}

bool within(double value, double limit, bool upper) {
    double tol = 1e-6 * std::max(1.0, std::fabs(limit));
    return upper ? value <= limit + tol : value >= limit - tol;
}

// Which hard constraints conflict: the elastic LP's slack per constraint, and those at their limit.
void explainInfeasible(const PlanProblem& p, const std::vector<double>& weights, const std::vector<bool>& fixedZero,
                       const std::string& solver, PlanResult& r) {
    LpBuilder b(p);
    LpBasis basis;
    LpSolution s = solveReduced(b, weights, fixedZero, true, solver, p.warmStart ? &basis : nullptr, r.lpRounds,
                                r.lpWarmRounds);
    ++r.solves;
    if (s.status != LpStatus::Optimal) return;
    for (size_t g = 0; g < b.groups().size(); ++g) {
        const Group& G = b.groups()[g];
        double slack = s.x[b.elasticCols[g]];
        if (slack > 1e-7 * std::max(1.0, std::fabs(G.limit))) {
            r.conflicts.push_back({G.name, slack, G.unit});
            continue;
        }
        for (int row : G.rows) {
            const auto& R = b.lp().rows[row];
            double a = 0;
            for (size_t k = 0; k < R.index.size(); ++k) a += R.value[k] * s.x[R.index[k]];
            double bound = std::isfinite(R.lower) ? R.lower : R.upper;
            if (std::fabs(a - bound) <= 1e-6 * std::max(1.0, std::fabs(bound))) {
                r.tight.push_back(G.name);
                break;
            }
        }
    }
}

}  // namespace

namespace {

// What one plan solve hands to the next (V100 rounds, source drops): the tetras' states (any
// states give a relaxation, so the previous solve's rows are a valid start) and the last basis.
struct Carry {
    std::vector<std::vector<uint8_t>> states;
    LpBasis basis;
};

// solvePlanOnce, starting from and returning the tetras' states and basis in carry (empty: from
// a sample, cold).
PlanResult solveCarried(const PlanProblem& p, const std::vector<double>& weights, const std::vector<bool>& fixedZero,
                        Carry& carry) {
    PlanResult r;
    const std::string& solver = p.prescription->solver;
    LpBuilder b(p);
    b.states() = std::move(carry.states);
    r.targetWeights = weights;
    LpSolution s = solveReduced(b, weights, fixedZero, false, solver, p.warmStart ? &carry.basis : nullptr, r.lpRounds,
                                r.lpWarmRounds);
    carry.states = b.states();
    r.lpColumns = b.fullColumns();
    r.lpRows = b.fullRows();
    r.lpSolvedRows = b.lp().rows.size();
    r.solver = s.solver;
    r.solves = 1;
    r.status = toString(s.status);
    r.energies.assign(p.matrix->sources, 0.0);
    r.used.assign(p.matrix->sources, false);
    if (s.status != LpStatus::Optimal) {
        if (!s.message.empty()) r.status += " (" + s.message + ")";
        if (s.status == LpStatus::Infeasible) explainInfeasible(p, weights, fixedZero, solver, r);
        return r;
    }
    r.feasible = true;
    r.objective = s.objective;  // with the constant of substituted tetras (solveReduced)
    for (size_t j = 0; j < p.matrix->sources; ++j) {
        r.energies[j] = std::max(0.0, s.x[j]);
        r.used[j] = !fixedZero[j];
    }
    std::vector<double> dose = p.matrix->dose(r.energies);
    for (const Group& g : b.groups()) {
        ConstraintCheck c{g.name, g.limit, evaluate(g, p, dose, r.energies), g.unit, g.upper, false};
        c.met = within(c.value, c.limit, c.upper);
        r.checks.push_back(c);
    }
    return r;
}

}  // namespace

PlanResult solvePlanOnce(const PlanProblem& p, const std::vector<double>& weights, const std::vector<bool>& fixedZero) {
    Carry carry;
    return solveCarried(p, weights, fixedZero, carry);
}

namespace {

double v100(const PlanProblem& p, const std::vector<double>& dose, const TargetSpec& t) {
    return volumeAtLeast(doseHistogram(*p.mesh, dose, t.region), t.threshold);
}

// Raises the weight of each target short of its V100 goal (x4 a round, at most 8 rounds).
void meetCoverageGoals(const PlanProblem& p, std::vector<bool>& fixedZero, PlanResult& r, Carry& carry) {
    const auto& targets = p.prescription->targets;
    std::vector<double> w = r.targetWeights;
    for (int round = 1; round <= 8; ++round) {
        std::vector<double> dose = p.matrix->dose(r.energies);
        bool short_ = false;
        for (size_t t = 0; t < targets.size(); ++t)
            if (std::isfinite(targets[t].v100Goal) && v100(p, dose, targets[t]) < targets[t].v100Goal)
                w[t] *= 4, short_ = true;
        r.goalsMet = !short_;
        if (!short_) return;
        PlanResult next = solveCarried(p, w, fixedZero, carry);
        next.solves += r.solves, next.lpRounds += r.lpRounds, next.lpWarmRounds += r.lpWarmRounds;
        next.lpSolvedRows = std::max(next.lpSolvedRows, r.lpSolvedRows);
        if (!next.feasible) return;
        next.weightRounds = round;
        r = std::move(next);
    }
    std::vector<double> dose = p.matrix->dose(r.energies);
    r.goalsMet = true;
    for (const auto& t : targets)
        if (std::isfinite(t.v100Goal) && v100(p, dose, t) < t.v100Goal) r.goalsMet = false;
}

// Drops sources whose energy is ~0 (below dropBelow x the largest), then the weakest while more
// than maxSources remain, re-solving after each step; a drop that makes the plan infeasible is undone.
void selectSources(const PlanProblem& p, std::vector<bool>& fixedZero, PlanResult& r, Carry& carry) {
    const auto& src = *p.sources;
    const Prescription& rx = *p.prescription;
    for (;;) {
        double emax = *std::max_element(r.energies.begin(), r.energies.end());
        std::vector<size_t> drop;
        size_t active = 0, weakest = src.size();
        for (size_t j = 0; j < src.size(); ++j) {
            if (fixedZero[j]) continue;
            ++active;
            if (src[j].minEnergy > 0) continue;
            if (r.energies[j] <= rx.dropBelow * emax) drop.push_back(j);
            if (weakest == src.size() || r.energies[j] < r.energies[weakest]) weakest = j;
        }
        if (drop.empty() && rx.maxSources && active > rx.maxSources && weakest < src.size()) drop.push_back(weakest);
        if (drop.empty() || drop.size() == active) return;
        for (size_t j : drop) fixedZero[j] = true;
        PlanResult next = solveCarried(p, r.targetWeights, fixedZero, carry);
        next.solves += r.solves, next.lpRounds += r.lpRounds, next.lpWarmRounds += r.lpWarmRounds;
        next.lpSolvedRows = std::max(next.lpSolvedRows, r.lpSolvedRows);
        if (!next.feasible) {
            for (size_t j : drop) fixedZero[j] = false;
            r.solves = next.solves, r.lpRounds = next.lpRounds, r.lpWarmRounds = next.lpWarmRounds;
            return;
        }
        next.dropped = r.dropped;
        next.weightRounds = r.weightRounds;
        next.goalsMet = r.goalsMet;
        for (size_t j : drop) next.dropped.push_back(src[j].name);
        r = std::move(next);
    }
}

}  // namespace

PlanResult optimisePlan(const PlanProblem& p) {
    auto t0 = std::chrono::steady_clock::now();
    std::clock_t c0 = std::clock();
    if (p.sources->size() != p.matrix->sources)
        throw ParameterError("plan: " + std::to_string(p.sources->size()) + " sources but the dose matrix has " +
                             std::to_string(p.matrix->sources));
    std::vector<double> w;
    for (const auto& t : p.prescription->targets) w.push_back(t.weight);
    std::vector<bool> fixedZero(p.sources->size(), false);
    Carry carry;  // each solve starts from the previous one's rows and basis
    PlanResult r = solveCarried(p, w, fixedZero, carry);
    if (r.feasible) {
        meetCoverageGoals(p, fixedZero, r, carry);
        selectSources(p, fixedZero, r, carry);
        // The selection may cost coverage: report the goals as they stand.
        std::vector<double> dose = p.matrix->dose(r.energies);
        for (const auto& t : p.prescription->targets)
            if (std::isfinite(t.v100Goal) && v100(p, dose, t) < t.v100Goal) r.goalsMet = false;
        r.penalty = 0;
        for (const auto& t : p.prescription->targets) {
            DoseHistogram h = doseHistogram(*p.mesh, dose, t.region);
            for (size_t i = 0; i < h.dose.size(); ++i) r.penalty += std::max(0.0, t.threshold - h.dose[i]) * h.measure[i] / h.totalVolume;
        }
        for (const auto& o : p.prescription->organs) {
            if (!std::isfinite(o.threshold)) continue;
            DoseHistogram h = doseHistogram(*p.mesh, dose, o.region);
            for (size_t i = 0; i < h.dose.size(); ++i) r.penalty += std::max(0.0, h.dose[i] - o.threshold) * h.measure[i] / h.totalVolume;
        }
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.cpuSeconds = double(std::clock() - c0) / CLOCKS_PER_SEC;
    return r;
}

}  // namespace fm::planning
