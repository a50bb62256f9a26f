// SPDX-License-Identifier: GPL-3.0-or-later
// The small model the batch tests share: a 10 mm box with a sphere of another tissue in it, and
// two material sets for sweeps (Tests/Kernels/test_batch*.cpp, Tests/CUDA/test_cuda_batch.cpp).
#pragma once
#include <memory>
#include <vector>

#include "Geometry/MaterialSet.hpp"
#include "Geometry/MeshBuilder.hpp"
#include "Geometry/Sources.hpp"

namespace fmtest {

struct BatchTestModel {
    fm::TetraMesh mesh;
    fm::MaterialSet mats, mats2;
    explicit BatchTestModel(unsigned cells = 5)
        : mesh(fm::makeBoxMesh({-5, -5, -5}, {5, 5, 5}, cells, cells, cells, [](const fm::Point3& c) {
              return c[0] * c[0] + c[1] * c[1] + c[2] * c[2] < 9 ? 2u : 1u;
          })) {
        mats.exterior(fm::Material(0, 0, 0, 1.0));
        mats.append(fm::Material(0.05, 5, 0.8, 1.4));
        mats.append(fm::Material(0.5, 20, 0.9, 1.37));
        mats2.exterior(fm::Material(0, 0, 0, 1.0));
        mats2.append(fm::Material(0.1, 8, 0.7, 1.33));
        mats2.append(fm::Material(0.3, 10, 0.9, 1.5));
    }
};

// Sources of several kinds inside (and a beam from outside) the model, the first one twice:
// point, pencil beam (its specular entry depends on the materials), line, another point, point.
inline std::vector<fm::SourcePtr> mixedSources() {
    auto p = std::make_shared<fm::PointSource>();
    p->position = {0.1, 0.2, 0.3};
    auto b = std::make_shared<fm::PencilBeamSource>();
    b->position = {1, 1, -10};
    b->direction = {0, 0, 1};
    auto l = std::make_shared<fm::LineSource>();
    l->endpoint[0] = {-2, 0, 0};
    l->endpoint[1] = {2, 1, 0};
    auto q = std::make_shared<fm::PointSource>();
    q->position = {-3, 2, 1};
    return {p, b, l, q, p};
}

}  // namespace fmtest
