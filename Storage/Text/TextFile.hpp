// SPDX-License-Identifier: GPL-3.0-or-later
// Plain-text outputs: one value per line (per element, in input order) or CSV with a header.
#pragma once
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace fm {

// One value as the text outputs write it: 9 significant digits (%.9g), "nan" for NaN.
void putValue(std::ostream& o, double v);
// The same text into p (room for kValueChars); returns the end of what it wrote.
constexpr size_t kValueChars = 32;
char* formatValue(char* p, double v);
// values[first..] one per line; "nan" for undefined values.
void writeValues(const std::string& path, const std::vector<double>& values, size_t first = 1);
// Selected entries (e.g. boundary faces): "id value" per line.
void writeIndexedValues(const std::string& path, const std::vector<uint32_t>& ids,
                        const std::vector<double>& values);
// Columns of equal length with a header row.
void writeCSV(const std::string& path, const std::vector<std::string>& header,
              const std::vector<std::vector<double>>& columns);
std::vector<double> readValues(const std::string& path);

}  // namespace fm
