// SPDX-License-Identifier: GPL-3.0-or-later
// FullMonte binary mesh (.fmb, docs/BINARY_MESH.md): the points, tetras and regions of a
// TetraMesh in little-endian binary, behind a header with counts and checksums, so that a
// clinical-size mesh loads without parsing text. Faces, adjacency and the mesh checks are
// computed on every load, as for the text formats.
#pragma once
#include <cstdint>
#include <string>

#include "Storage/MeshArrays.hpp"

namespace fm {

constexpr char kBinaryMeshMagic[8] = {'F', 'M', 'B', 'M', 'E', 'S', 'H', '\0'};
constexpr uint32_t kBinaryMeshVersion = 1;
constexpr size_t kBinaryMeshHeaderBytes = 80;

// Whether the bytes start with the .fmb magic.
bool isBinaryMesh(const std::string& bytes);
// Whether the file starts with the .fmb magic (false for an unreadable file).
bool isBinaryMeshFile(const std::string& path);
// The tetra count in a .fmb file's header (its magic, byte order, version and header checksum
// checked), without reading the arrays; 0 for an unreadable file or a header that fails a check.
uint64_t binaryMeshTetraCount(const std::string& path);

// The arrays of a .fmb file's bytes; FormatError "name: what is wrong" for a truncated,
// corrupt (checksum), foreign (byte order, version) or inconsistent (indices, counts) file.
MeshArrays parseBinaryMesh(const std::string& bytes, const std::string& name);
TetraMesh readBinaryMesh(const std::string& path, const MeshCheckOptions& check = {});
void writeBinaryMesh(const std::string& path, const TetraMesh& mesh);
// The file's bytes for a mesh (what writeBinaryMesh writes).
std::string binaryMeshBytes(const TetraMesh& mesh);

// The checksum of the format: a 64-bit hash of the bytes (docs/BINARY_MESH.md).
uint64_t binaryMeshChecksum(const void* data, size_t size);

}  // namespace fm
