// SPDX-License-Identifier: GPL-3.0-or-later
// Helpers for the VTK suites: scratch files, a small multi-region model, error checks.
#pragma once
#include <boost/test/unit_test.hpp>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "Common/Errors.hpp"
#include "Geometry/MeshBuilder.hpp"

namespace fmtest {

// A fresh scratch folder per test process (removed at exit), so parallel ctest runs never clash.
inline const std::filesystem::path& scratchDir() {
    struct Dir {
        std::filesystem::path p;
        Dir() {
            p = std::filesystem::temp_directory_path() / ("fm_vtk_test_" + std::to_string(::getpid()));
            std::filesystem::create_directories(p);
        }
        ~Dir() {
            std::error_code ec;
            std::filesystem::remove_all(p, ec);
        }
    };
    static Dir d;
    return d.p;
}
inline std::string scratch(const std::string& name) { return (scratchDir() / name).string(); }
inline std::string writeText(const std::string& name, const std::string& text) {
    std::string p = scratch(name);
    std::ofstream(p, std::ios::binary) << text;
    return p;
}

// A 3 x 2 x 2 mm box in three regions (slabs along x), 72 tetras: a TIM-OS-style model.
inline fm::TetraMesh threeRegionBox(unsigned n = 1) {
    return fm::makeBoxMesh({0, 0, 0}, {3, 2, 2}, 3 * n, 2 * n, 2 * n,
                           [](const fm::Point3& c) { return c[0] < 1 ? 1u : c[0] < 2 ? 2u : 3u; });
}

// Runs f, which must throw E with a message containing every needle (e.g. the file name).
template <class E, class F>
void expectError(F f, std::initializer_list<std::string> needles) {
    try {
        f();
        BOOST_ERROR("no exception; expected one mentioning '" << *needles.begin() << "'");
    } catch (const E& e) {
        std::string m = e.what();
        BOOST_TEST_MESSAGE("error as expected: " << m);
        for (const auto& n : needles)
            BOOST_CHECK_MESSAGE(m.find(n) != std::string::npos, "message '" << m << "' lacks '" << n << "'");
    } catch (const std::exception& e) {
        BOOST_ERROR("wrong exception type: " << e.what());
    }
}

}  // namespace fmtest
