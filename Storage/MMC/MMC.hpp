// SPDX-License-Identifier: GPL-3.0-or-later
// MMC (mesh-based Monte Carlo) input files: node, elem and prop (.dat) text files.
#pragma once
#include <istream>
#include <string>
#include <vector>

#include "Geometry/MaterialSet.hpp"
#include "Geometry/TetraMesh.hpp"

namespace fm {

// node: "1 Nn" then "i x y z" rows; elem: "k Ne" then "i n1 n2 n3 n4 region" rows. Labels 0
// (MMC's background) and -1 (wide-field source elements, background once a photon is launched)
// are left out of the mesh: in MMC a photon that crosses from tissue into them has left the
// domain, Fresnel-reflected there with the exterior's index as at the mesh surface, which is what
// FullMonte's exterior does. The tissue elements keep their order (tetra ids then skip the
// background's); tetraOfElement, when given, receives for each MMC element id (1-based) its
// tetra, 0 for background. Label -2 (external detector elements) is refused.
TetraMesh readMMCMesh(const std::string& nodePath, const std::string& elemPath,
                      const MeshCheckOptions& check = {}, std::vector<uint32_t>* tetraOfElement = nullptr);
// prop: "1 Nm" then "i mu_a mu_s g n" rows (1/mm). MMC keeps the exterior index outside the
// file; it is set to exteriorN (default 1, air). g = 1 is MMC's non-scattering medium (no
// deflection): it is read as mu_s = 0, g = 0, which gives the same transport and absorption.
MaterialSet readMMCMaterials(const std::string& propPath, double exteriorN = 1.0);

// Shared by the MMC readers (files, .inp, JSON): "" when `label` is a region FullMonte can use
// (>= 1) or MMC's background (0, -1), else why not, in MMC's terms.
std::string mmcLabelProblem(long long label);
// Labels 0 and -1: MMC's background elements, left out of the mesh.
bool mmcBackgroundLabel(long long label);
// A medium as MMC gives it (g = 1: non-scattering), checked; `problem` is set (and the result
// meaningless) when a value is out of range.
Material mmcMedium(double mu_a, double mu_s, double g, double n, std::string& problem);
// The same from streams (text in memory); the names stand for the files in error messages.
TetraMesh readMMCMesh(std::istream& node, const std::string& nodeName, std::istream& elem,
                      const std::string& elemName, const MeshCheckOptions& check = {});
MaterialSet readMMCMaterials(std::istream& prop, const std::string& propName, double exteriorN = 1.0);

// MMC's files for mesh id `id` in folder `dir`: node_<id>.dat, elem_<id>.dat (FullMonte's
// numbering and regions, 1-based as MMC's, each tetra in MMC's orientation), velem_<id>.dat
// (the tetras' volumes, which MMC then takes instead of computing them) and prop_<id>.dat
// (media 1..N; a medium with mu_s = 0 is written as MMC's non-scattering g = 1). MMC takes the exterior's refractive index
// from its own input (-n, Forward.N0 or Media[0]), not from these files.
void writeMMCMesh(const std::string& dir, const std::string& id, const TetraMesh& mesh);
void writeMMCMaterials(const std::string& dir, const std::string& id, const MaterialSet& mats);

}  // namespace fm
