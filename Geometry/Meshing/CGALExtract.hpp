// SPDX-License-Identifier: GPL-3.0-or-later
// Private to the CGAL translation units: a Mesh_3 complex to a TetraMesh (cells in the complex
// only, their subdomain index as the region, points shifted by `shift`).
#pragma once
#include <unordered_map>

#include "Geometry/Errors.hpp"
#include "Geometry/TetraMesh.hpp"

namespace fm {

template <class C3t3>
TetraMesh extractTetraMesh(const C3t3& c3t3, const Point3& shift) {
    using Vertex = typename C3t3::Triangulation::Vertex_handle;
    std::unordered_map<Vertex, uint32_t> ids;
    std::vector<Point3> points(1, Point3{0, 0, 0});
    std::vector<TetraPoints> tetras(1, TetraPoints{0, 0, 0, 0});
    std::vector<uint32_t> regions(1, 0);
    tetras.reserve(c3t3.number_of_cells_in_complex() + 1);
    regions.reserve(c3t3.number_of_cells_in_complex() + 1);
    for (auto c = c3t3.cells_in_complex_begin(); c != c3t3.cells_in_complex_end(); ++c) {
        TetraPoints t;
        for (int i = 0; i < 4; ++i) {
            Vertex v = c->vertex(i);
            auto [it, added] = ids.emplace(v, uint32_t(points.size()));
            if (added) {
                const auto& p = v->point();
                points.push_back({CGAL::to_double(p.x()) + shift[0], CGAL::to_double(p.y()) + shift[1],
                                  CGAL::to_double(p.z()) + shift[2]});
            }
            t[i] = it->second;
        }
        tetras.push_back(t);
        regions.push_back(uint32_t(c3t3.subdomain_index(c)));
    }
    if (tetras.size() == 1)
        throw Error("meshing produced no tetrahedra: are the sizes much larger than the labelled objects?");
    return TetraMesh(std::move(points), std::move(tetras), std::move(regions));
}

}  // namespace fm
