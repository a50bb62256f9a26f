// SPDX-License-Identifier: GPL-3.0-or-later
// fullmonte-run's time-resolved outputs (docs/TIME_DOMAIN.md): fluence per tetra and exit
// fluence per boundary face per time gate (.fmtg files, with the lists of their elements where
// they are not every tetra), the per-gate totals (tpsf.txt) and summary.json's "time_gates".
#pragma once
#include <sstream>
#include <string>
#include <vector>

#include "Apps/RunSummary.hpp"
#include "Common/Errors.hpp"
#include "Geometry/Queries.hpp"
#include "Storage/OutputFolder.hpp"
#include "Storage/Text/TextFile.hpp"
#include "Storage/TimeGated/TimeGatedFile.hpp"

namespace fm {

// The gated outputs' file names: volume, exit, per-gate totals, the gated tetras' and exit
// faces' lists (a batch writes them per run).
inline const std::vector<std::string> kGatedOutputs{"fluence_gated.fmtg", "surface_exit_gated.fmtg", "tpsf.txt",
                                                    "fluence_gated_tetras.txt", "surface_exit_gated_faces.txt"};

// What fluence divides each element's energy by, element 0 a dummy (Storage/TimeGated
// gatedValues): fluenceDivisor of tetra ids[k] (as volumeFluence), or the area of face ids[k]
// (as surfaceFluence); ids[k] = k where ids is empty.
inline std::vector<double> tetraDivisors(const TetraMesh& mesh, const MaterialSet& mats, const std::vector<uint32_t>& ids) {
    const size_t n = ids.empty() ? mesh.tetraCount() + 1 : ids.size();
    std::vector<double> d(n, 0.0);
    for (size_t k = 1; k < n; ++k) d[k] = fluenceDivisor(mesh, mats, ids.empty() ? uint32_t(k) : ids[k]);
    return d;
}
inline std::vector<double> faceDivisors(const TetraMesh& mesh, const std::vector<uint32_t>& ids) {
    std::vector<double> d(ids.size(), 0.0);
    for (size_t k = 1; k < ids.size(); ++k) d[k] = mesh.face(ids[k]).area;
    return d;
}

// The gated outputs of run r, named `prefix` + the single run's names (a batch's run folder:
// "run_0003/"; every name must be one of the output folder's outputs).
inline void writeGatedOutputs(const OutputFolder& out, const TetraMesh& mesh, const MaterialSet& mats,
                              const RunResult& r, double power, const std::string& prefix = "") {
    if (!r.gates.on()) return;
    const double scale = power / double(r.packetsDone);
    const TallyErrors& se = r.standardError;
    // One .fmtg file of a gated energy array, each element's energy times the scale over its
    // divisor (the gates' fluence is the time integral over each gate, in J/mm^2 for --power in J).
    auto writeArray = [&](const std::string& name, GatedQuantity q, const std::vector<double>& gated,
                          const std::vector<double>& errors, const std::vector<double>& divisor) {
        if (gated.empty()) return;
        TimeGatedArray a;
        a.gates = r.gates;
        a.quantity = q;
        a.elements = divisor.size() - 1;
        a.units = "J/mm^2 (--power in J)";
        a.values = gatedValues(r.gates, gated, scale, divisor);
        if (!errors.empty()) a.stderrs = gatedValues(r.gates, errors, scale, divisor);
        writeTimeGated(out.staged(prefix + name), a);
    };
    const std::shared_ptr<const GatedTetras>& chosen = r.gates.tetras;  // per-region gating, or null
    if (!r.gatedVolume.empty())
        writeArray(kGatedOutputs[0], GatedQuantity::volumeFluence, r.gatedVolume, se.gatedVolume,
                   tetraDivisors(mesh, mats, chosen ? chosen->cells : std::vector<uint32_t>{}));
    if (chosen && !r.gatedVolume.empty()) {  // which tetras fluence_gated.fmtg's elements are, in order
        AtomicFile t(out.staged(prefix + kGatedOutputs[3]));
        t.out << "# tetra ids (1-based, as in fluence.txt's lines) of fluence_gated.fmtg's elements, in order; regions";
        for (uint32_t g : chosen->regions) t.out << ' ' << g;
        t.out << '\n';
        for (size_t k = 1; k < chosen->cells.size(); ++k) t.out << chosen->cells[k] << '\n';
        t.commit();
    }
    if (!r.gatedSurface.empty()) {  // over the exit faces (GatedFaces), listed in their order
        if (!r.gates.faces || r.gates.faces->slot.size() != mesh.faceCount() + 1)
            throw Error("the gated exit tally's faces are not the mesh's (" + std::to_string(mesh.faceCount()) + " faces)");
        const std::vector<uint32_t>& faces = r.gates.faces->faces;
        writeArray(kGatedOutputs[1], GatedQuantity::exitFluenceListed, r.gatedSurface, se.gatedSurface,
                   faceDivisors(mesh, faces));
        AtomicFile t(out.staged(prefix + kGatedOutputs[4]));
        t.out << "# face p1 p2 p3 (as in surface_exit.txt's rows) of surface_exit_gated.fmtg's elements, in order\n";
        for (size_t k = 1; k < faces.size(); ++k) {
            const auto& F = mesh.face(faces[k]);
            t.out << faces[k] << ' ' << F.points[0] << ' ' << F.points[1] << ' ' << F.points[2] << '\n';
        }
        t.commit();
    }
    // The per-gate totals (the TPSF of the whole model), as fractions of the launched weight.
    const double n = r.ledger.launched > 0 ? r.ledger.launched : 1.0;
    const std::vector<double> abs = gateBinTotals(r.gates, r.gatedVolume), ex = gateBinTotals(r.gates, r.gatedSurface);
    AtomicFile f(out.staged(prefix + "tpsf.txt"));
    f.out << "# gate t_start_ns t_stop_ns absorbed exited absorbed_stderr exited_stderr (fractions of the launched "
             "weight; gate 'early': before the first gate, 'late': after the last; - where not kept)\n";
    auto put = [&](const std::vector<double>& v, uint32_t b) {
        f.out << ' ';
        if (b < v.size()) putValue(f.out, v[b] / n);
        else f.out << '-';
    };
    for (uint32_t b = 0; b < r.gates.bins(); ++b) {
        const bool gate = b < r.gates.count;
        f.out << (gate ? std::to_string(b) : b == r.gates.earlyBin() ? std::string("early") : std::string("late"));
        f.out << ' ' << (gate ? r.gates.gateStart(b) : b == r.gates.earlyBin() ? 0.0 : r.gates.stopNs) << ' ';
        if (gate) f.out << r.gates.gateStop(b);
        else if (b == r.gates.earlyBin()) f.out << r.gates.startNs;
        else f.out << "inf";
        put(abs, b);
        put(ex, b);
        put(se.gatedVolumeTotals, b);
        put(se.gatedSurfaceTotals, b);
        f.out << '\n';
    }
    f.commit();
}

// summary.json's "time_gates": the gates, and per gate the absorbed and exited fractions of the
// launched weight (with the early and late bins apart), with their standard errors where kept.
inline std::string gatedSummaryJson(const RunResult& r) {
    if (!r.gates.on()) return "null";
    const double n = r.ledger.launched > 0 ? r.ledger.launched : 1.0;
    const TimeGates& g = r.gates;
    std::ostringstream o;
    o << "{\"start_ns\": " << jsonNumber(g.startNs) << ", \"stop_ns\": " << jsonNumber(g.stopNs)
      << ", \"step_ns\": " << jsonNumber(g.stepNs) << ", \"gates\": " << g.count;
    if (g.tetras) {  // per-region gating: the absorbed totals cover the chosen regions' tetras only
        o << ", \"regions\": [";
        for (size_t i = 0; i < g.tetras->regions.size(); ++i) o << (i ? ", " : "") << g.tetras->regions[i];
        o << "], \"gated_tetras\": " << g.tetras->cells.size() - 1;
    }
    auto field = [&](const char* name, const std::vector<double>& v) {
        if (v.empty()) return;
        o << ", \"" << name << "\": [";
        for (uint32_t b = 0; b < g.count; ++b) o << (b ? ", " : "") << jsonNumber(v[b] / n);
        o << "], \"" << name << "_early\": " << jsonNumber(v[g.earlyBin()] / n) << ", \"" << name
          << "_late\": " << jsonNumber(v[g.lateBin()] / n);
    };
    field("absorbed", gateBinTotals(g, r.gatedVolume));
    field("exited", gateBinTotals(g, r.gatedSurface));
    field("absorbed_stderr", r.standardError.gatedVolumeTotals);
    field("exited_stderr", r.standardError.gatedSurfaceTotals);
    o << "}";
    return o.str();
}

}  // namespace fm
