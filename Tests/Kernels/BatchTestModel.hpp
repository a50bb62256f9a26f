// SPDX-License-Identifier: GPL-3.0-or-later
// The small model the batch tests share: a 10 mm box with a sphere of another tissue in it, and
// two material sets for sweeps (Tests/Kernels/test_batch*.cpp, Tests/CUDA/test_cuda_batch.cpp).
#pragma once
#include "Geometry/MaterialSet.hpp"
#include "Geometry/MeshBuilder.hpp"

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

}  // namespace fmtest
