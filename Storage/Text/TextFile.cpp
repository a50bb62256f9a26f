// SPDX-License-Identifier: GPL-3.0-or-later
#include "Storage/Text/TextFile.hpp"

#include <charconv>
#include <cmath>

#include "Storage/AtomicFile.hpp"
#include "Storage/TextReader.hpp"

namespace fm {

// The stream's 9 significant digits (AtomicFile), through std::to_chars: the same text as
// printf's %.9g several times faster (a large mesh writes millions of values).
void putValue(std::ostream& o, double v) {
    if (std::isnan(v)) {
        o << "nan";
        return;
    }
    char buf[32];
    const std::to_chars_result r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 9);
    o.write(buf, r.ptr - buf);
}


void writeValues(const std::string& path, const std::vector<double>& values, size_t first) {
    AtomicFile f(path);
    for (size_t i = first; i < values.size(); ++i) {
        putValue(f.out, values[i]);
        f.out << '\n';
    }
    f.commit();
}

void writeIndexedValues(const std::string& path, const std::vector<uint32_t>& ids,
                        const std::vector<double>& values) {
    AtomicFile f(path);
    for (uint32_t id : ids) {
        f.out << id << ' ';
        putValue(f.out, id < values.size() ? values[id] : 0.0);
        f.out << '\n';
    }
    f.commit();
}

void writeCSV(const std::string& path, const std::vector<std::string>& header,
              const std::vector<std::vector<double>>& columns) {
    AtomicFile f(path);
    for (size_t c = 0; c < header.size(); ++c) f.out << (c ? "," : "") << header[c];
    f.out << '\n';
    size_t rows = columns.empty() ? 0 : columns[0].size();
    for (size_t r = 0; r < rows; ++r) {
        for (size_t c = 0; c < columns.size(); ++c) {
            if (c) f.out << ',';
            putValue(f.out, columns[c][r]);
        }
        f.out << '\n';
    }
    f.commit();
}

std::vector<double> readValues(const std::string& path) {
    TextReader r(path);
    std::vector<double> v{0.0};
    for (std::string t = r.token(); !t.empty(); t = r.token()) {
        if (t == "nan") { v.push_back(NAN); continue; }
        char* end = nullptr;
        double x = std::strtod(t.c_str(), &end);
        if (*end) r.fail("expected a number, found '" + t + "'");
        v.push_back(x);
    }
    return v;
}

}  // namespace fm
