// SPDX-License-Identifier: GPL-3.0-or-later
// fmm_dump FILE: the C++ reader's view of a fluence matrix, printed exactly as
// scripts/read_fluence_matrix.py prints it (header fields, then each column's count of finite
// values, sum and max), or "error: ..." and exit 1. Tests/Storage/fluence_matrix_readers.sh runs
// both on the same files: they must accept the same files and read the same numbers.
#include <cmath>
#include <cstdio>
#include <fstream>

#include "Common/Errors.hpp"
#include "Storage/FluenceMatrix/FluenceMatrix.hpp"

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: fmm_dump FILE.fmm\n");
        return 1;
    }
    try {
        const fm::FluenceMatrix m = fm::readFluenceMatrix(argv[1]);
        const fm::FluenceMatrixHeader& h = m.header;
        unsigned char bom[4] = {0, 0, 0, 0};
        std::ifstream(argv[1], std::ios::binary).seekg(12).read(reinterpret_cast<char*>(bom), 4);
        std::printf("version: %u\nbyteorder: %s\nrows: %llu\ncols: %llu\nsources: %llu\nmaterial_sets: %llu\n",
                    h.version, bom[0] == 4 ? "little" : "big", (unsigned long long)h.rows,
                    (unsigned long long)h.cols, (unsigned long long)h.sources, (unsigned long long)h.materialSets);
        std::printf("quantity: %s\nunits: %s\nfingerprint: %s\n",
                    h.quantity == fm::MatrixQuantity::Fluence ? "fluence" : "absorbed_energy", h.units.c_str(),
                    fm::fingerprintText(h.model).c_str());
        for (uint64_t j = 0; j < h.cols; ++j) {
            uint64_t finite = 0;
            double sum = 0, max = -INFINITY;
            for (uint64_t i = 0; i < h.rows; ++i) {
                double v = m.at(i, j);
                if (std::isnan(v)) continue;
                finite += std::isfinite(v) ? 1 : 0;
                sum += v;
                max = std::fmax(max, v);
            }
            std::printf("column %llu: finite %llu, sum %.9g, max %.9g\n", (unsigned long long)j,
                        (unsigned long long)finite, sum, finite ? max : NAN);
        }
        return 0;
    } catch (const std::exception& e) {
        std::printf("error: %s\n", e.what());
        return 1;
    }
}
