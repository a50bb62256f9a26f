// SPDX-License-Identifier: GPL-3.0-or-later
// Replays the fuzz corpus (Tests/Fuzz/corpus/<target>/: seeds and the inputs of past findings)
// through every target's code, built with the ordinary compiler and no libFuzzer. It runs in
// every ctest, the sanitizer builds included, so a fixed bug stays fixed without clang.
// Usage: fuzz_replay CORPUS_DIR
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <vector>

// Each target defines LLVMFuzzerTestOneInput: included here under its own name.
#define LLVMFuzzerTestOneInput fuzzTimosMesh
#include "Tests/Fuzz/fuzz_timos_mesh.cpp"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzzTimosOpt
#include "Tests/Fuzz/fuzz_timos_opt.cpp"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzzTimosSource
#include "Tests/Fuzz/fuzz_timos_source.cpp"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzzMmcNode
#include "Tests/Fuzz/fuzz_mmc_node.cpp"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzzMmcElem
#include "Tests/Fuzz/fuzz_mmc_elem.cpp"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzzMmcProp
#include "Tests/Fuzz/fuzz_mmc_prop.cpp"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzzMmcInp
#include "Tests/Fuzz/fuzz_mmc_inp.cpp"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzzMmcJson
#include "Tests/Fuzz/fuzz_mmc_json.cpp"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzzMci
#include "Tests/Fuzz/fuzz_mci.cpp"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzzMco
#include "Tests/Fuzz/fuzz_mco.cpp"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzzMeshBuild
#include "Tests/Fuzz/fuzz_mesh_build.cpp"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzzComsol
#include "Tests/Fuzz/fuzz_comsol.cpp"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzzBinaryMesh
#include "Tests/Fuzz/fuzz_binary_mesh.cpp"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzzDetected
#include "Tests/Fuzz/fuzz_detected.cpp"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzzTimeGated
#include "Tests/Fuzz/fuzz_time_gated.cpp"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzzGatedList
#include "Tests/Fuzz/fuzz_gated_list.cpp"
#undef LLVMFuzzerTestOneInput

namespace fs = std::filesystem;

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: fuzz_replay CORPUS_DIR\n";
        return 2;
    }
    using Target = int (*)(const uint8_t*, size_t);
    const std::pair<const char*, Target> targets[] = {
        {"timos_mesh", fuzzTimosMesh}, {"timos_opt", fuzzTimosOpt}, {"timos_source", fuzzTimosSource},
        {"mmc_node", fuzzMmcNode},     {"mmc_elem", fuzzMmcElem},   {"mmc_prop", fuzzMmcProp},
        {"mmc_inp", fuzzMmcInp},       {"mmc_json", fuzzMmcJson},
        {"mci", fuzzMci},              {"mco", fuzzMco},            {"mesh_build", fuzzMeshBuild},
        {"comsol", fuzzComsol},        {"binary_mesh", fuzzBinaryMesh},
        {"detected", fuzzDetected},    {"time_gated", fuzzTimeGated},
        {"gated_list", fuzzGatedList}};
    size_t total = 0;
    for (auto [name, run] : targets) {
        const fs::path dir = fs::path(argv[1]) / name;
        if (!fs::is_directory(dir)) {
            std::cerr << "fuzz_replay: no corpus " << dir << "\n";
            return 1;
        }
        size_t n = 0;
        for (const auto& entry : fs::directory_iterator(dir)) {
            std::ifstream in(entry.path(), std::ios::binary);
            std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            run(bytes.data(), bytes.size());  // only expected errors are caught inside
            ++n;
        }
        std::cout << name << ": " << n << " inputs\n";
        total += n;
    }
    std::cout << "fuzz_replay: " << total << " inputs, no unexpected failure\n";
    return 0;
}
