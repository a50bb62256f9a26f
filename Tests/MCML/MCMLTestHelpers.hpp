// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Shared by the MCML file tests: reference-data lookup, scratch files, error checks.

#include "Storage/MCML/MCMLFormatError.hpp"

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace MCMLTest {

// Full path of a file under the shared reference data folder, or "" when it is not there.
inline std::string sharedDataFile(const std::string& relative)
{
    const std::string path = std::string(FM_SHARED_DATA_DIR) + "/" + relative;
    return std::ifstream(path).good() ? path : std::string();
}

// Boost.Test precondition: skip (with a message) when a reference file is missing.
struct NeedsSharedFile
{
    std::string relative;
    boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const
    {
        if (!sharedDataFile(relative).empty())
            return true;
        BOOST_TEST_MESSAGE("skipped: " << FM_SHARED_DATA_DIR << "/" << relative << " not found");
        boost::test_tools::assertion_result skip(false);
        skip.message() << "reference file " << relative << " not found";
        return skip;
    }
};

// A fresh directory under the system temp folder, removed with everything in it.
class ScratchDir
{
public:
    ScratchDir()
    {
        std::random_device rd;
        path_ = std::filesystem::temp_directory_path() /
                ("fm_mcml_test_" + std::to_string(rd()) + "_" + std::to_string(rd()));
        std::filesystem::create_directories(path_);
    }
    ~ScratchDir()
    {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;

    std::string file(const std::string& name) const { return (path_ / name).string(); }

    std::string write(const std::string& name, const std::string& content) const
    {
        const std::string p = file(name);
        std::ofstream(p, std::ios::binary) << content;
        return p;
    }

private:
    std::filesystem::path path_;
};

// Runs f, which must throw MCMLFormatError for `file` at `line` with `fragment` in the message.
template <class F>
void checkFormatError(F&& f, const std::string& file, unsigned line, const std::string& fragment)
{
    try
    {
        f();
        BOOST_ERROR("no MCMLFormatError thrown (expected line " << line << ": " << fragment << ")");
    }
    catch (const MCMLFormatError& e)
    {
        const std::string message = e.what();
        const std::string prefix = file + ":" + std::to_string(line) + ": ";
        BOOST_TEST_INFO("message: " << message);
        BOOST_TEST(message.rfind(prefix, 0) == 0u);
        BOOST_TEST_INFO("message: " << message);
        BOOST_TEST(message.find(fragment) != std::string::npos);
        BOOST_TEST(e.line() == line);
        BOOST_TEST(e.file() == file);
    }
    catch (const std::exception& e)
    {
        BOOST_ERROR("wrong exception type: " << e.what());
    }
}

}  // namespace MCMLTest
