// SPDX-License-Identifier: GPL-3.0-or-later
// TIM-OS .mesh reader; a mesh it accepts is packed and simulated briefly (FuzzModel.hpp).
#include "Storage/TIMOS/TIMOS.hpp"
#include "Tests/Fuzz/FuzzModel.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::istringstream in(fmfuzz::text(data, size));
    fmfuzz::expectOnlyUserErrors([&] { fmfuzz::exerciseMesh(fm::readTIMOSMesh(in, "fuzz.mesh")); });
    return 0;
}
