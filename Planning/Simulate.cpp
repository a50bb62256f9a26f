// SPDX-License-Identifier: GPL-3.0-or-later
#include "Planning/Simulate.hpp"

#include <algorithm>

#include "Geometry/BatchModel.hpp"
#include "Common/Errors.hpp"
#include "Geometry/Queries.hpp"
#include "Kernels/Batch.hpp"
#include "Kernels/MPI/MpiRun.hpp"
#include "Kernels/RunWarnings.hpp"
#include "Storage/FluenceMatrix/FluenceMatrix.hpp"

namespace fm::planning {

DoseMatrix simulateSources(const PlanSpec& plan, SimulationReport& report,
                           const std::function<void(size_t, size_t)>& progress, const std::atomic<bool>* cancel,
                           const MpiSession* mpi) {
    const SimulationSpec& sim = plan.simulation;
    const size_t S = plan.sources.size(), K = sim.batches;
    plan.materials.validate();
    std::vector<SourcePtr> runs;
    const std::vector<uint64_t> packets = planRunPackets(plan, K);
    std::vector<std::string> labels;
    for (size_t k = 0; k < K; ++k)
        for (const CandidateSource& c : plan.sources) {
            runs.push_back(c.source);
            labels.push_back("source '" + c.name + "'");
        }
    BatchModel model = packBatch(*plan.mesh, {plan.materials}, runs, packets, sim.seed, labels);
    for (size_t r = 0; r < model.runs.size(); ++r) model.runs[r].seed = sim.seed + r / S;
    BatchOptions bo;  // params: the kernel's defaults (planFingerprint hashes the same)
    bo.kernel = sim.kernel;
    bo.threads = sim.threads;
    bo.devices = sim.devices;
    bo.tuning = sim.tuning;
    bo.outputs.volume = true;
    bo.outputs.surface = bo.outputs.directed = false;
    bo.progress = progress;
    bo.cancel = cancel;
    DoseMatrix d;
    d.tetras = plan.mesh->tetraCount(), d.sources = S, d.batches = K;
    d.fluence.assign(d.tetras * S * K, 0.0);
    if (!mpi || mpi->rank() == 0) d.model = planFingerprint(plan, K);
    std::vector<bool> have(S * K, false);
    report.packets = 0;
    // The source compiler's warnings, once per candidate (every batch repeats the candidates: the
    // first batch's runs 0..S-1 are theirs), named by the candidate's label.
    for (size_t j = 0; j < S; ++j) {
        const std::string prefix = batchItemName("source", j, labels) + ": ";
        for (const std::string& w : model.warnings)
            if (w.rfind(prefix, 0) == 0) report.warnings.push_back(labels[j] + ": " + w.substr(prefix.size()));
    }
    std::vector<Ledger> perSource(S);
    BatchSummary sum = runBatch(model.mesh, model.runs, bo, [&](size_t run, RunResult&& r) {
        if (r.cancelled) return;
        std::vector<double> col = matrixColumn(volumeFluence(*plan.mesh, plan.materials, r.volume, 1.0 / double(r.packetsDone)));
        std::copy(col.begin(), col.end(), d.fluence.begin() + run * d.tetras);
        have[run] = true;
        report.packets += r.packetsDone;
        perSource[run % S].add(r.ledger);
    }, mpi);
    if (mpi && mpi->rank() != 0) return DoseMatrix{};
    for (bool h : have)
        if (!h) throw Error("plan: the simulations were interrupted after " + std::to_string(sum.delivered) + " of " +
                            std::to_string(sum.runs) + " runs; nothing written");
    for (size_t s = 0; s < S; ++s)
        if (std::string w = abnormalWarning(perSource[s]); !w.empty())
            report.warnings.push_back("source '" + plan.sources[s].name + "': " + w);
    report.seconds = sum.seconds;
    report.kernel = sum.kernel;
    report.runs = sum.runs;
    report.ranks = sum.ranks;
    return d;
}

std::vector<uint64_t> planRunPackets(const PlanSpec& plan, size_t batches) {
    const uint64_t K = std::max<size_t>(batches, 1);
    std::vector<uint64_t> packets;
    for (size_t k = 0; k < K; ++k)
        for (const CandidateSource& c : plan.sources) {
            const uint64_t n = c.packets ? c.packets : plan.simulation.packetsPerSource;
            packets.push_back(std::max<uint64_t>(1, (n + K - 1) / K));
        }
    return packets;
}

ModelFingerprint planFingerprint(const PlanSpec& plan, size_t batches) {
    std::vector<SourcePtr> sources;
    for (const CandidateSource& c : plan.sources) sources.push_back(c.source);
    return modelFingerprint(*plan.mesh, {plan.materials}, sources, planRunPackets(plan, batches),
                            BatchOptions{}.params);
}

namespace {

std::string joined(const std::vector<std::string>& parts) {
    std::string s;
    for (size_t i = 0; i < parts.size(); ++i) s += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
    return s;
}

}  // namespace

DoseMatrix loadPlanMatrix(const PlanSpec& plan, const MatrixReuse& reuse, std::vector<std::string>& warnings,
                          std::string* check) {
    const std::string& f = reuse.file;
    DoseMatrix d = doseMatrixFrom(readFluenceMatrix(f), plan.mesh->tetraCount(), plan.sources.size(), reuse.batches, f);
    if (d.model.none()) {
        warnings.push_back(f + ": the matrix carries no model fingerprint (written before FullMonte recorded one, or "
                               "by a writer that does not know the model), so it cannot be checked against the plan: "
                               "make sure it was simulated from this plan's mesh, materials, sources and packets");
        if (check) *check = "none in the file: not checked";
        return d;
    }
    const ModelFingerprint mine = planFingerprint(plan, d.batches);
    const std::vector<std::string> differ = fingerprintDifferences(d.model, mine);
    if (differ.empty()) {
        if (check) *check = "matches the plan";
        return d;
    }
    const std::string what = "the matrix was simulated from another model than the plan's (different " +
                             joined(differ) + "; model fingerprint of the matrix: " + fingerprintText(d.model) +
                             "; of the plan: " + fingerprintText(mine) + ")";
    if (!reuse.unchecked)
        throw ParameterError(f + ": " + what + ". A plan from it would be wrong: simulate again (no matrix), or, if " +
                             "the difference is known not to matter, reuse it anyway with " + reuse.uncheckedOption);
    warnings.push_back(f + ": " + what + "; used anyway, unchecked as asked");
    if (check) *check = "differs (" + joined(differ) + "): used unchecked";
    return d;
}

}  // namespace fm::planning
