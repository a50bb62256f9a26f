// SPDX-License-Identifier: GPL-3.0-or-later
// OutputDataSummarize (FullMonte 2018): `OutputDataSummarize S; S visit $item` (or a whole
// OutputDataCollection) prints a short text summary of run outputs: the event counts and the
// weight ledger with their balances, and the size and total of spatial maps. FullMonte.tcl wraps
// the class so that `visit` prints to Tcl's stdout; `summary` returns the same text.
#pragma once
#include <string>

#include "Tcl/TclOutputs.hpp"

class FMOutputDataSummarize {
public:
    std::string summary(OutputData* d) const;
    std::string summary(OutputDataCollection* c) const;
};
