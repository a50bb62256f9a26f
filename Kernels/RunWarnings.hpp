// SPDX-License-Identifier: GPL-3.0-or-later
// Warnings every front end gives about a finished run (fullmonte-run and its batches, Tcl
// kernels and BatchRunner, Python runs and batches, fullmonte-plan), so that a user of any of
// them learns the same thing in the same words.
#pragma once
#include <sstream>
#include <string>

#include "Kernels/Core/Records.hpp"

namespace fm {

// Packets a step or hit guard stops (--max-steps, --max-hits) and packets whose emission fails
// (a volume source's sampler that finds no point) are booked "abnormal": their weight is in no
// tally. Above this fraction of the launched weight a run is flagged.
constexpr double kAbnormalWarningFraction = 1e-3;

// The warning for a run's ledger, or "" when its abnormal fraction is within the threshold.
inline std::string abnormalWarning(const Ledger& L) {
    if (!(L.launched > 0) || !(L.abnormal / L.launched > kAbnormalWarningFraction)) return "";
    std::ostringstream o;
    o.precision(3);
    o << L.abnormal / L.launched * 100 << "% of the launched weight was booked abnormal (step/hit guards or "
      << "failed emissions), above " << kAbnormalWarningFraction * 100 << "%: the tallies miss that weight";
    return o.str();
}

}  // namespace fm
