// SPDX-License-Identifier: GPL-3.0-or-later
// An output folder that never mixes runs. A run locks the folder (flock: a second run into it
// fails at once with a clear error), removes the outputs an earlier run left there (summary.json
// first, so a run stopped half way never leaves a folder that looks complete), writes its files
// into a private hidden staging folder inside it, and publish() renames them into place
// (the marker file, summary.json, last). A run that fails or is interrupted before publish()
// leaves no outputs; leftovers of a killed run (SIGKILL) are removed by the next run.
#pragma once
#include <string>
#include <vector>

namespace fm {

class OutputFolder {
public:
    // dir is created if needed. outputs: every file name (relative to dir) this run may write,
    // in publishing order; the last is the marker that says the run is complete (it is removed
    // first); each a relative path inside dir (no absolute path, no ".."). Throws Error for a
    // name outside dir, when dir cannot be created or written, or another run holds it.
    OutputFolder(const std::string& dir, std::vector<std::string> outputs);
    ~OutputFolder();  // removes the staging folder and releases the lock
    OutputFolder(const OutputFolder&) = delete;
    OutputFolder& operator=(const OutputFolder&) = delete;

    // Where to write output `name` (one of outputs) before publish().
    std::string staged(const std::string& name) const;
    // Renames every staged output (or only those named in `only`) into dir, in the order given
    // to the constructor, then removes the staging folder and what else is staged there.
    void publish(const std::vector<std::string>& only = {});
    const std::string& dir() const { return dir_; }

private:
    std::string dir_, staging_;
    std::vector<std::string> outputs_;
    int lockFd_ = -1;
};

// The prefix of staging folders inside an output folder (".fullmonte-staging-").
extern const char* const kStagingPrefix;

}  // namespace fm
