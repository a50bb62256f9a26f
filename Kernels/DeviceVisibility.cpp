// SPDX-License-Identifier: GPL-3.0-or-later
#include "Kernels/DeviceVisibility.hpp"

#include <algorithm>
#include <cmath>
#include <dirent.h>
#include <cstdlib>
#include <mutex>
#include <set>
#include <sstream>

namespace fm {
namespace {

std::vector<std::string> splitList(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) {
        const auto b = item.find_first_not_of(" \t");
        const auto e = item.find_last_not_of(" \t");
        out.push_back(b == std::string::npos ? std::string() : item.substr(b, e - b + 1));
    }
    return out;
}

std::string joinList(const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + v[i];
    return s;
}

// The entries of a CUDA_VISIBLE_DEVICES value; nothing for "" (no device) or a malformed list
// (an empty entry), whose reading CUDA keeps.
std::optional<std::vector<std::string>> visibleEntries(const char* value) {
    std::vector<std::string> entries = splitList(value);
    if (entries.empty() || std::any_of(entries.begin(), entries.end(), [](const std::string& e) { return e.empty(); }))
        return std::nullopt;
    return entries;
}

std::mutex noteMutex;
std::string note;

}  // namespace

std::optional<std::string> visibleDevicesFor(const std::vector<int>& requested, const char* current) {
    std::vector<int> ids = requested.empty() ? std::vector<int>{0} : requested;
    if (ids.size() == 1 && ids[0] < 0) return std::nullopt;  // every device
    if (std::set<int>(ids.begin(), ids.end()).size() != ids.size()) return std::nullopt;
    if (*std::min_element(ids.begin(), ids.end()) < 0) return std::nullopt;
    std::vector<std::string> entries;
    if (current) {
        std::optional<std::vector<std::string>> listed = visibleEntries(current);
        if (!listed) return std::nullopt;  // "" (no device) or a malformed list: CUDA's reading of it stands
        entries = std::move(*listed);
    }
    std::vector<std::string> chosen;
    for (int d : ids) {
        if (current && size_t(d) >= entries.size()) return std::nullopt;
        chosen.push_back(current ? entries[size_t(d)] : std::to_string(d));
    }
    return joinList(chosen);
}

std::vector<int> restrictVisibleDevices(const std::vector<int>& requested) {
    const std::optional<std::string> v = visibleDevicesFor(requested, std::getenv("CUDA_VISIBLE_DEVICES"));
    if (!v) return requested;
    if (setenv("CUDA_VISIBLE_DEVICES", v->c_str(), 1) != 0) return requested;
    const size_t k = requested.empty() ? 1 : requested.size();
    std::vector<int> renumbered;
    std::string was, now;
    for (size_t i = 0; i < k; ++i) {
        renumbered.push_back(int(i));
        was += (i ? "," : "") + std::to_string(requested.empty() ? 0 : requested[i]);
        now += (i ? "," : "") + std::to_string(i);
    }
    std::lock_guard<std::mutex> g(noteMutex);
    note = "devices " + was + " were made CUDA_VISIBLE_DEVICES=" + *v + " and renumbered " + now;
    return renumbered;
}

std::vector<int> devicesOfLocalRank(const std::vector<int>& requested, int localRank, int localSize, size_t present) {
    if (localSize <= 1 || localRank < 0 || localRank >= localSize) return requested;
    const bool every = requested.empty() || (requested.size() == 1 && requested[0] < 0);
    std::vector<int> pool = requested;
    if (every) {
        if (present == 0) return requested;
        pool.clear();
        for (size_t d = 0; d < present; ++d) pool.push_back(int(d));
    }
    const size_t r = size_t(localRank), n = size_t(localSize);
    if (pool.size() < n || requested.empty()) return {pool[r % pool.size()]};
    std::vector<int> mine;
    for (size_t i = r; i < pool.size(); i += n) mine.push_back(pool[i]);
    return mine;
}

