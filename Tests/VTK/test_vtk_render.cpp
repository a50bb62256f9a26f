// SPDX-License-Identifier: GPL-3.0-or-later
// Off-screen rendering: the PNG is a real picture of the field (right size, many colours), for
// slices and surfaces; no display gives an error, not a crash; the fullmonte-vtk CLI converts
// fullmonte-run-style outputs. Registered under `xvfb-run -a`; skips without a display.
#include <vtkImageData.h>
#include <vtkCellData.h>
#include <vtkPNGReader.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>
#include <vtkXMLPolyDataReader.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>

#include "Storage/TIMOS/TIMOS.hpp"
#include "Storage/Text/TextFile.hpp"
#include "Storage/VTK/FluenceRenderer.hpp"
#include "Storage/VTK/VTKMeshReader.hpp"
#include "Tests/VTK/VTKTestUtil.hpp"

using namespace fm;
using fmtest::expectError;
using fmtest::scratch;

namespace {

bool haveDisplay() {
    const char* d = std::getenv("DISPLAY");
    if (d && *d) return true;
    BOOST_TEST_MESSAGE("SKIP: no X display (run under xvfb-run -a); rendering not tested");
    return false;
}

// A 20 mm cube with a spherical "tumour" (region 2) and a point-source-like field, NaN in a
// corner (as where mu_a = 0).
TetraMesh tumourBox() {
    return makeBoxMesh({-10, -10, -10}, {10, 10, 10}, 10, 10, 10, [](const Point3& c) {
        return c[0] * c[0] + c[1] * c[1] + c[2] * c[2] < 25 ? 2u : 1u;
    });
}

std::vector<double> pointSourceField(const TetraMesh& m) {
    std::vector<double> v(m.tetraCount() + 1, 0.0);
    for (uint32_t t = 1; t <= m.tetraCount(); ++t) {
        Point3 c{0, 0, 0};
        for (uint32_t p : m.tetra(t))
            for (int k = 0; k < 3; ++k) c[k] += 0.25 * m.point(p)[k];
        double r = normP(sub(c, {2, 1, 0}));
        v[t] = std::exp(-0.5 * r) / (r + 0.5);
        if (c[0] > 8 && c[1] > 8) v[t] = std::nan("");
    }
    return v;
}

// A folder as fullmonte-run leaves it (model.mesh beside fluence.txt and volume_energy.txt).
std::string runFolder(const TetraMesh& m, const std::string& name) {
    const std::string dir = scratch(name);
    std::filesystem::create_directories(dir);
    writeTIMOSMesh(dir + "/model.mesh", m);
    writeValues(dir + "/fluence.txt", pointSourceField(m));
    writeValues(dir + "/volume_energy.txt", std::vector<double>(m.tetraCount() + 1, 0.5));
    return dir;
}

struct Image {
    int width = 0, height = 0;
    size_t colours = 0;
};

Image readPng(const std::string& path) {
    auto r = vtkSmartPointer<vtkPNGReader>::New();
    BOOST_REQUIRE(r->CanReadFile(path.c_str()));
    r->SetFileName(path.c_str());
    r->Update();
    vtkImageData* img = r->GetOutput();
    int* dims = img->GetDimensions();
    Image out{dims[0], dims[1], 0};
    int nc = img->GetNumberOfScalarComponents();
    std::set<uint32_t> colours;
    auto* px = static_cast<unsigned char*>(img->GetScalarPointer());
    for (int i = 0; i < dims[0] * dims[1]; ++i) {
        const unsigned char* p = px + size_t(i) * nc;
        colours.insert(uint32_t(p[0]) << 16 | uint32_t(p[1]) << 8 | p[2]);
    }
    out.colours = colours.size();
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(vtk_render)

BOOST_AUTO_TEST_CASE(slice_png_is_a_real_picture) {
    if (!haveDisplay()) return;
    TetraMesh m = tumourBox();
    FluenceRenderer r;
    r.filename(scratch("slice.png"));
    r.mesh(m);
    r.data(pointSourceField(m), "Fluence (W/mm^2)");
    r.write();
    Image img = readPng(r.filename());
    BOOST_CHECK_EQUAL(img.width, 800);
    BOOST_CHECK_EQUAL(img.height, 600);
    BOOST_TEST_MESSAGE("slice: " << img.colours << " distinct colours, range " << r.usedMin() << ".." << r.usedMax());
    BOOST_CHECK_GT(img.colours, 50u);
    BOOST_CHECK_GT(r.usedMax(), r.usedMin());
}

BOOST_AUTO_TEST_CASE(oblique_slice_surface_and_size) {
    if (!haveDisplay()) return;
    TetraMesh m = tumourBox();
    std::vector<double> f = pointSourceField(m);
    FluenceRenderer r;
    r.mesh(m);
    r.data(f);
    r.size(320, 240);
    r.filename(scratch("oblique.png"));
    r.slice({1, 1, 1}, {1, 0.5, 0.2});
    r.write();
    Image a = readPng(r.filename());
    BOOST_CHECK_EQUAL(a.width, 320);
    BOOST_CHECK_EQUAL(a.height, 240);
    BOOST_CHECK_GT(a.colours, 20u);
    r.filename(scratch("surface.png"));
    r.surface();
    r.write();
    Image s = readPng(r.filename());
    BOOST_CHECK_EQUAL(s.width, 320);
    BOOST_CHECK_GT(s.colours, 20u);
    r.surface(2);  // the tumour's surface
    r.logScale(false);
    r.write();
    BOOST_CHECK_GT(readPng(r.filename()).colours, 20u);
}

BOOST_AUTO_TEST_CASE(bad_settings_are_errors) {
    TetraMesh m = tumourBox();
    FluenceRenderer r;
    r.filename(scratch("bad.png"));
    expectError<ParameterError>([&] { r.write(); }, {"no mesh"});
    r.mesh(m);
    expectError<ParameterError>([&] { r.write(); }, {"no data"});
    r.data(std::vector<double>(10, 1.0));
    expectError<ParameterError>([&] { r.write(); }, {"10 values", "6000 tetras"});
    expectError<ParameterError>([&] { r.slice({0, 0, 0}, {0, 0, 0}); }, {"normal"});
    expectError<ParameterError>([&] { r.size(5, 5); }, {"5x5"});
    r.data(std::vector<double>(m.tetraCount() + 1, 0.0));
    expectError<Error>([&] { r.write(); }, {"no finite positive"});
    if (!haveDisplay()) return;
    r.data(pointSourceField(m));
    r.slice({0, 0, 50}, {0, 0, 1});
    expectError<Error>([&] { r.write(); }, {"misses the mesh"});
}

BOOST_AUTO_TEST_CASE(no_display_is_an_error_not_a_crash) {
    TetraMesh m = tumourBox();
    FluenceRenderer r;
    r.filename(scratch("nodisplay.png"));
    r.mesh(m);
    r.data(pointSourceField(m));
    const char* d = std::getenv("DISPLAY");
    std::string saved = d ? d : "";
    ::unsetenv("DISPLAY");
    expectError<Error>([&] { r.write(); }, {"xvfb-run"});
    ::setenv("DISPLAY", ":98765", 1);  // set but unreachable
    expectError<Error>([&] { r.write(); }, {"xvfb-run"});
    if (saved.empty()) ::unsetenv("DISPLAY");
    else ::setenv("DISPLAY", saved.c_str(), 1);
}

BOOST_AUTO_TEST_CASE(cli_converts_fullmonte_run_outputs) {
    TetraMesh m = tumourBox();
    const std::string dir = runFolder(m, "run");
    std::string cmd = std::string(FM_VTK_CLI) + " --mesh " + dir + "/model.mesh --results " + dir + " --output " + dir +
                      "/out.vtu --surface " + dir + "/surface.vtp --comment 'test run'";
    bool png = std::getenv("DISPLAY") != nullptr;
    if (png) cmd += " --png " + dir + "/out.png --size 400x300";
    BOOST_TEST_MESSAGE("running " << cmd);
    BOOST_REQUIRE_EQUAL(std::system(cmd.c_str()), 0);
    VTKMeshReader r(dir + "/out.vtu");
    r.read();
    BOOST_CHECK_EQUAL(r.mesh().tetraCount(), m.tetraCount());
    BOOST_CHECK_EQUAL(r.cellArrayNames().size(), 3u);  // Region, Fluence, Absorbed energy
    BOOST_CHECK_CLOSE(r.cellData("Fluence (W/mm^2)")[7], pointSourceField(m)[7], 1e-5);
    BOOST_CHECK(std::filesystem::exists(dir + "/surface.vtp"));
    if (png) BOOST_CHECK_EQUAL(readPng(dir + "/out.png").width, 400);
    // A bad mesh path is reported, not a crash.
    std::string bad = std::string(FM_VTK_CLI) + " --mesh " + dir + "/nope.mesh --output " + dir + "/x.vtu 2>/dev/null";
    BOOST_CHECK_NE(std::system(bad.c_str()), 0);
    // A folder without results, and a picture's bad options, are refused before the mesh file is
    // written (no file that looks complete).
    std::filesystem::create_directories(dir + "/empty");
    const std::string y = dir + "/y.vtu";
    for (const std::string& opts : {" --results " + dir + "/empty", " --results " + dir + " --png " + dir + "/y.png --slice 0,0,nan,0,0,1",
                                    " --results " + dir + " --png " + dir + "/y.png --size 8x8"}) {
        std::string c = std::string(FM_VTK_CLI) + " --mesh " + dir + "/model.mesh --output " + y + opts + " 2>/dev/null";
        BOOST_CHECK_NE(std::system(c.c_str()), 0);
        BOOST_CHECK_MESSAGE(!std::filesystem::exists(y), "written despite the error: " << opts);
    }
}

// The array names fullmonte-vtk writes are the ones docs/USER_GUIDE.md ("VTK and ParaView") lists,
// with the unit of --unit: Fluence and Absorbed energy on the mesh, Exit energy and Exit fluence
// on the surface.
BOOST_AUTO_TEST_CASE(cli_array_names_are_the_documented_ones) {
    TetraMesh m = tumourBox();
    const std::string dir = runFolder(m, "names");
    {
        std::ofstream f(dir + "/surface_exit.txt");
        for (uint32_t id : m.boundaryFaces()) {
            const auto& F = m.face(id);
            f << id << ' ' << F.points[0] << ' ' << F.points[1] << ' ' << F.points[2] << " 0.25 " << id << '\n';
        }
    }
    std::string cmd = std::string(FM_VTK_CLI) + " --mesh " + dir + "/model.mesh --results " + dir + " --output " + dir +
                      "/out.vtu --surface " + dir + "/surface.vtp --unit J";
    BOOST_REQUIRE_EQUAL(std::system(cmd.c_str()), 0);
    VTKMeshReader r(dir + "/out.vtu");
    r.read();
    std::vector<std::string> names = r.cellArrayNames();
    std::sort(names.begin(), names.end());
    BOOST_CHECK((names == std::vector<std::string>{"Absorbed energy (packet weight)", "Fluence (J/mm^2)", "Region"}));
    auto sr = vtkSmartPointer<vtkXMLPolyDataReader>::New();
    sr->SetFileName((dir + "/surface.vtp").c_str());
    sr->Update();
    vtkCellData* cd = sr->GetOutput()->GetCellData();
    BOOST_CHECK(cd->GetArray("Exit energy (packet weight)"));
    vtkDataArray* exitFluence = cd->GetArray("Exit fluence (J/mm^2)");
    vtkDataArray* ids = cd->GetArray("FaceId");
    BOOST_REQUIRE(exitFluence && ids && sr->GetOutput()->GetNumberOfCells() > 0);
    BOOST_CHECK_EQUAL(exitFluence->GetComponent(0, 0), ids->GetComponent(0, 0));
}

BOOST_AUTO_TEST_SUITE_END()
