// SPDX-License-Identifier: GPL-3.0-or-later
// VTK readers and writers: exact round trips of meshes, regions and named data (NaN kept) in
// both formats, surfaces and traces read back with VTK's own readers, and errors that name the
// file for every kind of broken input.
#include <vtkCellData.h>
#include <vtkDataArray.h>
#include <vtkFieldData.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPolyDataReader.h>
#include <vtkSmartPointer.h>
#include <vtkStringArray.h>
#include <vtkXMLPolyDataReader.h>
#include <vtkXMLUnstructuredGridReader.h>
#include <vtkUnstructuredGrid.h>
#include <vtkUnstructuredGridWriter.h>

#include <iterator>
#include <limits>

#include "Storage/VTK/VTKMeshReader.hpp"
#include "Storage/VTK/VTKMeshWriter.hpp"
#include "Storage/VTK/VTKSurfaceWriter.hpp"
#include "Storage/VTK/VTKTraceWriter.hpp"
#include "Tests/VTK/VTKTestUtil.hpp"

using namespace fm;
using fmtest::expectError;
using fmtest::scratch;
using fmtest::writeText;
namespace fs = std::filesystem;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

void checkSameMesh(const TetraMesh& a, const TetraMesh& b) {
    BOOST_REQUIRE_EQUAL(a.pointCount(), b.pointCount());
    BOOST_REQUIRE_EQUAL(a.tetraCount(), b.tetraCount());
    for (uint32_t i = 1; i <= a.pointCount(); ++i)
        for (int k = 0; k < 3; ++k) BOOST_REQUIRE_EQUAL(a.point(i)[k], b.point(i)[k]);
    for (uint32_t t = 1; t <= a.tetraCount(); ++t) {
        for (int k = 0; k < 4; ++k) BOOST_REQUIRE_EQUAL(a.tetra(t)[k], b.tetra(t)[k]);
        BOOST_REQUIRE_EQUAL(a.region(t), b.region(t));
    }
    BOOST_CHECK_EQUAL(a.regionCount(), b.regionCount());
    BOOST_CHECK_EQUAL(a.faceCount(), b.faceCount());
}

// A field with the awkward values a fluence map has: NaN (mu_a = 0), zero, tiny and huge.
std::vector<double> awkwardField(const TetraMesh& m) {
    std::vector<double> v(m.tetraCount() + 1, 0.0);
    for (uint32_t t = 1; t <= m.tetraCount(); ++t) v[t] = 1.0 / (3.0 * t) * std::pow(10.0, double(t % 7) - 3);
    v[2] = kNaN;
    v[5] = 0.0;
    v[7] = 1e-300;
    v[11] = 1e300;
    return v;
}

void checkSameValues(const std::vector<double>& a, const std::vector<double>& b) {
    BOOST_REQUIRE_EQUAL(a.size(), b.size());
    for (size_t i = 1; i < a.size(); ++i) {
        if (std::isnan(a[i])) BOOST_CHECK_MESSAGE(std::isnan(b[i]), "value " << i << " lost its NaN");
        else BOOST_CHECK_EQUAL(a[i], b[i]);
    }
}

