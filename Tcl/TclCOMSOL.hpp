// SPDX-License-Identifier: GPL-3.0-or-later
// FullMonte 2018's COMSOLMeshReader and COMSOLMeshWriter (.mphtxt, Storage/COMSOL/COMSOLMesh.hpp).
#pragma once
#include <string>

#include "Tcl/TclStorage.hpp"

#ifndef SWIG
#include <memory>
#include <vector>
#endif

class TetraMesh;

class COMSOLMeshReader : public FileIO {
public:
    void read();
    TetraMesh* mesh() const;
#ifndef SWIG
private:
    std::shared_ptr<fm::TetraMesh> mesh_;
#endif
};

// setElementTypeCount n / setElementDetails i "3 tet" 4 as in the 2018 scripts: the tetrahedra are
// the one element type written; other types are refused.
class COMSOLMeshWriter : public FileIO {
public:
    void mesh(TetraMesh* m);
    void setElementTypeCount(unsigned count);
    void setElementDetails(unsigned index, const std::string& typeName, unsigned nodeCount);
    void write();
#ifndef SWIG
private:
    std::shared_ptr<fm::TetraMesh> mesh_;
    std::vector<std::string> types_;
#endif
};
