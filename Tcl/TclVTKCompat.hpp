// SPDX-License-Identifier: GPL-3.0-or-later
// FullMonte 2018's VTK Tcl commands (vtkFullMonteTetraMeshWrapper, vtkFullMonteArrayAdaptor,
// vtkFullMonteMeshFromUnstructuredGrid, vtkFullMontePacketPositionTraceSetToPolyData) and the few
// VTK classes their scripts pair them with (vtkUnstructuredGridWriter, vtkPolyDataWriter, their
// XML forms, the matching readers), for Debian's VTK, which has no Tcl bindings. The C++ names
// carry an FMvtk prefix (VTK's own classes live in the same process); FullMonte.tcl gives them
// their VTK names as Tcl commands, with VTK's `Delete`, unless real VTK Tcl commands exist.
// Data objects hold their data in memory (Storage/VTK/VTKCompat.hpp); files are written and read
// by VTK's own writers and readers.
#pragma once
#include <string>

#include "Tcl/TclOutputs.hpp"

#ifndef SWIG
#include <functional>
#include <memory>
#include <vector>

#include "Kernels/CPU/TraceCpu.hpp"
#include "Storage/VTK/VTKCompat.hpp"
#endif

class TetraMesh;

// vtkDataArray: one component per tuple.
class FMvtkDataArray {
public:
    std::string GetName() const;
    void SetName(const std::string& n);
    unsigned GetNumberOfTuples() const;
    int GetNumberOfComponents() const;
    double GetValue(unsigned index) const;
    double GetComponent(unsigned index, int component) const;
    double GetTuple1(unsigned index) const;
    std::string GetRange() const;  // "min max" (NaN skipped)
    std::string GetDataTypeAsString() const;
    void Delete();
#ifndef SWIG
    explicit FMvtkDataArray(fm::vtkcompat::ArrayPtr a) : a_(std::move(a)) {}
    const fm::vtkcompat::ArrayPtr& ptr() const { return a_; }
private:
    fm::vtkcompat::ArrayPtr a_;
#endif
};

// vtkCellData / vtkPointData of a dataset (shared with it).
class FMvtkDataSetAttributes {
public:
    int AddArray(FMvtkDataArray* a);  // returns the array's index; replaces one of the same name
    void RemoveArray(const std::string& name);
    int GetNumberOfArrays() const;
    std::string GetArrayName(int i) const;
    FMvtkDataArray* GetArray(int i) const;
    FMvtkDataArray* GetArray(const std::string& name) const;
    int HasArray(const std::string& name) const;
    void Delete();
#ifndef SWIG
    FMvtkDataSetAttributes(std::shared_ptr<fm::vtkcompat::DataSet> d, bool cells) : d_(std::move(d)), cells_(cells) {}
private:
    fm::vtkcompat::Attributes& at() const { return cells_ ? d_->cellData : d_->pointData; }
    std::shared_ptr<fm::vtkcompat::DataSet> d_;
    bool cells_;
#endif
};

// vtkDataSet: the common part of vtkUnstructuredGrid and vtkPolyData.
class FMvtkDataSet {
public:
    virtual ~FMvtkDataSet();
    FMvtkDataSetAttributes* GetCellData() const;
    FMvtkDataSetAttributes* GetPointData() const;
    unsigned GetNumberOfCells() const;
    unsigned GetNumberOfPoints() const;
    std::string GetPoint(unsigned point) const;  // "x y z"
    std::string GetClassName() const;
    void Delete();
#ifndef SWIG
    explicit FMvtkDataSet(std::shared_ptr<fm::vtkcompat::DataSet> d) : d_(std::move(d)) {}
    const std::shared_ptr<fm::vtkcompat::DataSet>& ptr() const { return d_; }
protected:
    std::shared_ptr<fm::vtkcompat::DataSet> d_;
#endif
};

class FMvtkUnstructuredGrid : public FMvtkDataSet {
public:
    FMvtkUnstructuredGrid();  // empty (no mesh): what `vtkUnstructuredGrid ug` makes
    std::string GetCellPoints(unsigned cell) const;  // the 4 point ids of tetra cell `cell` (0-based)
#ifndef SWIG
    explicit FMvtkUnstructuredGrid(std::shared_ptr<fm::vtkcompat::DataSet> d) : FMvtkDataSet(std::move(d)) {}
#endif
};