std::string visibleDevicesNote() {
    std::lock_guard<std::mutex> g(noteMutex);
    return note;
}

}  // namespace fm

namespace fm {

double gpuSecondsPerPacket(size_t tetras) {
    // (tetras, seconds per packet): FourLayer, cube_5med, Digimouse 996k, Digimouse 2.46M.
    static const double kModel[][2] = {{9600, 4.5e-9}, {48000, 1.0e-8}, {996468, 2.5e-8}, {2456256, 3.9e-8}};
    const size_t n = sizeof(kModel) / sizeof(kModel[0]);
    const double t = double(std::max<size_t>(tetras, 1));
    if (t <= kModel[0][0]) return kModel[0][1];
    for (size_t i = 1; i < n; ++i)
        if (t <= kModel[i][0]) {
            const double f = std::log(t / kModel[i - 1][0]) / std::log(kModel[i][0] / kModel[i - 1][0]);
            return kModel[i - 1][1] * std::pow(kModel[i][1] / kModel[i - 1][1], f);
        }
    return kModel[n - 1][1] * t / kModel[n - 1][0];  // beyond the largest mesh measured: in proportion
}

size_t devicesWorthUsing(double packets, size_t tetras) {
    const double w = std::max(0.0, packets) * gpuSecondsPerPacket(tetras);
    size_t n = 1;
    // W/N + c(N-1) falls while W/N - W/(N+1) > c, i.e. W > c N (N+1).
    while (n < 4096 && w > kExtraDeviceSeconds * double(n) * double(n + 1)) ++n;
    return n;
}

namespace {
// GPUs the NVIDIA driver lists (without a CUDA call); 0 where it cannot tell.
size_t driverGpuCount() {
    size_t n = 0;
    if (DIR* d = opendir("/proc/driver/nvidia/gpus")) {
        while (const dirent* e = readdir(d))
            if (e->d_name[0] != '.') ++n;
        closedir(d);
    }
    return n;
}
// The devices this process may use, as CUDA_VISIBLE_DEVICES entries: its entries where it is
// set, else "0".."n-1" for the GPUs the driver lists; nothing for "" or a malformed list.
std::optional<std::vector<std::string>> visibleNow() {
    if (const char* current = std::getenv("CUDA_VISIBLE_DEVICES")) return visibleEntries(current);
    std::vector<std::string> entries;
    for (size_t i = 0, n = driverGpuCount(); i < n; ++i) entries.push_back(std::to_string(i));
    return entries;
}
}  // namespace

size_t visibleDeviceCount() {
    const std::optional<std::vector<std::string>> entries = visibleNow();
    return entries ? entries->size() : 0;
}

size_t devicesForWork(const std::vector<int>& requested, size_t present, double packets, size_t tetras) {
    if (!(requested.size() == 1 && requested[0] < 0) || packets <= 0 || tetras == 0) return present;
    const char* off = std::getenv("FM_DEVICES_BY_WORK");
    if (off && std::string(off) == "0") return present;
    return std::min(present, devicesWorthUsing(packets, tetras));
}

size_t restrictDevicesForWork(const std::vector<int>& requested, double packets, size_t tetras) {
    std::optional<std::vector<std::string>> listed = visibleNow();
    if (!listed) return 0;
    std::vector<std::string>& entries = *listed;
    const size_t want = devicesForWork(requested, entries.size(), packets, tetras);
    if (entries.empty() || want >= entries.size()) return 0;  // every device is worth it (or unknown)
    entries.resize(want);
    const std::string v = joinList(entries);
    if (setenv("CUDA_VISIBLE_DEVICES", v.c_str(), 1) != 0) return 0;
    std::lock_guard<std::mutex> g(noteMutex);
    note = "--devices all: " + std::to_string(want) + " device" + (want > 1 ? "s" : "") +
           " worth using for this work (CUDA_VISIBLE_DEVICES=" + v + "; FM_DEVICES_BY_WORK=0 or a list of devices uses more)";
    return want;
}

}  // namespace fm
