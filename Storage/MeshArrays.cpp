// SPDX-License-Identifier: GPL-3.0-or-later
#include "Storage/MeshArrays.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "Common/Errors.hpp"
#include "Storage/InputFile.hpp"

namespace fm {

std::string readWholeFile(const std::string& path) {
    refuseDirectory(path);
    std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!f) throw FormatError(path + ": cannot open file");
    std::string bytes;
    size_t have = 0;
    if (std::fseek(f.get(), 0, SEEK_END) == 0) {
        long size = std::ftell(f.get());
        std::rewind(f.get());
        if (size > 0) {
            bytes.resize(size_t(size));
            have = std::fread(&bytes[0], 1, bytes.size(), f.get());
            bytes.resize(have);
        }
    }
    // Read on to the end rather than trusting the size: a pipe or /proc file reports none.
    char chunk[1 << 16];
    for (size_t got; (got = std::fread(chunk, 1, sizeof chunk, f.get())) > 0;) bytes.append(chunk, got);
    if (std::ferror(f.get())) throw FormatError(path + ": read error (" + std::strerror(errno) + ")");
    return bytes;
}

TetraMesh buildMesh(MeshArrays&& a, const std::string& path, const MeshCheckOptions& check) {
    try {
        return TetraMesh(std::move(a.points), std::move(a.tetras), std::move(a.regions), check);
    } catch (const ModelError& e) {
        throw ModelError(path + ": " + e.what());
    }
}

}  // namespace fm
