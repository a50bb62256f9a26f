// SPDX-License-Identifier: GPL-3.0-or-later
// A mesh as the text of MMC's node_<id>.dat and elem_<id>.dat files (1-based nodes, the region
// as the element label), for the tests and fuzz targets of the MMC readers.
#pragma once
#include <sstream>
#include <string>

#include "Geometry/TetraMesh.hpp"

namespace fmtest {

inline std::string mmcNodeText(const fm::TetraMesh& m) {
    std::ostringstream node;
    node << "1\t" << m.pointCount() << "\n";
    for (uint32_t i = 1; i <= m.pointCount(); ++i)
        node << i << "\t" << m.point(i)[0] << "\t" << m.point(i)[1] << "\t" << m.point(i)[2] << "\n";
    return node.str();
}

inline std::string mmcElemText(const fm::TetraMesh& m) {
    std::ostringstream elem;
    elem << "1\t" << m.tetraCount() << "\n";
    for (uint32_t t = 1; t <= m.tetraCount(); ++t) {
        elem << t;
        for (uint32_t v : m.tetra(t)) elem << "\t" << v;
        elem << "\t" << m.region(t) << "\n";
    }
    return elem.str();
}

}  // namespace fmtest
