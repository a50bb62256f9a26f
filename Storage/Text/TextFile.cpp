// SPDX-License-Identifier: GPL-3.0-or-later
#include "Storage/Text/TextFile.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include "Common/ParallelFor.hpp"
#include "Storage/AtomicFile.hpp"
#include "Storage/TextReader.hpp"

namespace fm {

// The stream's 9 significant digits (AtomicFile), through std::to_chars: the same text as
// printf's %.9g several times faster (a large mesh writes millions of values).
char* formatValue(char* p, double v) {
    if (std::isnan(v)) {
        std::memcpy(p, "nan", 3);
        return p + 3;
    }
    return std::to_chars(p, p + kValueChars, v, std::chars_format::general, 9).ptr;
}

void putValue(std::ostream& o, double v) {
    char buf[kValueChars];
    o.write(buf, formatValue(buf, v) - buf);
}

namespace {

constexpr size_t kWriteSlice = size_t(1) << 16;

// values[lo, hi) as text, one per line.
std::string formatLines(const std::vector<double>& values, size_t lo, size_t hi) {
    std::string s((hi - lo) * (kValueChars + 1), '\0');
    char* p = &s[0];
    for (size_t i = lo; i < hi; ++i) {
        p = formatValue(p, values[i]);
        *p++ = '\n';
    }
    s.resize(size_t(p - s.data()));
    return s;
}

}  // namespace


void writeValues(const std::string& path, const std::vector<double>& values, size_t first) {
    AtomicFile f(path);
    // Chunks formatted on all threads, written in order in buffer-sized pieces (so a stop
    // request still ends the write within one buffer).
    const size_t n = values.size() > first ? values.size() - first : 0;
    std::vector<std::string> parts(chunkCount(n, 1 << 16));
    parallelChunks(first, first + n, unsigned(parts.size()),
                   [&](unsigned c, size_t lo, size_t hi) { parts[c] = formatLines(values, lo, hi); });
    for (std::string& part : parts) {
        for (size_t at = 0; at < part.size(); at += kWriteSlice)
            f.out.write(part.data() + at, std::streamsize(std::min(kWriteSlice, part.size() - at)));
        std::string().swap(part);
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
