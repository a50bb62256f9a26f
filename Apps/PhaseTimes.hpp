// SPDX-License-Identifier: GPL-3.0-or-later
// The wall time of each phase of a command-line run (reading, checking, packing, waiting for the
// GPU's start-up, the run, writing outputs), printed on stderr when the environment sets
// FM_TIMING=1, so that the time outside the simulation can be placed (bench/process_phases.sh);
// beside it the CPU time of all the process's threads in that phase (std::clock), which a loaded
// machine does not inflate.
#pragma once
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <tuple>
#include <string>
#include <vector>

namespace fm {

class PhaseTimes {
public:
    using Clock = std::chrono::steady_clock;

    // The clock every PhaseTimes measures "since start" from: the first call (main's first line).
    static Clock::time_point processStart() {
        static const Clock::time_point t = Clock::now();
        return t;
    }
    static bool enabled() {
        const char* v = std::getenv("FM_TIMING");
        return v && *v && std::strcmp(v, "0") != 0;
    }

    // Ends the current phase under `name` and starts the next.
    void mark(const std::string& name) {
        const Clock::time_point now = Clock::now();
        const std::clock_t cpu = std::clock();
        phases_.emplace_back(name, std::chrono::duration<double>(now - last_).count(),
                             double(cpu - lastCpu_) / CLOCKS_PER_SEC);
        last_ = now;
        lastCpu_ = cpu;
    }
    // A value measured elsewhere (a part of a phase), shown indented under the phases.
    void note(const std::string& name, double seconds) { phases_.emplace_back("  " + name, seconds, -1.0); }

    // "fm-timing NAME WALL [cpu CPU]" per phase (seconds), then the time since the process started.
    void print() const {
        if (!enabled()) return;
        for (const auto& [name, s, cpu] : phases_) {
            std::fprintf(stderr, "fm-timing %-30s %8.4f", name.c_str(), s);
            if (cpu >= 0) std::fprintf(stderr, "  cpu %8.4f", cpu);
            std::fputc('\n', stderr);
        }
        std::fprintf(stderr, "fm-timing %-30s %8.4f\n", "since process start",
                     std::chrono::duration<double>(Clock::now() - processStart()).count());
        std::fflush(stderr);
    }

private:
    Clock::time_point last_ = Clock::now();
    std::clock_t lastCpu_ = std::clock();
    std::vector<std::tuple<std::string, double, double>> phases_;  // name, wall, CPU (-1: none)
};

}  // namespace fm
