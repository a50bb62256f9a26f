// SPDX-License-Identifier: GPL-3.0-or-later
// FullMonte binary mesh (.fmb) reader. An input whose last byte is odd has its checksums
// recomputed first, so that mutations reach the count, index and mesh checks behind them
// instead of stopping at a checksum mismatch; a mesh the reader accepts is packed and
// simulated briefly (FuzzModel.hpp).
#include <cstring>

#include "Storage/Binary/BinaryMesh.hpp"
#include "Tests/Fuzz/FuzzModel.hpp"

namespace {
// The checksums of whatever sections the header's counts describe, where the input holds them.
void reseal(std::string& b) {
    if (b.size() < fm::kBinaryMeshHeaderBytes) return;
    uint64_t np, nt;
    std::memcpy(&np, &b[16], 8);
    std::memcpy(&nt, &b[24], 8);
    if (np < (1u << 24) && nt < (1u << 24)) {
        const size_t sizes[3] = {size_t(24 * np), size_t(16 * nt), size_t(4 * nt)};
        size_t at = fm::kBinaryMeshHeaderBytes;
        for (int s = 0; s < 3 && at + sizes[s] <= b.size(); at += sizes[s], ++s) {
            uint64_t sum = fm::binaryMeshChecksum(b.data() + at, sizes[s]);
            std::memcpy(&b[40 + 8 * s], &sum, 8);
        }
    }
    uint64_t head = fm::binaryMeshChecksum(b.data(), 72);
    std::memcpy(&b[72], &head, 8);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string bytes = fmfuzz::text(data, size);
    if (size && (data[size - 1] & 1)) reseal(bytes);
    fmfuzz::expectOnlyUserErrors(
        [&] { fmfuzz::exerciseMesh(fm::buildMesh(fm::parseBinaryMesh(bytes, "fuzz.fmb"), "fuzz.fmb", {})); });
    return 0;
}
