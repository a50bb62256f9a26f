// SPDX-License-Identifier: GPL-3.0-or-later
// fullmonte: tclsh with the FullMonte package (replaces FullMonte's tclmonte.sh).
//   fullmonte script.tcl args...   runs the script; $argv0, $argv and $argc as in tclsh
//   fullmonte                      interactive shell with the package loaded
//   fullmonte --help | -h          prints the usage
// The package is found next to this executable (<bin>/../lib/tcl), in the build tree and in an
// install alike; TCLLIBPATH still adds other folders, as for tclsh.
#include <tcl.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

std::string executableDir() {
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return ".";
    std::string p(buf, size_t(n));
    size_t slash = p.rfind('/');
    return slash == std::string::npos ? "." : p.substr(0, slash);
}

int appInit(Tcl_Interp* interp) {
    if (Tcl_Init(interp) != TCL_OK) return TCL_ERROR;
    Tcl_Obj* lib = Tcl_NewStringObj((executableDir() + "/../lib/tcl").c_str(), -1);
    Tcl_Obj* path = Tcl_GetVar2Ex(interp, "auto_path", nullptr, TCL_GLOBAL_ONLY);
    Tcl_Obj* list = path ? Tcl_DuplicateObj(path) : Tcl_NewListObj(0, nullptr);
    Tcl_ListObjReplace(interp, list, 0, 0, 1, &lib);  // ours first: a stale install must not win
    Tcl_SetVar2Ex(interp, "auto_path", nullptr, list, TCL_GLOBAL_ONLY);
    Tcl_SetVar(interp, "tcl_rcFileName", "~/.fullmonterc", TCL_GLOBAL_ONLY);
    if (Tcl_Eval(interp, "package require FullMonte") != TCL_OK) {
        std::fprintf(stderr, "fullmonte: cannot load the FullMonte package: %s\n", Tcl_GetStringResult(interp));
        std::exit(1);
    }
    const char* interactive = Tcl_GetVar(interp, "tcl_interactive", TCL_GLOBAL_ONLY);
    if (interactive && std::string(interactive) == "1")
        std::printf("FullMonte %s (Tcl %s). Classes are commands, e.g. `TetraVolumeKernel k`; `exit` quits.\n",
                    Tcl_GetVar(interp, "::FullMonte::version", TCL_GLOBAL_ONLY), TCL_PATCH_LEVEL);
    return TCL_OK;
}

void printUsage() {
    std::printf(
        "Usage: fullmonte [SCRIPT.tcl [ARGS...]]\n"
        "  fullmonte SCRIPT.tcl ARGS...   run a Tcl script with `package require FullMonte` available;\n"
        "                                 $argv0, $argv and $argc as in tclsh\n"
        "  fullmonte                      interactive Tcl shell with the package loaded\n"
        "  fullmonte --help | -h          this message\n"
        "Start from Examples/quickstart.tcl; the Tcl API is described in docs/TCL_API.md.\n"
        "Command-line runs without Tcl: fullmonte-run --help, fullmonte-mcml --help.\n");
}

}  // namespace

int main(int argc, char** argv) {
    // One CUDA hardware work queue per GPU unless the user set it (as fm::preferOneCudaQueue in
    // the command-line tools; this shell loads the library later, as a Tcl package).
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", "1", 0);
    if (argc >= 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
        printUsage();
        return 0;
    }
    // Any other option would start the interactive shell (Tcl_Main takes only a script or
    // -encoding): refused, so a mistyped option does not wait on standard input.
    if (argc >= 2 && argv[1][0] == '-' && std::string(argv[1]) != "-encoding") {
        std::fprintf(stderr, "fullmonte: unknown option '%s' (fullmonte --help lists the usage)\n", argv[1]);
        return 2;
    }
    Tcl_Main(argc, argv, appInit);
    return 0;
}
