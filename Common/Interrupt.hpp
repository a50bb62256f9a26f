// SPDX-License-Identifier: GPL-3.0-or-later
// Stop requests. The command-line tools turn SIGINT and SIGTERM into a flag here (the handler
// only sets it and wakes a watchdog); kernels look at it between packets and events
// (RunOptions::cancel points at stopFlag) and long writes between buffers (AtomicFile), so a
// run stops within a fraction of a second in any phase and exits with 128 + the signal number
// (130 SIGINT, 143 SIGTERM).
#pragma once
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <semaphore.h>
#include <string>
#include <system_error>
#include <thread>
#include <unistd.h>

#include "Common/Errors.hpp"

namespace fm {

// Work stopped by a stop request (not a failure of the work itself).
struct Interrupted : Error {
    using Error::Error;
};

inline std::atomic<bool> gStopFlag{false};
inline std::atomic<int> gStopSignal{0};
inline sem_t gStopSemaphore;  // posted by the handler (async-signal-safe), wakes the watchdog

// How long a stop request may take before the watchdog ends the process: the work then is
// blocked where no flag is read (a GPU kernel with a packet trapped under a raised guard, an
// MPI collective, a hung file system). The outputs are staged (Storage/OutputFolder.hpp), so
// the folder then holds no outputs of the run, only an unfinished staging folder that the
// next run removes.
constexpr unsigned kStopGraceMs = 1000;

inline std::atomic<bool>& stopFlag() { return gStopFlag; }
inline bool stopRequested() { return gStopFlag.load(std::memory_order_relaxed); }

// The exit status of a stopped run: 128 + the signal (130 when stopped without one).
inline int stoppedExitStatus() {
    const int sig = gStopSignal.load();
    return 128 + (sig ? sig : SIGINT);
}

extern "C" inline void fmStopHandler(int sig) {
    // A second signal ends the process at once (the user insists): the default action.
    if (gStopFlag.load()) {
        std::signal(sig, SIG_DFL);
        std::raise(sig);
        return;
    }
    gStopSignal = sig;
    gStopFlag = true;
    sem_post(&gStopSemaphore);
}

// SIGINT and SIGTERM request a stop instead of ending the process; a watchdog thread ends the
// process with the stop's exit status if it has not ended kStopGraceMs after the request.
// Calls after the first do nothing.
inline void installStopHandlers() {
    static std::once_flag once;
    std::call_once(once, [] {
        sem_init(&gStopSemaphore, 0, 0);
        try {
            std::thread([] {
                while (sem_wait(&gStopSemaphore) != 0) {
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(kStopGraceMs));
                static const char kMsg[] = "fullmonte: stopped (the work in progress did not end within 1 s)\n";
                ssize_t ignored = ::write(2, kMsg, sizeof kMsg - 1);
                (void)ignored;
                std::_Exit(stoppedExitStatus());
            }).detach();
        } catch (const std::system_error&) {  // no thread to spare: stops rely on the flag alone
        }
        std::signal(SIGINT, fmStopHandler);
        std::signal(SIGTERM, fmStopHandler);
    });
}

// Throws Interrupted ("<what>: interrupted") when a stop was requested.
inline void throwIfStopped(const std::string& what) {
    if (stopRequested()) throw Interrupted(what + ": interrupted");
}

}  // namespace fm
