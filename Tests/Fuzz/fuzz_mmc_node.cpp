// SPDX-License-Identifier: GPL-3.0-or-later
// MMC node file, read with a fixed valid elem file (one tetra on nodes 1-4).
#include "Storage/MMC/MMC.hpp"
#include "Tests/Fuzz/FuzzModel.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::istringstream node(fmfuzz::text(data, size)), elem("1 1\n1 1 2 3 4 1\n");
    fmfuzz::expectOnlyUserErrors(
        [&] { fmfuzz::exerciseMesh(fm::readMMCMesh(node, "fuzz_node.dat", elem, "elem.dat")); });
    return 0;
}
