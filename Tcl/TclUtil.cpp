// SPDX-License-Identifier: GPL-3.0-or-later
#include "Tcl/TclUtil.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace fmtcl {

fm::Point3 parseVec3(const std::string& s, const std::string& what) {
    std::string t = s;
    for (char& c : t)
        if (c == ',' || c == '{' || c == '}') c = ' ';
    std::istringstream in(t);
    std::vector<double> v;
    std::string tok;
    while (in >> tok) {
        char* end = nullptr;
        double x = std::strtod(tok.c_str(), &end);
        if (end == tok.c_str() || *end || !std::isfinite(x))
            throw fm::ParameterError(what + ": '" + tok + "' is not a finite number (in \"" + s + "\")");
        v.push_back(x);
    }
    if (v.size() != 3)
        throw fm::ParameterError(what + ": expected 3 numbers \"x y z\", got \"" + s + "\"");
    return {v[0], v[1], v[2]};
}

namespace {
void put(std::ostream& o, double x) {
    if (std::isnan(x)) o << "nan";
    else if (std::isinf(x)) o << (x > 0 ? "inf" : "-inf");
    else o << x;
}
}  // namespace

std::string formatVec3(const fm::Point3& p) {
    std::ostringstream o;
    o.precision(15);
    for (double x : p) {
        put(o, x);
        o << ' ';
    }
    return o.str();
}

// 17 digits: a value read back from the list is the same double (maps feed Tcl-side maths).
std::string formatList(const std::vector<double>& v) {
    std::ostringstream o;
    o.precision(17);
    for (size_t i = 0; i < v.size(); ++i) {
        if (i) o << ' ';
        put(o, v[i]);
    }
    return o.str();
}

std::vector<double> parseNumberList(const std::string& list, const std::string& what) {
    std::vector<double> v;
    std::istringstream in(list);
    for (std::string t; in >> t;) {
        char* end = nullptr;
        const double x = std::strtod(t.c_str(), &end);
        if (*end) throw fm::ParameterError(what + ": '" + t + "' is not a number");
        v.push_back(x);
    }
    return v;
}

uint64_t wholeNumber(double x, const std::string& what, double lo, double hi) {
    // Above 2^53 a double may be a rounded integer: such values are refused, not rounded.
    hi = std::min(hi, 9007199254740991.0);
    if (!std::isfinite(x) || x != std::floor(x))
        throw fm::ParameterError(what + " must be a whole number, got " + std::to_string(x));
    if (x < lo || x > hi) {
        std::ostringstream o;
        o.precision(17);
        o << what << " must be in [" << lo << ", " << hi << "], got " << x;
        throw fm::ParameterError(o.str());
    }
    return uint64_t(x);
}

double nonNegative(double x, const std::string& what) {
    if (!(std::isfinite(x) && x >= 0))
        throw fm::ParameterError(what + " must be finite and >= 0, got " + std::to_string(x));
    return x;
}

double positive(double x, const std::string& what) {
    if (!(std::isfinite(x) && x > 0))
        throw fm::ParameterError(what + " must be finite and > 0, got " + std::to_string(x));
    return x;
}

double finite(double x, const std::string& what) {
    if (!std::isfinite(x)) throw fm::ParameterError(what + " must be finite, got " + std::to_string(x));
    return x;
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

double unitLengthMM(const std::string& unit) {
    std::string u = lower(unit);
    if (u == "mm") return 1.0;
    if (u == "cm") return 10.0;
    if (u == "m") return 1000.0;
    if (u == "um") return 0.001;
    throw fm::ParameterError("unknown length unit '" + unit + "' (use mm, cm, m or um)");
}

std::string checkUnit(const std::string& unit, const std::string& what) {
    try {
        unitLengthMM(unit);
    } catch (const fm::ParameterError& e) {
        throw fm::ParameterError(what + ": " + e.what());
    }
    return lower(unit);
}

// ---- device lists (issue 9) ----

std::vector<int> parseDeviceList(const std::string& s, const std::string& what) {
    std::string t = s;
    for (char& c : t)
        if (c == ',' || c == '{' || c == '}') c = ' ';
    std::istringstream in(t);
    std::vector<int> out;
    std::string w;
    while (in >> w) {
        if (lower(w) == "all") {
            if (!out.empty() || (in >> w)) throw fm::ParameterError(what + ": 'all' stands alone, got '" + s + "'");
            return {-1};
        }
        char* end = nullptr;
        long d = std::strtol(w.c_str(), &end, 10);
        if (end == w.c_str() || *end || d < 0 || d > 1023)
            throw fm::ParameterError(what + ": '" + w + "' is not a device id (0, 1, ...) or 'all'");
        if (std::find(out.begin(), out.end(), int(d)) != out.end())
            throw fm::ParameterError(what + ": device " + w + " given twice");
        out.push_back(int(d));
    }
    return out;
}

std::string formatDeviceList(const std::vector<int>& d) {
    if (d.size() == 1 && d[0] < 0) return "all";
    if (d.empty()) return "0";
    std::string s;
    for (size_t i = 0; i < d.size(); ++i) s += (i ? " " : "") + std::to_string(d[i]);
    return s;
}

std::vector<double> gatedBin(const std::vector<double>& v, const fm::TimeGates& g, uint32_t b, bool volume) {
    if (v.empty()) return {};
    const size_t stride = v.size() / g.bins();
    // The listed elements' full indices (per-region gating's tetras, the exit faces), or none.
    const std::vector<uint32_t>* ids = volume ? (g.tetras ? &g.tetras->cells : nullptr) : (g.faces ? &g.faces->faces : nullptr);
    if (!ids) return std::vector<double>(v.begin() + b * stride, v.begin() + (b + 1) * stride);
    std::vector<double> full(volume ? g.tetras->slot.size() : g.faces->slot.size(), 0.0);
    for (size_t k = 1; k < ids->size(); ++k) full[(*ids)[k]] = v[b * stride + k];
    return full;
}

}  // namespace fmtcl
