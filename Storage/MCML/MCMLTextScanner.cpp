// SPDX-License-Identifier: GPL-3.0-or-later
#include "Storage/MCML/MCMLTextScanner.hpp"

#include "Storage/MCML/MCMLFormatError.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <system_error>

namespace MCMLDetail {

namespace {

bool isSpace(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

std::string valuesText(std::size_t n, const std::string& what)
{
    return "expected " + std::to_string(n) + (n == 1 ? " value" : " values") + " for " + what;
}

}  // namespace

bool parseDouble(std::string_view tok, double& out)
{
    // from_chars rejects a leading '+', which C's strtod (and so MCML) accepts.
    if (tok.size() > 1 && tok[0] == '+' && tok[1] != '-' && tok[1] != '+')
        tok.remove_prefix(1);
    if (tok.empty())
        return false;
#if defined(__cpp_lib_to_chars) && __cpp_lib_to_chars >= 201611L
    const char* end = tok.data() + tok.size();
    auto [ptr, ec] = std::from_chars(tok.data(), end, out);
    return ec == std::errc() && ptr == end;
#else
    // Older standard libraries lack floating from_chars; strtod follows LC_NUMERIC, which
    // programs leave at "C" unless they call setlocale themselves.
    std::string copy(tok);
    char* end = nullptr;
    out = std::strtod(copy.c_str(), &end);
    return end == copy.c_str() + copy.size();
#endif
}

bool parseUnsigned(std::string_view tok, std::uint64_t& out)
{
    const char* end = tok.data() + tok.size();
    auto [ptr, ec] = std::from_chars(tok.data(), end, out);
    return !tok.empty() && ec == std::errc() && ptr == end;
}

std::string quoteToken(std::string_view tok)
{
    constexpr std::size_t maxShown = 32;
    std::string s = "'";
    for (std::size_t i = 0; i < tok.size() && i < maxShown; ++i)
    {
        const auto c = static_cast<unsigned char>(tok[i]);
        if (c >= 0x20 && c < 0x7f)
            s += static_cast<char>(c);
        else
        {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02X", c);
            s += buf;
        }
    }
    if (tok.size() > maxShown)
        s += "...";
    return s + "'";
}

TextScanner::TextScanner(std::istream& in, std::string name) : in_(in), name_(std::move(name)) {}

bool TextScanner::readPhysicalLine()
{
    if (!std::getline(in_, text_))
    {
        if (in_.bad())
            throw std::runtime_error(name_ + ": read error after line " + std::to_string(physical_));
        return false;
    }
    ++physical_;
    lastHadNewline_ = !in_.eof();
    return true;
}

void TextScanner::tokenize(std::string_view content)
{
    tokens_.clear();
    std::size_t i = 0;
    while (i < content.size())
    {
        while (i < content.size() && isSpace(content[i]))
            ++i;
        const std::size_t start = i;
        while (i < content.size() && !isSpace(content[i]))
            ++i;
        if (i > start)
            tokens_.push_back(content.substr(start, i - start));
    }
}

bool TextScanner::nextLine()
{
    while (readPhysicalLine())
    {
        std::string_view content(text_);
        const std::size_t hash = content.find('#');
        if (hash != std::string_view::npos)
        {
            if (hook_)
                hook_(content.substr(hash + 1), physical_);
            content = content.substr(0, hash);
        }
        tokenize(content);
        if (!tokens_.empty())
        {
            line_ = physical_;
            return true;
        }
    }
    tokens_.clear();
    // Point just past the last line, so "found end of file" names where more was needed.
    line_ = physical_ + (lastHadNewline_ ? 1 : 0);
    if (line_ == 0)
        line_ = 1;
    return false;
}

const Tokens& TextScanner::requireLine(const std::string& expected)
{
    if (!nextLine())
        fail("expected " + expected + ", found end of file");
    return tokens_;
}

const Tokens& TextScanner::requireTokens(std::size_t n, const std::string& what)
{
    requireLine(what);
    if (tokens_.size() != n)
        fail("expected " + what + ", found " + std::to_string(tokens_.size()));
    return tokens_;
}

void TextScanner::readValues(std::size_t n, const std::string& what, std::vector<double>& out)
{
    out.clear();
    // Reserve only what a small file could hold: the count comes from the file and may be a lie.
    out.reserve(std::min<std::size_t>(n, 1u << 16));
    while (out.size() < n)
    {
        if (!nextLine())
            fail(valuesText(n, what) + ", found end of file after " + std::to_string(out.size()));
        for (std::string_view tok : tokens_)
        {
            double v = 0.0;
            if (out.size() == n)
                fail(valuesText(n, what) + ", found one more: " + quoteToken(tok));
            if (!parseDouble(tok, v))
                fail(valuesText(n, what) + ", found " + quoteToken(tok) + " after " +
                     std::to_string(out.size()));
            if (!std::isfinite(v))
                fail("non-finite value " + quoteToken(tok) + " in " + what);
            out.push_back(v);
        }
    }
}

void TextScanner::requireEnd(const std::string& context)
{
    if (nextLine())
        fail("unexpected " + quoteToken(tokens_.front()) + " " + context);
}

void TextScanner::fail(const std::string& message) const
{
    throw MCMLFormatError(name_, line_, message);
}

double TextScanner::finite(std::string_view tok, const std::string& what) const
{
    double v = 0.0;
    if (!parseDouble(tok, v))
        fail("expected a number for " + what + ", found " + quoteToken(tok));
    if (!std::isfinite(v))
        fail("expected a finite number for " + what + ", found " + quoteToken(tok));
    return v;
}

std::uint64_t TextScanner::count(std::string_view tok, const std::string& what) const
{
    std::uint64_t v = 0;
    if (parseUnsigned(tok, v))
        return v;
    const bool digitsOnly = !tok.empty() && std::all_of(tok.begin(), tok.end(), [](char c) {
        return c >= '0' && c <= '9';
    });
    fail("expected a non-negative integer for " + what + ", found " + quoteToken(tok) +
         (digitsOnly ? " (too large)" : ""));
}

}  // namespace MCMLDetail
