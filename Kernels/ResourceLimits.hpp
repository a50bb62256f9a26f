// SPDX-License-Identifier: GPL-3.0-or-later
// What a run may use, checked before the work starts: memory (the machine's available memory,
// a container's cgroup limit, the address-space limit of ulimit -v) and disk (free space in
// the output folder). A request beyond them is refused with the numbers, instead of failing
// later with std::bad_alloc, in swap, or with a full disk and half an output.
#pragma once
#include <cstdint>
#include <string>

namespace fm {

// Bytes this process can still allocate, by the tightest of the limits above (UINT64_MAX when
// none can be read).
uint64_t availableMemoryBytes();

// Free bytes for an unprivileged writer on the file system holding `path` (UINT64_MAX when
// unknown).
uint64_t freeDiskBytes(const std::string& path);

// "9.83 TB", "4.5 GB", "120 MB", "512 bytes".
std::string bytesText(double bytes);

// Throws ParameterError "<what> needs <N> of memory, <M> is available; <advice>" when bytes
// exceed availableMemoryBytes().
void requireMemory(double bytes, const std::string& what, const std::string& advice);

// Throws Error "<dir>: the outputs would take <N>, only <M> is free there" when bytes exceed
// freeDiskBytes(dir).
void requireDiskSpace(double bytes, const std::string& dir);

}  // namespace fm
