// SPDX-License-Identifier: GPL-3.0-or-later
#include "Tcl/TclSummary.hpp"

#include <cstdio>
#include <memory>

#include "Tcl/TclUtil.hpp"

namespace {

std::string line(const char* label, double v) {
    char b[96];
    std::snprintf(b, sizeof b, "  %-28s %.10g\n", label, v);
    return b;
}

std::string events(const MCEventCounts& e) {
    std::string s = "Event counts\n";
    s += line("launched", double(e.Nlaunch()));
    s += line("absorption events", double(e.Nabsorb()));
    s += line("scattering events", double(e.Nscatter()));
    s += line("face crossings, same n", double(e.Nbound()));
    s += line("interfaces, different n", double(e.Ninterface()));
    s += line("  total internal refl.", double(e.Ntir()));
    s += line("  Fresnel reflections", double(e.Nfresnel()));
    s += line("  refractions", double(e.Nrefr()));
    s += line("roulette wins", double(e.Nwin()));
    s += line("roulette deaths", double(e.Ndie()));
    s += line("exited", double(e.Nexit()));
    s += line("abnormal terminations", double(e.Nabnormal()));
    // Every launched packet ends exactly once: by roulette, by leaving, or abnormally.
    s += line("unaccounted packets", double(e.Nlaunch()) - double(e.Ndie() + e.Nexit() + e.Nabnormal()));
    return s;
}

std::string ledger(const ConservationCounts& c) {
    std::string s = "Weight conservation (units of launched packet weight)\n";
    s += line("launched", c.w_launch());
    s += line("absorbed", c.w_absorb());
    s += line("exited", c.w_exit());
    s += line("specular (not entered)", c.w_specular());
    s += line("lost in roulette", c.w_die());
    s += line("added by roulette", c.w_roulette());
    s += line("abnormal", c.w_abnormal());
    s += line("imbalance", c.imbalance());
    return s;
}

}  // namespace

std::string FMOutputDataSummarize::summary(OutputData* d) const {
    OutputData& D = fmtcl::need(d, "OutputDataSummarize visit");
    if (auto* e = dynamic_cast<MCEventCounts*>(&D)) return events(*e);
    if (auto* c = dynamic_cast<ConservationCounts*>(&D)) return ledger(*c);
    if (auto* m = dynamic_cast<SpatialMap*>(&D))
        return m->name() + ": " + m->spatialType() + " map of " + std::to_string(m->dim()) + " elements, total " +
               std::to_string(m->sum()) + " " + m->unit() + "\n";
    if (auto* s = dynamic_cast<DirectedSurface*>(&D))
        return s->name() + ": region " + std::to_string(s->region()) + " boundary, " + std::to_string(s->dim()) +
               " faces, entering " + std::to_string(s->totalEntering()) + ", exiting " +
               std::to_string(s->totalExiting()) + "\n";
    return D.name() + " (" + D.type() + ")\n";
}

std::string FMOutputDataSummarize::summary(OutputDataCollection* c) const {
    OutputDataCollection& C = fmtcl::need(c, "OutputDataSummarize visit");
    std::string s;
    for (unsigned i = 0; i < C.size(); ++i) {
        std::unique_ptr<OutputData> d(C.getByIndex(i));
        s += summary(d.get());
    }
    return s;
}
