// SPDX-License-Identifier: GPL-3.0-or-later
// A TIM-OS model (mesh, .opt, one point source) as MMC's input, for side-by-side runs with MMC
// (bench/peer_mmc.sh): node_/elem_/prop_<id>.dat and <id>.json in OUTDIR, the isotropic point
// source in the element that holds it (InitElem), MMC's mismatch on, one time gate.
// Usage: mmc_convert MESH OPT SOURCE PHOTONS SEED OUTDIR ID
#include <cstdio>
#include <fstream>
#include <iostream>

#include "Geometry/Sources.hpp"
#include "Storage/MMC/MMC.hpp"
#include "Storage/TIMOS/TIMOS.hpp"

int main(int argc, char** argv) {
    if (argc != 8) {
        std::cerr << "usage: mmc_convert MESH OPT SOURCE PHOTONS SEED OUTDIR ID\n";
        return 2;
    }
    try {
        const std::string outDir = argv[6], id = argv[7];
        fm::TetraMesh mesh = fm::readTIMOSMesh(argv[1]);
        fm::MaterialSet mats = fm::readTIMOSMaterials(argv[2]);
        fm::TIMOSSources src = fm::readTIMOSSource(argv[3]);
        auto* point = dynamic_cast<fm::PointSource*>(src.source.get());
        if (!point) throw fm::ParameterError(std::string(argv[3]) + ": one point source expected");
        const uint32_t elem = mesh.locate(point->position);
        if (elem == 0) throw fm::ParameterError(std::string(argv[3]) + ": the point is outside the mesh");
        fm::writeMMCMesh(outDir, id, mesh);
        fm::writeMMCMaterials(outDir, id, mats);
        std::ofstream j(outDir + "/" + id + ".json");
        j.precision(17);
        const fm::Point3& p = point->position;
        j << "{\n \"Session\": {\"ID\": \"" << id << "\", \"Photons\": " << argv[4] << ", \"RNGSeed\": " << argv[5]
          << ", \"DoMismatch\": 1, \"DoSaveVolume\": 0},\n"
          << " \"Forward\": {\"T0\": 0, \"T1\": 1e-7, \"Dt\": 1e-7, \"N0\": " << mats.exterior().n << "},\n"
          << " \"Optode\": {\"Source\": {\"Type\": \"isotropic\", \"Pos\": [" << p[0] << ", " << p[1] << ", " << p[2]
          << "], \"Dir\": [0, 0, 1]}},\n"
          << " \"Mesh\": {\"MeshID\": \"" << id << "\", \"InitElem\": " << elem << "}\n}\n";
        if (!j) throw fm::Error(outDir + "/" + id + ".json: cannot write");
        std::cout << id << ": " << mesh.pointCount() << " nodes, " << mesh.tetraCount() << " elements, source in element "
                  << elem << "\n";
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "mmc_convert: " << e.what() << "\n";
        return 1;
    }
}
