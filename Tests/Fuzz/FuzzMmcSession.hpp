// SPDX-License-Identifier: GPL-3.0-or-later
// Shared by the MMC session targets (.inp and JSON). The session readers take a path and find
// MMC's mesh files (node_<id>.dat, elem_<id>.dat, prop_<id>.dat) beside it, so each input is
// written to a file in a scratch folder that holds the mesh files of id "fz": a 2 x 2 x 2-cell
// cube of 10 mm, medium 2 above z = 5. An accepted session is packed and a few packets run.
#pragma once
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "Geometry/MeshBuilder.hpp"
#include "Storage/MMC/MMCInput.hpp"
#include "Tests/Fuzz/FuzzModel.hpp"
#include "Tests/Storage/MmcTestFiles.hpp"

namespace fmfuzz {

namespace fs = std::filesystem;

// The scratch folder (one per process, removed at exit) with the mesh files of id "fz".
class MmcSessionDir {
public:
    MmcSessionDir() : dir_(fs::temp_directory_path() / ("fm_fuzz_mmc_" + std::to_string(::getpid()))) {
        fs::create_directories(dir_);
        const fm::TetraMesh m = fm::makeBoxMesh({0, 0, 0}, {10, 10, 10}, 2, 2, 2,
                                                [](const fm::Point3& c) { return c[2] > 5 ? 2u : 1u; });
        std::ofstream(dir_ / "node_fz.dat") << fmtest::mmcNodeText(m);
        std::ofstream(dir_ / "elem_fz.dat") << fmtest::mmcElemText(m);
        std::ofstream(dir_ / "prop_fz.dat") << "1 2\n1 0.02 7.0 0.89 1.37\n2 0.05 0.0 1.0 1.37\n";
    }
    ~MmcSessionDir() {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    // Writes the input as `name` in the folder; returns its path.
    std::string write(const std::string& name, const uint8_t* data, size_t size) const {
        const fs::path p = dir_ / name;
        std::ofstream(p, std::ios::binary | std::ios::trunc) << text(data, size);
        return p.string();
    }

private:
    fs::path dir_;
};

inline const MmcSessionDir& mmcSessionDir() {
    static const MmcSessionDir dir;
    return dir;
}

// An accepted session must also pack (the packer validates materials and the source) and run.
inline void exerciseSession(const fm::MMCSimulation& s) {
    fm::KernelInput in = fm::packModel(s.mesh, s.materials, *s.source);
    simulateFew(in, 2, 200);
}

}  // namespace fmfuzz
