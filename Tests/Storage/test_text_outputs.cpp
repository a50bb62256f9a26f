// SPDX-License-Identifier: GPL-3.0-or-later
// The per-element text outputs are formatted in chunks on all threads (Storage/Text/TextFile.cpp)
// and the per-region errors of summary.json come from one pass (Apps/RunSummary.hpp): both give
// exactly what the serial code gives, for any thread count and chunking.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "Apps/RunSummary.hpp"
#include "Common/Interrupt.hpp"
#include "Common/ParallelFor.hpp"
#include "Storage/Text/TextFile.hpp"

using namespace fm;
namespace fs = std::filesystem;

namespace {

std::string readText(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// values[1..] as printf's %.9g, one per line ("nan" for NaN): the documented format.
std::string printfLines(const std::vector<double>& values) {
    std::string s;
    char buf[64];
    for (size_t i = 1; i < values.size(); ++i) {
        if (std::isnan(values[i])) s += "nan";
        else s.append(buf, size_t(std::snprintf(buf, sizeof buf, "%.9g", values[i])));
        s += '\n';
    }
    return s;
}

// Values of every kind the tallies hold: zeros, tiny and huge magnitudes, NaN, negatives.
std::vector<double> mixedValues(size_t n) {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(-30, 30);
    std::vector<double> v(n + 1, 0.0);
    for (size_t i = 1; i <= n; ++i) {
        switch (i % 7) {
            case 0: v[i] = 0; break;
            case 1: v[i] = NAN; break;
            case 2: v[i] = -std::pow(10.0, u(rng)); break;
            case 3: v[i] = 5e-324 * double(i); break;
            default: v[i] = std::pow(10.0, u(rng)) * (1 + u(rng)); break;
        }
    }
    return v;
}

struct Chunking {
    Chunking(unsigned threads, unsigned divisor) {
        setLoadThreads(threads);
        loadGrainDivisor() = divisor;
    }
    ~Chunking() {
        setLoadThreads(0);
        loadGrainDivisor() = 1;
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(text_outputs)

BOOST_AUTO_TEST_CASE(chunked_values_file_equals_printf_for_any_thread_count) {
    const std::vector<double> v = mixedValues(200003);
    const std::string expected = printfLines(v);
    const std::string path = (fs::temp_directory_path() / ("fm_text_outputs_" + std::to_string(::getpid()))).string();
    for (unsigned threads : {1u, 2u, 5u, 16u}) {
        Chunking c(threads, 64);  // chunks of ~1000 values: many chunks and buffer slices
        writeValues(path, v);
        BOOST_TEST_INFO("threads " << threads);
        BOOST_TEST((readText(path) == expected));
    }
    writeValues(path, std::vector<double>{0.0});  // no values: an empty file
    BOOST_TEST(readText(path).empty());
    fs::remove(path);
}

BOOST_AUTO_TEST_CASE(a_stop_request_leaves_no_values_file) {
    const std::string path = (fs::temp_directory_path() / ("fm_text_stop_" + std::to_string(::getpid()))).string();
    Chunking c(4, 64);
    stopFlag() = true;
    BOOST_CHECK_THROW(writeValues(path, mixedValues(100000)), Interrupted);
    stopFlag() = false;
    BOOST_TEST(!fs::exists(path));
}

BOOST_AUTO_TEST_CASE(region_errors_in_one_pass_equal_a_pass_per_region) {
    RunResult r;
    const size_t n = 50000;
    r.volume = mixedValues(n);
    r.standardError.volume = mixedValues(n);
    for (double& e : r.standardError.volume) e = std::fabs(e) * 0.01;
    r.standardError.volume.resize(n - 100);  // shorter error array: its end is skipped
    r.standardError.batches = 10;
    r.ledger.launched = 1000;
    r.ledger.absorbed = 600;
    r.ledger.exited = 400;
    auto region = [](size_t t) { return uint32_t(t % 1000 < 500 ? 3 : (t / 7) % 5 + 1); };
    const std::string json = standardErrorJson(r, region);
    for (uint32_t reg = 1; reg <= 5; ++reg) {
        const double rel = weightedRelativeError(r.volume, r.standardError.volume,
                                                 [&](size_t t) { return region(t) == reg; });
        const std::string entry = "\"" + std::to_string(reg) + "\": " + jsonNumber(rel);
        BOOST_TEST_INFO(json);
        BOOST_TEST(json.find(entry) != std::string::npos, entry);
    }
}

BOOST_AUTO_TEST_SUITE_END()
