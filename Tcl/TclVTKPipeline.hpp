// SPDX-License-Identifier: GPL-3.0-or-later
// The part of VTK's pipeline FullMonte 2018 scripts use to attach arrays to a mesh before
// writing it: vtkFieldData (named arrays), vtkDataObject (holds field data) and
// vtkMergeDataObjectFilter (the input dataset with the field data's arrays added as cell or
// point data). Ours, over the in-memory datasets of Storage/VTK/VTKCompat.hpp, since Debian's VTK
// has no Tcl bindings; FullMonte.tcl names them vtkFieldData, vtkDataObject and
// vtkMergeDataObjectFilter. The filter is evaluated when its consumer (a writer connected with
// SetInputConnection, or Update/GetOutput) runs, so arrays added to or removed from the field
// data between runs are what the next write sees, as in the 2018 scripts' trial loops.
#pragma once
#include <string>

#include "Tcl/TclVTKCompat.hpp"

#ifndef SWIG
#include <memory>
#include <utility>
#endif

// vtkFieldData: named arrays, each added once by name (AddArray replaces one of the same name).
class FMvtkFieldData {
public:
    FMvtkFieldData();
    int AddArray(FMvtkDataArray* a);              // the array's index
    void RemoveArray(FMvtkDataArray* a);          // by the array's name, as the 2018 scripts pass it
    void RemoveArray(const std::string& name);
    int GetNumberOfArrays() const;
    unsigned GetNumberOfTuples() const;           // of the first array (0 without arrays)
    std::string GetArrayName(int i) const;
    FMvtkDataArray* GetArray(int i) const;
    FMvtkDataArray* GetArray(const std::string& name) const;
    int HasArray(const std::string& name) const;
    void Initialize();                            // removes every array
    void Delete();
#ifndef SWIG
    explicit FMvtkFieldData(std::shared_ptr<fm::vtkcompat::Attributes> f) : f_(std::move(f)) {}
    const std::shared_ptr<fm::vtkcompat::Attributes>& ptr() const { return f_; }
private:
    std::shared_ptr<fm::vtkcompat::Attributes> f_;
#endif
};

// vtkDataObject: the carrier of field data that vtkMergeDataObjectFilter takes.
class FMvtkDataObject {
public:
    FMvtkDataObject();
    void SetFieldData(FMvtkFieldData* f);         // shared: later AddArray calls are seen
    FMvtkFieldData* GetFieldData() const;         // the same field data (not a copy), as in VTK
    void Delete();
#ifndef SWIG
    using Slot = std::shared_ptr<std::shared_ptr<fm::vtkcompat::Attributes>>;
    const Slot& slot() const { return f_; }
private:
    // One more level of sharing, so SetFieldData after the filter was connected is seen too.
    Slot f_;
#endif
};

// vtkMergeDataObjectFilter: output = input dataset + the data object's arrays as cell data
// (SetOutputFieldToCellDataField) or point data (SetOutputFieldToPointDataField). An array whose
// length differs from the dataset's cells (points) is an error naming it.
class FMvtkMergeDataObjectFilter {
public:
    FMvtkMergeDataObjectFilter();
    void SetDataObjectInputData(FMvtkDataObject* d);
    void SetInputData(FMvtkDataSet* d);
    void SetInputConnection(FMvtkAlgorithmOutput* port);
    void SetOutputFieldToCellDataField();
    void SetOutputFieldToPointDataField();
    void SetOutputFieldToDataObjectField();       // refused: the writers here need cell or point data
    void Update();
    FMvtkDataSet* GetOutput() const;              // the result of the last Update
    FMvtkAlgorithmOutput* GetOutputPort() const;
    void Delete();
#ifndef SWIG
    struct State;
private:
    std::shared_ptr<State> s_;
#endif
};
