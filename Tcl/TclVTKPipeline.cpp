// SPDX-License-Identifier: GPL-3.0-or-later
#include "Tcl/TclVTKPipeline.hpp"

#include "Common/Errors.hpp"
#include "Tcl/TclUtil.hpp"

using fm::ParameterError;
namespace vc = fm::vtkcompat;

namespace {

std::string arrayNames(const vc::Attributes& a) {
    std::string names;
    for (const auto& x : a.arrays) names += (names.empty() ? "\"" : ", \"") + x->name + "\"";
    return names.empty() ? "none" : names;
}

}  // namespace

// ---- vtkFieldData ----

FMvtkFieldData::FMvtkFieldData() : f_(std::make_shared<vc::Attributes>()) {}
int FMvtkFieldData::AddArray(FMvtkDataArray* a) {
    const vc::ArrayPtr& p = fmtcl::need(a, "vtkFieldData AddArray").ptr();
    if (p->name.empty()) throw ParameterError("vtkFieldData AddArray: the array has no name (SetName first)");
    f_->add(p);
    for (size_t i = 0; i < f_->arrays.size(); ++i)
        if (f_->arrays[i] == p) return int(i);
    return -1;
}
void FMvtkFieldData::RemoveArray(FMvtkDataArray* a) {
    RemoveArray(fmtcl::need(a, "vtkFieldData RemoveArray").ptr()->name);
}
void FMvtkFieldData::RemoveArray(const std::string& name) { f_->remove(name); }  // absent: no-op, as VTK
int FMvtkFieldData::GetNumberOfArrays() const { return int(f_->arrays.size()); }
unsigned FMvtkFieldData::GetNumberOfTuples() const {
    return f_->arrays.empty() ? 0u : unsigned(f_->arrays.front()->values.size());
}
std::string FMvtkFieldData::GetArrayName(int i) const {
    if (i < 0 || size_t(i) >= f_->arrays.size()) return "";
    return f_->arrays[size_t(i)]->name;
}
FMvtkDataArray* FMvtkFieldData::GetArray(int i) const {
    if (i < 0 || size_t(i) >= f_->arrays.size())
        throw ParameterError("vtkFieldData GetArray: index " + std::to_string(i) + " is out of range (" +
                             std::to_string(f_->arrays.size()) + " arrays)");
    return new FMvtkDataArray(f_->arrays[size_t(i)]);
}
FMvtkDataArray* FMvtkFieldData::GetArray(const std::string& name) const {
    if (auto a = f_->find(name)) return new FMvtkDataArray(a);
    throw ParameterError("vtkFieldData GetArray: no array \"" + name + "\" (arrays: " + arrayNames(*f_) + ")");
}
int FMvtkFieldData::HasArray(const std::string& name) const { return f_->find(name) ? 1 : 0; }
void FMvtkFieldData::Initialize() { f_->arrays.clear(); }
void FMvtkFieldData::Delete() {}

// ---- vtkDataObject ----

FMvtkDataObject::FMvtkDataObject()
    : f_(std::make_shared<std::shared_ptr<vc::Attributes>>(std::make_shared<vc::Attributes>())) {}
void FMvtkDataObject::SetFieldData(FMvtkFieldData* f) { *f_ = fmtcl::need(f, "vtkDataObject SetFieldData").ptr(); }
FMvtkFieldData* FMvtkDataObject::GetFieldData() const { return new FMvtkFieldData(*f_); }
void FMvtkDataObject::Delete() {}

// ---- vtkMergeDataObjectFilter ----

struct FMvtkMergeDataObjectFilter::State {
    std::shared_ptr<std::shared_ptr<vc::Attributes>> fields;  // the data object's field data
    std::shared_ptr<vc::DataSet> input;
    FMvtkAlgorithmOutput::Producer upstream;
    bool toCells = true;
    std::shared_ptr<vc::DataSet> output;

    std::shared_ptr<vc::DataSet> run() {
        const char* what = "vtkMergeDataObjectFilter";
        std::shared_ptr<vc::DataSet> in = upstream ? upstream() : input;
        if (!in) throw ParameterError(std::string(what) + ": no input dataset (call SetInputData first)");
        if (!fields) throw ParameterError(std::string(what) + ": no data object (call SetDataObjectInputData first)");
        auto out = std::make_shared<vc::DataSet>(*in);  // shares the mesh and the input's arrays
        vc::Attributes& at = toCells ? out->cellData : out->pointData;
        const size_t n = toCells ? out->numberOfCells() : out->numberOfPoints();
        for (const auto& a : (*fields)->arrays) {
            if (a->values.size() != n)
                throw ParameterError(std::string(what) + ": array \"" + a->name + "\" has " +
                                     std::to_string(a->values.size()) + " tuples, the dataset has " +
                                     std::to_string(n) + (toCells ? " cells" : " points"));
            at.add(a);
        }
        output = out;
        return out;
    }
};

FMvtkMergeDataObjectFilter::FMvtkMergeDataObjectFilter() : s_(std::make_shared<State>()) {}
void FMvtkMergeDataObjectFilter::SetDataObjectInputData(FMvtkDataObject* d) {
    s_->fields = fmtcl::need(d, "vtkMergeDataObjectFilter SetDataObjectInputData").slot();
}
void FMvtkMergeDataObjectFilter::SetInputData(FMvtkDataSet* d) {
    s_->input = fmtcl::need(d, "vtkMergeDataObjectFilter SetInputData").ptr();
    s_->upstream = nullptr;
}
void FMvtkMergeDataObjectFilter::SetInputConnection(FMvtkAlgorithmOutput* port) {
    s_->upstream = [p = fmtcl::need(port, "vtkMergeDataObjectFilter SetInputConnection")] { return p.produce(); };
    s_->input = nullptr;
}
void FMvtkMergeDataObjectFilter::SetOutputFieldToCellDataField() { s_->toCells = true; }
void FMvtkMergeDataObjectFilter::SetOutputFieldToPointDataField() { s_->toCells = false; }
void FMvtkMergeDataObjectFilter::SetOutputFieldToDataObjectField() {
    throw ParameterError("vtkMergeDataObjectFilter SetOutputFieldToDataObjectField: not supported (the writers here "
                         "write cell or point data; use SetOutputFieldToCellDataField)");
}
void FMvtkMergeDataObjectFilter::Update() { s_->run(); }
FMvtkDataSet* FMvtkMergeDataObjectFilter::GetOutput() const {
    if (!s_->output) throw ParameterError("vtkMergeDataObjectFilter GetOutput: call Update first");
    if (s_->output->kind == vc::DataSet::Grid) return new FMvtkUnstructuredGrid(s_->output);
    return new FMvtkPolyData(s_->output);
}
FMvtkAlgorithmOutput* FMvtkMergeDataObjectFilter::GetOutputPort() const {
    return new FMvtkAlgorithmOutput([s = s_] { return s->run(); });
}
void FMvtkMergeDataObjectFilter::Delete() {}
