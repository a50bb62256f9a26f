// SPDX-License-Identifier: GPL-3.0-or-later
#include "Tcl/TclCOMSOL.hpp"

#include <sstream>

#include "Storage/COMSOL/COMSOLMesh.hpp"
#include "Tcl/TclGeometry.hpp"
#include "Tcl/TclUtil.hpp"

using fm::ParameterError;

void COMSOLMeshReader::read() {
    mesh_ = std::make_shared<fm::TetraMesh>(fm::readCOMSOLMesh(need("COMSOLMeshReader read")));
}
TetraMesh* COMSOLMeshReader::mesh() const {
    if (!mesh_) throw ParameterError("COMSOLMeshReader mesh: call read first");
    return new TetraMesh(mesh_);
}

void COMSOLMeshWriter::mesh(TetraMesh* m) { mesh_ = fmtcl::need(m, "COMSOLMeshWriter mesh").ptr(); }
void COMSOLMeshWriter::setElementTypeCount(unsigned n) {
    if (n != 1)
        throw ParameterError("COMSOLMeshWriter setElementTypeCount: " + std::to_string(n) +
                             " element types; only one (\"3 tet\", 4 vertices) is written");
    types_.assign(n, "");
}
void COMSOLMeshWriter::setElementDetails(unsigned i, const std::string& typeName, unsigned nodeCount) {
    if (i >= types_.size())
        throw ParameterError("COMSOLMeshWriter setElementDetails: type " + std::to_string(i) + " is out of range (" +
                             std::to_string(types_.size()) + " types; call setElementTypeCount first)");
    std::istringstream ss(typeName);
    std::string a, b;
    ss >> a >> b;  // "3 tet" (COMSOL's length-prefixed name) or "tet"
    std::string name = b.empty() ? a : b;
    if (name != "tet" || nodeCount != 4)
        throw ParameterError("COMSOLMeshWriter setElementDetails: \"" + typeName + "\" with " + std::to_string(nodeCount) +
                             " vertices; only tetrahedra (\"3 tet\", 4) are written");
    types_[i] = name;
}
void COMSOLMeshWriter::write() {
    if (!mesh_) throw ParameterError("COMSOLMeshWriter write: call mesh first");
    for (size_t i = 0; i < types_.size(); ++i)
        if (types_[i].empty())
            throw ParameterError("COMSOLMeshWriter write: element type " + std::to_string(i) +
                                 " was not described (setElementDetails " + std::to_string(i) + " \"3 tet\" 4)");
    fm::writeCOMSOLMesh(need("COMSOLMeshWriter write"), *mesh_);
}
