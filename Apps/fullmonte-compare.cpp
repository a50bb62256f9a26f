// fullmonte-compare A B: normalised L1 distance sum|a-b| / sum|a| between two per-element
// value files (fluence.txt or volume_energy.txt from fullmonte-run), skipping undefined values.
#include <cmath>
#include <iostream>

#include "Storage/Text/TextFile.hpp"

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: fullmonte-compare A.txt B.txt\n";
        return 1;
    }
    try {
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
