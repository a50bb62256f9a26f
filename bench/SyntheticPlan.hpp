// SPDX-License-Identifier: GPL-3.0-or-later
// A planning problem of clinical size without a simulation: a box mesh of n^3 cubes (6 n^3
// tetras, 60 mm wide) with a spherical target (region 2, radius 18 mm) and a cylindrical organ at
// risk (region 3) beside it in tissue (region 1), and S point sources on a ring in the target whose
// fluence per J is the diffusion kernel exp(-mu_eff r) / (4 pi D r) with Monte Carlo-like noise:
// 20% relative, and zero where few packets would reach (more often far away). Used by
// bench/plan_scale_bench.cpp and Tests/Planning/test_plan_scale.cpp.
#pragma once
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "Geometry/MeshBuilder.hpp"
#include "Planning/Optimizer.hpp"

namespace fm::planning {

struct SyntheticPlan {
    TetraMesh mesh;
    DoseMatrix matrix;
    std::vector<CandidateSource> sources;
    Prescription rx;
    std::map<uint32_t, std::string> names{{1, "tissue"}, {2, "tumour"}, {3, "organ"}};

    SyntheticPlan(unsigned n, size_t nSources, unsigned seed = 1)
        : mesh(makeBoxMesh({-30, -30, -30}, {30, 30, 30}, n, n, n, [](const Point3& c) {
              if (c[0] * c[0] + c[1] * c[1] + c[2] * c[2] < 18 * 18) return uint32_t(2);
              if ((c[1] + 24) * (c[1] + 24) + c[2] * c[2] < 5 * 5) return uint32_t(3);
              return uint32_t(1);
          })) {
        const double muEff = 0.2, D = 0.37;  // 1/mm, mm
        std::mt19937 rng(seed);
        std::normal_distribution<double> noise(1.0, 0.2);
        std::uniform_real_distribution<double> u(0, 1);
        matrix.tetras = mesh.tetraCount(), matrix.sources = nSources, matrix.batches = 1;
        matrix.fluence.assign(nSources * matrix.tetras, 0.0);
        const double phiFew = std::exp(-muEff * 25) / (4 * M_PI * D * 25);  // a few packets' worth
        for (size_t j = 0; j < nSources; ++j) {
            double a = 2 * M_PI * double(j) / double(nSources);
            Point3 p{10 * std::cos(a), 10 * std::sin(a), 6.0 * std::sin(3 * a)};
            sources.push_back({"S" + std::to_string(j + 1), nullptr, 0, 400, 0});
            for (uint32_t t = 1; t <= matrix.tetras; ++t) {
                Point3 c{0, 0, 0};
                for (uint32_t v : mesh.tetra(t))
                    for (int k = 0; k < 3; ++k) c[k] += 0.25 * mesh.point(v)[k];
                double r = std::max(0.5, std::sqrt((c[0] - p[0]) * (c[0] - p[0]) + (c[1] - p[1]) * (c[1] - p[1]) +
                                                   (c[2] - p[2]) * (c[2] - p[2])));
                double phi = std::exp(-muEff * r) / (4 * M_PI * D * r);
                bool reached = u(rng) < 1 - std::exp(-phi / phiFew);
                matrix.fluence[j * matrix.tetras + t - 1] = reached ? phi * std::max(0.0, noise(rng)) : 0.0;
            }
        }
        TargetSpec target;
        target.region = 2, target.threshold = 40;
        rx.targets.push_back(target);
        OrganSpec organ;
        organ.region = 3, organ.threshold = 15;
        organ.maxDoses = {{0.1, 25}, {0, 60}};  // D10 <= 25 and the maximum dose <= 60 J/cm^2
        rx.organs.push_back(organ);
        rx.maxTotalEnergy = 1500;
    }
    PlanProblem problem(bool reduce = true) const {
        PlanProblem p{&mesh, &matrix, &sources, &rx, &names};
        p.reduceLp = reduce;
        return p;
    }
};

}  // namespace fm::planning
