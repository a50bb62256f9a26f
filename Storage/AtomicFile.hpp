// Output written to "<path>.partial" and renamed over <path> only on commit(), so a crash or an
// interrupted run never leaves a file that looks complete.
#pragma once
#include <cstdio>
#include <fstream>
#include <string>

#include "Geometry/Errors.hpp"

namespace fm {

class AtomicFile {
public:
    explicit AtomicFile(const std::string& path) : path_(path), tmp_(path + ".partial") {
        out.open(tmp_, std::ios::binary | std::ios::trunc);
        if (!out) throw Error(path + ": cannot open for writing");
        out.precision(9);
    }
    ~AtomicFile() {
        if (!committed_) {
            out.close();
            std::remove(tmp_.c_str());
        }
    }
    void commit() {
        out.flush();
        bool ok = bool(out);
        out.close();
        if (!ok || std::rename(tmp_.c_str(), path_.c_str()) != 0) {
            std::remove(tmp_.c_str());
            throw Error(path_ + ": write failed (disk full or not writable?)");
        }
        committed_ = true;
    }
    std::ofstream out;

private:
    std::string path_, tmp_;
    bool committed_ = false;
};

}  // namespace fm
