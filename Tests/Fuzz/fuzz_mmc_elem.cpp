// SPDX-License-Identifier: GPL-3.0-or-later
// MMC elem file, read with a fixed valid node file (the 8 corners of a unit cube and its centre).
#include "Storage/MMC/MMC.hpp"
#include "Tests/Fuzz/FuzzModel.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::istringstream elem(fmfuzz::text(data, size)),
        node("1 9\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 1 1 0\n5 0 0 1\n6 1 0 1\n7 0 1 1\n8 1 1 1\n9 0.5 0.5 0.5\n");
    fmfuzz::expectOnlyUserErrors(
        [&] { fmfuzz::exerciseMesh(fm::readMMCMesh(node, "node.dat", elem, "fuzz_elem.dat")); });
    return 0;
}
