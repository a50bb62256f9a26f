// SPDX-License-Identifier: GPL-3.0-or-later
// Whole numbers from text (command-line options, Tcl arguments), parsed as integers so that no
// value is rounded through double: "123", "1e6", "2.5e3" (exactly 2500) are accepted; a sign,
// a fraction left over ("1.5", "1e-1"), junk, an empty string and anything above 2^64-1 are not.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "Common/Errors.hpp"

namespace fm {

// The value of s, or nothing when s is not a whole number in [0, 2^64-1].
inline std::optional<uint64_t> parseWholeNumber(const std::string& s) {
    size_t i = 0;
    std::string digits;  // mantissa digits, integer and fraction parts together
    long long exponent = 0;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) digits += s[i];
    if (i < s.size() && s[i] == '.') {
        for (++i; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, --exponent) digits += s[i];
    }
    if (digits.empty()) return std::nullopt;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        bool negative = i < s.size() && s[i] == '-';
        if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
        if (i == s.size()) return std::nullopt;
        long long e = 0;
        for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i)
            if ((e = e * 10 + (s[i] - '0')) > 100000) return std::nullopt;
        exponent += negative ? -e : e;
    }
    if (i != s.size()) return std::nullopt;
    // A negative exponent must only drop zeros (else a fraction is left over).
    for (; exponent < 0; ++exponent) {
        if (digits.back() != '0') return std::nullopt;
        digits.pop_back();
        if (digits.empty()) return uint64_t(0);
    }
    uint64_t v = 0;
    auto times10plus = [&v](unsigned d) {
        if (v > (UINT64_MAX - d) / 10) return false;
        v = v * 10 + d;
        return true;
    };
    for (char c : digits)
        if (!times10plus(unsigned(c - '0'))) return std::nullopt;
    for (; exponent > 0; --exponent)
        if (v != 0 && !times10plus(0)) return std::nullopt;
    return v;
}

// parseWholeNumber for a named option, in [lo, hi]; throws ParameterError naming the option.
inline uint64_t wholeNumberOption(const std::string& what, const std::string& s, uint64_t lo, uint64_t hi) {
    std::optional<uint64_t> v = parseWholeNumber(s);
    if (!v)
        throw ParameterError(what + ": '" + s + "' is not a whole number in [0, 2^64-1] (e.g. 1000000 or 1e6)");
    if (*v > hi) throw ParameterError(what + " = " + s + " is larger than " + std::to_string(hi));
    if (*v < lo) throw ParameterError(what + " = " + s + " is smaller than " + std::to_string(lo));
    return *v;
}

}  // namespace fm
