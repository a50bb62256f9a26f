// SPDX-License-Identifier: GPL-3.0-or-later
// The top level of the command-line tools: every failure becomes one line on stderr and an
// exit status (1 error, 128 + signal when stopped by SIGINT/SIGTERM); nothing reaches the user
// as an uncaught exception, a bare std::bad_alloc or std::terminate.
#pragma once
#include <iostream>
#include <new>

#include "Common/Interrupt.hpp"

namespace fm {

template <class Body>
int guardedMain(const char* tool, Body body) {
    try {
        return body();
    } catch (const Interrupted& e) {
        std::cerr << tool << ": " << e.what() << "; stopped (exit " << stoppedExitStatus() << ")\n";
        return stoppedExitStatus();
    } catch (const std::bad_alloc&) {
        std::cerr << tool << ": error: out of memory (a memory allocation failed); use a smaller model, "
                             "fewer threads or fewer bins, or raise the memory limit\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << tool << ": error: " << e.what() << "\n";
        return 1;
    } catch (...) {
        std::cerr << tool << ": error: unknown failure\n";
        return 1;
    }
}

}  // namespace fm
