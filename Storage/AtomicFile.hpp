// SPDX-License-Identifier: GPL-3.0-or-later
// Output written to a temporary file beside <path> ("<path>.<unique>.partial", so two writers of
// one path never share it) and renamed over <path> only on commit(), so a crash or an
// interrupted run never leaves a file that looks complete. Writes look at the stop flag
// (Common/Interrupt.hpp) at every buffer (64 KB) and throw Interrupted when a stop was
// requested, so a large file stops within milliseconds; a write that fails (disk full) throws
// Error naming the file at once instead of formatting the rest into a failed stream.
// A path naming a device, pipe or socket (/dev/stdout, /dev/null, a FIFO) is written into
// instead: renaming a file over it would replace the device node (root in a container: the
// container's /dev/null) or fail where /dev is not writable.
#pragma once
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <sys/stat.h>
#include <unistd.h>

#include "Common/Errors.hpp"
#include "Common/Interrupt.hpp"

namespace fm {

// "<path>.<pid>-<n>.partial": a temporary beside path, unique within the process (counter) and
// across processes (pid), so two writers of one path never write into the same temporary.
inline std::string uniqueTempPath(const std::string& path) {
    static std::atomic<unsigned> counter{0};
    return path + "." + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".partial";
}

// True when path exists and is neither a regular file nor a folder: a device, pipe or socket
// (links followed), which output must be written into rather than renamed over.
inline bool isSpecialFile(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

// Where a library that writes by file name (VTK, HDF5, PNG) stages path's content: beside path,
// or, for a device or pipe, in the temporary folder (/dev is often not writable).
inline std::string stagingPath(const std::string& path) {
    if (!isSpecialFile(path)) return uniqueTempPath(path);
    std::error_code ec;
    std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
    if (ec) dir = "/tmp";
    return uniqueTempPath((dir / ("fullmonte-" + std::filesystem::path(path).filename().string())).string());
}

// Throws Error "<path>: is a folder, not a file (give a file name)" when path names a folder: an
// output staged beside it would fail only at the end, when it cannot be renamed over the folder.
inline void refuseFolderOutput(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw Error(path + ": is a folder, not a file (give a file name)");
}

// The Error for a finished output that could not be moved to path (errno e, from moveIntoPlace
// or rename): "is a folder" when path is one, else the system's reason.
inline Error placeError(const std::string& path, int e) {
    if (e == EISDIR || e == ENOTEMPTY || e == EEXIST) return Error(path + ": is a folder, not a file (give a file name)");
    return Error(path + ": cannot be written (" + std::strerror(e ? e : EIO) + ")");
}

// Moves a finished staging file to path: renamed over it, or copied into a device or pipe and
// removed. False (errno set, the staging file removed) when that fails.
inline bool moveIntoPlace(const std::string& tmp, const std::string& path) {
    if (!isSpecialFile(path)) {
        if (std::rename(tmp.c_str(), path.c_str()) == 0) return true;
        const int e = errno;
        std::remove(tmp.c_str());
        errno = e;
        return false;
    }
    std::ifstream in(tmp, std::ios::binary);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (in && out) out << in.rdbuf();
    const bool ok = in && out && out.flush();
    const int e = errno;
    in.close();
    std::remove(tmp.c_str());
    errno = ok ? 0 : (e ? e : EIO);
    return ok;
}

// A file buffer that stops on a stop request and reports failed writes by throwing. The
// stream it sits under has badbit exceptions on, so libstdc++ passes these exceptions through.
// Only writes of new characters throw (overflow(c), xsputn): the flushes of close(), sync()
// and imbue() also run in destructors (a stream's format guard), where an exception would end
// the process; there a failure only returns the error, which commit() reports.
class CheckedFileBuf : public std::filebuf {
public:
    CheckedFileBuf(std::string path, bool stoppable) : path_(std::move(path)), stoppable_(stoppable) {
        buf_ = new char[kSize];
        setbuf(buf_, kSize);
    }
    ~CheckedFileBuf() override {
        close();
        delete[] buf_;
    }

protected:
    int_type overflow(int_type c) override {
        if (traits_type::eq_int_type(c, traits_type::eof())) return std::filebuf::overflow(c);
        check();
        int_type r = std::filebuf::overflow(c);
        if (traits_type::eq_int_type(r, traits_type::eof())) fail();
        return r;
    }
    std::streamsize xsputn(const char* s, std::streamsize n) override {
        check();
        std::streamsize r = std::filebuf::xsputn(s, n);
        if (r != n) fail();
        return r;
    }

private:
    static constexpr std::streamsize kSize = 1 << 16;
    void check() const {
        if (stoppable_ && stopRequested()) throw Interrupted(path_ + ": writing interrupted");
    }
    [[noreturn]] void fail() const {
        throw Error(path_ + ": write failed (" + std::strerror(errno ? errno : EIO) + "; disk full or not writable?)");
    }
    std::string path_;
    bool stoppable_;
    char* buf_ = nullptr;
};

class AtomicFile {
public:
    enum class Stop { check, ignore };  // ignore: a file that must be written even after a stop
    explicit AtomicFile(const std::string& path, Stop stop = Stop::check)
        : path_(path), inPlace_(isSpecialFile(path)), tmp_(inPlace_ ? path : uniqueTempPath(path)),
          buf_(path, stop == Stop::check), out(&buf_) {
        refuseFolderOutput(path);
        if (!buf_.open(tmp_, std::ios::out | std::ios::binary | std::ios::trunc)) {
            const std::string why = std::strerror(errno);
            if (!inPlace_) std::remove(tmp_.c_str());
            throw Error(path + ": cannot open for writing (" + why + ")");
        }
        out.exceptions(std::ios::badbit);
        out.precision(9);
    }
    ~AtomicFile() {
        if (!committed_) {
            try {
                buf_.close();
            } catch (...) {
            }
            if (!inPlace_) std::remove(tmp_.c_str());
        }
    }
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    void commit() {
        // The last buffer's flush fails on a full disk; with badbit exceptions on, the stream
        // would throw its own "iostream error" instead of a message naming the file.
        errno = 0;
        bool ok = true;
        try {
            out.flush();
        } catch (const std::ios_base::failure&) {
            ok = false;
        }
        ok = ok && bool(out) && buf_.close() != nullptr;
        if (!ok) {
            const int e = errno;
            if (!inPlace_) std::remove(tmp_.c_str());
            throw Error(path_ + ": write failed (" + (e ? std::string(std::strerror(e)) + "; " : std::string()) +
                        "disk full or not writable?)");
        }
        if (inPlace_) {
            committed_ = true;
            return;
        }
        if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
            const int e = errno;
            std::remove(tmp_.c_str());
            throw placeError(path_, e);
        }
        committed_ = true;
    }
    const std::string& tempPath() const { return tmp_; }

private:
    std::string path_;
    bool inPlace_;  // a device or pipe: written directly, nothing to rename
    std::string tmp_;
    CheckedFileBuf buf_;
    bool committed_ = false;

public:
    std::ostream out;
};

}  // namespace fm