class FMvtkPolyData : public FMvtkDataSet {
public:
    FMvtkPolyData();
    unsigned GetNumberOfLines() const;
    unsigned GetNumberOfPolys() const;
    std::string GetCellPoints(unsigned cell) const;  // point ids of the cell (lines first, then triangles)
#ifndef SWIG
    explicit FMvtkPolyData(std::shared_ptr<fm::vtkcompat::DataSet> d) : FMvtkDataSet(std::move(d)) {}
#endif
};

// vtkAlgorithmOutput: what `filter GetOutputPort` returns and `writer SetInputConnection` takes.
// It evaluates the filter when the consumer runs (Update/Write), so arrays added to a filter's
// input after the connection is made are seen, as in VTK's demand-driven pipeline.
class FMvtkAlgorithmOutput {
public:
    void Delete();
#ifndef SWIG
    using Producer = std::function<std::shared_ptr<fm::vtkcompat::DataSet>()>;
    explicit FMvtkAlgorithmOutput(Producer p) : produce_(std::move(p)) {}
    std::shared_ptr<fm::vtkcompat::DataSet> produce() const { return produce_(); }
private:
    Producer produce_;
#endif
};

// Writers: SetInputData or SetInputConnection, SetFileName, Update or Write. Legacy ones are binary unless
// SetFileTypeToASCII; XML ones take SetDataModeToAscii/Binary.
class FMvtkWriter {
public:
    virtual ~FMvtkWriter();
    void SetInputData(FMvtkDataSet* d);
    void SetInputConnection(FMvtkAlgorithmOutput* port);
    void SetFileName(const std::string& f);
    std::string GetFileName() const;
    void SetFileTypeToBinary();
    void SetFileTypeToASCII();
    void SetDataModeToAscii();
    void SetDataModeToBinary();
    void SetDataModeToAppended();
    void SetHeader(const std::string& h);
    void Update();
    int Write();
    void Delete();
#ifndef SWIG
protected:
    FMvtkWriter(const char* cls, bool xml, fm::vtkcompat::DataSet::Kind k) : cls_(cls), xml_(xml), kind_(k) {}
private:
    std::string cls_, file_, header_ = "FullMonte";
    bool xml_, ascii_ = false;
    fm::vtkcompat::DataSet::Kind kind_;
    std::shared_ptr<fm::vtkcompat::DataSet> in_;
    FMvtkAlgorithmOutput::Producer port_;  // set by SetInputConnection, run by Write
#endif
};
class FMvtkUnstructuredGridWriter : public FMvtkWriter {
public:
    FMvtkUnstructuredGridWriter();
};
class FMvtkXMLUnstructuredGridWriter : public FMvtkWriter {
public:
    FMvtkXMLUnstructuredGridWriter();
};
class FMvtkPolyDataWriter : public FMvtkWriter {
public:
    FMvtkPolyDataWriter();
};
class FMvtkXMLPolyDataWriter : public FMvtkWriter {
public:
    FMvtkXMLPolyDataWriter();
};

// Readers: SetFileName, Update, GetOutput. Grids are read as tetra meshes (every cell a tetra)
// with all their cell arrays; point arrays are not kept.
class FMvtkUnstructuredGridReader {
public:
    FMvtkUnstructuredGridReader();
    void SetFileName(const std::string& f);
    std::string GetFileName() const;
    void Update();
    FMvtkUnstructuredGrid* GetOutput() const;
    void Delete();
#ifndef SWIG
protected:
    bool xml_ = false;
private:
    std::string file_;
    std::shared_ptr<fm::vtkcompat::DataSet> out_;
#endif
};
class FMvtkXMLUnstructuredGridReader : public FMvtkUnstructuredGridReader {
public:
    FMvtkXMLUnstructuredGridReader();
};
class FMvtkPolyDataReader {
public:
    FMvtkPolyDataReader();
    void SetFileName(const std::string& f);
    std::string GetFileName() const;
    void Update();
    FMvtkPolyData* GetOutput() const;
    void Delete();
#ifndef SWIG
protected:
    bool xml_ = false;
private:
    std::string file_;
    std::shared_ptr<fm::vtkcompat::DataSet> out_;
#endif
};
class FMvtkXMLPolyDataReader : public FMvtkPolyDataReader {
public:
    FMvtkXMLPolyDataReader();
};

