// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The one exception type for malformed MCML files. Its message always starts "file:line: " so
// editors and terminals can jump to the spot; file() and line() give the parts to programs.

#include <stdexcept>
#include <string>

class MCMLFormatError : public std::runtime_error
{
public:
    MCMLFormatError(const std::string& file, unsigned line, const std::string& what)
        : std::runtime_error(file + ":" + std::to_string(line) + ": " + what), file_(file),
          line_(line)
    {
    }

    const std::string& file() const noexcept { return file_; }
    unsigned line() const noexcept { return line_; }

private:
    std::string file_;
    unsigned line_;
};
