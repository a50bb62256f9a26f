// SPDX-License-Identifier: GPL-3.0-or-later
// fullmonte-compare A B: normalised L1 distance sum|a-b| / sum|a| between two per-element
// value files (fluence.txt or volume_energy.txt from fullmonte-run), skipping values undefined
// (nan) in both; between two fluence matrices (.fmm, docs/FLUENCE_MATRIX.md): overall and the
// worst column; between two surface_exit.txt files: their exit fluence, face by face (the same
// faces, with the same points, in the same order); or between two time-gated files (.fmtg,
// docs/TIME_DOMAIN.md) of the same gates, quantity and elements: overall and the worst bin. Exit
// 1 with a message when the distance is undefined (empty, all nan, infinite values, a reference
// summing to zero, nan in one file only) or the files are not of one kind, so scripts never
// trust garbage.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "Storage/FluenceMatrix/FluenceMatrix.hpp"
#include "Storage/Text/TextFile.hpp"
#include "Storage/TimeGated/TimeGatedFile.hpp"

namespace {
bool endsWith(const std::string& p, const std::string& tail) {
    return p.size() > tail.size() && p.compare(p.size() - tail.size(), tail.size(), tail) == 0;
}
bool isMatrix(const std::string& p) { return endsWith(p, ".fmm"); }
bool isGated(const std::string& p) { return endsWith(p, ".fmtg"); }
// surface_exit.txt as fullmonte-run writes it: its header line names the columns.
bool isSurfaceExit(const std::string& p) {
    const std::string head = "# face p1 p2 p3 ";
    std::ifstream in(p, std::ios::binary);
    std::string first(head.size(), '\0');
    in.read(&first[0], std::streamsize(head.size()));
    return in.gcount() == std::streamsize(head.size()) && first == head;
}

// Relative L1 distance sum|a-b| / sum|a| over the elements defined (not NaN) in both, refusing
// data that would make it meaningless: an infinite value, an element defined in one file only,
// no element defined in both, or a reference that sums to zero.
struct L1Sum {
    std::string a, b;  // file names, for messages
    double num = 0, den = 0;
    uint64_t compared = 0;

