// SPDX-License-Identifier: GPL-3.0-or-later
// A terminal progress bar on stderr, silent when stderr is not a terminal.
#pragma once
#include <cstdint>
#include <chrono>
#include <cstdio>
#include <unistd.h>

namespace fm {

class ProgressBar {
public:
    explicit ProgressBar(bool enabled = true) : on_(enabled && isatty(2)) {}
    void operator()(uint64_t done, uint64_t total) {
        if (!on_ || total == 0) return;
        auto now = std::chrono::steady_clock::now();
        if (done < total && now - last_ < std::chrono::milliseconds(200)) return;
        last_ = now;
        int width = 40, fill = int(width * double(done) / double(total));
        std::fprintf(stderr, "\r[%.*s%*s] %5.1f%% %llu/%llu packets", fill,
                     "########################################", width - fill, "",
                     100.0 * double(done) / double(total), (unsigned long long)done,
                     (unsigned long long)total);
        if (done >= total) std::fprintf(stderr, "\n");
        std::fflush(stderr);
    }

private:
    bool on_;
    std::chrono::steady_clock::time_point last_{};
};

}  // namespace fm
