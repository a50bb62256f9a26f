// SPDX-License-Identifier: GPL-3.0-or-later
// Cost of the mesh checks on load (Geometry/MeshCheck.hpp) on a box mesh of about 1M tetras:
// the whole TetraMesh construction, and each check run again alone on the built mesh.
// Usage: mesh_check_bench [cubes per side, default 55 -> 998,250 tetras]
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "Geometry/MeshBuilder.hpp"
#include "Geometry/MeshCheck.hpp"
#include "Geometry/MeshRepair.hpp"

using namespace fm;

namespace {
double since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

int main(int argc, char** argv) {
    unsigned n = argc > 1 ? unsigned(std::atoi(argv[1])) : 55;
    TetraMesh box = makeBoxMesh({0, 0, 0}, {100, 100, 100}, n, n, n, [](const Point3& c) {
        return c[0] < 50 ? 1u : 2u;
    });
    std::printf("mesh: %zu tetras, %zu points, %zu faces\n", box.tetraCount(), box.pointCount(), box.faceCount());
    auto points = box.points();
    auto tetras = box.tetras();
    auto regions = box.regions();

    auto t0 = std::chrono::steady_clock::now();
    TetraMesh m(points, tetras, regions);
    double total = since(t0);

    MeshCheckReport rep;
    rep.tolerance = meshTolerance(points, {});
    t0 = std::chrono::steady_clock::now();
    checkDuplicateTetras(tetras, points, rep);
    double dup = since(t0);
    t0 = std::chrono::steady_clock::now();
    checkMeshStructure(m, rep);
    double structure = since(t0);
    t0 = std::chrono::steady_clock::now();
    TetraMesh merged = mergeCoincidentVertices(m, 0);
    double merge = since(t0);

    std::printf("TetraMesh construction (with checks): %.3f s\n", total);
    std::printf("  duplicate tetras check:             %.3f s\n", dup);
    std::printf("  structure checks (components, coincident vertices, cracks, folds, empty regions): %.3f s\n",
                structure);
    std::printf("  checks total:                       %.3f s (%.0f%% of construction)\n", dup + structure,
                100 * (dup + structure) / total);
    std::printf("mergeCoincidentVertices (nothing to merge, includes the new mesh's construction): %.3f s\n", merge);
    std::printf("findings on the clean mesh: %zu\n", rep.defects.size());
    return rep.defects.empty() ? 0 : 1;
}