    // where(): the element's name, made only for a message.
    template <class Where>
    void add(double x, double y, Where where) {
        if (std::isinf(x) || std::isinf(y))
            throw std::runtime_error((std::isinf(x) ? a : b) + ": " + where() + " is infinite");
        if (std::isnan(x) != std::isnan(y))
            throw std::runtime_error((std::isnan(x) ? a : b) + ": " + where() + " is undefined (nan) but defined in " +
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

// The distance over every element and the worst group's (a matrix's column, a gated file's
// bin): a(g, e) and b(g, e) the values of element e of group g; a group zero (or undefined) in
// both is no difference, one zero in A only is undefined (value() throws, naming the group).
struct GroupedL1 {
    double all = 0, worst = 0;
    uint64_t worstGroup = 0;
};
template <class A, class B>
GroupedL1 groupedL1(const std::string& pa, const std::string& pb, uint64_t groups, uint64_t perGroup, A a, B b,
                    const std::string& group, const std::string& element, const std::string& what) {
    L1Sum all{pa, pb};
    GroupedL1 out;
    for (uint64_t g = 0; g < groups; ++g) {
        L1Sum one{pa, pb};
        for (uint64_t e = 0; e < perGroup; ++e) {
            auto where = [&] { return element + " " + std::to_string(e) + ", " + group + " " + std::to_string(g); };
            one.add(a(g, e), b(g, e), where);
            all.add(a(g, e), b(g, e), where);
        }
        if (one.den == 0 && one.num == 0) continue;
        const double l = one.value(group + " " + std::to_string(g));
        if (l > out.worst) out.worst = l, out.worstGroup = g;
    }
    out.all = all.value(what);
    return out;
}

int compareMatrices(const std::string& pa, const std::string& pb) {
    fm::FluenceMatrix a = fm::readFluenceMatrix(pa), b = fm::readFluenceMatrix(pb);
    if (a.header.rows != b.header.rows || a.header.cols != b.header.cols) {
        std::cerr << "fullmonte-compare: error: " << pa << " is " << a.header.rows << " x " << a.header.cols << ", "
                  << pb << " is " << b.header.rows << " x " << b.header.cols << "\n";
        return 1;
    }
    const GroupedL1 d = groupedL1(
        pa, pb, a.header.cols, a.header.rows, [&](uint64_t c, uint64_t r) { return a.at(r, c); },
        [&](uint64_t c, uint64_t r) { return b.at(r, c); }, "column", "row", "the matrices");
    std::cout.precision(6);
    std::cout << "L1 " << d.all << " (worst column " << d.worstGroup << ": " << d.worst << ")\n";
    return 0;
}

// surface_exit.txt's rows: face id, its three points, exit energy, exit fluence (and two
// standard errors); the exit fluence is compared, row by row.
struct ExitRows {
    std::vector<std::string> face;  // "id p1 p2 p3"
    std::vector<double> fluence;
};

ExitRows readExitRows(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error(path + ": cannot open");
    ExitRows r;
    std::string line;
    for (size_t n = 1; std::getline(in, line); ++n) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream row(line);
        std::string id[4], energy, fluence;
        if (!(row >> id[0] >> id[1] >> id[2] >> id[3] >> energy >> fluence))
            throw std::runtime_error(path + ":" + std::to_string(n) + ": expected face p1 p2 p3 energy exit_fluence, found '" +
                                     line + "'");
        char* end = nullptr;
        const double v = std::strtod(fluence.c_str(), &end);
        if (end == fluence.c_str() || *end)
            throw std::runtime_error(path + ":" + std::to_string(n) + ": exit fluence '" + fluence + "' is not a number");
        r.face.push_back(id[0] + " " + id[1] + " " + id[2] + " " + id[3]);
        r.fluence.push_back(v);
    }
    return r;
}

int compareExits(const std::string& pa, const std::string& pb) {
    const ExitRows a = readExitRows(pa), b = readExitRows(pb);
    if (a.face.size() != b.face.size())
        throw std::runtime_error(pa + " has " + std::to_string(a.face.size()) + " faces, " + pb + " has " +
                                 std::to_string(b.face.size()) + " (results of different meshes?)");
    L1Sum all{pa, pb};
    for (size_t i = 0; i < a.face.size(); ++i) {
        if (a.face[i] != b.face[i])
            throw std::runtime_error("row " + std::to_string(i + 1) + ": face '" + a.face[i] + "' in " + pa + ", '" +
                                     b.face[i] + "' in " + pb + " (results of different meshes?)");
        all.add(a.fluence[i], b.fluence[i], [&] { return "the exit fluence of face " + a.face[i].substr(0, a.face[i].find(' ')); });
    }
    const double l1 = all.value("the files");
    std::cout.precision(6);
    std::cout << "L1 " << l1 << " (exit fluence, " << a.face.size() << " faces)\n";
    return 0;
}

// Two .fmtg files: the same gates, quantity and elements (for files of listed faces or tetras,
// the same lists where both folders have them), compared overall and bin by bin.
int compareGated(const std::string& pa, const std::string& pb) {
    const fm::TimeGatedArray a = fm::readTimeGated(pa), b = fm::readTimeGated(pb);
    if (a.quantity != b.quantity)
        throw std::runtime_error(pa + " holds quantity " + std::to_string(uint32_t(a.quantity)) + ", " + pb + " quantity " +
                                 std::to_string(uint32_t(b.quantity)) + " (docs/TIME_DOMAIN.md)");
    if (a.gates.count != b.gates.count || a.gates.startNs != b.gates.startNs || a.gates.stepNs != b.gates.stepNs)
        throw std::runtime_error(pa + " has gates " + fm::describeTimeGates(a.gates) + ", " + pb + " " +
                                 fm::describeTimeGates(b.gates));
    if (a.elements != b.elements)
        throw std::runtime_error(pa + " has " + std::to_string(a.elements) + " elements per bin, " + pb + " has " +
                                 std::to_string(b.elements));
    // The element lists fullmonte-run writes beside a file of listed elements.
    namespace fs = std::filesystem;
    const std::string list = fm::gatedElementListName(a.quantity);
    const fs::path la = fs::path(pa).parent_path() / list, lb = fs::path(pb).parent_path() / list;
    auto text = [](const fs::path& p) {
        std::ifstream in(p, std::ios::binary);
        return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    };
    if (!list.empty() && (fs::exists(la) != fs::exists(lb) || (fs::exists(la) && text(la) != text(lb))))
        throw std::runtime_error(la.string() + " and " + lb.string() + " do not list the same elements (" +
                                 (fs::exists(la) && fs::exists(lb) ? "they differ" : "one is missing") + ")");
    const GroupedL1 d = groupedL1(
        pa, pb, a.gates.bins(), a.elements, [&](uint64_t g, uint64_t e) { return a.at(uint32_t(g), e); },
        [&](uint64_t g, uint64_t e) { return b.at(uint32_t(g), e); }, "bin", "element", "the files");
    const uint32_t worstBin = uint32_t(d.worstGroup);
    std::cout.precision(6);
    std::cout << "L1 " << d.all << " (worst bin " << worstBin;
    if (worstBin < a.gates.count) std::cout << " [" << a.gates.gateStart(worstBin) << "-" << a.gates.gateStop(worstBin) << " ns]";
    else std::cout << (worstBin == a.gates.earlyBin() ? " (early)" : " (late)");
    std::cout << ": " << d.worst << ")\n";
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
    for (size_t i = 1; i < a.size(); ++i) all.add(a[i], b[i], [&] { return "value " + std::to_string(i); });
    double l1 = all.value("the files");
    std::cout.precision(6);
    std::cout << "L1 " << l1 << "\n";
    return 0;
}
}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: fullmonte-compare A B\n"
                     "  A, B: two value files (fluence.txt, volume_energy.txt), two surface_exit.txt,\n"
                     "  two fluence matrices (.fmm) or two time-gated files (.fmtg, the same gates)\n"
                     "  prints the L1 distance sum|a-b| / sum|a| over values defined (not nan) in both;\n"
                     "  exits 1 when it is undefined: empty or all-nan data, inf, nan in one file only,\n"
                     "  A summing to zero, or files of different kinds, meshes or gates\n";
        return 1;
    }
    try {
        const std::string a = argv[1], b = argv[2];
        auto kind = [](const std::string& p) {
            return isMatrix(p) ? "a fluence matrix (.fmm)" : isGated(p) ? "a time-gated file (.fmtg)"
                   : isSurfaceExit(p) ? "a surface_exit.txt" : "a value file";
        };
        if (std::string(kind(a)) != kind(b))
            throw std::runtime_error(a + " is " + kind(a) + ", " + b + " is " + kind(b) + ": nothing to compare");
        if (isMatrix(a)) return compareMatrices(a, b);
        if (isGated(a)) return compareGated(a, b);
        if (isSurfaceExit(a)) return compareExits(a, b);
        return compareValues(a, b);
    } catch (const std::exception& e) {
        std::cerr << "fullmonte-compare: error: " << e.what() << "\n";
        return 1;
    }
}