std::string writeMesh(const TetraMesh& m, const std::string& name) {
    VTKMeshWriter w(scratch(name));
    w.mesh(m);
    w.write();
    return w.filename();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(vtk_io)

BOOST_AUTO_TEST_CASE(mesh_round_trip_is_exact_in_both_formats) {
    TetraMesh m = fmtest::threeRegionBox(2);
    for (std::string ext : {".vtu", ".vtk"}) {
        BOOST_TEST_CONTEXT("format " << ext) {
            std::string path = writeMesh(m, "roundtrip" + ext);
            BOOST_CHECK(!fs::exists(path + ".partial"));
            VTKMeshReader r(path);
            r.read();
            BOOST_CHECK_EQUAL(r.regionArrayUsed(), "Region");
            checkSameMesh(m, r.mesh());
            TetraMesh taken = r.takeMesh();
            BOOST_CHECK_EQUAL(taken.tetraCount(), m.tetraCount());
            BOOST_CHECK_THROW(r.mesh(), Error);
        }
    }
}

BOOST_AUTO_TEST_CASE(data_arrays_keep_names_values_and_nan) {
    TetraMesh m = fmtest::threeRegionBox();
    std::vector<double> fluence = awkwardField(m), energy(m.tetraCount() + 1);
    for (uint32_t t = 1; t <= m.tetraCount(); ++t) energy[t] = t * 0.5;
    for (std::string ext : {".vtu", ".vtk"}) {
        BOOST_TEST_CONTEXT("format " << ext) {
            VTKMeshWriter w(scratch("data" + ext));
            w.addData("Fluence (W/mm^2)", fluence);
            w.addData("Energy (J)", std::vector<double>(energy.begin() + 1, energy.end()));  // no dummy
            w.addHeaderComment("seed 7, 1e6 packets");
            w.mesh(m);
            w.write();
            VTKMeshReader r(w.filename());
            r.read();
            std::vector<std::string> names = r.cellArrayNames();
            BOOST_CHECK_EQUAL(names.size(), 3u);
            BOOST_CHECK(std::find(names.begin(), names.end(), "Fluence (W/mm^2)") != names.end());
            checkSameValues(fluence, r.cellData("Fluence (W/mm^2)"));
            checkSameValues(energy, r.cellData("Energy (J)"));
            expectError<Error>([&] { r.cellData("Dose"); }, {"Dose", "Fluence (W/mm^2)"});
        }
    }
}

BOOST_AUTO_TEST_CASE(comments_are_field_data) {
    TetraMesh m = fmtest::threeRegionBox();
    VTKMeshWriter w(scratch("comment.vtu"));
    w.mesh(m);
    w.addHeaderComment("first");
    w.addHeaderComment("second");
    w.write();
    auto r = vtkSmartPointer<vtkXMLUnstructuredGridReader>::New();
    r->SetFileName(w.filename().c_str());
    r->Update();
    auto* c = vtkStringArray::SafeDownCast(r->GetOutput()->GetFieldData()->GetAbstractArray("Comment"));
    BOOST_REQUIRE(c);
    BOOST_CHECK_EQUAL(c->GetNumberOfValues(), 2);
    BOOST_CHECK_EQUAL(c->GetValue(1), "second");
}

BOOST_AUTO_TEST_CASE(writer_rejects_bad_settings_without_leaving_files) {
    TetraMesh m = fmtest::threeRegionBox();
    VTKMeshWriter w(scratch("bad.vtu"));
    expectError<ParameterError>([&] { w.write(); }, {"bad.vtu", "no mesh"});
    w.mesh(m);
    w.addData("Fluence", std::vector<double>(5, 1.0));
    expectError<ParameterError>([&] { w.write(); }, {"Fluence", "5 values", "72 tetras"});
    BOOST_CHECK(!fs::exists(w.filename()));
    w.clearData();
    expectError<ParameterError>([&] { w.addData("Region", std::vector<double>(73, 1.0)); }, {"Region"});
    w.filename(scratch("bad.txt"));
    expectError<ParameterError>([&] { w.write(); }, {"bad.txt", ".vtu"});
    w.filename(scratch("no/such/dir/out.vtu"));
    expectError<Error>([&] { w.write(); }, {"no/such/dir/out.vtu"});
    w.filename(scratch("replaced.vtk"));
    w.addData("A", std::vector<double>(73, 1.0));
    w.addData("A", std::vector<double>(73, 2.0));  // same name: replaces
    w.write();
    VTKMeshReader r(w.filename());
    r.read();
    BOOST_CHECK_EQUAL(r.cellArrayNames().size(), 2u);
    BOOST_CHECK_EQUAL(r.cellData("A")[9], 2.0);
}

namespace {
// FullMonte 2018 wrote ASCII legacy grids with the labels in "Tissue Type".
std::string legacyTwoTetras(const std::string& cellData, const std::string& extraCell = "") {
    bool tri = !extraCell.empty();
    return std::string("# vtk DataFile Version 3.0\nold FullMonte\nASCII\nDATASET UNSTRUCTURED_GRID\n") +
           "POINTS 5 float\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n1 1 1\n" +
           (tri ? "CELLS 3 14\n" : "CELLS 2 10\n") + "4 0 1 2 3\n4 1 2 3 4\n" + extraCell +
           (tri ? "CELL_TYPES 3\n10\n10\n5\n" : "CELL_TYPES 2\n10\n10\n") + cellData;
}
}  // namespace

BOOST_AUTO_TEST_CASE(region_array_is_found_or_named) {
    std::string tissue = writeText("tissue.vtk", legacyTwoTetras(
        "CELL_DATA 2\nSCALARS Tissue%20Type int 1\nLOOKUP_TABLE default\n4 9\n"
        "SCALARS Label float 1\nLOOKUP_TABLE default\n2 3\n"));
    VTKMeshReader r(tissue);
    r.read();
    BOOST_CHECK_EQUAL(r.regionArrayUsed(), "Tissue Type");
    BOOST_CHECK_EQUAL(r.mesh().region(1), 4u);
    BOOST_CHECK_EQUAL(r.mesh().region(2), 9u);
    r.regionArrayName("Label");  // a float array is fine when named, if its values are whole
    r.read();
    BOOST_CHECK_EQUAL(r.mesh().region(2), 3u);
    r.regionArrayName("Material");
    expectError<FormatError>([&] { r.read(); }, {tissue, "Material", "Tissue Type"});

    // No labels: an error listing the arrays (never a silent one-region mesh), unless asked for.
    std::string bare = writeText("bare.vtk", legacyTwoTetras(""));
    VTKMeshReader b(bare);
    expectError<FormatError>([&] { b.read(); }, {bare, "no region cell array found (cell arrays: none)", "--region-array"});
    b.singleRegion(true);
    b.read();
    BOOST_CHECK_EQUAL(b.regionArrayUsed(), "");
    BOOST_CHECK_EQUAL(b.mesh().region(1), 1u);
    BOOST_CHECK_EQUAL(b.mesh().region(2), 1u);

    std::string zero = writeText("zero.vtk", legacyTwoTetras("CELL_DATA 2\nSCALARS Region int 1\nLOOKUP_TABLE default\n1 0\n"));
    expectError<FormatError>([&] { VTKMeshReader z(zero); z.read(); }, {zero, "cell 1", "region 0"});
    std::string half = writeText("half.vtk", legacyTwoTetras("CELL_DATA 2\nSCALARS Region float 1\nLOOKUP_TABLE default\n1 1.5\n"));
    expectError<FormatError>([&] { VTKMeshReader z(half); z.read(); }, {half, "region 1.5"});
}

// What other tools call the label array (meshio: gmsh:physical, medit:ref; VTK: CellEntityIds;
// iso2mesh and others: Material, Label(s)), as int or float, is found by name, whatever its case.
BOOST_AUTO_TEST_CASE(region_arrays_by_their_usual_names) {
    struct Case {
        const char* name;
        const char* type;
    };
    for (Case c : {Case{"gmsh:physical", "int"}, Case{"medit:ref", "int"}, Case{"CellEntityIds", "long"},
                   Case{"material", "float"}, Case{"Labels", "double"}, Case{"tissue_type", "int"},
                   Case{"REGION", "unsigned_short"}}) {
        std::string f = writeText("named.vtk", legacyTwoTetras(
            std::string("CELL_DATA 2\nSCALARS Fluence float 1\nLOOKUP_TABLE default\n0.5 0.25\n") +
            "SCALARS " + c.name + " " + c.type + " 1\nLOOKUP_TABLE default\n3 7\n"));
        VTKMeshReader r(f);
        r.read();
        BOOST_CHECK_EQUAL(r.regionArrayUsed(), c.name);
        BOOST_CHECK_EQUAL(r.mesh().region(1), 3u);
        BOOST_CHECK_EQUAL(r.mesh().region(2), 7u);
    }
    // Float labels that are not whole numbers, and a file whose arrays are none of the names.
    std::string frac = writeText("frac.vtk", legacyTwoTetras("CELL_DATA 2\nSCALARS Material float 1\nLOOKUP_TABLE default\n1 2.5\n"));
    expectError<FormatError>([&] { VTKMeshReader z(frac); z.read(); }, {frac, "cell 1", "region 2.5", "\"Material\""});
    std::string other = writeText("other.vtk", legacyTwoTetras(
        "CELL_DATA 2\nSCALARS Fluence float 1\nLOOKUP_TABLE default\n0.5 0.25\nSCALARS Organ int 1\nLOOKUP_TABLE default\n1 2\n"));
    VTKMeshReader o(other);
    expectError<FormatError>([&] { o.read(); }, {other, "no region cell array found", "\"Fluence\", \"Organ\""});
    o.regionArrayName("Organ");
    o.read();
    BOOST_CHECK_EQUAL(o.mesh().region(2), 2u);
}

BOOST_AUTO_TEST_CASE(non_tetra_cells_are_named) {
    std::string f = writeText("triangle.vtk", legacyTwoTetras("", "3 0 1 2\n"));
    expectError<FormatError>([&] { VTKMeshReader r(f); r.read(); }, {f, "cell 2", "vtkTriangle", "VTK_TETRA"});
}

BOOST_AUTO_TEST_CASE(malformed_files_give_errors_naming_the_file) {
    TetraMesh m = fmtest::threeRegionBox(2);
    std::vector<std::string> bad;
    bad.push_back(writeText("empty.vtu", ""));
    bad.push_back(writeText("garbage.vtk", "hello, this is not a mesh\n1 2 3\n"));
    bad.push_back(writeText("garbage.vtu", std::string("\x89PNG\r\n\x1a\n\0\0\0binary", 20)));
    bad.push_back(writeText("broken.vtu", "<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\" version=\"1.0\">\n<Unstruc"));
    bad.push_back(writeText("header_only.vtk", "# vtk DataFile Version 3.0\nx\nASCII\nDATASET UNSTRUCTURED_GRID\n"));
    bad.push_back(writeText("short_points.vtk", "# vtk DataFile Version 3.0\nx\nASCII\nDATASET UNSTRUCTURED_GRID\n"
                                                "POINTS 5 float\n0 0 0\n1 0 0\n"));
    bad.push_back(writeText("bad_index.vtk", "# vtk DataFile Version 3.0\nx\nASCII\nDATASET UNSTRUCTURED_GRID\n"
                                             "POINTS 4 float\n0 0 0\n1 0 0\n0 1 0\n0 0 1\nCELLS 1 5\n4 0 1 2 7\n"
                                             "CELL_TYPES 1\n10\n"));
    bad.push_back(scratch("does_not_exist.vtu"));
    for (std::string ext : {".vtu", ".vtk"}) {
        std::string full = writeMesh(m, "full" + ext);
        std::ifstream in(full, std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        bad.push_back(writeText("truncated" + ext, bytes.substr(0, bytes.size() / 2)));
        bad.push_back(writeText("truncated_end" + ext, bytes.substr(0, bytes.size() - 40)));
    }
    VTKSurfaceWriter s(scratch("surface_not_grid.vtp"));
    s.mesh(m);
    s.write();
    bad.push_back(s.filename());
    s.filename(scratch("surface_not_grid.vtk"));
    s.write();
    bad.push_back(s.filename());
    for (const auto& f : bad)
        BOOST_TEST_CONTEXT(f) { expectError<FormatError>([&] { VTKMeshReader r(f); r.read(); }, {f}); }
}

namespace {
// The pre-5.0 legacy layout (VTK <= 8, FullMonte 2018, gmsh, meshio), written by VTK itself.
std::string writeOldLegacy(const std::string& vtu, const std::string& name, bool binary) {
    auto r = vtkSmartPointer<vtkXMLUnstructuredGridReader>::New();
    r->SetFileName(vtu.c_str());
    r->Update();
    auto w = vtkSmartPointer<vtkUnstructuredGridWriter>::New();
    w->SetInputData(r->GetOutput());
    w->SetFileVersion(vtkUnstructuredGridWriter::VTK_LEGACY_READER_VERSION_4_2);
    if (binary) w->SetFileTypeToBinary();
    std::string path = scratch(name);
    w->SetFileName(path.c_str());
    w->Write();
    return path;
}
std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
}  // namespace

// VTK 9.1 overruns its buffer on such files when the cell counts lie; ours must say so instead.
BOOST_AUTO_TEST_CASE(old_legacy_layout_reads_and_lying_cell_counts_are_caught) {
    TetraMesh m = fmtest::threeRegionBox();
    std::string vtu = writeMesh(m, "old.vtu");
    for (bool binary : {false, true}) {
        BOOST_TEST_CONTEXT((binary ? "binary" : "ascii")) {
            std::string path = writeOldLegacy(vtu, binary ? "old_bin.vtk" : "old_ascii.vtk", binary);
            BOOST_REQUIRE(slurp(path).find("Version 4.2") != std::string::npos);
            VTKMeshReader r(path);
            r.read();
            checkSameMesh(m, r.mesh());
            std::string text = slurp(path);
            size_t cells = text.find("\nCELLS ");
            BOOST_REQUIRE(cells != std::string::npos);
            size_t data = text.find('\n', cells + 1) + 1;
            std::string lying = text;
            if (binary) lying[data] = '\x7f';  // first cell's point count, big-endian: 4 -> 2^31-ish
            else lying.replace(data, 1, "9");   // "4 a b c d" -> "9 a b c d"
            std::string bad = writeText(binary ? "lying_bin.vtk" : "lying_ascii.vtk", lying);
            expectError<FormatError>([&] { VTKMeshReader b(bad); b.read(); }, {bad, "CELLS"});
            std::string shortTypes = text;
            size_t types = shortTypes.find("CELL_TYPES 72");
            BOOST_REQUIRE(types != std::string::npos);
            shortTypes.replace(types, 13, "CELL_TYPES 71");
            std::string bad2 = writeText(binary ? "types_bin.vtk" : "types_ascii.vtk", shortTypes);
            expectError<FormatError>([&] { VTKMeshReader b(bad2); b.read(); }, {bad2, "CELL_TYPES has 71"});
        }
    }
}

BOOST_AUTO_TEST_CASE(surface_writer_boundary_and_region_faces) {
    TetraMesh m = fmtest::threeRegionBox();
    std::vector<double> faceValue(m.faceCount() + 1, 0.0);
    for (uint32_t f = 1; f <= m.faceCount(); ++f) faceValue[f] = f + 0.25;
    faceValue[m.boundaryFaces()[3]] = kNaN;
    for (uint32_t region : {0u, 2u}) {
        BOOST_TEST_CONTEXT("region " << region) {
            VTKSurfaceWriter w(scratch("surface" + std::to_string(region) + ".vtp"));
            w.mesh(m);
            w.region(region);
            w.addData("Exit fluence (W/mm^2)", faceValue);
            w.write();
            size_t expected = region ? m.regionBoundary(region).size() : m.boundaryFaces().size();
            BOOST_CHECK_EQUAL(w.faceCount(), expected);
            auto r = vtkSmartPointer<vtkXMLPolyDataReader>::New();
            r->SetFileName(w.filename().c_str());
            r->Update();
            vtkPolyData* pd = r->GetOutput();
            BOOST_REQUIRE_EQUAL(pd->GetNumberOfPolys(), vtkIdType(expected));
            vtkDataArray* ids = pd->GetCellData()->GetArray("FaceId");
            vtkDataArray* vals = pd->GetCellData()->GetArray("Exit fluence (W/mm^2)");
            vtkDataArray* regs = pd->GetCellData()->GetArray("Region");
            BOOST_REQUIRE(ids && vals && regs);
            for (vtkIdType c = 0; c < pd->GetNumberOfCells(); ++c) {
                auto f = uint32_t(ids->GetComponent(c, 0));
                double v = vals->GetComponent(c, 0);
                BOOST_CHECK(std::isnan(faceValue[f]) ? std::isnan(v) : v == faceValue[f]);
                if (region) BOOST_CHECK_EQUAL(regs->GetComponent(c, 0), double(region));
            }
        }
    }
    // Region 2 is the slab 1 < x < 2: 2 triangles per unit square of its surface, 2*(4+4+2+2+2+2).
    BOOST_CHECK_EQUAL(m.regionBoundary(2).size(), 32u);
    VTKSurfaceWriter none(scratch("none.vtp"));
    none.mesh(m);
    none.region(9);
    expectError<ParameterError>([&] { none.write(); }, {"region 9"});
}

BOOST_AUTO_TEST_CASE(boundary_triangles_face_outwards) {
    TetraMesh m = fmtest::threeRegionBox();
    VTKSurfaceWriter w(scratch("normals.vtk"));
    w.mesh(m);
    w.write();
    auto r = vtkSmartPointer<vtkPolyDataReader>::New();
    r->SetFileName(w.filename().c_str());
    r->Update();
    vtkPolyData* pd = r->GetOutput();
    BOOST_REQUIRE_EQUAL(pd->GetNumberOfPolys(), vtkIdType(m.boundaryFaces().size()));
    Point3 centre{1.5, 1, 1};
    for (vtkIdType c = 0; c < pd->GetNumberOfCells(); ++c) {
        vtkIdType n;
        const vtkIdType* ids;
        pd->GetCellPoints(c, n, ids);
        Point3 p[3];
        for (int k = 0; k < 3; ++k) pd->GetPoint(ids[k], p[k].data());
        Point3 normal = crossP(sub(p[1], p[0]), sub(p[2], p[0]));
        BOOST_CHECK_GT(dotP(normal, sub(p[0], centre)), 0.0);
    }
}

BOOST_AUTO_TEST_CASE(traces_are_polylines_with_weights) {
    VTKTraceWriter w(scratch("traces.vtp"));
    w.addTrace({{0, 0, 0}, {1, 0, 0}, {1, 1, 0}}, {1.0, 0.9, 0.5});
    w.addTrace({{0, 0, 1}, {0, 0, 2}}, {1.0, 0.25});
    expectError<ParameterError>([&] { w.addTrace({{0, 0, 0}}, {1.0, 2.0}); }, {"trace 2", "weights"});
    BOOST_CHECK_EQUAL(w.traceCount(), 2u);
    w.write();
    auto r = vtkSmartPointer<vtkXMLPolyDataReader>::New();
    r->SetFileName(w.filename().c_str());
    r->Update();
    vtkPolyData* pd = r->GetOutput();
    BOOST_CHECK_EQUAL(pd->GetNumberOfLines(), 2);
    BOOST_CHECK_EQUAL(pd->GetNumberOfPoints(), 5);
    vtkDataArray* wt = pd->GetPointData()->GetArray("Weight");
    BOOST_REQUIRE(wt);
    BOOST_CHECK_EQUAL(wt->GetComponent(2, 0), 0.5);
    BOOST_CHECK_EQUAL(wt->GetComponent(4, 0), 0.25);
    w.filename(scratch("traces.vtk"));
    w.write();
    BOOST_CHECK(fs::file_size(w.filename()) > 100);
}

// Legacy .vtk in file version 4.2 (VTK 8-era readers, ParaView < 5.9), from every writer: the
// header says so, cells are the 4.2 layout (counts inline, no OFFSETS/CONNECTIVITY) and the files
// read back exactly. The default stays VTK 9's 5.1.
std::string firstLine(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::string l;
    std::getline(in, l);
    return l;
}

bool fileHas(const std::string& path, const std::string& word) {
    std::ifstream in(path, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return text.find(word) != std::string::npos;
}

BOOST_AUTO_TEST_CASE(legacy_version_4_2_for_older_tools) {
    TetraMesh m = fmtest::threeRegionBox(2);
    std::vector<double> fluence = awkwardField(m);
    for (std::string version : {"4.2", "5.1"}) {
        BOOST_TEST_CONTEXT("version " << version) {
            VTKMeshWriter w(scratch("legacy" + version + ".vtk"));
            w.mesh(m);
            w.addData("Fluence (W/mm^2)", fluence);
            w.legacyVersion(version);
            BOOST_CHECK_EQUAL(w.legacyVersion(), version);
            w.write();
            BOOST_CHECK_EQUAL(firstLine(w.filename()), "# vtk DataFile Version " + version);
            BOOST_CHECK_EQUAL(fileHas(w.filename(), "OFFSETS"), version == "5.1");
            VTKMeshReader r(w.filename());
            r.read();
            checkSameMesh(m, r.mesh());
            checkSameValues(fluence, r.cellData("Fluence (W/mm^2)"));

            VTKSurfaceWriter s(scratch("legacy_surface" + version + ".vtk"));
            s.mesh(m);
            s.legacyVersion(version);
            s.write();
            BOOST_CHECK_EQUAL(firstLine(s.filename()), "# vtk DataFile Version " + version);
            auto pr = vtkSmartPointer<vtkPolyDataReader>::New();
            pr->SetFileName(s.filename().c_str());
            pr->Update();
            BOOST_CHECK_EQUAL(size_t(pr->GetOutput()->GetNumberOfPolys()), m.boundaryFaces().size());

            VTKTraceWriter t(scratch("legacy_traces" + version + ".vtk"));
            t.addTrace({{0, 0, 0}, {1, 0, 0}, {1, 1, 0}}, {1.0, 0.9, 0.5});
            t.legacyVersion(version);
            t.write();
            BOOST_CHECK_EQUAL(firstLine(t.filename()), "# vtk DataFile Version " + version);
            auto tr = vtkSmartPointer<vtkPolyDataReader>::New();
            tr->SetFileName(t.filename().c_str());
            tr->Update();
            BOOST_CHECK_EQUAL(tr->GetOutput()->GetNumberOfLines(), 1);
            BOOST_CHECK_EQUAL(tr->GetOutput()->GetPointData()->GetArray("Weight")->GetComponent(2, 0), 0.5);
        }
    }
    BOOST_CHECK_EQUAL(firstLine(writeMesh(m, "default.vtk")), "# vtk DataFile Version 5.1");
    VTKMeshWriter w;
    expectError<ParameterError>([&] { w.legacyVersion("4.0"); }, {"VTKMeshWriter legacyVersion", "'4.0'", "4.2 or 5.1"});
    VTKSurfaceWriter s;
    expectError<ParameterError>([&] { s.legacyVersion("3"); }, {"VTKSurfaceWriter legacyVersion", "'3'"});
    VTKTraceWriter t;
    expectError<ParameterError>([&] { t.legacyVersion(""); }, {"VTKTraceWriter legacyVersion"});
}

BOOST_AUTO_TEST_SUITE_END()
