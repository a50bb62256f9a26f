// SPDX-License-Identifier: GPL-3.0-or-later
// Shared by the libFuzzer targets: what counts as an expected failure, and what is a finding.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "Common/Errors.hpp"
#include "Storage/MCML/MCMLFormatError.hpp"

namespace fmfuzz {

// The readers' stream overloads take the input in memory: no file per input, which doubles the
// rate of executions.
inline std::string text(const uint8_t* data, size_t size) {
    return size ? std::string(reinterpret_cast<const char*>(data), size) : std::string();
}

// Runs f; the errors a user is meant to see (fm::Error and its kinds, MCMLFormatError) are
// expected outcomes. Anything else - another exception, a crash, a sanitizer report, a hang -
// escapes to libFuzzer and is a finding.
template <class F>
void expectOnlyUserErrors(F&& f) {
    try {
        f();
    } catch (const fm::Error&) {
    } catch (const MCMLFormatError&) {
    }
}

// A finding that is not a crash: wrong numbers. Abort so libFuzzer saves the input.
inline void require(bool ok, const char* what) {
    if (ok) return;
    std::fprintf(stderr, "fuzz: invariant violated: %s\n", what);
    std::abort();
}

}  // namespace fmfuzz
