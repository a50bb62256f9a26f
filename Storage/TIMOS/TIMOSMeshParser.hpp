// SPDX-License-Identifier: GPL-3.0-or-later
// Fast path of the TIM-OS .mesh reader: the text in memory, tokens found and converted with
// std::from_chars on all cores. It accepts only plainly written, valid files (decimal numbers,
// indices in range) and gives up on anything else, so that the careful token reader
// (Storage/TextReader.hpp) reads those and reports the file:line of the problem: both give the
// same values for every file the fast path accepts.
#pragma once
#include <cstddef>

#include "Storage/MeshArrays.hpp"

namespace fm {

// True and the arrays filled when [begin, end) is a well-formed TIM-OS mesh; false otherwise.
bool parseTIMOSMeshFast(const char* begin, const char* end, MeshArrays& out);

}  // namespace fm
