// SPDX-License-Identifier: GPL-3.0-or-later
// A JSON string literal of any byte string (file names, labels, kernel names) for the
// summary.json writers: quotes, backslashes and control characters escaped, and bytes that are
// not valid UTF-8 replaced by U+FFFD, so the file is always valid JSON (RFC 8259 requires UTF-8).
// Kept header-only and library-free: fullmonte-run builds with a compiler and Boost headers only.
#pragma once
#include <cstdio>
#include <string>

namespace fm {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is not one (overlong forms,
// surrogates and code points above U+10FFFF are not valid).
inline size_t utf8SequenceLength(const std::string& s, size_t i) {
    const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = b(i);
    size_t n;
    unsigned lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else return 0;
    if (i + n > s.size()) return 0;
    if (b(i + 1) < lo || b(i + 1) > hi) return 0;
    for (size_t k = 2; k < n; ++k)
        if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
    return n;
}

inline std::string jsonString(const std::string& s) {
    std::string o = "\"";
    for (size_t i = 0; i < s.size();) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        const size_t n = utf8SequenceLength(s, i);
        if (n == 0) {
            o += "\\ufffd";  // not UTF-8: the replacement character
            ++i;
            continue;
        }
        if (c == '"' || c == '\\') o += '\\', o += char(c);
        else if (c == '\n') o += "\\n";
        else if (c == '\t') o += "\\t";
        else if (c == '\r') o += "\\r";
        else if (c < 0x20 || c == 0x7F) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(c));
            o += buf;
        } else o.append(s, i, n);
        i += n;
    }
    return o + "\"";
}

}  // namespace fm
