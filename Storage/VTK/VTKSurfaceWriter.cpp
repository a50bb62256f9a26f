// SPDX-License-Identifier: GPL-3.0-or-later
#include "Storage/VTK/VTKSurfaceWriter.hpp"

#include <vtkCellData.h>
#include <vtkDoubleArray.h>
#include <vtkPolyData.h>

#include "Common/Errors.hpp"
#include "Storage/VTK/VTKSupport.hpp"

namespace fm {

void VTKSurfaceWriter::addData(const std::string& name, const std::vector<double>& values) {
    vtkio::addNamedData(data_, "VTKSurfaceWriter", name, values, {"FaceId", "Region"});
}

size_t VTKSurfaceWriter::faceCount() const {
    if (!mesh_) throw ParameterError("VTKSurfaceWriter: no mesh set");
    return vtkio::surfaceFaces(*mesh_, region_).size();
}

void VTKSurfaceWriter::legacyVersion(const std::string& v) {
    legacy42_ = vtkio::parseLegacyVersion(v, "VTKSurfaceWriter legacyVersion") == vtkio::LegacyVersion::V4_2;
}

void VTKSurfaceWriter::write() const {
    std::string what = "VTKSurfaceWriter";
    if (filename_.empty()) throw ParameterError(what + ": no filename set");
    if (!mesh_) throw ParameterError(what + ": " + filename_ + ": no mesh set");
    std::vector<size_t> first;
    for (const auto& d : data_)
        first.push_back(vtkio::firstIndexFor(what + ": " + filename_, d.first, d.second.size(),
                                             mesh_->faceCount(), "faces"));
    std::vector<vtkio::FaceRef> faces = vtkio::surfaceFaces(*mesh_, region_);
    if (faces.empty())
        throw ParameterError(what + ": " + filename_ + ": region " + std::to_string(region_) +
                             " has no boundary faces (regions are 1.." + std::to_string(mesh_->regionCount() - 1) + ")");
    auto pd = vtkio::makeFaces(*mesh_, faces);
    for (size_t i = 0; i < data_.size(); ++i) {
        // first[i] is 1 when the array has the dummy: face id f sits at f, else at f-1.
        std::vector<double> perTriangle(1, 0.0);
        for (const auto& f : faces) perTriangle.push_back(data_[i].second[f.face - (1 - first[i])]);
        pd->GetCellData()->AddArray(vtkio::makeArray(data_[i].first, perTriangle, 1));
    }
    vtkio::addComments(pd, comments_);
    vtkio::addUnits(pd, units_);
    std::string header = region_ ? "FullMonte surface of region " + std::to_string(region_) : "FullMonte mesh boundary";
    for (const auto& c : comments_) header += "; " + c;
    vtkio::writeDataSet(pd, filename_, what, header, legacy42_ ? vtkio::LegacyVersion::V4_2 : vtkio::LegacyVersion::V5_1);
}

}  // namespace fm
