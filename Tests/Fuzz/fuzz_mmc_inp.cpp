// SPDX-License-Identifier: GPL-3.0-or-later
// MMC's .inp session file (photons, seed, source, time gates, mesh id, detectors, source type),
// beside the fixed mesh files of id "fz" (FuzzMmcSession.hpp); accepted sessions are packed and run.
#include "Tests/Fuzz/FuzzMmcSession.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string path = fmfuzz::mmcSessionDir().write("session.inp", data, size);
    fmfuzz::expectOnlyUserErrors([&] { fmfuzz::exerciseSession(fm::readMMCInp(path, 1.0)); });
    return 0;
}
