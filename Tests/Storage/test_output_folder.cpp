// SPDX-License-Identifier: GPL-3.0-or-later
// Output folders never mix runs (issue 26): OutputFolder (lock, stale outputs removed, staging,
// publish) and AtomicFile (unique temporary names, stops on a stop request, no partial file).
#include <boost/test/unit_test.hpp>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "Common/Interrupt.hpp"
#include "Storage/AtomicFile.hpp"
#include "Storage/OutputFolder.hpp"

using namespace fm;
namespace fs = std::filesystem;

namespace {

struct TempDir {
    fs::path path;
    TempDir() {
        std::string p = (fs::temp_directory_path() / "fm_outdir_XXXXXX").string();
        path = ::mkdtemp(p.data());
    }
    ~TempDir() { fs::remove_all(path); }
    std::string file(const std::string& name) const { return (path / name).string(); }
};

void writeText(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
std::string readText(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
}
// Names in a folder, hidden ones included.
std::vector<std::string> entries(const fs::path& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

const std::vector<std::string> kOutputs{"a.txt", "b.txt", "summary.json"};

}  // namespace

BOOST_AUTO_TEST_SUITE(output_folder)

BOOST_AUTO_TEST_CASE(an_earlier_runs_outputs_are_removed_when_a_run_starts) {
    TempDir d;
    for (const auto& n : kOutputs) writeText(d.file(n), "old");
    writeText(d.file("notes.txt"), "mine");  // not an output: left alone
    fs::create_directory(d.path / ".fullmonte-staging-dead01");  // a killed run's leftovers
    {
        OutputFolder out(d.path.string(), kOutputs);
        BOOST_TEST(entries(d.path).size() == 2u);  // notes.txt and the new staging folder
        BOOST_TEST(fs::exists(d.file("notes.txt")));
        BOOST_TEST(!fs::exists(d.path / ".fullmonte-staging-dead01"));
        // Nothing is published: a failed or interrupted run leaves no outputs at all.
        writeText(out.staged("a.txt"), "new");
    }
    BOOST_TEST((entries(d.path) == std::vector<std::string>{"notes.txt"}));
}

BOOST_AUTO_TEST_CASE(publish_moves_every_staged_output_into_place) {
    TempDir d;
    writeText(d.file("b.txt"), "old");
    OutputFolder out(d.path.string(), kOutputs);
    writeText(out.staged("a.txt"), "A");
    writeText(out.staged("summary.json"), "{}");
    BOOST_TEST(!fs::exists(d.file("a.txt")));  // staged, not yet in place
    out.publish();
    BOOST_TEST(readText(d.file("a.txt")) == "A");
    BOOST_TEST(readText(d.file("summary.json")) == "{}");
    BOOST_TEST(!fs::exists(d.file("b.txt")));  // the earlier run's, not this run's: gone
    BOOST_TEST((entries(d.path) == std::vector<std::string>{"a.txt", "summary.json"}));
}

BOOST_AUTO_TEST_CASE(publish_of_some_leaves_the_rest_out) {
    TempDir d;
    OutputFolder out(d.path.string(), kOutputs);
    writeText(out.staged("a.txt"), "A");
    writeText(out.staged("summary.json"), "interrupted");
    out.publish({"summary.json"});
    BOOST_TEST((entries(d.path) == std::vector<std::string>{"summary.json"}));
}

BOOST_AUTO_TEST_CASE(a_second_run_into_a_locked_folder_is_refused) {
    TempDir d;
    OutputFolder first(d.path.string(), kOutputs);
    writeText(first.staged("a.txt"), "first");
    try {
        OutputFolder second(d.path.string(), kOutputs);
        BOOST_FAIL("two runs held one folder");
    } catch (const Error& e) {
        BOOST_TEST(std::string(e.what()).find("another FullMonte run is writing into this output folder") !=
                   std::string::npos);
    }
    first.publish();
    BOOST_TEST(readText(d.file("a.txt")) == "first");  // the refused run touched nothing
}

BOOST_AUTO_TEST_CASE(the_lock_is_released_with_the_folder) {
    TempDir d;
    { OutputFolder first(d.path.string(), kOutputs); }
    BOOST_CHECK_NO_THROW(OutputFolder(d.path.string(), kOutputs));
}

BOOST_AUTO_TEST_CASE(outputs_outside_the_folder_are_refused_before_anything_is_removed) {
    TempDir d;
    writeText(d.file("victim.txt"), "keep");
    for (const std::string bad : {"/tmp/x.mco", "../victim.txt", "a/../../victim.txt", ""}) {
        BOOST_TEST_CONTEXT("name '" << bad << "'") {
            const std::string sub = (d.path / "out").string();
            BOOST_CHECK_THROW(OutputFolder(sub, {"a.txt", bad}), Error);
        }
    }
    BOOST_TEST(readText(d.file("victim.txt")) == "keep");
    BOOST_CHECK_NO_THROW(OutputFolder((d.path / "out").string(), {"sub/a.mco", "b.mco"}));
}

BOOST_AUTO_TEST_CASE(atomic_files_of_one_path_never_share_a_temporary) {
    TempDir d;
    AtomicFile a(d.file("x.txt")), b(d.file("x.txt"));
    BOOST_TEST(a.tempPath() != b.tempPath());
    a.out << "from a\n";
    b.out << "from b\n";
    a.commit();
    BOOST_TEST(readText(d.file("x.txt")) == "from a\n");
    b.commit();
    BOOST_TEST(readText(d.file("x.txt")) == "from b\n");  // whole, never interleaved
}

BOOST_AUTO_TEST_CASE(a_stop_request_interrupts_a_long_write) {
    TempDir d;
    std::string tmp;
    {
        AtomicFile f(d.file("big.txt"));
        tmp = f.tempPath();
        for (int i = 0; i < 100000; ++i) f.out << i << '\n';  // some buffers written
        stopFlag() = true;
        BOOST_CHECK_THROW(
            {
                for (int i = 0; i < 100000; ++i) f.out << i << '\n';
            },
            Interrupted);
        stopFlag() = false;
    }
    BOOST_TEST(!fs::exists(d.file("big.txt")));
    BOOST_TEST(!fs::exists(tmp));
    // Stop::ignore: a file that must still be written after the stop (the interrupted summary).
    stopFlag() = true;
    {
        AtomicFile f(d.file("summary.json"), AtomicFile::Stop::ignore);
        for (int i = 0; i < 100000; ++i) f.out << i << '\n';
        f.commit();
    }
    stopFlag() = false;
    BOOST_TEST(fs::file_size(d.file("summary.json")) > 100000u);
}

BOOST_AUTO_TEST_CASE(a_failed_write_names_the_file) {
    if (!fs::exists("/dev/full")) return;
    // /dev/full: every write fails with ENOSPC, as on a full disk.
    CheckedFileBuf buf("/dev/full", true);
    BOOST_REQUIRE(buf.open("/dev/full", std::ios::out));
    std::ostream o(&buf);
    o.exceptions(std::ios::badbit);
    try {
        for (int i = 0; i < 100000; ++i) o << "0123456789\n";
        o.flush();
        BOOST_FAIL("writes to /dev/full succeeded");
    } catch (const Error& e) {
        BOOST_TEST(std::string(e.what()).find("/dev/full: write failed") != std::string::npos);
    }
}

// Reads what is waiting in a pipe opened without blocking.
std::string drain(int fd) {
    std::string got;
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) got.append(buf, size_t(n));
    return got;
}

// Devices and pipes (/dev/stdout, /dev/null, a FIFO) are written into: a temporary renamed over
// them would replace the device node (as root, a container's /dev/null) or fail in /dev.
BOOST_AUTO_TEST_CASE(atomic_file_writes_into_a_pipe_and_keeps_it) {
    TempDir d;
    const std::string fifo = d.file("pipe.txt");
    BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const int fd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // a reader, so the writer's open returns
    BOOST_REQUIRE(fd >= 0);
    {
        AtomicFile f(fifo);
        f.out << "hello\n";
        f.commit();
    }
    BOOST_TEST(drain(fd) == "hello\n");
    ::close(fd);
    BOOST_TEST(fs::is_fifo(fifo));
    BOOST_TEST(entries(d.path) == std::vector<std::string>{"pipe.txt"});  // no temporary left
}

BOOST_AUTO_TEST_CASE(library_writers_stage_apart_from_a_pipe_and_copy_into_it) {
    TempDir d;
    const std::string fifo = d.file("grid.vtu");
    BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const std::string tmp = stagingPath(fifo);
    BOOST_TEST(fs::path(tmp).parent_path() != d.path);  // not beside the device (/dev is read-only)
    writeText(tmp, "<VTKFile/>\n");
    const int fd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
    BOOST_REQUIRE(fd >= 0);
    BOOST_TEST(moveIntoPlace(tmp, fifo));
    BOOST_TEST(drain(fd) == "<VTKFile/>\n");
    ::close(fd);
    BOOST_TEST(fs::is_fifo(fifo));
    BOOST_TEST(!fs::exists(tmp));
    // A regular file is still replaced by a rename.
    const std::string plain = d.file("plain.txt");
    writeText(plain, "old");
    const std::string t2 = stagingPath(plain);
    BOOST_TEST(fs::path(t2).parent_path() == d.path);
    writeText(t2, "new");
    BOOST_TEST(moveIntoPlace(t2, plain));
    BOOST_TEST(readText(plain) == "new");
}

// A private copy of /dev/full (where the system lets us make one): the write fails with a message
// naming the file, and the device node is still a device afterwards.
BOOST_AUTO_TEST_CASE(a_full_device_keeps_its_node_and_the_error_names_it) {
    TempDir d;
    const std::string dev = d.file("full");
    if (::mknod(dev.c_str(), S_IFCHR | 0600, makedev(1, 7)) != 0) return;  // needs CAP_MKNOD
    try {
        AtomicFile f(dev);
        f.out << "0123456789\n";
        f.commit();
        BOOST_FAIL("a write to a full device succeeded");
    } catch (const Error& e) {
        BOOST_TEST(std::string(e.what()).find(dev + ": write failed") != std::string::npos, e.what());
    }
    BOOST_TEST(fs::is_character_file(dev));
    BOOST_TEST(entries(d.path) == std::vector<std::string>{"full"});
}

BOOST_AUTO_TEST_SUITE_END()
