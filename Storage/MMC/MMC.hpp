// MMC (mesh-based Monte Carlo) input files: node, elem and prop (.dat) text files.
#pragma once
#include <istream>
#include <string>

#include "Geometry/MaterialSet.hpp"
#include "Geometry/TetraMesh.hpp"

namespace fm {

// node: "1 Nn" then "i x y z" rows; elem: "k Ne" then "i n1 n2 n3 n4 region" rows.
TetraMesh readMMCMesh(const std::string& nodePath, const std::string& elemPath,
                      const MeshCheckOptions& check = {});
// prop: "1 Nm" then "i mu_a mu_s g n" rows (1/mm). MMC keeps the exterior index outside the
// file; it is set to exteriorN (default 1, air).
MaterialSet readMMCMaterials(const std::string& propPath, double exteriorN = 1.0);
// The same from streams (text in memory); the names stand for the files in error messages.
TetraMesh readMMCMesh(std::istream& node, const std::string& nodeName, std::istream& elem,
                      const std::string& elemName, const MeshCheckOptions& check = {});
MaterialSet readMMCMaterials(std::istream& prop, const std::string& propName, double exteriorN = 1.0);

}  // namespace fm
