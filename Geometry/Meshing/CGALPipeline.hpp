// SPDX-License-Identifier: GPL-3.0-or-later
// Private to the CGAL translation units: what both meshers do once their domain is built
// (per-label sizing, refinement, sliver optimisation, conversion to a TetraMesh).
#pragma once
#include <CGAL/make_mesh_3.h>

#include <map>

#include <algorithm>
#include <unordered_map>

#include "Geometry/MeshOrder.hpp"
#include "Common/Errors.hpp"
#include "Geometry/Meshing/MeshingCommon.hpp"
#include "Geometry/TetraMesh.hpp"

namespace fm {

// Size per label: a cell's label (dimension 3), the smaller of the two labels a surface point
// separates (dimension 2, from `patchLabels`), the global size elsewhere.
template <class Domain, class PatchLabels>
struct LabelSizing {
    using FT = typename Domain::FT;
    const Domain* domain;
    double global;
    const std::map<int32_t, double>* byLabel;
    PatchLabels patchLabels;  // Surface_patch_index -> std::pair of labels

    double of(int label) const {
        auto it = byLabel->find(label);
        return it == byLabel->end() ? global : it->second;
    }
    FT operator()(const typename Domain::Point_3&, const int dim, const typename Domain::Index& index) const {
        if (dim == 3) return of(domain->subdomain_index(index));
        if (dim == 2) {
            auto labels = patchLabels(domain->surface_patch_index(index));
            return std::min(of(labels.first), of(labels.second));
        }
        return global;
    }
};

// Refinement, then the sliver optimisers the options ask for, each reported as a stage.
template <class C3t3, class Domain, class Criteria>
C3t3 refineAndOptimise(const Domain& domain, const Criteria& criteria, const MeshingOptions& o,
                       StageReporter& report) {
    namespace params = CGAL::parameters;
    report.start("refinement");
    C3t3 c3t3 = CGAL::make_mesh_3<C3t3>(domain, criteria, params::no_perturb(), params::no_exude());
    report.end(std::to_string(c3t3.number_of_cells_in_complex()) + " tetras");
    if (o.perturb) {
        report.start("sliver perturbation");
        CGAL::perturb_mesh_3(c3t3, domain, params::time_limit = o.optimiserTimeLimit,
                             params::sliver_bound = o.sliverBound);
        report.end();
    }
    if (o.exude) {
        report.start("sliver exudation");
        CGAL::exude_mesh_3(c3t3, params::time_limit = o.optimiserTimeLimit, params::sliver_bound = o.sliverBound);
        report.end();
    }
    return c3t3;
}

// A Mesh_3 complex to a TetraMesh: cells in the complex only, their subdomain index as the
// region, points shifted by `shift`, numbered for memory locality (Geometry/MeshOrder.hpp).
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
    orderForLocality(points, tetras, regions);
    return TetraMesh(std::move(points), std::move(tetras), std::move(regions));
}

}  // namespace fm
