// SPDX-License-Identifier: GPL-3.0-or-later
// Whitespace-token reader that knows its file and line, for readers whose errors must say
// "file:line: what was expected, what was found". '#' starts a comment when enabled.
#pragma once
#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "Common/Errors.hpp"
#include "Storage/InputFile.hpp"

namespace fm {

class TextReader {
public:
    TextReader(const std::string& path, bool hashComments = false)
        : path_(path), comments_(hashComments), in_(&file_) {
        refuseDirectory(path);
        file_.open(path, std::ios::binary);
        if (!file_) throw FormatError(path + ": cannot open file");
    }
    // Text already in memory (or any stream); name stands for the file in messages.
    TextReader(std::istream& in, const std::string& name, bool hashComments = false)
        : path_(name), comments_(hashComments), in_(&in) {}
    TextReader(const TextReader&) = delete;
    TextReader& operator=(const TextReader&) = delete;
    const std::string& path() const { return path_; }
    int line() const { return line_; }

    [[noreturn]] void fail(const std::string& msg) const {
        throw FormatError(path_ + ":" + std::to_string(line_) + ": " + msg);
    }
    // Next token, or "" at end of file.
    std::string token() {
        if (!started_) skipByteOrderMark();
        std::string t;
        int c;
        while ((c = in_->get()) != EOF) {
            if (c == '\n') ++line_;
            if (comments_ && c == '#') {
                while ((c = in_->get()) != EOF && c != '\n') {}
                if (c == '\n') ++line_;
                continue;
            }
            if (c == 0) fail("binary data (NUL byte) in a text file");
            if (!std::isspace(c)) break;
        }
        if (c == EOF) return t;
        t.push_back(char(c));
        while ((c = in_->peek()) != EOF && !std::isspace(c) && !(comments_ && c == '#')) {
            if (c == 0) fail("binary data (NUL byte) in a text file");
            t.push_back(char(in_->get()));
            if (t.size() > 256) fail("token too long (not a text file of this kind?)");
        }
        return t;
    }
    std::string need(const std::string& what) {
        std::string t = token();
        if (t.empty()) fail("unexpected end of file, expected " + what);
        return t;
    }
    double number(const std::string& what) {
        std::string t = need(what);
        char* end = nullptr;
        double v = std::strtod(t.c_str(), &end);
        if (end == t.c_str() || *end) fail("expected " + what + ", found '" + t + "'");
        if (!std::isfinite(v)) fail(what + " is not finite ('" + t + "')");
        return v;
    }
    // A number with |v| <= maxAbs, e.g. a coordinate (the kernels compute in single precision).
    double bounded(const std::string& what, double maxAbs) {
        double v = number(what);
        if (std::fabs(v) > maxAbs) {
            std::ostringstream o;
            o << what << " = " << v << " is outside +-" << maxAbs;
            fail(o.str());
        }
        return v;
    }
    uint64_t count(const std::string& what, uint64_t max) {
        std::string t = need(what);
        char* end = nullptr;
        if (t[0] == '-') fail(what + " must not be negative, found '" + t + "'");
        unsigned long long v = std::strtoull(t.c_str(), &end, 10);
        if (end == t.c_str() || *end) {
            double d = std::strtod(t.c_str(), &end);  // accept 1e6-style integers
            if (end == t.c_str() || *end || !(d >= 0) || d != std::floor(d))
                fail("expected " + what + " (a whole number), found '" + t + "'");
            // Range first: converting a double at or beyond 2^64 (1e30, inf) to an integer is
            // undefined, and double(max) rounds up to 2^64 for a max near it, so 2^64 is the bound.
            if (!(d < 18446744073709551616.0)) fail(what + " = " + t + " is larger than " + std::to_string(max));
            v = (unsigned long long)d;
        }
        if (v > max) fail(what + " = " + t + " is larger than " + std::to_string(max));
        return v;
    }
    void expectEnd() {
        std::string t = token();
        if (!t.empty()) fail("unexpected extra data '" + t + "' after the last record");
    }

private:
    std::string path_;
    bool comments_;
    std::ifstream file_;
    std::istream* in_;
    int line_ = 1;
    bool started_ = false;
    // A UTF-8 byte-order mark (files saved by Windows editors) before the first token is no part
    // of the text.
    void skipByteOrderMark() {
        started_ = true;
        if (in_->peek() != 0xEF) return;
        const std::streampos at = in_->tellg();
        char b[3] = {0, 0, 0};
        in_->read(b, 3);
        if (in_->gcount() == 3 && b[0] == '\xEF' && b[1] == '\xBB' && b[2] == '\xBF') return;
        in_->clear();
        in_->seekg(at);
    }
};

}  // namespace fm
