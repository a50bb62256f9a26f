// SPDX-License-Identifier: GPL-3.0-or-later
// summary.json writer shared by the command-line drivers (no JSON library needed: the GPU
// machine builds these with a compiler and Boost headers only).
#pragma once
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "Apps/JsonString.hpp"
#include "Kernels/BatchMeans.hpp"
#include "Kernels/KernelInput.hpp"
#include "Kernels/RunWarnings.hpp"
#include "Storage/AtomicFile.hpp"

namespace fm {

inline std::string jsonNumber(double v) {
    if (!std::isfinite(v)) return "null";
    std::ostringstream o;
    o.precision(12);
    o << v;
    return o.str();
}

inline std::string jsonStringList(const std::vector<std::string>& v) {
    std::string o = "[";
    for (size_t i = 0; i < v.size(); ++i) o += (i ? ", " : "") + jsonString(v[i]);
    return o + "]";
}

// Every file fullmonte-run may write into its output folder (single runs and batches), in
// publishing order: a run clears all of them, so no output of an earlier run of either kind
// stays beside its own. summary.json, last, marks a finished run.
inline const std::vector<std::string> kRunOutputs{"volume_energy.txt",  "fluence.txt",       "surface_exit.txt",
                                                  "volume_energy_stderr.txt", "fluence_stderr.txt",
                                                  "fluence_matrix.fmm", "fluence_matrix.h5",
                                                  "fluence_gated.fmtg", "surface_exit_gated.fmtg", "tpsf.txt", "fluence_gated_tetras.txt", "surface_exit_gated_faces.txt", "detected.fmd", "detected.mch", "adjoint_fluence.fmm", "detector_tpsf.txt", "jacobian.txt",
                                                  "summary.json"};

// summary.json's "standard_error" (docs/USER_GUIDE.md): the batches, the standard error of the
// absorbed and exited fractions and their relative errors, and per region (regionOf(tetra)) the energy-weighted
// relative error of the volume tally; null when the run had none (one batch).
template <class RegionOf>
std::string standardErrorJson(const RunResult& r, RegionOf regionOf) {
    const TallyErrors& se = r.standardError;
    if (!se.available() || !(r.ledger.launched > 0)) return "null";
    const double n = r.ledger.launched;
    std::ostringstream o;
    o << "{\"batches\": " << se.batches;
    // The random fractions (specular is fixed by the source; abnormal is a guard's, not a
    // tally). Keys unlike the ledger's, so that line-based readers of "absorbed" keep working.
    const std::pair<const char*, std::pair<double, double>> fields[] = {
        {"absorbed", {r.ledger.absorbed, se.ledger.absorbed}}, {"exited", {r.ledger.exited, se.ledger.exited}}};
    for (const auto& [name, ve] : fields)
        o << ", \"" << name << "_stderr\": " << jsonNumber(ve.second / n) << ", \"" << name
          << "_relative\": " << jsonNumber(ve.first > 0 ? ve.second / ve.first : NAN);
    o << ", \"region_relative\": {";
    // weightedRelativeError per region, all regions in one pass (sums in tetra order, as one
    // pass per region would add them).
    std::map<uint32_t, std::pair<double, double>> sums;  // region -> (value, error) sums
    uint32_t lastRegion = 0;
    std::pair<double, double>* s = nullptr;  // sums of lastRegion (neighbouring tetras share regions)
    for (size_t t = 1; t < r.volume.size(); ++t) {
        const uint32_t reg = regionOf(t);
        if (!s || reg != lastRegion) s = &sums[reg], lastRegion = reg;
        const double v = r.volume[t], e = t < se.volume.size() ? se.volume[t] : NAN;
        if (v == v && e == e) s->first += v, s->second += e;
    }
    bool first = true;
    for (const auto& [reg, sum] : sums) {
        const double rel = sum.first > 0 ? sum.second / sum.first : NAN;
        o << (first ? "" : ", ") << "\"" << reg << "\": " << jsonNumber(rel);
        first = false;
    }
    o << "}}";
    return o.str();
}

inline void writeRunSummary(const std::string& path, const RunResult& r,
                            const std::map<std::string, std::string>& extra,
                            AtomicFile::Stop stop = AtomicFile::Stop::check) {
    const Ledger& L = r.ledger;
    double n = L.launched > 0 ? L.launched : 1.0;
    AtomicFile f(path, stop);
    auto& o = f.out;
    o << "{\n";
    for (auto& [k, v] : extra) o << "  \"" << k << "\": " << v << ",\n";
    o << "  \"kernel\": " << jsonString(r.kernel) << ",\n";
    o << "  \"status\": \"" << (r.cancelled ? "interrupted" : "complete") << "\",\n";
    o << "  \"packets\": " << r.packetsDone << ",\n";
    o << "  \"packets_requested\": " << r.packetsRequested << ",\n";
    o << "  \"seconds\": " << jsonNumber(r.seconds) << ",\n";
    if (r.kernelSeconds > 0)  // GPU: where the time went
        o << "  \"upload_seconds\": " << jsonNumber(r.uploadSeconds) << ",\n"
          << "  \"kernel_seconds\": " << jsonNumber(r.kernelSeconds) << ",\n"
          << "  \"download_seconds\": " << jsonNumber(r.downloadSeconds) << ",\n";
    if (r.gpuBlocksPerSm > 0) o << "  \"cuda_blocks_per_sm\": " << r.gpuBlocksPerSm << ",\n";
    o << "  \"packets_per_second\": " << jsonNumber(r.seconds > 0 ? r.packetsDone / r.seconds : 0) << ",\n";
    o << "  \"steps_per_second\": " << jsonNumber(r.seconds > 0 ? r.events.absorb / r.seconds : 0) << ",\n";
    o << "  \"ledger\": {\n"
      << "    \"launched\": " << jsonNumber(L.launched / n) << ",\n"
      << "    \"specular\": " << jsonNumber(L.specular / n) << ",\n"
      << "    \"absorbed\": " << jsonNumber(L.absorbed / n) << ",\n"
      << "    \"exited\": " << jsonNumber(L.exited / n) << ",\n"
      << "    \"roulette_gained\": " << jsonNumber(L.rouletteGained / n) << ",\n"
      << "    \"roulette_lost\": " << jsonNumber(L.rouletteLost / n) << ",\n"
      << "    \"abnormal\": " << jsonNumber(L.abnormal / n) << ",\n"
      << "    \"imbalance\": " << jsonNumber(L.imbalance() / n) << "\n  },\n";
    const Events& e = r.events;
    o << "  \"events\": {\"launch\": " << e.launch << ", \"absorb\": " << e.absorb
      << ", \"scatter\": " << e.scatter << ", \"boundary\": " << e.boundary
      << ", \"tir\": " << e.tir << ", \"fresnel\": " << e.fresnel << ", \"refract\": " << e.refract
      << ", \"interface\": " << e.interface << ", \"exit\": " << e.exit << ", \"die\": " << e.die
      << ", \"win\": " << e.win << ", \"abnormal\": " << e.abnormal << "}\n";
    o << "}\n";
    f.commit();
}

}  // namespace fm
