// SPDX-License-Identifier: GPL-3.0-or-later
#include "Storage/VTK/VTKMeshWriter.hpp"

#include <vtkCellData.h>
#include <vtkDoubleArray.h>
#include <vtkUnstructuredGrid.h>

#include "Common/Errors.hpp"
#include "Storage/VTK/VTKSupport.hpp"

namespace fm {

namespace {

std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : "; ") + x;
    return s;
}

}  // namespace

void VTKMeshWriter::addData(const std::string& name, const std::vector<double>& values) {
    vtkio::addNamedData(data_, "VTKMeshWriter", name, values, {"Region"});
}

void VTKMeshWriter::legacyVersion(const std::string& v) {
    legacy42_ = vtkio::parseLegacyVersion(v, "VTKMeshWriter legacyVersion") == vtkio::LegacyVersion::V4_2;
}

void VTKMeshWriter::write() const {
    if (filename_.empty()) throw ParameterError("VTKMeshWriter: no filename set");
    if (!mesh_) throw ParameterError("VTKMeshWriter: " + filename_ + ": no mesh set");
    std::string what = "VTKMeshWriter";
    // Check every array before building anything, so a bad size never leaves a partial file.
    std::vector<size_t> first;
    for (const auto& d : data_)
        first.push_back(vtkio::firstIndexFor(what + ": " + filename_, d.first, d.second.size(),
                                             mesh_->tetraCount(), "tetras"));
    auto grid = vtkio::makeGrid(*mesh_);
    for (size_t i = 0; i < data_.size(); ++i)
        grid->GetCellData()->AddArray(vtkio::makeArray(data_[i].first, data_[i].second, first[i]));
    vtkio::addComments(grid, comments_);
    vtkio::addUnits(grid, units_);
    vtkio::writeDataSet(grid, filename_, what, comments_.empty() ? "FullMonte tetrahedral mesh" : joined(comments_),
                        legacy42_ ? vtkio::LegacyVersion::V4_2 : vtkio::LegacyVersion::V5_1);
}

}  // namespace fm
