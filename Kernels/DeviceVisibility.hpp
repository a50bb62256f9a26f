// SPDX-License-Identifier: GPL-3.0-or-later
// Only the GPUs a run uses are made visible to CUDA. The driver's initialisation sets up every
// visible device (with four GPUs visible a one-device run spends about twice as long outside its
// run as with one: docs/PERFORMANCE.md), and a context is only ever wanted on the devices named.
// So a command that knows its devices before its first CUDA call (fullmonte-run) narrows
// CUDA_VISIBLE_DEVICES to them and renumbers them 0..k-1.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace fm {

// The CUDA_VISIBLE_DEVICES value that shows only `requested` (device ids in the current
// numbering; empty = device 0), in that order, given the current value (nullptr: unset). Nothing
// where the request is every device ({-1}), repeats an id, or names an entry the current value
// does not have (CUDA then reports the missing device itself), or where the current value is empty.
std::optional<std::string> visibleDevicesFor(const std::vector<int>& requested, const char* current);

// Sets CUDA_VISIBLE_DEVICES as visibleDevicesFor says, before any CUDA call of the process, and
// returns the ids to use from then on (0..k-1); where nothing is set, `requested` unchanged.
std::vector<int> restrictVisibleDevices(const std::vector<int>& requested);

// After restrictVisibleDevices narrowed the devices: a note for error messages ("devices 0,5
// were made CUDA_VISIBLE_DEVICES=0,5 and renumbered 0,1"); empty otherwise.
std::string visibleDevicesNote();

}  // namespace fm
