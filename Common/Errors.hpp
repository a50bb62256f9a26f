// SPDX-License-Identifier: GPL-3.0-or-later
// Errors a user can act on: what is wrong, and where (file:line, tetra, region, parameter).
#pragma once
#include <stdexcept>
#include <string>

namespace fm {

struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// Malformed input file: message starts with "file:line: ".
struct FormatError : Error {
    using Error::Error;
};
// A model that cannot be simulated (degenerate tetra, missing material, source outside...).
struct ModelError : Error {
    using Error::Error;
};
// A parameter out of range (packets, wmin, threads...).
struct ParameterError : Error {
    using Error::Error;
};

}  // namespace fm
