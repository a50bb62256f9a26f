// SPDX-License-Identifier: GPL-3.0-or-later
// MMC prop file; accepted materials must also pass the kernel packer's validation.
#include "Geometry/ModelPacker.hpp"
#include "Storage/MMC/MMC.hpp"
#include "Tests/Fuzz/FuzzUtil.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::istringstream in(fmfuzz::text(data, size));
    fmfuzz::expectOnlyUserErrors([&] { fm::packMaterials(fm::readMMCMaterials(in, "fuzz_prop.dat")); });
    return 0;
}
