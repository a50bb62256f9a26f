// SPDX-License-Identifier: GPL-3.0-or-later
// `fullmonte-run --batch-sources ...`: a batch of runs over one mesh (Kernels/Batch.hpp), written
// as a fluence matrix (docs/FLUENCE_MATRIX.md; + HDF5 when built) and summary.json.
#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "Geometry/MaterialSet.hpp"
#include "Geometry/TetraMesh.hpp"
#include "Kernels/KernelInput.hpp"
#include "Kernels/MPI/MpiRun.hpp"

namespace fm {

// The files a --batch-sources argument names, read (BatchCommand.cpp): read once for both the work
// estimate before CUDA starts and the batch.
struct BatchSourceFiles;

struct BatchCommand {
    const TetraMesh* mesh = nullptr;
    const MaterialSet* materials = nullptr;  // --opt, when given (used without --batch-opt)
    std::string materialsFile;               // its path, for the summary
    std::string sources;                     // --batch-sources: list file, .source file or folder
    std::string materialSets;                // --batch-opt: list file, .opt file or folder (optional)
    bool packetsGiven = false;               // --packets overrides the source files' counts
    bool specularAtEntry = true;             // false: --no-entry-specular
    RunOptions opt;                          // packets, seed, threads, params, outputs, devices
    bool seedDrawn = false;                  // opt's seed was drawn from the clock (MMC's negative seed)
    std::string kernel = "cpu";
    std::string output;
    bool quiet = false;
    const std::atomic<bool>* cancel = nullptr;
    std::vector<std::string> warnings;       // the mesh's (shown already); kept in summary.json
    std::shared_ptr<BatchSourceFiles> sourceFiles;  // `sources` read already (batchPacketEstimate), or null
};

// The packets of the whole batch that `sources` (--batch-sources) and `materialSets` (--batch-opt,
// may be empty) name, with --packets when `packetsGiven`: the work estimate for the choice of
// devices before CUDA starts. 0 where the files do not tell (the batch reports bad input itself).
// The source files read are left in *read (when given) for BatchCommand::sourceFiles.
double batchPacketEstimate(const std::string& sources, const std::string& materialSets, bool packetsGiven,
                           uint64_t packets, std::shared_ptr<BatchSourceFiles>* read = nullptr);

// Returns the exit status (0 done, 130 interrupted); throws fm::Error for bad input.
int runBatchCommand(const BatchCommand& c, const MpiSession& mpi);

}  // namespace fm
