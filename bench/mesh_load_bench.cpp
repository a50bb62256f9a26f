// SPDX-License-Identifier: GPL-3.0-or-later
// The load path of a mesh, step by step (issue 29): reading the file, parsing it (TIM-OS text
// or FullMonte binary .fmb), building the TetraMesh (index checks, duplicate tetras,
// orientation, faces and adjacency, structure checks, point locator) and packing the kernel's
// records; the GPU's compact cells made from them (at a GPU run's upload); and a checksum of the packed records and face table, so that two formats of one mesh
// can be compared. Core only (no VTK, Tcl).
// Usage: mesh_load_bench MESH [--opt OPT] [--repeat N] [--threads N] [--write-fmb OUT.fmb]
//   MESH: TIM-OS .mesh or .fmb (recognised by content). Without --opt every region gets one
//   material. The point source is the centroid of the middle tetra.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "Common/Errors.hpp"
#include "Common/ParallelFor.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/Core/CellLayout.hpp"
#include "Kernels/HostCellArrays.hpp"
#include "Storage/Binary/BinaryMesh.hpp"
#include "Storage/TIMOS/TIMOS.hpp"
#include "Storage/TIMOS/TIMOSMeshParser.hpp"

using namespace fm;

namespace {

double since(std::chrono::steady_clock::time_point& t0) {
    auto now = std::chrono::steady_clock::now();
    double s = std::chrono::duration<double>(now - t0).count();
    t0 = now;
    return s;
}

// Checksum of everything the kernels get from the mesh and of the face table.
uint64_t modelChecksum(const TetraMesh& m, const KernelInput& in) {
    uint64_t h = binaryMeshChecksum(in.cells.data(), in.cells.size() * sizeof(TetraRecord));
    std::vector<uint32_t> faces;
    faces.reserve(5 * m.faceCount());
    for (uint32_t f = 1; f <= m.faceCount(); ++f) {
        const MeshFace& F = m.face(f);
        faces.insert(faces.end(), {F.points[0], F.points[1], F.points[2], F.owner, F.other});
    }
    h ^= binaryMeshChecksum(faces.data(), faces.size() * 4) * 3;
    return h ^ binaryMeshChecksum(in.emitters.data(), in.emitters.size() * sizeof(EmitterRecord)) * 5;
}

int run(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: mesh_load_bench MESH [--opt OPT] [--repeat N] [--threads N] [--write-fmb OUT.fmb]\n");
        return 2;
    }
    std::string path = argv[1], opt, fmb;
    int repeat = 1;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--opt")) opt = argv[i + 1];
        else if (!std::strcmp(argv[i], "--repeat")) repeat = std::max(1, std::atoi(argv[i + 1]));
        else if (!std::strcmp(argv[i], "--write-fmb")) fmb = argv[i + 1];
        else if (!std::strcmp(argv[i], "--threads")) setLoadThreads(unsigned(std::atoi(argv[i + 1])));
        else throw ParameterError(std::string("unknown option ") + argv[i]);
    }
    std::printf("threads %u\n", loadThreads());
    for (int r = 0; r < repeat; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        std::string bytes = readWholeFile(path);
        double tRead = since(t0);
        bool binary = isBinaryMesh(bytes);
        MeshArrays a;
        if (binary) a = parseBinaryMesh(bytes, path);
        else if (!parseTIMOSMeshFast(bytes.data(), bytes.data() + bytes.size(), a))
            throw FormatError(path + ": the fast parser does not take this file (readTIMOSMesh says why)");
        double tParse = since(t0);
        bytes = std::string();
        TetraMesh mesh = buildMesh(std::move(a), path, {});
        double tBuild = since(t0);
        MaterialSet mats = opt.empty() ? MaterialSet() : readTIMOSMaterials(opt);
        for (size_t i = mats.size(); i < mesh.regionCount(); ++i) mats.append(Material(0.01, 10, 0.9, 1.37));
        auto src = std::make_shared<PointSource>();
        uint32_t mid = uint32_t(mesh.tetraCount() / 2 + 1);
        for (uint32_t v : mesh.tetra(mid))
            for (int k = 0; k < 3; ++k) src->position[k] += 0.25 * mesh.point(v)[k];
        since(t0);
        KernelInput in = packModel(mesh, mats, *src);
        double tPack = since(t0);
        const HostCellArrays gpuCells = hostCellArrays(in.cells, CellLayout::Compact);
        double tCompact = since(t0);
        const MeshBuildTimes& T = mesh.buildTimes();
        std::printf("%s: %zu points, %zu tetras, %zu faces (%s)\n", path.c_str(), mesh.pointCount(), mesh.tetraCount(),
                    mesh.faceCount(), binary ? "binary" : "text");
        std::printf("  read file         %.3f s\n", tRead);
        std::printf("  parse             %.3f s\n", tParse);
        std::printf("  build mesh        %.3f s (its steps: %.3f s)\n", tBuild, T.total());
        std::printf("    index checks    %.3f s\n", T.validate);
        std::printf("    duplicates      %.3f s\n", T.duplicates);
        std::printf("    orientation     %.3f s\n", T.orient);
        std::printf("    faces           %.3f s\n", T.faces);
        std::printf("    structure checks %.3f s\n", T.structure);
        std::printf("    point locator   %.3f s\n", T.locator);
        std::printf("  pack model        %.3f s\n", tPack);
        std::printf("  total             %.3f s\n", tRead + tParse + tBuild + tPack);
        std::printf("  GPU compact cells %.3f s (%zu cells; made at a GPU run's upload)\n", tCompact, gpuCells.compact.size());
        std::printf("model checksum %016llx\n", (unsigned long long)modelChecksum(mesh, in));
        // What the mesh holds per tetra on the host (TetraMesh arrays; faces are ~2 per tetra) and
        // what the kernels get (the packed records, uploaded to the GPU as they are).
        double perTetra = (24.0 * mesh.pointCount() + (16 + 4 + 8 + 16) * double(mesh.tetraCount()) +
                           double(sizeof(MeshFace)) * mesh.faceCount() + 4.0 * mesh.boundaryFaces().size()) /
                          double(mesh.tetraCount());
        std::printf("host bytes per tetra: mesh %.0f, packed records %zu\n", perTetra, sizeof(TetraRecord));
        std::printf("source point %.17g %.17g %.17g\n", src->position[0], src->position[1], src->position[2]);
        if (!fmb.empty() && r == 0) {
            writeBinaryMesh(fmb, mesh);
            std::printf("wrote %s\n", fmb.c_str());
        }
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "mesh_load_bench: %s\n", e.what());
        return 1;
    }
}