// vtkFullMonteTetraMeshWrapper: the mesh as VTK data. blankMesh (no arrays), regionMesh (cell
// array "Region"), regions (that array alone), faces (every face as a triangle, cell i = face i+1,
// cell array "Face"). Each call returns a new dataset.
class FMvtkFullMonteTetraMeshWrapper {
public:
    void mesh(TetraMesh* m);
    void update();
    FMvtkUnstructuredGrid* blankMesh() const;
    FMvtkUnstructuredGrid* regionMesh() const;
    FMvtkDataArray* regions() const;
    FMvtkPolyData* faces() const;
    void Delete();
#ifndef SWIG
private:
    const fm::TetraMesh& need(const char* what) const;
    std::shared_ptr<fm::TetraMesh> mesh_;
#endif
};

// vtkFullMonteArrayAdaptor: a map as a VTK array named as FullMonte 2018 named it,
// "<spatialType> <quantity> (<unit>)" with FullMonte's quantity words ("Volume energy (packet)",
// "Volume fluence (J/mm^2)"),
// one value per tetra (face for surface maps), the dummy element 0 left out.
class FMvtkFullMonteArrayAdaptor {
public:
    void source(OutputData* d);
    void update();
    FMvtkDataArray* array() const;  // the same array object each call; update refreshes it
    void Delete();
#ifndef SWIG
private:
    MapPtr map_;
    fm::vtkcompat::ArrayPtr array_ = std::make_shared<fm::vtkcompat::Array>();
#endif
};

// vtkFullMonteMeshFromUnstructuredGrid: a TetraMesh from a grid, regions from the cell array
// regionLabelFieldName (default "Tissue Type"; our own files call it "Region").
class FMvtkFullMonteMeshFromUnstructuredGrid {
public:
    void unstructuredGrid(FMvtkUnstructuredGrid* ug);
    void regionLabelFieldName(const std::string& n);
    std::string regionLabelFieldName() const;
    void allowDefects(bool enabled);  // beyond FullMonte: cracks and folds as warnings (docs/MESH_CHECKS.md)
    void update();
    TetraMesh* mesh() const;
    TetraMesh* meshPtr() const;  // FullMonte returned a pointer string; here a TetraMesh handle
    void Delete();
#ifndef SWIG
private:
    std::shared_ptr<fm::vtkcompat::DataSet> in_;
    std::string field_ = "Tissue Type";
    bool allow_ = false;
    std::shared_ptr<fm::TetraMesh> out_;
#endif
};

// vtkFullMontePacketPositionTraceSetToPolyData: PacketTraces as polylines, point data as
// FullMonte's: "Packet Weight", "log(Packet Weight)" (off by default), "Time of flight",
// "Path length", "Step count", "Tetra", "Material" (each switchable with include*).
class FMvtkFullMontePacketPositionTraceSetToPolyData {
public:
    void source(OutputData* traces);
    void update();
    FMvtkPolyData* getPolyData() const;
    void includeWeight(bool enabled);
    void includeLogWeight(bool enabled);
    void includeTime(bool enabled);
    void includeLength(bool enabled);
    void includeSteps(bool enabled);
    void includeTetra(bool enabled);
    void includeMaterial(bool enabled);
    void Delete();
#ifndef SWIG
private:
    std::shared_ptr<const fm::TraceSet> traces_;
    std::shared_ptr<fm::vtkcompat::DataSet> out_ = std::make_shared<fm::vtkcompat::DataSet>();
    bool weight_ = true, logWeight_ = false, time_ = true, length_ = true, steps_ = true, tetra_ = true,
         material_ = true;
#endif
};

// Beyond FullMonte: PacketTraces straight to a .vtp/.vtk file with every field (Storage/VTK
// VTKTraceWriter): point data Weight, Step, Tetra, Material, Event, Step length (mm), Path length
// (mm), Time of flight (ns); cell data Trace, End event.
class VTKTraceWriter {
public:
    void filename(const std::string& f);
    std::string filename() const;
    void traces(OutputData* d);
    void addHeaderComment(const std::string& text);
    void legacyVersion(const std::string& v);  // .vtk file version 5.1 (default) or 4.2
    std::string legacyVersion() const;
    void write();
#ifndef SWIG
private:
    std::string file_;
    std::shared_ptr<const fm::TraceSet> traces_;
    std::vector<std::string> comments_;
    std::string legacy_ = "5.1";
#endif
};
