// SPDX-License-Identifier: GPL-3.0-or-later
// Time-gated tally file reader (.fmtg; the stream overload: no file needed). What it accepts is
// consistent: as many values (and standard errors) as bins x elements, and bins from the gates.
#include "Storage/TimeGated/TimeGatedFile.hpp"
#include "Tests/Fuzz/FuzzUtil.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::istringstream in(fmfuzz::text(data, size), std::ios::binary);
    fmfuzz::expectOnlyUserErrors([&] {
        const fm::TimeGatedArray a = fm::readTimeGated(in, "fuzz.fmtg");
        const size_t n = size_t(a.gates.bins()) * a.elements;
        fmfuzz::require(a.gates.on() && a.gates.bins() == a.gates.count + 2, "gates on, with the early and late bins");
        fmfuzz::require(a.values.size() == n, "values are bins x elements");
        fmfuzz::require(a.stderrs.empty() || a.stderrs.size() == n, "standard errors absent or bins x elements");
        fmfuzz::require(a.units.size() <= 31, "units at most 31 characters");
    });
    return 0;
}
