// SPDX-License-Identifier: GPL-3.0-or-later
// fullmonte-detected F.fmd [--mua A1,A2,...] [--tpsf START,STOP,STEP]: what a detected-packet
// file (fullmonte-run --detectors) gives without a rerun: the detected signal per detector,
// reweighted to other absorption coefficients per region (mu_s, g and n held), the per-region
// mu_a Jacobian, and the detector TPSF.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "Apps/AppMain.hpp"
#include "Common/Errors.hpp"
#include "Kernels/Detection.hpp"
#include "Storage/Detected/DetectedFile.hpp"

namespace {

const char* kUsage =
    "usage: fullmonte-detected F.fmd [--mua A1,A2,...] [--tpsf START,STOP,STEP]\n"
    "  prints, per detector, the detected signal (detected weight per launched packet) with its\n"
    "  standard error and d(signal)/d(mu_a) per region (mm)\n"
    "  --mua A1,A2,...   the signal reweighted to these mu_a (1/mm), one per region 1..R, mu_s held\n"
    "  --tpsf A,B,S      the detector TPSF: signal per time gate from A to B ns by S ns\n";

std::vector<double> numbers(const std::string& what, const std::string& s) {
    std::vector<double> v;
    std::stringstream ss(s);
    for (std::string item; std::getline(ss, item, ',');) {
        char* end = nullptr;
        const double x = std::strtod(item.c_str(), &end);
        if (item.empty() || *end) throw fm::ParameterError(what + ": '" + item + "' is not a number");
        v.push_back(x);
    }
    return v;
}

// Signal and its standard error per detector, per launched packet.
void printSignal(const fm::DetectedPackets& dp, const std::vector<double>& w, const std::string& label) {
    const double n = double(dp.packets);
    std::vector<double> s(dp.detectors.size(), 0.0), s2(dp.detectors.size(), 0.0);
    for (size_t k = 0; k < dp.records.size(); ++k) {
        s[dp.records[k].detector] += w[k];
        s2[dp.records[k].detector] += w[k] * w[k];
    }
    for (size_t d = 0; d < s.size(); ++d) {
        const double mean = s[d] / n, var = (s2[d] / n - mean * mean) / n;
        std::cout << label << " detector " << d << ": " << mean << " +- " << std::sqrt(std::max(var, 0.0)) << "\n";
    }
}

int run(int argc, char** argv) {
    if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
        std::cout << kUsage;
        return argc < 2 ? 1 : 0;
    }
    std::string mua, tpsf;
    for (int i = 2; i < argc; ++i) {
        const std::string k = argv[i];
        if (i + 1 >= argc) throw fm::ParameterError(k + " needs a value (see --help)");
        if (k == "--mua") mua = argv[++i];
        else if (k == "--tpsf") tpsf = argv[++i];
        else throw fm::ParameterError("unknown argument '" + k + "' (see --help)");
    }
    const fm::DetectedPackets dp = fm::readDetected(argv[1]);
    std::cout << argv[1] << ": " << dp.records.size() << " records of " << dp.detected << " detections, "
              << dp.packets << " packets, seed " << dp.seed << ", " << dp.regions << " regions\n";
    if (dp.truncated()) std::cout << "warning: truncated: the values below cover the kept records only\n";
    std::vector<double> own;
    for (const auto& r : dp.records) own.push_back(r.weight);
    printSignal(dp, own, "signal");
    const std::vector<double> J = fm::regionJacobian(dp);
    for (size_t d = 0; d < dp.detectors.size(); ++d)
        for (uint32_t r = 0; r < dp.regions; ++r)
            std::cout << "jacobian detector " << d << " region " << r + 1 << ": "
                      << J[d * dp.regions + r] / double(dp.packets) << " mm\n";
    if (!mua.empty()) printSignal(dp, fm::reweightedWeights(dp, numbers("--mua", mua)), "reweighted");
    if (!tpsf.empty()) {
        const std::vector<double> g = numbers("--tpsf", tpsf);
        if (g.size() != 3) throw fm::ParameterError("--tpsf needs start,stop,step in ns");
        const fm::TimeGates gates = fm::makeTimeGates(g[0], g[1], g[2], "--tpsf");
        for (uint32_t d = 0; d < dp.detectors.size(); ++d) {
            const std::vector<double> h = fm::detectorTpsf(dp, d, gates);
            for (size_t i = 0; i < h.size(); ++i)
                std::cout << "tpsf detector " << d << " " << gates.gateStart(uint32_t(i)) << " ns: " << h[i] / double(dp.packets) << "\n";
        }
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return fm::guardedMain("fullmonte-detected", [&] { return run(argc, argv); });
}
