// SPDX-License-Identifier: GPL-3.0-or-later
// Opening an input file for reading. On Linux a directory opens like an empty file, so a folder
// given where a file is expected would surface as "unexpected end of file": say what it is.
#pragma once
#include <filesystem>
#include <string>
#include <system_error>

#include "Common/Errors.hpp"

namespace fm {

// Throws FormatError "<path> is a directory, not a file" when path names a directory.
inline void refuseDirectory(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw FormatError(path + " is a directory, not a file");
}

}  // namespace fm
