// SPDX-License-Identifier: GPL-3.0-or-later
// Small text helpers the command lines, the Tcl package and the readers share (file extensions).
#pragma once
#include <cctype>
#include <string>

namespace fm {

inline bool endsWith(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// endsWith with ASCII letters compared regardless of case (".NII.GZ" ends with ".nii.gz").
inline bool endsWithIgnoringCase(const std::string& s, const std::string& tail) {
    if (s.size() < tail.size()) return false;
    const size_t at = s.size() - tail.size();
    for (size_t i = 0; i < tail.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(s[at + i])) != std::tolower(static_cast<unsigned char>(tail[i])))
            return false;
    return true;
}

}  // namespace fm
