// SPDX-License-Identifier: GPL-3.0-or-later
// Private to Geometry/Meshing: option checks, defaults and stage progress shared by the meshers.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "Geometry/Meshing/Mesher.hpp"

namespace fm {

// Reports "stage..." at start, "stage: N s (detail)" at the end, and "stage: N s so far" every
// few seconds in between (from a helper thread), through MeshingOptions::progress.
class StageReporter {
public:
    explicit StageReporter(std::function<void(const std::string&)> sink, double tickSeconds = 5);
    ~StageReporter();
    void start(const std::string& stage);
    void end(const std::string& detail = "");

private:
    void tick();
    std::function<void(const std::string&)> sink_;
    double tickSeconds_;
    std::string stage_;
    std::chrono::steady_clock::time_point t0_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool running_ = false, quit_ = false;
    std::thread ticker_;
};

}  // namespace fm
