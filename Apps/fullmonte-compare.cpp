// SPDX-License-Identifier: GPL-3.0-or-later
// fullmonte-compare A B: normalised L1 distance sum|a-b| / sum|a| between two per-element
// value files (fluence.txt or volume_energy.txt from fullmonte-run), skipping values undefined
// (nan) in both; or between two fluence matrices (.fmm, docs/FLUENCE_MATRIX.md): overall and the
// worst column. Exit 1 with a message when the distance is undefined (empty, all nan, infinite
// values, a reference summing to zero, nan in one file only), so scripts never trust garbage.
#include <cmath>
#include <iostream>
#include <stdexcept>
#include <string>

#include "Storage/FluenceMatrix/FluenceMatrix.hpp"
#include "Storage/Text/TextFile.hpp"

namespace {
bool isMatrix(const std::string& p) { return p.size() > 4 && p.compare(p.size() - 4, 4, ".fmm") == 0; }

// Relative L1 distance sum|a-b| / sum|a| over the elements defined (not NaN) in both, refusing
// data that would make it meaningless: an infinite value, an element defined in one file only,
// no element defined in both, or a reference that sums to zero.
struct L1Sum {
    std::string a, b;  // file names, for messages
    double num = 0, den = 0;
    uint64_t compared = 0;

    void add(double x, double y, const std::string& where) {
        if (std::isinf(x) || std::isinf(y))
            throw std::runtime_error((std::isinf(x) ? a : b) + ": " + where + " is infinite");
        if (std::isnan(x) != std::isnan(y))
            throw std::runtime_error((std::isnan(x) ? a : b) + ": " + where + " is undefined (nan) but defined in " +
                                     (std::isnan(x) ? b : a));
        if (std::isnan(x)) return;
        num += std::fabs(x - y);
        den += std::fabs(x);
        ++compared;
    }
    // The distance; throws when it is undefined.
    double value(const std::string& what) const {
        if (compared == 0) throw std::runtime_error(what + ": no value defined in both files (empty or all nan)");
        if (!std::isfinite(num) || !std::isfinite(den))
            throw std::runtime_error(what + ": the sums overflow (values beyond 1e308)");
        if (den == 0) {
            if (num == 0) throw std::runtime_error(what + ": both are all zero (nothing to compare)");
            throw std::runtime_error(what + ": " + a + " sums to zero, so the relative distance is undefined");
        }
        return num / den;
    }
};

int compareMatrices(const std::string& pa, const std::string& pb) {
    fm::FluenceMatrix a = fm::readFluenceMatrix(pa), b = fm::readFluenceMatrix(pb);
    if (a.header.rows != b.header.rows || a.header.cols != b.header.cols) {
        std::cerr << "fullmonte-compare: error: " << pa << " is " << a.header.rows << " x " << a.header.cols << ", "
                  << pb << " is " << b.header.rows << " x " << b.header.cols << "\n";
        return 1;
    }
    L1Sum all{pa, pb};
    double worst = 0;
    uint64_t worstCol = 0;
    for (uint64_t c = 0; c < a.header.cols; ++c) {
        L1Sum col{pa, pb};
        for (uint64_t r = 0; r < a.header.rows; ++r) {
            const std::string where = "row " + std::to_string(r) + ", column " + std::to_string(c);
            col.add(a.at(r, c), b.at(r, c), where);
            all.add(a.at(r, c), b.at(r, c), where);
        }
        // A column zero (or undefined) in both is no difference; zero in A only is undefined.
        if (col.den == 0 && col.num == 0) continue;
        double l = col.value("column " + std::to_string(c));
        if (l > worst) worst = l, worstCol = c;
    }
    double l1 = all.value("the matrices");
    std::cout.precision(6);
    std::cout << "L1 " << l1 << " (worst column " << worstCol << ": " << worst << ")\n";
    return 0;
}

int compareValues(const std::string& pa, const std::string& pb) {
    auto a = fm::readValues(pa), b = fm::readValues(pb);
    if (a.size() != b.size()) {
        std::cerr << "fullmonte-compare: error: " << pa << " has " << a.size() - 1 << " values, " << pb << " has "
                  << b.size() - 1 << "\n";
        return 1;
    }
    L1Sum all{pa, pb};
    for (size_t i = 1; i < a.size(); ++i) all.add(a[i], b[i], "value " + std::to_string(i));
    double l1 = all.value("the files");
    std::cout.precision(6);
    std::cout << "L1 " << l1 << "\n";
    return 0;
}
}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: fullmonte-compare A.txt B.txt | A.fmm B.fmm\n"
                     "  prints the L1 distance sum|a-b| / sum|a| over values defined (not nan) in both;\n"
                     "  exits 1 when it is undefined: empty or all-nan data, inf, nan in one file only,\n"
                     "  or A summing to zero\n";
        return 1;
    }
    try {
        if (isMatrix(argv[1]) && isMatrix(argv[2])) return compareMatrices(argv[1], argv[2]);
        return compareValues(argv[1], argv[2]);
    } catch (const std::exception& e) {
        std::cerr << "fullmonte-compare: error: " << e.what() << "\n";
        return 1;
    }
}
