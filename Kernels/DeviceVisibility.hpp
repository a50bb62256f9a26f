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

// How many GPUs this process may use, without a CUDA call: the entries of CUDA_VISIBLE_DEVICES
// where it is set (0 for "" or a malformed list), else the GPUs the NVIDIA driver lists; 0 where
// it cannot tell.
size_t visibleDeviceCount();

// Under mpirun with `localSize` ranks on one host: the devices (current numbering) that rank
// `localRank` of the host uses, so that the host's ranks do not all crowd onto device 0. The
// pool is the --devices list (`requested`), or every one of the `present` devices where it was
// not given (empty) or is every device ({-1}). With at least as many devices as ranks, a rank
// that gave no list takes pool[localRank], one with a list or `all` takes every localSize-th
// entry from its own; with fewer devices than ranks, ranks share them round robin
// (pool[localRank % pool size]). One rank on the host (or an unknown device count with no list)
// leaves `requested` as it is.
std::vector<int> devicesOfLocalRank(const std::vector<int>& requested, int localRank, int localSize, size_t present);

// After restrictVisibleDevices narrowed the devices: a note for error messages ("devices 0,5
// were made CUDA_VISIBLE_DEVICES=0,5 and renumbered 0,1"); empty otherwise.
std::string visibleDevicesNote();

}  // namespace fm

namespace fm {

// How many GPUs a piece of work is worth (issue 29: a batch never slower on N GPUs than on one).
// Each extra device costs about kExtraDeviceSeconds before it does any work (the driver's
// initialisation of a visible device and its context), so work of W seconds on one GPU takes
// about W / N + kExtraDeviceSeconds * (N - 1) on N: short work goes to one device, long work to
// all of them. W comes from a rate model of one GPU's packets per second by mesh size
// (gpuSecondsPerPacket), decided before the first CUDA call.
constexpr double kExtraDeviceSeconds = 0.2;

// One GPU's seconds per packet on a mesh of `tetras` tetras: log-log interpolation between
// kernel times measured on an H100 (docs/PERFORMANCE.md: 9.6k, 48k, 996k and 2.46M tetras);
// clamped at the ends. A model, used only to choose how many devices to bring up.
double gpuSecondsPerPacket(size_t tetras);

// The number of devices (>= 1) that minimises W / N + kExtraDeviceSeconds * (N - 1) for
// `packets` packets over `tetras` tetras.
size_t devicesWorthUsing(double packets, size_t tetras);

// How many of `present` devices a request should use for `packets` packets over `tetras` tetras:
// for a request of every device ({-1}), devicesWorthUsing capped at `present`; otherwise (an
// explicit list, FM_DEVICES_BY_WORK=0, unknown work) `present`.
size_t devicesForWork(const std::vector<int>& requested, size_t present, double packets, size_t tetras);

// For a request of every device ({-1}) and work of `packets` over `tetras` tetras: where fewer
// devices are worth using than are present, narrows CUDA_VISIBLE_DEVICES to the first ones
// (before any CUDA call) and says so in visibleDevicesNote; the request stays {-1} (every visible
// device). An explicit list of devices is used as given. Environment FM_DEVICES_BY_WORK=0 turns
// the estimate off. Returns how many devices were kept (0: not narrowed).
size_t restrictDevicesForWork(const std::vector<int>& requested, double packets, size_t tetras);

}  // namespace fm
