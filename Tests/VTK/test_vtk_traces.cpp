// SPDX-License-Identifier: GPL-3.0-or-later
// Packet traces as VTK polylines and the in-memory datasets behind the Tcl package's FullMonte
// 2018 vtk* commands, read back with VTK's own readers.
#include <vtkCellData.h>
#include <vtkDataArray.h>
#include <vtkIdList.h>
#include <vtkPointData.h>
#include <vtkPolyData.h>
#include <vtkPolyDataReader.h>
#include <vtkSmartPointer.h>
#include <vtkUnstructuredGrid.h>
#include <vtkUnstructuredGridReader.h>
#include <vtkXMLPolyDataReader.h>
#include <vtkXMLUnstructuredGridReader.h>

#include "Geometry/ModelPacker.hpp"
#include "Kernels/CPU/TraceCpu.hpp"
#include "Storage/VTK/VTKCompat.hpp"
#include "Storage/VTK/VTKTraceWriter.hpp"
#include "VTKTestUtil.hpp"

using namespace fm;
using namespace fmtest;
namespace fs = std::filesystem;

namespace {
TraceSet someTraces(const TetraMesh& m, uint64_t packets) {
    MaterialSet mats;
    mats.exterior(Material(0, 0, 0, 1.0));
    for (int r = 0; r < 3; ++r) mats.append(Material(0.1 * (r + 1), 5, 0.8, 1.4));
    PointSource P;
    P.position = {1.5, 1.0, 1.0};
    KernelInput in = packModel(m, mats, P);
    RunOptions o;
    o.packets = packets;
    o.threads = 2;
    return runCpuTraced(in, o).traces;
}
}  // namespace

BOOST_AUTO_TEST_SUITE(vtk_traces)

BOOST_AUTO_TEST_CASE(trace_set_to_vtp_reads_back_line_by_line) {
    TetraMesh m = threeRegionBox(2);
    TraceSet T = someTraces(m, 40);
    VTKTraceWriter w(scratch("run.vtp"));
    w.traces(T);
    w.write();
    auto r = vtkSmartPointer<vtkXMLPolyDataReader>::New();
    r->SetFileName(w.filename().c_str());
    r->Update();
    vtkPolyData* pd = r->GetOutput();
    BOOST_REQUIRE_EQUAL(pd->GetNumberOfLines(), 40);
    BOOST_REQUIRE_EQUAL(size_t(pd->GetNumberOfPoints()), T.steps.size());
    vtkDataArray* tetra = pd->GetPointData()->GetArray("Tetra");
    vtkDataArray* mat = pd->GetPointData()->GetArray("Material");
    vtkDataArray* path = pd->GetPointData()->GetArray("Path length (mm)");
    vtkDataArray* end = pd->GetCellData()->GetArray("End event");
    BOOST_REQUIRE(tetra && mat && path && end && pd->GetPointData()->GetArray("Time of flight (ns)"));
    auto ids = vtkSmartPointer<vtkIdList>::New();
    for (vtkIdType c = 0; c < 40; ++c) {
        pd->GetCellPoints(c, ids);
        BOOST_REQUIRE_EQUAL(size_t(ids->GetNumberOfIds()), T.length(size_t(c)));
        BOOST_CHECK_EQUAL(int(end->GetComponent(c, 0)), int(T.step(size_t(c), T.length(size_t(c)) - 1).event));
        for (vtkIdType k = 0; k < ids->GetNumberOfIds(); ++k) {
            const TraceStep& s = T.step(size_t(c), size_t(k));
            double p[3];
            pd->GetPoint(ids->GetId(k), p);
            BOOST_CHECK_EQUAL(p[0], double(s.pos[0]));
            BOOST_CHECK_EQUAL(p[2], double(s.pos[2]));
            BOOST_CHECK_EQUAL(tetra->GetComponent(ids->GetId(k), 0), double(s.tetra));
            // The material is the region of the tetra the point is in.
            BOOST_CHECK_EQUAL(mat->GetComponent(ids->GetId(k), 0), double(m.region(s.tetra)));
            if (k) BOOST_CHECK_GE(path->GetComponent(ids->GetId(k), 0), path->GetComponent(ids->GetId(k - 1), 0));
        }
    }
}

