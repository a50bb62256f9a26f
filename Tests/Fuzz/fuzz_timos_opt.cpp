// SPDX-License-Identifier: GPL-3.0-or-later
// TIM-OS .opt reader; accepted materials must also pass the kernel packer's validation.
#include "Geometry/ModelPacker.hpp"
#include "Storage/TIMOS/TIMOS.hpp"
#include "Tests/Fuzz/FuzzUtil.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::istringstream in(fmfuzz::text(data, size));
    fmfuzz::expectOnlyUserErrors([&] { fm::packMaterials(fm::readTIMOSMaterials(in, "fuzz.opt")); });
    return 0;
}
