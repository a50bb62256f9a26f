// SPDX-License-Identifier: GPL-3.0-or-later
// fullmonte-plan PLAN.json -o DIR: simulates the plan's candidate sources (or reuses a saved
// fluence matrix), optimises their energies by linear programming and writes the plan's report,
// tables, dose and pictures into DIR (docs/PLANNING.md).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "Common/Errors.hpp"
#include "Kernels/DeviceVisibility.hpp"
#include "Kernels/MPI/MpiRun.hpp"
#include "Kernels/Tuning.hpp"
#include "Planning/LinearProgram.hpp"
#include "Planning/Optimizer.hpp"
#include "Planning/Report.hpp"
#include "Planning/Simulate.hpp"
#include "Storage/FluenceMatrix/FluenceMatrix.hpp"

using namespace fm;
using namespace fm::planning;

namespace {

double since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::atomic<bool> gCancel{false};
extern "C" void onInterrupt(int) { gCancel = true; }

const char* kUsage =
    "usage: fullmonte-plan PLAN.json -o DIR [options]\n"
    "  -o, --output DIR       output folder (written whole or not at all)\n"
    "  --overwrite            replace DIR if it exists\n"
    "  --matrix FILE          reuse a saved fluence matrix (e.g. DIR/fluence_matrix.fmm of an earlier run)\n"
    "  --matrix-batches K     its columns are K batches x the plan's sources (default: its columns /\n"
    "                         the plan's sources)\n"
    "  --matrix-unchecked     reuse it even where its model fingerprint (mesh, materials, sources,\n"
    "                         packets) differs from the plan's (a warning instead of an error)\n"
    "  --solver clp|glpk      LP solver (default: the plan's, else the first built)\n"
    "  --quiet                no progress\n"
    "Exit status: 0 plan found, 2 prescription infeasible (DIR/plan.json names the conflicting\n"
    "constraints), 1 bad input or failure, 130 interrupted.\n";

struct Args {
    std::string plan, out, matrix, solver;
    int matrixBatches = 0;
    bool overwrite = false, quiet = false, matrixUnchecked = false;
};

Args parseArgs(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        std::string s = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw ParameterError(s + " needs a value");
            return argv[++i];
        };
        if (s == "-o" || s == "--output") a.out = value();
        else if (s == "--overwrite") a.overwrite = true;
        else if (s == "--matrix") a.matrix = value();
        else if (s == "--matrix-unchecked") a.matrixUnchecked = true;
        else if (s == "--matrix-batches") {
            std::string v = value();
            char* end = nullptr;
            long k = std::strtol(v.c_str(), &end, 10);
            if (*end || k < 1 || k > 64) throw ParameterError("--matrix-batches: expected 1..64, got '" + v + "'");
            a.matrixBatches = int(k);
        } else if (s == "--solver") a.solver = value();
        else if (s == "--quiet") a.quiet = true;
        else if (s == "-h" || s == "--help") {
            std::cout << kUsage;
            std::exit(0);
        } else if (!s.empty() && s[0] == '-') throw ParameterError("unknown option " + s + "\n" + kUsage);
        else if (a.plan.empty()) a.plan = s;
        else throw ParameterError("more than one plan file given ('" + a.plan + "', '" + s + "')");
    }
    if (a.plan.empty() || a.out.empty()) throw ParameterError(std::string("a plan file and -o DIR are required\n") + kUsage);
    return a;
}

