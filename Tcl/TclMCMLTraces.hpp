// SPDX-License-Identifier: GPL-3.0-or-later
// FullMonte's MCMLKernelWithTraces: MCMLKernel's outputs plus PacketTraces (CPU).
#pragma once
#include "Tcl/TclMCML.hpp"
#include "Tcl/TclTraces.hpp"

// Results as MCMLKernel's, then PacketTraces last. The traces come from a second, traced pass
// over the same packets (same seed, packet indices and physics) on the CPU, so the run takes
// about twice as long: meant for few packets. Each trace point's tetra is the layer (1-based).
class MCMLKernelWithTraces : public MCMLKernel {
public:
    MCMLKernelWithTraces();
    void maxTracePoints(double points);
    unsigned long long maxTracePoints() const;
#ifndef SWIG
protected:
    Job makeJob() const override;
private:
    uint64_t maxPoints_ = fm::kDefaultMaxTracePoints;
#endif
};
