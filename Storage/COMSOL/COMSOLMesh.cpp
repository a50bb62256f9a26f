// SPDX-License-Identifier: GPL-3.0-or-later
#include "Storage/COMSOL/COMSOLMesh.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

#include "Common/Errors.hpp"
#include "Kernels/Core/Records.hpp"
#include "Storage/AtomicFile.hpp"

namespace fm {

namespace {

// One line of the file: its number (1-based), the text before '#' and the label after it.
struct Line {
    int number = 0;
    std::string data, label;
};

std::string num(double v) {
    std::ostringstream ss;
    ss << v;
    return ss.str();
}

std::string trim(const std::string& s) {
    size_t a = s.find_first_not_of(" \t\r");
    if (a == std::string::npos) return "";
    return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

class Parser {
public:
    Parser(std::istream& in, const std::string& name) : name_(name) {
        std::string text;
        int n = 0;
        while (std::getline(in, text)) {
            ++n;
            if (text.find('\0') != std::string::npos) fail(n, "binary data (NUL byte): not a text .mphtxt file");
            size_t h = text.find('#');
            Line l{n, trim(text.substr(0, h)), h == std::string::npos ? "" : trim(text.substr(h + 1))};
            if (!l.data.empty() || !l.label.empty()) lines_.push_back(std::move(l));
        }
    }

    TetraMesh parse() {
        // Without the vertex count's label the file has none of COMSOL's field labels (a comment
        // such as "# Created by iso2mesh" may still head it): read by position.
        const bool labelled = std::any_of(lines_.begin(), lines_.end(), [](const Line& l) {
            return is(l.label, {"number of mesh vertices", "number of mesh points"});
        });
        if (!labelled && !lines_.empty()) return parsePositional();
        for (i_ = 0; i_ < lines_.size(); ++i_) step();
        if (npoints_ < 0) fail(lastLine(), "no mesh vertices (\"# number of mesh vertices\") found");
        if (!sawTets_) fail(lastLine(), "no \"tet\" element type: the mesh has no tetrahedra");
        return build();
    }

private:
    // A file without COMSOL's '#' field labels (iso2mesh's savemphtxt, FieldTrip, brain2mesh
    // write them so), read by position as the mphtxt layout puts its fields: the version, tags, types,
    // the object's header and class, the mesh version, space dimension, vertex count, lowest
    // index and coordinates, then per element type its name, vertices per element, count and
    // elements, and (mesh version 2) parameter counts and parameters, domain count and domains,
    // up/down pair count and pairs. Version 4 files carry their labels (COMSOL writes them).
    struct Token {
        std::string text;
        int line;
    };
    std::vector<Token> tokens_;
    size_t t_ = 0;
    int here() const { return t_ < tokens_.size() ? tokens_[t_].line : lastLine(); }
    const Token& next(const std::string& what) {
        if (t_ >= tokens_.size()) fail(lastLine(), "unexpected end of file: expected " + what + " (read by position: the file has no '#' labels)");
        return tokens_[t_++];
    }
    long long whole(const std::string& what, long long lo = 0, long long hi = 1000000000) {
        const Token& k = next(what);
        Line l{k.line, k.text, ""};
        long long v = integer(l, k.text, what);
        if (v < lo || v > hi) fail(k.line, what + " " + std::to_string(v) + " is out of range");
        return v;
    }
    std::string word(const std::string& what) {
        whole("the length of " + what);
        return next(what).text;
    }
    std::vector<std::vector<double>> rows(long long n, int k, const std::string& what) {
        std::vector<std::vector<double>> out;
        out.reserve(size_t(std::min<long long>(n, (long long)(tokens_.size() - t_) / std::max(k, 1) + 1)));
        for (long long r = 0; r < n; ++r) {
            std::vector<double> row;
            for (int c = 0; c < k; ++c) {
                const Token& x = next(what);
                row.push_back(number(x.line, x.text, what));
            }
            out.push_back(std::move(row));
        }
        return out;
    }
    TetraMesh parsePositional() {
        for (const Line& l : lines_) {
            std::istringstream ss(l.data);
            std::string w;
            while (ss >> w) tokens_.push_back({w, l.number});
        }
        whole("the major version"), whole("the minor version");
        for (long long n = whole("the number of tags"); n > 0; --n) word("a tag");
        for (long long n = whole("the number of types"); n > 0; --n) word("a type");
        whole("the object's header"), whole("the object's header"), whole("the object's header");
        int line = here();
        if (word("the object's class") != "Mesh") fail(line, "the object is not a Mesh (read by position: the file has no '#' labels)");
        line = here();
        const long long v = whole("the mesh version");
        if (v != 2)
            fail(line, "mesh version " + std::to_string(v) +
                           " without '#' labels: only version 2 is read by position (COMSOL writes its labels)");
        line = here();
        if (whole("the space dimension") != 3) fail(line, "space dimension " + tokens_[t_ - 1].text + ": only 3-D meshes are supported");
        npoints_ = whole("the number of mesh vertices");
        base_ = whole("the lowest mesh vertex index", -1000000000);
        points_ = rows(npoints_, 3, "mesh vertex coordinates");
        for (long long types = whole("the number of element types"); types > 0; --types) {
            const std::string type = word("an element type's name");
            const long long k = whole("the number of vertices per element of " + type, 1, 64);
            const long long n = whole("the number of " + type + " elements");
            const int elementLine = here();
            auto elements = rows(n, int(k), type + " elements");
            const long long perElement = whole("the number of parameter values per " + type + " element");
            const long long parameters = whole("the number of " + type + " parameters");
            rows(parameters, int(std::max<long long>(perElement, 1)), type + " parameters");
            const long long nd = whole("the number of " + type + " domains");
            const int domainLine = here();
            auto domains = rows(nd, 1, type + " domains");
            rows(whole("the number of " + type + " up/down pairs"), 2, type + " up/down pairs");
            if (type != "tet") continue;
            if (k != 4) fail(elementLine, "tet elements with " + std::to_string(k) + " vertices (4 expected)");
            if (nd != n) fail(domainLine, std::to_string(nd) + " domains for " + std::to_string(n) + " tet elements");
            tets_ = std::move(elements);
            domains_ = std::move(domains);
            tetLine_ = elementLine - 1;
            domainLine_ = domainLine - 1;
            sawTets_ = true;
        }
        if (!sawTets_) fail(lastLine(), "no \"tet\" element type: the mesh has no tetrahedra");
        return build();
    }

    [[noreturn]] void fail(int line, const std::string& msg) const {
        throw FormatError(name_ + ":" + std::to_string(line) + ": " + msg);
    }
    int lastLine() const { return lines_.empty() ? 1 : lines_.back().number; }

    long long integer(const Line& l, const std::string& s, const std::string& what) const {
        std::istringstream ss(s);
        long long v;
        std::string rest;
        if (!(ss >> v) || (ss >> rest)) fail(l.number, "expected " + what + " (a whole number), found \"" + s + "\"");
        return v;
    }
    // One value of a row (coordinates, elements, domains) of either reading: a finite number.
    double number(int line, const std::string& text, const std::string& what) const {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end || !std::isfinite(v)) fail(line, what + ": \"" + text + "\" is not a number");
        return v;
    }
    long long count(const Line& l, const std::string& what) const {
        long long v = integer(l, l.data, what);
        if (v < 0 || v > 1000000000) fail(l.number, what + " " + std::to_string(v) + " is out of range");
        return v;
    }
    static bool is(const std::string& label, std::initializer_list<const char*> names) {
        for (const char* n : names)
            if (label == n) return true;
        return false;
    }

    // The data lines (no '#') that follow line i_, as many as `n`, each with `k` numbers.
    std::vector<std::vector<double>> block(long long n, int k, const std::string& what) {
        std::vector<std::vector<double>> rows;
        rows.reserve(std::min(size_t(n), lines_.size() - i_));  // a count is not trusted for memory
        for (long long r = 0; r < n; ++r) {
            if (i_ + 1 >= lines_.size() || !lines_[i_ + 1].label.empty() || lines_[i_ + 1].data.empty())
                fail(i_ + 1 < lines_.size() ? lines_[i_ + 1].number : lastLine(),
                     what + ": expected " + std::to_string(n) + " rows, found " + std::to_string(r));
            const Line& l = lines_[++i_];
            std::istringstream ss(l.data);
            std::vector<double> row;
            std::string t;
            while (ss >> t) row.push_back(number(l.number, t, what));
            if (int(row.size()) != k)
                fail(l.number, what + ": expected " + std::to_string(k) + " values on the line, found " +
                                   std::to_string(row.size()));
            rows.push_back(std::move(row));
        }
        return rows;
    }

    void step() {
        const Line& l = lines_[i_];
        const std::string& lab = l.label;
        if (is(lab, {"class"})) {
            type_.clear();  // a new object (e.g. a selection after the mesh): no element type open
            if (l.data.find("Mesh") != std::string::npos && ++meshObjects_ > 1)
                fail(l.number, "a second Mesh object: only files with one mesh are supported");
        } else if (is(lab, {"sdim", "space dimension"})) {
            if (count(l, "space dimension") != 3) fail(l.number, "space dimension " + l.data + ": only 3-D meshes are supported");
        } else if (is(lab, {"number of mesh vertices", "number of mesh points"})) {
            npoints_ = count(l, "number of mesh vertices");
        } else if (is(lab, {"lowest mesh vertex index", "lowest mesh point index"})) {
            base_ = integer(l, l.data, "lowest mesh vertex index");
        } else if (is(lab, {"Mesh vertex coordinates", "Mesh point coordinates"})) {
            if (npoints_ < 0) fail(l.number, "coordinates before \"# number of mesh vertices\"");
            points_ = block(npoints_, 3, "mesh vertex coordinates");
        } else if (is(lab, {"type name"})) {
            std::istringstream ss(l.data);
            long long len;
            std::string type;
            if (!(ss >> len >> type)) fail(l.number, "expected a type name such as \"3 tet\", found \"" + l.data + "\"");
            type_ = type;
            perElement_ = elements_ = -1;
        } else if (is(lab, {"number of vertices per element", "number of nodes per element"})) {
            perElement_ = count(l, "number of vertices per element");
        } else if (is(lab, {"number of elements"})) {
            elements_ = count(l, "number of elements");
        } else if (is(lab, {"Elements"}) && type_ == "tet") {
            if (perElement_ != 4 || elements_ < 0)
                fail(l.number, "tet elements need \"4 # number of vertices per element\" and a number of elements first");
            tetLine_ = l.number;
            tets_ = block(elements_, 4, "tet elements");
            sawTets_ = true;
        } else if (is(lab, {"number of geometric entity indices", "number of domains"}) && type_ == "tet") {
            entities_ = count(l, "number of geometric entity indices");
        } else if (is(lab, {"Geometric entity indices", "Domains"}) && type_ == "tet") {
            // Against the tets actually read: a file may restate the element count afterwards.
            if (!sawTets_ || entities_ != (long long)tets_.size())
                fail(l.number, std::to_string(entities_) + " geometric entity indices for " +
                                   std::to_string(tets_.size()) + " tet elements read");
            domains_ = block(entities_, 1, "tet geometric entity indices");
            domainLine_ = l.number;
        }
        // Everything else (tags, types, other element types' data, parameters, up/down pairs)
        // is not needed for a tetrahedral mesh.
    }

    TetraMesh build() const {
        std::vector<Point3> pts(1, Point3{0, 0, 0});
        for (const auto& p : points_) pts.push_back({p[0], p[1], p[2]});
        std::vector<TetraPoints> tets(1, TetraPoints{0, 0, 0, 0});
        for (size_t t = 0; t < tets_.size(); ++t) {
            TetraPoints T;
            for (int k = 0; k < 4; ++k) {
                double v = tets_[t][size_t(k)] - double(base_);
                if (v != std::floor(v) || v < 0 || v >= double(points_.size()))
                    fail(tetLine_ + 1 + int(t), "tet element " + std::to_string(t) + ": vertex " +
                                                    num(tets_[t][size_t(k)]) + " is not one of the " +
                                                    std::to_string(points_.size()) + " vertices (lowest index " +
                                                    std::to_string(base_) + ")");
                T[size_t(k)] = uint32_t(v) + 1;
            }
            tets.push_back(T);
        }
        std::vector<uint32_t> regions(tets.size(), 1);
        regions[0] = 0;
        if (!domains_.empty() && domains_.size() != tets_.size())  // indices of an earlier tet block
            fail(domainLine_, std::to_string(domains_.size()) + " geometric entity indices for " +
                                  std::to_string(tets_.size()) + " tet elements");
        if (!domains_.empty()) {
            double lo = std::numeric_limits<double>::infinity();
            for (const auto& d : domains_) lo = std::min(lo, d[0]);
            const double shift = lo == 0 ? 1 : 0;  // region 0 is the exterior here
            for (size_t t = 0; t < domains_.size(); ++t) {
                double v = domains_[t][0];
                if (v < 0 || v != std::floor(v) || v > 1e9)
                    fail(domainLine_ + 1 + int(t), "geometric entity index " + num(v) + " is not a whole number >= 0");
                if (v + shift >= kMaxPackedMaterials)
                    fail(domainLine_ + 1 + int(t), "geometric entity index " + std::to_string((long long)v) + ": indices up to " +
                                                       std::to_string(kMaxPackedMaterials - 1 - int(shift)) +
                                                       " are supported (each domain is a material index)");
                regions[t + 1] = uint32_t(v + shift);
            }
        }
        try {
            return TetraMesh(std::move(pts), std::move(tets), std::move(regions));
        } catch (const ModelError& e) {
            throw FormatError(name_ + ": " + e.what());
        }
    }

    std::string name_;
    std::vector<Line> lines_;
    size_t i_ = 0;
    int meshObjects_ = 0;
    long long npoints_ = -1, base_ = 0, perElement_ = -1, elements_ = -1, entities_ = -1;
    std::string type_;
    bool sawTets_ = false;
    int tetLine_ = 0, domainLine_ = 0;
    std::vector<std::vector<double>> points_, tets_, domains_;
};

}  // namespace

TetraMesh readCOMSOLMesh(std::istream& in, const std::string& name) { return Parser(in, name).parse(); }

TetraMesh readCOMSOLMesh(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw FormatError(path + ": cannot open file");
    return readCOMSOLMesh(in, path);
}

void writeCOMSOLMesh(const std::string& path, const TetraMesh& m) {
    AtomicFile f(path);
    std::ostream& o = f.out;
    o.precision(17);
    o << "# Created by FullMonte\n\n# Major & minor version\n0 1\n"
      << "1 # number of tags\n# Tags\n5 mesh1\n1 # number of types\n# Types\n3 obj\n\n"
      << "# --------- Object 0 ----------\n\n0 0 1\n4 Mesh # class\n4 # version\n3 # sdim\n"
      << m.pointCount() << " # number of mesh vertices\n0 # lowest mesh vertex index\n\n# Mesh vertex coordinates\n";
    for (uint32_t p = 1; p <= m.pointCount(); ++p) {
        const Point3& P = m.point(p);
        o << P[0] << ' ' << P[1] << ' ' << P[2] << '\n';
    }
    o << "\n1 # number of element types\n\n# Type #0\n\n3 tet # type name\n\n\n4 # number of vertices per element\n"
      << m.tetraCount() << " # number of elements\n# Elements\n";
    for (uint32_t t = 1; t <= m.tetraCount(); ++t) {
        const TetraPoints& T = m.tetra(t);
        o << T[0] - 1 << ' ' << T[1] - 1 << ' ' << T[2] - 1 << ' ' << T[3] - 1 << '\n';
    }
    o << "\n" << m.tetraCount() << " # number of geometric entity indices\n# Geometric entity indices\n";
    for (uint32_t t = 1; t <= m.tetraCount(); ++t) o << m.region(t) << '\n';
    f.commit();
}

}  // namespace fm
