// SPDX-License-Identifier: GPL-3.0-or-later
// Packet traces in Tcl: TetraTraceKernel (FullMonte's kernel of that name) and its output
// PacketTraces (type PacketPositionTraceSet), with accessors FullMonte's Tcl never had.
#pragma once
#include <string>

#include "Tcl/TclKernels.hpp"
#include "Tcl/TclOutputs.hpp"

#ifndef SWIG
#include <memory>

#include "Kernels/CPU/TraceCpu.hpp"
#endif

// Per packet, the point after each event: position, weight, tetra, material, the length of the
// segment ending there, path length and time of flight from launch, and the event.
// Indices: trace i in 0..nTraces-1 (packet order), step j in 0..traceLength(i)-1.
class PacketPositionTraceSet : public OutputData {
public:
    std::string name() const override;  // "PacketTraces"
    std::string type() const override;  // "PacketPositionTraceSet"
    unsigned nTraces() const;
    unsigned long long nPoints() const;
    unsigned traceLength(unsigned trace) const;
    std::string position(unsigned trace, unsigned step) const;  // "x y z " (mm)
    double weight(unsigned trace, unsigned step) const;
    unsigned tetra(unsigned trace, unsigned step) const;       // IDt
    unsigned material(unsigned trace, unsigned step) const;    // IDm
    double stepLength(unsigned trace, unsigned step) const;    // mm, segment ending at step j
    double pathLength(unsigned trace, unsigned step) const;    // mm from launch
    double time(unsigned trace, unsigned step) const;          // ns from launch
    std::string event(unsigned trace, unsigned step) const;    // launch cross reflect scatter roulettewin exit death abnormal
    std::string endEvent(unsigned trace) const;             // how trace i ended (exit, death, abnormal)
    // Trace i as a Tcl list of steps, each {x y z w IDt IDm step path time event}.
    std::string trace(unsigned trace) const;
#ifndef SWIG
    explicit PacketPositionTraceSet(std::shared_ptr<const fm::TraceSet> d) : d_(std::move(d)) {}
    OutputData* clone() const override { return new PacketPositionTraceSet(d_); }
    bool isType(const std::string& t) const override;
    const std::shared_ptr<const fm::TraceSet>& data() const { return d_; }
private:
    const fm::TraceStep& at(unsigned i, unsigned j, const char* what) const;
    std::shared_ptr<const fm::TraceSet> d_;
#endif
};

// Volume and surface tallies as TetraSVKernel's plus the trace of every packet, on the CPU.
// Results: 0 EventCounts, 1 ConservationCounts, 2 VolumeEnergy, 3 SurfaceExitEnergy,
// 4 PacketTraces. Meant for few packets: traces take 36 bytes per event.
class TetraTraceKernel : public Kernel {
public:
    TetraTraceKernel();
    // Beyond FullMonte: the most trace points a run may hold (default 2^25, about 1.2 GB);
    // a run that would pass it raises an error.
    void maxTracePoints(double points);
    unsigned long long maxTracePoints() const;
#ifndef SWIG
protected:
    Job makeJob() const override;
private:
    uint64_t maxPoints_ = fm::kDefaultMaxTracePoints;
#endif
};
