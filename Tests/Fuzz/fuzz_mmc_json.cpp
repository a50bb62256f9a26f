// SPDX-License-Identifier: GPL-3.0-or-later
// MMC's JSON session input (Mesh/Shapes/Domain with MeshID or inline MeshNode/MeshElem, Media,
// Session, Forward, Optode), beside the fixed mesh files of id "fz" (FuzzMmcSession.hpp);
// accepted sessions are packed and run. Without nlohmann-json the reader refuses every input
// with a ParameterError, which is an expected outcome.
#include "Tests/Fuzz/FuzzMmcSession.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string path = fmfuzz::mmcSessionDir().write("session.json", data, size);
    fmfuzz::expectOnlyUserErrors([&] { fmfuzz::exerciseSession(fm::readMMCJson(path)); });
    return 0;
}
