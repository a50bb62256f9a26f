// SPDX-License-Identifier: GPL-3.0-or-later
#include "Kernels/DeviceVisibility.hpp"

#include <algorithm>
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
        entries = splitList(current);
        if (entries.empty() || std::any_of(entries.begin(), entries.end(), [](const std::string& e) { return e.empty(); }))
            return std::nullopt;  // "" (no device) or a malformed list: CUDA's reading of it stands
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

std::string visibleDevicesNote() {
    std::lock_guard<std::mutex> g(noteMutex);
    return note;
}

}  // namespace fm
