// SPDX-License-Identifier: GPL-3.0-or-later
// What a run may use, checked before the work starts: memory (the machine's available memory,
// a container's cgroup limit, the address-space limit of ulimit -v) and disk (free space in
// the output folder). A request beyond them is refused with the numbers, instead of failing
// later with std::bad_alloc, in swap, or with a full disk and half an output. Every layer checks
// with it (runs, meshing, outputs); standard C++ and POSIX only.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "Common/Errors.hpp"

namespace fm {
namespace resource_detail {

constexpr uint64_t kUnknown = std::numeric_limits<uint64_t>::max();

// The value of "Key:  N kB" in /proc/<file>, in bytes.
inline uint64_t procKb(const char* file, const std::string& key) {
    std::ifstream in(file);
    std::string k;
    uint64_t v;
    std::string unit;
    for (std::string line; std::getline(in, line);) {
        std::istringstream ls(line);
        if (ls >> k >> v && k == key + ":") return v * 1024;
    }
    return kUnknown;
}

// A single number in a file ("max" or absent: unknown).
inline uint64_t fileNumber(const char* path) {
    std::ifstream in(path);
    uint64_t v;
    return in >> v ? v : kUnknown;
}

// Room left under a cgroup's memory limit (v2, else v1).
inline uint64_t cgroupRoom() {
    uint64_t limit = fileNumber("/sys/fs/cgroup/memory.max"), used = fileNumber("/sys/fs/cgroup/memory.current");
    if (limit == kUnknown) {
        limit = fileNumber("/sys/fs/cgroup/memory/memory.limit_in_bytes");
        used = fileNumber("/sys/fs/cgroup/memory/memory.usage_in_bytes");
    }
    if (limit == kUnknown || limit >= (uint64_t(1) << 60)) return kUnknown;
    return used == kUnknown ? limit : (limit > used ? limit - used : 0);
}

// Room left under the address-space limit (ulimit -v).
inline uint64_t addressSpaceRoom() {
    rlimit rl{};
    if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return kUnknown;
    const uint64_t used = procKb("/proc/self/status", "VmSize");
    if (used == kUnknown) return rl.rlim_cur;
    return rl.rlim_cur > used ? rl.rlim_cur - used : 0;
}

}  // namespace resource_detail

// Bytes this process can still allocate, by the tightest of the limits above (UINT64_MAX when
// none can be read).
inline uint64_t availableMemoryBytes() {
    using namespace resource_detail;
    return std::min({procKb("/proc/meminfo", "MemAvailable"), cgroupRoom(), addressSpaceRoom()});
}

// Free bytes for an unprivileged writer on the file system holding `path` (UINT64_MAX when
// unknown).
inline uint64_t freeDiskBytes(const std::string& path) {
    struct statvfs s {};
    if (statvfs(path.empty() ? "." : path.c_str(), &s) != 0) return resource_detail::kUnknown;
    return uint64_t(s.f_bavail) * uint64_t(s.f_frsize);
}

// "9.83 TB", "4.5 GB", "120 MB", "512 bytes".
inline std::string bytesText(double bytes) {
    char b[64];
    if (bytes >= 1e12) std::snprintf(b, sizeof b, "%.3g TB", bytes / 1e12);
    else if (bytes >= 1e9) std::snprintf(b, sizeof b, "%.3g GB", bytes / 1e9);
    else if (bytes >= 1e6) std::snprintf(b, sizeof b, "%.3g MB", bytes / 1e6);
    else if (bytes >= 1e3) std::snprintf(b, sizeof b, "%.3g kB", bytes / 1e3);
    else std::snprintf(b, sizeof b, "%.0f bytes", bytes);
    return b;
}

// Throws ParameterError "<what> needs <N> of memory, <M> is available; <advice>" when bytes
// exceed availableMemoryBytes().
inline void requireMemory(double bytes, const std::string& what, const std::string& advice) {
    const uint64_t room = availableMemoryBytes();
    if (room != resource_detail::kUnknown && bytes > double(room))
        throw ParameterError(what + " needs " + bytesText(bytes) + " of memory, " + bytesText(double(room)) +
                             " is available; " + advice);
}

// Throws Error "<dir>: the outputs would take <N>, only <M> is free there" when bytes exceed
// freeDiskBytes(dir).
inline void requireDiskSpace(double bytes, const std::string& dir) {
    const uint64_t free = freeDiskBytes(dir);
    if (free != resource_detail::kUnknown && bytes > double(free))
        throw Error(dir + ": the outputs would take " + bytesText(bytes) + ", only " + bytesText(double(free)) +
                    " is free there");
}

}  // namespace fm
