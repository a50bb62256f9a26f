// SPDX-License-Identifier: GPL-3.0-or-later
// Detected-packet file reader (.fmd; the stream overload: no file needed).
#include "Storage/Detected/DetectedFile.hpp"
#include "Tests/Fuzz/FuzzUtil.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::istringstream in(fmfuzz::text(data, size));
    fmfuzz::expectOnlyUserErrors([&] { fm::readDetected(in, "fuzz.fmd"); });
    return 0;
}
