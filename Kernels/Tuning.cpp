// SPDX-License-Identifier: GPL-3.0-or-later
// The tuning knobs from the environment (Kernels/Tuning.hpp): the one place that reads them.
#include "Kernels/Tuning.hpp"

#include <cstdlib>
#include <string>

#include "Common/Errors.hpp"
#include "Kernels/Core/CellLayout.hpp"

namespace fm {

namespace {

// A whole number 1..max from variable `name`, or `unset` where it is not set.
uint32_t positiveFromEnv(const char* name, uint32_t unset, uint32_t max) {
    const char* e = std::getenv(name);
    if (!e || !*e) return unset;
    char* end = nullptr;
    const long v = std::strtol(e, &end, 10);
    if (*end != '\0' || v < 1 || v > long(max))
        throw ParameterError(std::string(name) + "=" + e + ": expected a whole number from 1 to " + std::to_string(max));
    return uint32_t(v);
}

// "0" or "1" from variable `name`, or `unset` where it is not set.
bool flagFromEnv(const char* name, bool unset) {
    const char* e = std::getenv(name);
    if (!e || !*e) return unset;
    const std::string v = e;
    if (v != "0" && v != "1") throw ParameterError(std::string(name) + "=" + v + ": expected 0 or 1");
    return v == "1";
}

}  // namespace

TuningKnobs tuningFromEnvironment() {
    TuningKnobs t;
    t.cudaBlocksPerSm = positiveFromEnv("FM_CUDA_BLOCKS_PER_SM", 0, 64);
    t.mcmlGroupCrossings = flagFromEnv("FM_CUDA_MCML_GROUP_CROSSINGS", true);
    t.mcmlCellRows = flagFromEnv("FM_CUDA_MCML_CELL_ROWS", true);
    t.cudaDeviceRecordOrder = flagFromEnv("FM_CUDA_DEVICE_RECORD_ORDER", true);
    t.mcmlRzReplicas = positiveFromEnv("FM_CUDA_RZ_REPLICAS", 0, 1024);
    t.mcmlRzNearCopies = positiveFromEnv("FM_CUDA_RZ_NEAR_COPIES", 0, 1024);
    t.mcmlRzNearBins = positiveFromEnv("FM_CUDA_RZ_NEAR_BINS", 0, 1u << 20);
    t.batchSlotsPerDevice = positiveFromEnv("FM_BATCH_SLOTS_PER_DEVICE", 0, 2);
    t.batchRunsPerLaunch = positiveFromEnv("FM_BATCH_RUNS_PER_LAUNCH", 0, 64);
    t.cudaGroupBlocksPerSm = positiveFromEnv("FM_CUDA_GROUP_BLOCKS_PER_SM", 0, 4);
    if (t.cudaGroupBlocksPerSm && t.cudaGroupBlocksPerSm < 3)
        throw ParameterError("FM_CUDA_GROUP_BLOCKS_PER_SM=" + std::to_string(t.cudaGroupBlocksPerSm) + ": expected 3 or 4");
    if (const char* isa = std::getenv("FM_CPU_ISA"); isa && *isa) {
        const std::string v = isa;
        if (v == "generic") t.cpuIsa = CpuIsa::Generic;
        else if (v != "best" && v != "avx2")
            throw ParameterError("FM_CPU_ISA=" + v + ": expected generic, avx2 or best");
    }
    if (const char* l = std::getenv("FM_CUDA_CELL_LAYOUT"); l && *l) {
        const std::string v = l;
        if (v == "split") t.cudaCellLayout = CellLayout::Split;
        else if (v == "record") t.cudaCellLayout = CellLayout::Record;
        else if (v == "compact") t.cudaCellLayout = CellLayout::Compact;
        else if (v != "auto") throw ParameterError("FM_CUDA_CELL_LAYOUT=" + v + ": expected auto, record, split or compact");
    }
    return t;
}

void preferOneCudaQueue() { setenv("CUDA_DEVICE_MAX_CONNECTIONS", "1", 0); }

}  // namespace fm
