// SPDX-License-Identifier: GPL-3.0-or-later
#include "Tcl/TclTraces.hpp"

#include <cstdio>

#include "Common/Errors.hpp"
#include "Tcl/TclUtil.hpp"

using fm::ParameterError;

namespace {

std::string num(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.9g", v);
    return b;
}

}  // namespace

// ---- PacketPositionTraceSet ----

std::string PacketPositionTraceSet::name() const { return "PacketTraces"; }
std::string PacketPositionTraceSet::type() const { return "PacketPositionTraceSet"; }
bool PacketPositionTraceSet::isType(const std::string& t) const {
    return t == "PacketPositionTraceSet" || t == "PacketTraces";
}
unsigned PacketPositionTraceSet::nTraces() const { return unsigned(d_->traceCount()); }
unsigned long long PacketPositionTraceSet::nPoints() const { return d_->steps.size(); }
unsigned PacketPositionTraceSet::traceLength(unsigned i) const {
    if (i >= d_->traceCount())
        throw ParameterError("PacketTraces traceLength: trace " + std::to_string(i) + " is out of range (0.." +
                             std::to_string(d_->traceCount()) + ")");
    return unsigned(d_->length(i));
}
const fm::TraceStep& PacketPositionTraceSet::at(unsigned i, unsigned j, const char* what) const {
    if (i >= d_->traceCount())
        throw ParameterError(std::string("PacketTraces ") + what + ": trace " + std::to_string(i) +
                             " is out of range (" + std::to_string(d_->traceCount()) + " traces)");
    if (j >= d_->length(i))
        throw ParameterError(std::string("PacketTraces ") + what + ": step " + std::to_string(j) + " of trace " +
                             std::to_string(i) + " is out of range (" + std::to_string(d_->length(i)) + " steps)");
    return d_->step(i, j);
}
std::string PacketPositionTraceSet::position(unsigned i, unsigned j) const {
    const fm::TraceStep& s = at(i, j, "position");
    return num(s.pos[0]) + " " + num(s.pos[1]) + " " + num(s.pos[2]) + " ";
}
double PacketPositionTraceSet::weight(unsigned i, unsigned j) const { return at(i, j, "weight").w; }
unsigned PacketPositionTraceSet::tetra(unsigned i, unsigned j) const { return at(i, j, "tetra").tetra; }
unsigned PacketPositionTraceSet::material(unsigned i, unsigned j) const { return at(i, j, "material").material; }
double PacketPositionTraceSet::stepLength(unsigned i, unsigned j) const { return at(i, j, "stepLength").step; }
double PacketPositionTraceSet::pathLength(unsigned i, unsigned j) const { return at(i, j, "pathLength").path; }
double PacketPositionTraceSet::time(unsigned i, unsigned j) const { return at(i, j, "time").time; }
std::string PacketPositionTraceSet::event(unsigned i, unsigned j) const {
    return fm::traceEventName(at(i, j, "event").event);
}
std::string PacketPositionTraceSet::endEvent(unsigned i) const {
    unsigned n = traceLength(i);
    return fm::traceEventName(d_->step(i, n - 1).event);
}
std::string PacketPositionTraceSet::trace(unsigned i) const {
    unsigned n = traceLength(i);
    std::string r;
    for (unsigned j = 0; j < n; ++j) {
        const fm::TraceStep& s = d_->step(i, j);
        r += (j ? " {" : "{") + num(s.pos[0]) + " " + num(s.pos[1]) + " " + num(s.pos[2]) + " " + num(s.w) + " " +
             std::to_string(s.tetra) + " " + std::to_string(s.material) + " " + num(s.step) + " " + num(s.path) +
             " " + num(s.time) + " " + fm::traceEventName(s.event) + "}";
    }
    return r;
}

// ---- TetraTraceKernel ----

namespace {
fm::OutputSelection volumeAndSurface() {
    fm::OutputSelection o;
    o.volume = o.surface = true;
    o.directed = false;
    return o;
}
}  // namespace

TetraTraceKernel::TetraTraceKernel() : Kernel("TetraTraceKernel", "cpu", volumeAndSurface()) {}

void TetraTraceKernel::maxTracePoints(double n) {
    notRunning("maxTracePoints");
    maxPoints_ = fmtcl::wholeNumber(n, "TetraTraceKernel maxTracePoints", 1, 9007199254740992.0);
}
unsigned long long TetraTraceKernel::maxTracePoints() const { return maxPoints_; }

Kernel::Job TetraTraceKernel::makeJob() const {
    std::shared_ptr<Prepared> p = prepare();
    const uint64_t maxPoints = maxPoints_;
    return [this, p, maxPoints](const fm::RunOptions& o) {
        fm::RunOptions opt = p->opt;
        opt.progress = o.progress;
        opt.cancel = o.cancel;
        auto r = std::make_shared<fm::TracedRunResult>(fm::runCpuTraced(*p->in, opt, maxPoints));
        Outcome out;
        out.cancelled = r->run.cancelled;
        out.done = r->run.packetsDone;
        out.requested = r->run.packetsRequested;
        out.seconds = r->run.seconds;
        out.collect = [this, p, r] {
            auto items = std::make_shared<OutputDataCollection::Items>();
            items->push_back(std::make_shared<MCEventCounts>(r->run.events));
            items->push_back(std::make_shared<ConservationCounts>(r->run.ledger));
            addMaps(*items, r->run, *p);
            auto traces = std::make_shared<const fm::TraceSet>(std::move(r->traces));
            items->push_back(std::make_shared<PacketPositionTraceSet>(traces));
            return std::shared_ptr<const OutputDataCollection::Items>(items);
        };
        return out;
    };
}
