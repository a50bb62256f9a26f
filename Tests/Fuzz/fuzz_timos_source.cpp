// SPDX-License-Identifier: GPL-3.0-or-later
// TIM-OS .source reader; accepted sources are compiled against a fixed 2x2x2-cube mesh (27
// points, 48 tetras, two regions) and a few packets launched, so positions, tetra and point
// indices from the file reach the source compiler and the emitters.
#include "Geometry/MeshBuilder.hpp"
#include "Storage/TIMOS/TIMOS.hpp"
#include "Tests/Fuzz/FuzzModel.hpp"

namespace {
const fm::TetraMesh& fixedMesh() {
    static const fm::TetraMesh mesh = fm::makeBoxMesh(
        {0, 0, 0}, {2, 2, 2}, 2, 2, 2, [](const fm::Point3& c) { return c[2] < 1 ? 1u : 2u; });
    return mesh;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::istringstream in(fmfuzz::text(data, size));
    fmfuzz::expectOnlyUserErrors([&] {
        fm::TIMOSSources s = fm::readTIMOSSource(in, "fuzz.source");
        const fm::TetraMesh& mesh = fixedMesh();
        fm::KernelInput in = fm::packModel(mesh, fmfuzz::defaultMaterials(mesh.regionCount()), *s.source);
        fmfuzz::simulateFew(in, 2, 200);
    });
    return 0;
}
