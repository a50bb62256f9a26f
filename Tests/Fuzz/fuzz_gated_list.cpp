// SPDX-License-Identifier: GPL-3.0-or-later
// The element lists beside gated files (surface_exit_gated_faces.txt, fluence_gated_tetras.txt;
// the first byte's low bit picks faces). What it accepts is consistent: an id >= 1 and a line
// per element, and for faces three points each.
#include "Storage/TimeGated/TimeGatedFile.hpp"
#include "Tests/Fuzz/FuzzUtil.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const bool faces = (data[0] & 1u) != 0;
    std::istringstream in(fmfuzz::text(data + 1, size - 1));
    fmfuzz::expectOnlyUserErrors([&] {
        const fm::GatedElementList l = fm::readGatedElementList(in, "fuzz_list.txt", faces);
        fmfuzz::require(l.lines.size() == l.ids.size(), "a line per element");
        fmfuzz::require(faces ? l.points.size() == l.ids.size() : l.points.empty(), "points for faces only");
        for (size_t k = 0; k < l.ids.size(); ++k) {
            fmfuzz::require(l.ids[k] >= 1, "ids from 1");
            fmfuzz::require(k == 0 || l.lines[k] > l.lines[k - 1], "lines ascending");
            if (faces) fmfuzz::require(l.points[k][0] >= 1 && l.points[k][1] >= 1 && l.points[k][2] >= 1, "points from 1");
        }
    });
    return 0;
}
