// SPDX-License-Identifier: GPL-3.0-or-later
// Tcl-facing readers and writers: TIM-OS (Storage/TIMOS), FullMonte's text writers, and the VTK
// classes when the build has them (Storage/VTK, FM_USE_VTK). Errors carry file:line from the
// readers and become Tcl errors.
#pragma once
#include <string>

#ifndef SWIG
#include <memory>

#include "Geometry/MaterialSet.hpp"
#include "Geometry/MeshCheck.hpp"
#include "Geometry/Sources.hpp"
#endif

class TetraMesh;
class MaterialSet;
class Source;
class OutputData;
class DoseHistogramCollection;

// Shared by the readers and writers: the filename getter/setter.
class FileIO {
public:
    virtual ~FileIO();
    void filename(const std::string& f);
    std::string filename() const;
#ifndef SWIG
protected:
    const std::string& need(const char* cls) const;  // throws when no filename was given
    std::string filename_;
#endif
};

// Shared by the mesh readers: read() runs every mesh check (reporting the warnings), mesh()
// hands out the mesh read.
class CheckedMeshReader : public FileIO {
public:
    void read();
    TetraMesh* mesh() const;
    // Beyond FullMonte: accept cracks and folded tetras as warnings (docs/MESH_CHECKS.md).
    void allowDefects(bool enabled);
    bool allowDefects() const;
#ifndef SWIG
protected:
    using Load = fm::TetraMesh (*)(const std::string& path, const fm::MeshCheckOptions& check);
    CheckedMeshReader(const char* cls, Load load) : cls_(cls), load_(load) {}

private:
    const char* cls_;
    Load load_;
    std::shared_ptr<fm::TetraMesh> mesh_;
    bool allow_ = false;
#endif
};

class TIMOSMeshReader : public CheckedMeshReader {
public:
    TIMOSMeshReader();
};

class TIMOSMaterialReader : public FileIO {
public:
    void read();
    MaterialSet* materials() const;
#ifndef SWIG
private:
    std::shared_ptr<fm::MaterialSet> mats_;
#endif
};

class TIMOSSourceReader : public FileIO {
public:
    void read();
    Source* source() const;                 // a Composite when the file has several rows
    unsigned long long packetCount() const;  // beyond FullMonte: the rows' total w (TIM-OS photon count)
#ifndef SWIG
private:
    fm::SourcePtr src_;
    double packets_ = 0;
#endif
};

class TIMOSMeshWriter : public FileIO {
public:
    void mesh(TetraMesh* m);
    void write();
#ifndef SWIG
private:
    std::shared_ptr<fm::TetraMesh> mesh_;
#endif
};

// Beyond FullMonte: the FullMonte binary mesh (.fmb, docs/BINARY_MESH.md), a mesh that loads
// without parsing text. The reader runs every mesh check, as TIMOSMeshReader does (which also
// reads .fmb files, by their content).
class BinaryMeshReader : public CheckedMeshReader {
public:
    BinaryMeshReader();
};

class BinaryMeshWriter : public FileIO {
public:
    void mesh(TetraMesh* m);
    void write();
#ifndef SWIG
private:
    std::shared_ptr<fm::TetraMesh> mesh_;
#endif
};

// Beyond FullMonte: the other two TIM-OS files.
class TIMOSMaterialWriter : public FileIO {
public:
    void materials(MaterialSet* ms);
    void write();
#ifndef SWIG
private:
    std::shared_ptr<MaterialSet> mats_;
#endif
};

class TIMOSSourceWriter : public FileIO {
public:
    void mesh(TetraMesh* m);
    void source(Source* s);
    void write();
#ifndef SWIG
private:
    std::shared_ptr<fm::TetraMesh> mesh_;
    fm::SourcePtr src_;
#endif
};

// FullMonte's format: "1 <dim>" (or "2 <d0> <d1>" for 2-D maps) then the values, 10 per line;
// a DoseHistogram is written as
// "2 <rows> 3" then rows "cmeasure cdf dose".
class TextFileMatrixWriter : public FileIO {
public:
    void source(OutputData* d);
    void precision(unsigned digits);
    void width(unsigned width);
    void write();
#ifndef SWIG
private:
    std::shared_ptr<OutputData> data_;
    unsigned precision_ = 0, width_ = 0;
#endif
};

// FullMonte's format: the histogram count, then per histogram its row count and rows
// "cmeasure cdf dose" (cdf = fraction of the region receiving >= dose), dose ascending.
class TextFileDoseHistogramWriter : public FileIO {
public:
    void collection(DoseHistogramCollection* c);
    void write();
#ifndef SWIG
private:
    std::shared_ptr<DoseHistogramCollection> c_;
#endif
};