BOOST_AUTO_TEST_CASE(compat_grid_writes_the_arrays_it_holds_legacy_and_xml) {
    auto m = std::make_shared<const TetraMesh>(threeRegionBox());
    vtkcompat::DataSet d;
    d.mesh = m;
    auto a = std::make_shared<vtkcompat::Array>();
    a->name = "Tissue Type";
    a->type = vtkcompat::Array::UnsignedShort;
    for (uint32_t t = 1; t <= m->tetraCount(); ++t) a->values.push_back(m->region(t));
    d.cellData.add(a);
    auto phi = std::make_shared<vtkcompat::Array>();
    phi->name = "Volume Fluence (J/mm^2)";
    for (uint32_t t = 1; t <= m->tetraCount(); ++t) phi->values.push_back(0.5 * t);
    d.cellData.add(phi);
    vtkcompat::write(d, scratch("g.vtk"), false, false, "test", "test");
    vtkcompat::write(d, scratch("g.vtu"), true, false, "test", "test");
    auto L = vtkSmartPointer<vtkUnstructuredGridReader>::New();
    L->SetFileName(scratch("g.vtk").c_str());
    L->Update();
    auto X = vtkSmartPointer<vtkXMLUnstructuredGridReader>::New();
    X->SetFileName(scratch("g.vtu").c_str());
    X->Update();
    for (vtkUnstructuredGrid* g : {L->GetOutput(), X->GetOutput()}) {
        BOOST_REQUIRE_EQUAL(size_t(g->GetNumberOfCells()), m->tetraCount());
        BOOST_CHECK_EQUAL(g->GetCellData()->GetNumberOfArrays(), 2);  // no Region added behind our back
        vtkDataArray* tt = g->GetCellData()->GetArray("Tissue Type");
        vtkDataArray* f = g->GetCellData()->GetArray("Volume Fluence (J/mm^2)");
        BOOST_REQUIRE(tt && f);
        BOOST_CHECK_EQUAL(tt->GetDataType(), VTK_UNSIGNED_SHORT);
        BOOST_CHECK_EQUAL(tt->GetComponent(70, 0), double(m->region(71)));
        BOOST_CHECK_EQUAL(f->GetComponent(70, 0), 35.5);
    }
    // An array of the wrong length never reaches the file.
    phi->values.pop_back();
    expectError<ParameterError>([&] { vtkcompat::write(d, scratch("bad.vtu"), true, false, "", "W"); },
                                {"Volume Fluence (J/mm^2)", "71 values", "72 cells"});
    BOOST_CHECK(!fs::exists(scratch("bad.vtu")));
}

BOOST_AUTO_TEST_CASE(compat_polydata_round_trip) {
    vtkcompat::DataSet d;
    d.kind = vtkcompat::DataSet::Poly;
    d.points = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 0, 1}, {0, 1, 1}};
    d.lines = {{0, 1, 2}, {3, 4}};
    auto w = std::make_shared<vtkcompat::Array>();
    w->name = "Packet Weight";
    w->type = vtkcompat::Array::Float;
    w->values = {1, 0.9, 0.8, 1, 0.5};
    d.pointData.add(w);
    vtkcompat::write(d, scratch("p.vtk"), false, true, "ascii", "test");
    auto r = vtkSmartPointer<vtkPolyDataReader>::New();
    r->SetFileName(scratch("p.vtk").c_str());
    r->Update();
    BOOST_CHECK_EQUAL(r->GetOutput()->GetNumberOfLines(), 2);
    BOOST_CHECK_EQUAL(r->GetOutput()->GetNumberOfPoints(), 5);
    vtkcompat::DataSet back = vtkcompat::readPolyData(scratch("p.vtk"), false, "test");
    BOOST_REQUIRE_EQUAL(back.lines.size(), 2u);
    BOOST_CHECK(back.lines[0] == d.lines[0]);
    BOOST_CHECK_CLOSE(back.pointData.find("Packet Weight")->values[4], 0.5, 1e-6);
    expectError<FormatError>([&] { vtkcompat::readPolyData(scratch("p.vtk"), true, "R"); }, {"p.vtk"});
}

BOOST_AUTO_TEST_SUITE_END()
