// SPDX-License-Identifier: GPL-3.0-or-later
// A TIM-OS model (mesh, .opt, one point source) as MMC's input, for side-by-side runs with MMC
// (bench/peer_mmc.sh): node_/elem_/prop_<id>.dat and <id>.json in OUTDIR, the isotropic point
// source in the element that holds it (InitElem), MMC's mismatch on, one time gate.
// Usage: mmc_convert MESH OPT SOURCE PHOTONS SEED OUTDIR ID
// PHOTONS is a whole number >= 1 (1e6 is fine), SEED one of MMC's 32-bit seeds (negative: MMC
// draws one from the clock), ID a file-name word; the JSON is written only when all are good.
#include <cctype>
#include <climits>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>

#include "Common/WholeNumber.hpp"
#include "Geometry/Sources.hpp"
#include "Storage/MMC/MMC.hpp"
#include "Storage/TIMOS/TIMOS.hpp"

namespace {

// MMC reads Session.RNGSeed as an int: a whole number in [-2^31, 2^31-1], written as given.
std::string seedArgument(const std::string& s) {
    const bool negative = !s.empty() && s[0] == '-';
    std::optional<uint64_t> v = fm::parseWholeNumber(negative ? s.substr(1) : s);
    if (!v || *v > (negative ? uint64_t(INT_MAX) + 1 : uint64_t(INT_MAX)))
        throw fm::ParameterError("SEED '" + s + "' is not a whole number in [-2147483648, 2147483647] (MMC's seeds are "
                                 "32-bit; negative: MMC draws one from the clock)");
    return (negative ? "-" : "") + std::to_string(*v);
}

// The id names the files (node_ID.dat, ID.json) and is a JSON string: letters, digits, '_', '-', '.'.
std::string idArgument(const std::string& id) {
    bool ok = !id.empty() && id != "." && id != "..";
    for (char c : id) ok = ok && (std::isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.');
    if (!ok) throw fm::ParameterError("ID '" + id + "' must be a non-empty word of letters, digits, '_', '-' or '.'");
    return id;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 8) {
        std::cerr << "usage: mmc_convert MESH OPT SOURCE PHOTONS SEED OUTDIR ID\n";
        return 2;
    }
    try {
        // The photon count as FullMonte's MMC reader takes it (at most 9e15), so the file runs in both.
        const uint64_t photons = fm::wholeNumberOption("PHOTONS", argv[4], 1, 9000000000000000ull);
        const std::string seed = seedArgument(argv[5]);
        const std::string outDir = argv[6], id = idArgument(argv[7]);
        if (!std::filesystem::is_directory(outDir)) throw fm::ParameterError("OUTDIR " + outDir + " is not a folder");
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
        j << "{\n \"Session\": {\"ID\": \"" << id << "\", \"Photons\": " << photons << ", \"RNGSeed\": " << seed
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
