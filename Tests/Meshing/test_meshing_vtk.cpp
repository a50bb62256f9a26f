// SPDX-License-Identifier: GPL-3.0-or-later
// The mesher's VTK inputs (VTK builds): a .vti label image with a flipped axis lands at its
// physical position; a .vtp closed surface meshes to its volume.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "Common/Errors.hpp"
#include "Geometry/Meshing/Mesher.hpp"
#include "Storage/VTK/VTKImageReader.hpp"

using namespace fm;

namespace {

std::string tempPath(const std::string& name) {
    return (std::filesystem::temp_directory_path() / ("fm_meshing_vtk_" + std::to_string(::getpid()) + "_" + name)).string();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(meshing_vtk)

// 2 x 3 x 1 voxels, y axis pointing down (-y): stored row j sits at y = 2 - 0.25 j.
BOOST_AUTO_TEST_CASE(vti_direction_honoured) {
    std::string path = tempPath("img.vti");
    {
        std::ofstream f(path);
        f << "<?xml version=\"1.0\"?>\n<VTKFile type=\"ImageData\" version=\"1.0\" byte_order=\"LittleEndian\">\n"
          << "<ImageData WholeExtent=\"0 1 0 2 0 0\" Origin=\"1 2 3\" Spacing=\"0.5 0.25 2\" Direction=\"1 0 0 0 -1 0 0 0 1\">\n"
          << "<Piece Extent=\"0 1 0 2 0 0\"><PointData Scalars=\"labels\">\n"
          << "<DataArray type=\"UInt8\" Name=\"labels\" format=\"ascii\">1 2 3 4 5 6</DataArray>\n"
          << "</PointData><CellData></CellData></Piece></ImageData></VTKFile>\n";
    }
    LabelImage im = readVTKLabelImage(path);
    BOOST_CHECK((im.origin == Point3{1, 1.5, 3}));
    BOOST_CHECK((im.dims == std::array<size_t, 3>{2, 3, 1}));
    BOOST_CHECK_EQUAL(im.at(0, 0, 0), 5);
    BOOST_CHECK_EQUAL(im.at(1, 2, 0), 2);
    {
        std::ofstream f(path);
        f << "not xml\n";
    }
    BOOST_CHECK_THROW(readVTKLabelImage(path), FormatError);
    std::filesystem::remove(path);
    BOOST_CHECK_THROW(readVTKLabelImage(path), Error);
}

// A closed tetrahedron surface (outward triangles) of volume 36 (edges 6 along the axes).
BOOST_AUTO_TEST_CASE(vtp_surface_meshes) {
    std::string path = tempPath("tet.vtp");
    {
        std::ofstream f(path);
        f << "<?xml version=\"1.0\"?>\n<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\">\n"
          << "<PolyData><Piece NumberOfPoints=\"4\" NumberOfPolys=\"4\">\n"
          << "<Points><DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"ascii\">0 0 0 6 0 0 0 6 0 0 0 6</DataArray></Points>\n"
          << "<Polys><DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">0 2 1 0 1 3 0 3 2 1 2 3</DataArray>\n"
          << "<DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">3 6 9 12</DataArray></Polys>\n"
          << "</Piece></PolyData></VTKFile>\n";
    }
    TriangleSurface s = readVTKSurface(path);
    std::filesystem::remove(path);
    BOOST_REQUIRE_EQUAL(s.triangles.size(), 4u);
    MeshingOptions o;
    o.facetSize = 1;
    o.cellSize = 1.5;
    o.seed = 1;
    TetraMesh m = meshSurfaces({{path, 4, s}}, o);
    BOOST_CHECK_CLOSE(m.regionVolume(4), 36, 0.5);
}

// The same tetrahedron as a labelled surface: a "Labels" cell array (behind, in front) = (5, 0).
BOOST_AUTO_TEST_CASE(vtp_labelled_surface) {
    std::string path = tempPath("labelled.vtp");
    {
        std::ofstream f(path);
        f << "<?xml version=\"1.0\"?>\n<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\">\n"
          << "<PolyData><Piece NumberOfPoints=\"4\" NumberOfPolys=\"4\">\n"
          << "<Points><DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"ascii\">0 0 0 6 0 0 0 6 0 0 0 6</DataArray></Points>\n"
          << "<CellData><DataArray type=\"Int32\" Name=\"Labels\" NumberOfComponents=\"2\" format=\"ascii\">5 0 5 0 5 0 5 0</DataArray></CellData>\n"
          << "<Polys><DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">0 2 1 0 1 3 0 3 2 1 2 3</DataArray>\n"
          << "<DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">3 6 9 12</DataArray></Polys>\n"
          << "</Piece></PolyData></VTKFile>\n";
    }
    TriangleSurface s = readVTKSurface(path);
    std::filesystem::remove(path);
    BOOST_REQUIRE_EQUAL(s.sides.size(), 4u);
    BOOST_CHECK_EQUAL(s.sides[2][0], 5);
    MeshingOptions o;
    o.facetSize = 1;
    o.cellSize = 1.5;
    o.seed = 1;
    TetraMesh m = meshSurfaces({{path, 0, s}}, o);
    BOOST_CHECK_CLOSE(m.regionVolume(5), 36, 0.5);
}

BOOST_AUTO_TEST_SUITE_END()
