// SPDX-License-Identifier: GPL-3.0-or-later
// MCML .mco reader (the stream overload: no file needed).
#include "Storage/MCML/MCOReader.hpp"
#include "Tests/Fuzz/FuzzUtil.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::istringstream in(fmfuzz::text(data, size));
    fmfuzz::expectOnlyUserErrors([&] { readMCO(in, "fuzz.mco"); });
    return 0;
}
