// fullmonte-compare A B: normalised L1 distance sum|a-b| / sum|a| between two per-element
// value files (fluence.txt or volume_energy.txt from fullmonte-run), skipping undefined values;
// or between two fluence matrices (.fmm, docs/FLUENCE_MATRIX.md): overall and the worst column.
#include <cmath>
#include <iostream>
#include <string>

#include "Storage/FluenceMatrix/FluenceMatrix.hpp"
#include "Storage/Text/TextFile.hpp"

namespace {
bool isMatrix(const std::string& p) { return p.size() > 4 && p.compare(p.size() - 4, 4, ".fmm") == 0; }

int compareMatrices(const std::string& pa, const std::string& pb) {
    fm::FluenceMatrix a = fm::readFluenceMatrix(pa), b = fm::readFluenceMatrix(pb);
    if (a.header.rows != b.header.rows || a.header.cols != b.header.cols) {
        std::cerr << "fullmonte-compare: error: " << pa << " is " << a.header.rows << " x " << a.header.cols << ", "
                  << pb << " is " << b.header.rows << " x " << b.header.cols << "\n";
        return 1;
    }
    double num = 0, den = 0, worst = 0;
    uint64_t worstCol = 0;
    for (uint64_t c = 0; c < a.header.cols; ++c) {
        double n = 0, d = 0;
        for (uint64_t r = 0; r < a.header.rows; ++r) {
            double x = a.at(r, c), y = b.at(r, c);
            if (std::isnan(x) || std::isnan(y)) continue;
            n += std::fabs(x - y);
            d += std::fabs(x);
        }
        num += n;
        den += d;
        double l = d > 0 ? n / d : 0.0;
        if (l > worst) worst = l, worstCol = c;
    }
    std::cout.precision(6);
    std::cout << "L1 " << (den > 0 ? num / den : 0.0) << " (worst column " << worstCol << ": " << worst << ")\n";
    return 0;
}
}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: fullmonte-compare A.txt B.txt | A.fmm B.fmm\n";
        return 1;
    }
    try {
        if (isMatrix(argv[1]) && isMatrix(argv[2])) return compareMatrices(argv[1], argv[2]);
        auto a = fm::readValues(argv[1]), b = fm::readValues(argv[2]);
        if (a.size() != b.size()) {
            std::cerr << "fullmonte-compare: error: " << argv[1] << " has " << a.size() - 1 << " values, "
                      << argv[2] << " has " << b.size() - 1 << "\n";
            return 1;
        }
        double num = 0, den = 0;
        for (size_t i = 1; i < a.size(); ++i) {
            if (std::isnan(a[i]) || std::isnan(b[i])) continue;
            num += std::fabs(a[i] - b[i]);
            den += std::fabs(a[i]);
        }
        std::cout.precision(6);
        std::cout << "L1 " << (den > 0 ? num / den : 0.0) << "\n";
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "fullmonte-compare: error: " << e.what() << "\n";
        return 1;
    }
}
