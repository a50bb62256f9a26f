// SPDX-License-Identifier: GPL-3.0-or-later
#include "Tcl/TclMCMLTraces.hpp"

#include "Geometry/Layered.hpp"
#include "Storage/MCML/MCMLKernelRun.hpp"
#include "Tcl/TclUtil.hpp"

MCMLKernelWithTraces::MCMLKernelWithTraces() { className_ = "MCMLKernelWithTraces"; }

void MCMLKernelWithTraces::maxTracePoints(double n) {
    notRunning("maxTracePoints");
    maxPoints_ = fmtcl::wholeNumber(n, "MCMLKernelWithTraces maxTracePoints", 1, 9007199254740992.0);
}
unsigned long long MCMLKernelWithTraces::maxTracePoints() const { return maxPoints_; }

Kernel::Job MCMLKernelWithTraces::makeJob() const {
    Job base = MCMLKernel::makeJob();  // checks the model; the MCML run itself
    auto run = std::make_shared<const MCMLRun>(buildRun());
    auto in = std::make_shared<const fm::KernelInput>(fm::packLayered(fm::layeredFromMcml(*run)));
    const uint64_t maxPoints = maxPoints_;
    return [base, run, in, maxPoints](const fm::RunOptions& o) {
        Outcome out = base(o);
        if (out.cancelled) return out;
        // The same packets as the MCML pass (options as MCMLKernel sets them), traced; only the
        // traces are kept from this pass.
        fm::RunOptions opt = fm::mcmlRunOptions(*run);
        opt.params.seed = o.params.seed;
        opt.params.maxSteps = o.params.maxSteps;
        opt.params.maxHits = o.params.maxHits;
        opt.threads = o.threads;
        opt.cancel = o.cancel;
        opt.outputs.volume = opt.outputs.surface = opt.outputs.directed = false;
        auto tr = std::make_shared<fm::TracedRunResult>(fm::runCpuTraced(*in, opt, maxPoints));
        if (tr->run.cancelled) {
            out.cancelled = true;
            return out;
        }
        out.seconds += tr->run.seconds;
        auto collect = out.collect;
        out.collect = [collect, tr] {
            auto items = std::make_shared<OutputDataCollection::Items>(*collect());
            items->push_back(std::make_shared<PacketPositionTraceSet>(
                std::make_shared<const fm::TraceSet>(std::move(tr->traces))));
            return std::shared_ptr<const OutputDataCollection::Items>(items);
        };
        return out;
    };
}