// Under MPI (mpirun -n N fullmonte-plan ...) every rank reads the plan and takes whole runs of the
// simulation; rank 0 optimises and writes.
int run(const Args& a, const MpiSession& mpi) {
    const auto t0 = std::chrono::steady_clock::now();  // stage lines show the seconds since
    PlanSpec plan = readPlanFile(a.plan);
    if (plan.simulation.kernel == "cuda") {  // before the first CUDA call: only the GPUs used are visible
        std::vector<int>& devices = plan.simulation.devices;
        if (mpi.localSize() > 1) devices = devicesOfLocalRank(devices, mpi.localRank(), mpi.localSize(), visibleDeviceCount());
        devices = restrictVisibleDevices(devices);
    }
    if (!a.solver.empty()) plan.prescription.solver = a.solver;
    solve(LinearProgram{}, plan.prescription.solver);  // an unknown solver fails now, not after the runs
    const bool root = mpi.rank() == 0;
    std::string folderError;
    if (root) try {
            checkOutputFolder(a.out, a.overwrite);
        } catch (const Error& e) {
            folderError = e.what();
        }
    if (!mpi.allAgree(folderError.empty())) {
        if (!folderError.empty()) throw ParameterError(folderError);
        return 1;  // rank 0 says why
    }
    PlanRecord rec;
    rec.plan = &plan;
    DoseMatrix matrix;
    const bool bar = root && !a.quiet && isatty(2);
    const bool reuse = !a.matrix.empty() || !plan.simulation.matrixFile.empty();
    if (reuse && !root) return 0;
    if (reuse) {
        MatrixReuse r;
        r.file = a.matrix.empty() ? plan.simulation.matrixFile : a.matrix;
        // 0: as many batches as the matrix's columns hold of the plan's sources (doseMatrixFrom).
        r.batches = a.matrixBatches ? a.matrixBatches : a.matrix.empty() ? plan.simulation.matrixBatches : 0;
        r.unchecked = a.matrixUnchecked || plan.simulation.matrixUnchecked;
        r.uncheckedOption = "--matrix-unchecked (or \"matrix_unchecked\": true in the plan's simulation)";
        if (!a.quiet) std::fprintf(stderr, "fullmonte-plan: reading %s\n", r.file.c_str());
        std::vector<std::string> warnings;
        matrix = loadPlanMatrix(plan, r, warnings, &rec.matrixCheck);
        for (const std::string& w : warnings) std::fprintf(stderr, "fullmonte-plan: warning: %s\n", w.c_str());
        rec.matrixFrom = r.file;
    } else {
        if (!a.quiet && root)
            std::fprintf(stderr, "fullmonte-plan: %zu tetras; simulating %zu sources x %u batches (%s%s) [%.1f s]\n",
                         plan.mesh->tetraCount(), plan.sources.size(), plan.simulation.batches, plan.simulation.kernel.c_str(),
                         mpi.size() > 1 ? (", " + std::to_string(mpi.size()) + " MPI ranks").c_str() : "", since(t0));
        size_t shown = size_t(-1);
        auto progress = [&](size_t done, size_t total) {
            if (done == shown) return;
            shown = done;
            if (bar) std::fprintf(stderr, "\rfullmonte-plan: %zu/%zu runs", done, total), std::fflush(stderr);
            else if (root && !a.quiet && (done == total || done % std::max<size_t>(1, total / 4) == 0))
                std::fprintf(stderr, "fullmonte-plan: %zu/%zu runs\n", done, total);
        };
        plan.simulation.tuning = tuningFromEnvironment();
        matrix = simulateSources(plan, rec.simulation, progress, &gCancel, &mpi);
        if (!root) return 0;
        if (bar) std::fprintf(stderr, "\n");
        for (const std::string& w : rec.simulation.warnings) std::fprintf(stderr, "fullmonte-plan: warning: %s\n", w.c_str());
        rec.matrixFrom = "simulated";
    }
    if (!a.quiet) std::fprintf(stderr, "fullmonte-plan: optimising [%.1f s]\n", since(t0));
    PlanProblem prob{plan.mesh.get(), &matrix, &plan.sources, &plan.prescription, &plan.regionNames};
    prob.warmStart = std::getenv("FM_PLAN_COLD") == nullptr;  // diagnostic: every LP from scratch
    PlanResult result = optimisePlan(prob);
    PlanEvaluation eval = evaluatePlan(plan, matrix, result.energies);
    rec.matrix = &matrix, rec.result = &result, rec.evaluation = &eval;
    if (!a.quiet)
        std::fprintf(stderr, "fullmonte-plan: writing %s [%.1f s; LP %zu rows, %zu solved by row generation, %zu LPs, %zu warm]\n",
                     a.out.c_str(), since(t0), result.lpRows, result.lpSolvedRows, result.lpRounds, result.lpWarmRounds);
    writePlanOutputs(a.out, rec, a.overwrite);
    if (!a.quiet) std::fprintf(stderr, "fullmonte-plan: done [%.1f s]\n", since(t0));
    std::fputs(planSummary(plan, result, eval).c_str(), stdout);
    std::printf("  outputs in %s\n", a.out.c_str());
    return result.feasible ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
    std::signal(SIGINT, onInterrupt);
    try {
        MpiSession mpi(&argc, &argv);
        return run(parseArgs(argc, argv), mpi);
    } catch (const std::exception& e) {
        std::cerr << "fullmonte-plan: " << e.what() << "\n";
        return gCancel ? 130 : 1;
    }
}
