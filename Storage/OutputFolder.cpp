// SPDX-License-Identifier: GPL-3.0-or-later
#include "Storage/OutputFolder.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/file.h>
#include <unistd.h>

#include "Common/Errors.hpp"

namespace fs = std::filesystem;

namespace fm {

const char* const kStagingPrefix = ".fullmonte-staging-";

namespace {

// The staged name of outputs[k]: its index and base name (outputs may name subfolders).
std::string stagedName(size_t k, const std::string& name) {
    return std::to_string(k) + "-" + fs::path(name).filename().string();
}

int lockFolder(const std::string& dir) {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) throw Error(dir + ": cannot open the output folder (" + std::strerror(errno) + ")");
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int err = errno;
        ::close(fd);
        if (err == EWOULDBLOCK)
            throw Error(dir + ": another FullMonte run is writing into this output folder; wait for it "
                              "to finish or choose another folder");
        throw Error(dir + ": cannot lock the output folder (" + std::strerror(err) + ")");
    }
    return fd;
}

void removeLeftoverStaging(const std::string& dir) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.path().filename().string().rfind(kStagingPrefix, 0) == 0) fs::remove_all(e.path(), ec);
}

void removeOutput(const std::string& path) {
    if (std::remove(path.c_str()) != 0 && errno != ENOENT)
        throw Error(path + ": cannot remove the output of an earlier run (" + std::strerror(errno) + ")");
}

// Outputs are removed and replaced by name: a name must stay inside the folder.
void checkName(const std::string& dir, const std::string& name) {
    const fs::path p(name);
    bool inside = !name.empty() && p.is_relative() && p.has_filename();
    for (const auto& part : p) inside = inside && part != "..";
    if (!inside)
        throw Error(dir + ": output '" + name + "' is not a relative path inside the output folder");
}

}  // namespace

OutputFolder::OutputFolder(const std::string& dir, std::vector<std::string> outputs)
    : dir_(dir.empty() ? "." : dir), outputs_(std::move(outputs)) {
    for (const auto& name : outputs_) checkName(dir_, name);
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (ec) throw Error(dir_ + ": cannot create the output folder (" + ec.message() + ")");
    lockFd_ = lockFolder(dir_);
    try {
        removeLeftoverStaging(dir_);
        if (!outputs_.empty()) removeOutput((fs::path(dir_) / outputs_.back()).string());
        for (const auto& name : outputs_) removeOutput((fs::path(dir_) / name).string());
        std::string pattern = (fs::path(dir_) / (std::string(kStagingPrefix) + "XXXXXX")).string();
        if (!::mkdtemp(pattern.data()))
            throw Error(dir_ + ": cannot write into the output folder (" + std::strerror(errno) + ")");
        staging_ = pattern;
    } catch (...) {
        ::close(lockFd_);
        throw;
    }
}

OutputFolder::~OutputFolder() {
    std::error_code ec;
    if (!staging_.empty()) fs::remove_all(staging_, ec);
    if (lockFd_ >= 0) ::close(lockFd_);  // releases the lock
}

std::string OutputFolder::staged(const std::string& name) const {
    for (size_t k = 0; k < outputs_.size(); ++k)
        if (outputs_[k] == name) return (fs::path(staging_) / stagedName(k, name)).string();
    throw Error("output folder " + dir_ + ": '" + name + "' is not one of the run's outputs");
}

void OutputFolder::publish(const std::vector<std::string>& only) {
    for (size_t k = 0; k < outputs_.size(); ++k) {
        if (!only.empty() && std::find(only.begin(), only.end(), outputs_[k]) == only.end()) continue;
        const std::string from = (fs::path(staging_) / stagedName(k, outputs_[k])).string();
        if (!fs::exists(from)) continue;
        const fs::path to = fs::path(dir_) / outputs_[k];
        std::error_code ec;
        fs::create_directories(to.parent_path(), ec);
        if (std::rename(from.c_str(), to.c_str()) != 0)
            throw Error(to.string() + ": cannot move the output into place (" + std::strerror(errno) + ")");
    }
    std::error_code ec;
    fs::remove_all(staging_, ec);
    staging_.clear();
}

}  // namespace fm
