// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Internal to the MCML readers: walks an MCML text file line by line, dropping '#' comments and
// blank lines, splitting the rest on whitespace, and turning every problem into an
// MCMLFormatError that names the file and line. Both .mci and .mco are read through it.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace MCMLDetail {

using Tokens = std::vector<std::string_view>;

// Whole-token, locale-independent parses (a file written in a German locale must not read
// differently). Return false unless the entire token is consumed.
bool parseDouble(std::string_view tok, double& out);
bool parseUnsigned(std::string_view tok, std::uint64_t& out);

// tok in single quotes, with unprintable bytes as \xNN and long tokens cut, so that binary
// garbage in a file gives a readable one-line message.
std::string quoteToken(std::string_view tok);

class TextScanner
{
public:
    // Called with the text after '#' of every comment read, and its line number.
    using CommentHook = std::function<void(std::string_view comment, unsigned line)>;

    TextScanner(std::istream& in, std::string name);

    void setCommentHook(CommentHook hook) { hook_ = std::move(hook); }
    const std::string& name() const { return name_; }

    // Line of the current content line; after end of file, the line just past the last one.
    unsigned line() const { return line_; }

    // Next line with content (tokens valid until the next call); throws at end of file with
    // "expected <expected>, found end of file".
    const Tokens& requireLine(const std::string& expected);

    // Next line, which must have exactly n tokens: "expected <what>, found <count>".
    const Tokens& requireTokens(std::size_t n, const std::string& what);

    // Reads n finite numbers starting on the next line, any number per line, ending at a line end.
    void readValues(std::size_t n, const std::string& what, std::vector<double>& out);

    // Throws unless only comments and blank lines remain.
    void requireEnd(const std::string& context);

    [[noreturn]] void fail(const std::string& message) const;

    // Token conversions that fail at the current line, naming what was expected.
    double finite(std::string_view tok, const std::string& what) const;
    std::uint64_t count(std::string_view tok, const std::string& what) const;

private:
    bool nextLine();          // false at end of file
    bool readPhysicalLine();  // false at end of file
    void tokenize(std::string_view content);

    std::istream& in_;
    std::string name_;
    std::string text_;  // current physical line; tokens_ point into it
    Tokens tokens_;
    unsigned physical_ = 0;  // physical lines read so far
    unsigned line_ = 1;
    bool lastHadNewline_ = true;
    CommentHook hook_;
};

}  // namespace MCMLDetail
