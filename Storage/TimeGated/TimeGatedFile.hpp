// SPDX-License-Identifier: GPL-3.0-or-later
// The time-gated tally file (.fmtg, docs/TIME_DOMAIN.md): one gated array (fluence per tetra or
// exit fluence per boundary face, per time gate, with the early and late bins) and its standard errors,
// as float64 after a 128-byte header. Written through AtomicFile; the reader checks the header
// and the size and names the file in its FormatError.
#pragma once
#include <array>
#include <istream>
#include <string>
#include <vector>

#include "Kernels/KernelInput.hpp"

namespace fm {

enum class GatedQuantity : uint32_t {
    volumeFluence = 1,  // per tetra (element i = tetra i + 1)
    exitFluence = 2,    // per face id (element i = face i + 1; boundary faces only non-zero): read, no longer written
    exitFluenceListed = 3,  // per exit face, element k = line k of the list beside the file
                            // (surface_exit_gated_faces.txt: the mesh's boundary faces)
};

struct TimeGatedArray {
    TimeGates gates;
    GatedQuantity quantity = GatedQuantity::volumeFluence;
    uint64_t elements = 0;         // values per bin
    std::string units;             // at most 31 ASCII characters, e.g. "J/mm^2"
    std::vector<double> values;    // [bin * elements + element], bins = gates.bins()
    std::vector<double> stderrs;   // empty, or as values: the batch-means standard errors

    double at(uint32_t bin, uint64_t element) const { return values[bin * elements + element]; }
};

// The array of bin-major per-index values `perIndex` ([bin * (elements + 1) + index], index 0 a
// dummy, as RunResult's gated tallies hold them) without the dummies, each value times `scale`
// and, where `divisor` is given, divided by divisor[index] (V mu_a for fluence, the area for
// exit fluence; NaN where the divisor is 0); bin by bin in parallel. Error where perIndex is not
// bins x the divisors' elements.
std::vector<double> gatedValues(const TimeGates& g, const std::vector<double>& perIndex, double scale,
                                const std::vector<double>& divisor = {});

// The element list beside a gated file of listed elements (fullmonte-run's
// fluence_gated_tetras.txt: a tetra id a line; surface_exit_gated_faces.txt: `face p1 p2 p3` a
// line), '#' lines skipped: the ids (1-based), and for faces their points. FormatError naming
// the file and line for a line that is not that, or an id 0.
struct GatedElementList {
    std::vector<uint32_t> ids;
    std::vector<std::array<uint32_t, 3>> points;  // faces only: the face's points, as in surface_exit.txt
    std::vector<size_t> lines;                    // each element's line in the file (for messages)
};
GatedElementList readGatedElementList(const std::string& path, bool faces);
// The same from a stream; `path` names it in errors.
GatedElementList readGatedElementList(std::istream& in, const std::string& path, bool faces);
// The name of the list beside a gated file of quantity q ("" where its elements are all ids):
// surface_exit_gated_faces.txt for listed faces, fluence_gated_tetras.txt for volume fluence
// (whose list exists only with per-region gating).
std::string gatedElementListName(GatedQuantity q);

void writeTimeGated(const std::string& path, const TimeGatedArray& a);
TimeGatedArray readTimeGated(const std::string& path);
// The same from a seekable binary stream; `path` names it in errors.
TimeGatedArray readTimeGated(std::istream& in, const std::string& path);

}  // namespace fm
