// SPDX-License-Identifier: GPL-3.0-or-later
// The three index-mismatched layers the MCML kernel tests run (time gates, records, CPU and GPU),
// in MCML's units (1/cm, cm): 0.25 cm of tissue between n = 1.0 above and 1.2 below.
#pragma once
#include "Storage/MCML/MCMLTypes.hpp"

namespace fmtest {

inline MCMLRun threeMismatchedLayers() {
    MCMLRun r;
    r.outName = "t.mco";
    r.photons = 20000;
    r.dz = 0.01;
    r.dr = 0.02;
    r.nz = 30;
    r.nr = 25;
    r.na = 5;
    r.nAbove = 1.0;
    r.nBelow = 1.2;
    r.layers = {{1.4, 1, 100, 0.8, 0.05}, {1.33, 0.5, 50, 0.9, 0.1}, {1.45, 2, 80, 0.7, 0.1}};
    return r;
}

}  // namespace fmtest
