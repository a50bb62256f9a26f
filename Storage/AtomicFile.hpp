// SPDX-License-Identifier: GPL-3.0-or-later
// Output written to a temporary file beside <path> ("<path>.<unique>.partial", so two writers of
// one path never share it) and renamed over <path> only on commit(), so a crash or an
// interrupted run never leaves a file that looks complete. Writes look at the stop flag
// (Common/Interrupt.hpp) at every buffer (64 KB) and throw Interrupted when a stop was
// requested, so a large file stops within milliseconds; a write that fails (disk full) throws
// Error naming the file at once instead of formatting the rest into a failed stream.
#pragma once
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
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
        : path_(path), tmp_(uniqueTempPath(path)), buf_(path, stop == Stop::check), out(&buf_) {
        if (!buf_.open(tmp_, std::ios::out | std::ios::binary | std::ios::trunc)) {
            const std::string why = std::strerror(errno);
            std::remove(tmp_.c_str());
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
            std::remove(tmp_.c_str());
        }
    }
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    void commit() {
        out.flush();
        bool ok = bool(out) && buf_.close() != nullptr;
        if (!ok) {
            std::remove(tmp_.c_str());
            throw Error(path_ + ": write failed (disk full or not writable?)");
        }
        if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
            const int e = errno;
            std::remove(tmp_.c_str());
            if (e == EISDIR || e == ENOTEMPTY || e == EEXIST)
                throw Error(path_ + ": is a folder, not a file (give a file name)");
            throw Error(path_ + ": cannot be written (" + std::strerror(e) + ")");
        }
        committed_ = true;
    }
    const std::string& tempPath() const { return tmp_; }

private:
    std::string path_, tmp_;
    CheckedFileBuf buf_;
    bool committed_ = false;

public:
    std::ostream out;
};

}  // namespace fm
