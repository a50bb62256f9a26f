// SPDX-License-Identifier: GPL-3.0-or-later
#include "Storage/MCML/MCOWriter.hpp"

#include "Storage/MCML/MCMLRunBlock.hpp"
#include "Storage/MCML/MCMLTextScanner.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <locale>
#include <sstream>
#include <stdexcept>

using MCMLDetail::parseDouble;

namespace {

// ---- checks: refuse what readMCO could not read back ------------------------------------------

void require(bool ok, const std::string& message)
{
    if (!ok)
        throw std::invalid_argument("writeMCO: " + message);
}

bool positiveFinite(double v)
{
    return std::isfinite(v) && v > 0.0;
}

void checkRun(const MCMLRun& run)
{
    require(!run.outName.empty() &&
                run.outName.find_first_of(" \t\r\n\v\f#") == std::string::npos,
            "output name '" + run.outName + "' is empty or has whitespace or '#'");
    require(run.photons >= 1, "photons must be >= 1");
    require(positiveFinite(run.dz) && positiveFinite(run.dr), "dz and dr must be finite and > 0");
    require(run.nz >= 1 && run.nr >= 1 && run.na >= 1, "nz, nr, na must be >= 1");
    require(!run.layers.empty() && run.layers.size() <= MCMLDetail::kMaxLayers,
            "layer count must be in [1, " + std::to_string(MCMLDetail::kMaxLayers) + "]");
    require(positiveFinite(run.nAbove) && positiveFinite(run.nBelow),
            "n above and below must be finite and > 0");
    for (const MCMLLayer& l : run.layers)
        require(positiveFinite(l.n) && std::isfinite(l.mua) && l.mua >= 0.0 &&
                    std::isfinite(l.mus) && l.mus >= 0.0 && std::fabs(l.g) <= 1.0 &&
                    positiveFinite(l.d),
                "a layer has n <= 0, mua < 0, mus < 0, |g| > 1, d <= 0 or a non-finite value");
}

void checkArray(const char* name, const std::vector<double>& v, std::size_t expected)
{
    require(v.size() == expected, std::string(name) + " has " + std::to_string(v.size()) +
                                      " values, the run needs " + std::to_string(expected));
    for (double x : v)
        if (!std::isfinite(x))  // the message only when it is needed: an A(r,z) grid is ~1e5 values
            require(false, std::string(name) + " holds a non-finite value");
}

void checkResult(const MCMLResult& r)
{
    checkRun(r.run);
    const std::size_t nz = r.run.nz, nr = r.run.nr, na = r.run.na;
    require(std::isfinite(r.userTime), "user time is not finite");
    require(std::isfinite(r.Rsp) && std::isfinite(r.Rd) && std::isfinite(r.A) && std::isfinite(r.Tt),
            "RAT holds a non-finite value");
    checkArray("A_l", r.A_l, r.run.layers.size());
    checkArray("A_z", r.A_z, nz);
    checkArray("Rd_r", r.Rd_r, nr);
    checkArray("Rd_a", r.Rd_a, na);
    checkArray("Tt_r", r.Tt_r, nr);
    checkArray("Tt_a", r.Tt_a, na);
    checkArray("A_rz", r.A_rz, nr * nz);
    checkArray("Rd_ra", r.Rd_ra, nr * na);
    checkArray("Tt_ra", r.Tt_ra, nr * na);
}

// ---- number formats --------------------------------------------------------------------------

// The C locale's decimal point whatever the program's global locale is.
std::ostream& classic(std::ostream& o)
{
    o.imbue(std::locale::classic());
    return o << std::uppercase;
}

// %G (which drops trailing zeros: "0.002", "1000") with the fewest digits, 6 or more, that read
// back to exactly v. Starting at %G's default 6 keeps "1000" from becoming "1E+03".
std::string exactText(double v)
{
    std::ostringstream o;
    classic(o);
    for (int digits = 6; digits <= 17; ++digits)
    {
        o.str("");
        o << std::setprecision(digits) << v;
        double back = 0.0;
        if (parseDouble(o.str(), back) && back == v)
            break;
    }
    return o.str();
}

// Refractive indices as MCML's templates show them, "1.0" rather than "1".
std::string indexText(double n)
{
    std::string s = exactText(n);
    if (s.find_first_of(".E") == std::string::npos)
        s += ".0";
    return s;
}

// printf's %G and %E: 6 digits after the point for %E, 6 significant for %G.
void putG(std::ostream& o, double v)
{
    o << std::defaultfloat << std::setprecision(6) << v;
}

// std::to_chars gives printf's %e digits (correctly rounded, two-digit exponent) several times
// faster than the stream: an A(r,z) grid is ~1e5 numbers. Right-aligned in `width` (%12.6E),
// appended to s (the grids are formatted into one buffer and written at once: a stream call
// and a locale's toupper per character took most of the writing time).
void appendE(std::string& s, double v, int width)
{
    char buf[40];
    const std::to_chars_result r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific, 6);
    for (char* p = buf; p != r.ptr; ++p)
        if (*p >= 'a' && *p <= 'z')
            *p = char(*p - 'a' + 'A');  // %E: to_chars writes ASCII
    const long n = r.ptr - buf;
    if (width > n)
        s.append(std::size_t(width - n), ' ');
    s.append(buf, std::size_t(n));
}

void putE(std::ostream& o, double v, int width)
{
    std::string s;
    appendE(s, v, width);
    o.write(s.data(), std::streamsize(s.size()));
}

// ---- sections, in file order -----------------------------------------------------------------

// MCML 1.2's layout (mcmlio.c), line for line: conv and read_file_mco.m find the sections by
// keyword or by counting lines, so headings, comment lines and blank lines are all in its places.
void writeHeader(std::ostream& o, double userTime)
{
    o << "A1 \t# Version number of the file format.\n\n"
         "####\n"
         "# Data categories include: \n"
         "# InParm, RAT, \n"
         "# A_l, A_z, Rd_r, Rd_a, Tt_r, Tt_a, \n"
         "# A_rz, Rd_ra, Tt_ra \n"
         "####\n\n";
    o << "# User time: " << std::fixed << std::setprecision(3) << userTime << " sec = "
      << std::setprecision(2) << userTime / 3600.0 << " hr.  Simulation time of this run.\n\n";
}

void writeInParm(std::ostream& o, const MCMLRun& run)
{
    o << "InParm \t\t\t# Input parameters. cm is used.\n";
    o << run.outName << " \t" << (run.outFormat == 'B' ? 'B' : 'A') << "\t\t# output file name, ASCII.\n";
    o << run.photons << " \t\t\t# No. of photons\n";
    o << exactText(run.dz) << '\t' << exactText(run.dr) << "\t\t# dz, dr [cm]\n";
    o << run.nz << '\t' << run.nr << '\t' << run.na << "\t# No. of dz, dr, da.\n\n";
    o << run.layers.size() << "\t\t\t\t\t# Number of layers\n";
    o << "#n\tmua\tmus\tg\td\t# One line for each layer\n";
    o << indexText(run.nAbove) << "\t\t\t\t\t# n for medium above\n";
    for (std::size_t i = 0; i < run.layers.size(); ++i)
    {
        const MCMLLayer& l = run.layers[i];
        o << indexText(l.n) << '\t' << exactText(l.mua) << '\t' << exactText(l.mus) << '\t'
          << exactText(l.g) << '\t' << exactText(l.d) << "\t# layer " << i + 1 << '\n';
    }
    o << indexText(run.nBelow) << "\t\t\t\t\t# n for medium below\n\n";
}

void writeRAT(std::ostream& o, const MCMLResult& r)
{
    const std::pair<double, const char*> rows[] = {{r.Rsp, "Specular reflectance"},
                                                   {r.Rd, "Diffuse reflectance"},
                                                   {r.A, "Absorbed fraction"},
                                                   {r.Tt, "Transmittance"}};
    o << "RAT #Reflectance, absorption, transmission. \n";
    for (const auto& [value, label] : rows)
    {
        std::ostringstream v;
        classic(v);
        putG(v, value);
        o << std::left << std::setw(14) << v.str() << std::right << " \t#" << label << " [-]\n";
    }
    o << '\n';
}

void writeColumn(std::ostream& o, const char* heading, const std::vector<double>& v, bool general)
{
    o << heading << '\n';
    for (double x : v)
    {
        if (general)
        {
            std::ostringstream g;
            classic(g);
            putG(g, x);
            o << std::setw(12) << g.str();
        }
        else
            putE(o, x, 12);
        o << '\n';
    }
    o << '\n';
}

// r outermost, five values to a line counted over the whole array (as MCML does), so a row
// of a length not divisible by 5 continues on the line of the previous row; every value is
// followed by a space, and the array by one newline.
void writeGrid(std::ostream& o, const char* heading, const std::vector<double>& v)
{
    // Formatted a block of values at a time: each write lets a stop request end a long write
    // (AtomicFile's stream checks at every write).
    constexpr std::size_t kBlock = 4000;
    std::string s;
    s.reserve(kBlock * 13 + kBlock / 5 + 1);
    o << heading;
    for (std::size_t i = 0; i < v.size(); ++i)
    {
        appendE(s, v[i], 12);
        s += ' ';
        if ((i + 1) % 5 == 0)
            s += '\n';
        if ((i + 1) % kBlock == 0 || i + 1 == v.size())
        {
            o.write(s.data(), std::streamsize(s.size()));
            s.clear();
        }
    }
    o << '\n';
}

void writeArrays(std::ostream& o, const MCMLResult& r)
{
    writeColumn(o, "A_l #Absorption as a function of layer. [-]", r.A_l, true);
    writeColumn(o, "A_z #A[0], [1],..A[nz-1]. [1/cm]", r.A_z, false);
    writeColumn(o, "Rd_r #Rd[0], [1],..Rd[nr-1]. [1/cm2]", r.Rd_r, false);
    writeColumn(o, "Rd_a #Rd[0], [1],..Rd[na-1]. [sr-1]", r.Rd_a, false);
    writeColumn(o, "Tt_r #Tt[0], [1],..Tt[nr-1]. [1/cm2]", r.Tt_r, false);
    writeColumn(o, "Tt_a #Tt[0], [1],..Tt[na-1]. [sr-1]", r.Tt_a, false);
    writeGrid(o,
              "# A[r][z]. [1/cm3]\n"
              "# A[0][0], [0][1],..[0][nz-1]\n"
              "# A[1][0], [1][1],..[1][nz-1]\n"
              "# ...\n"
              "# A[nr-1][0], [nr-1][1],..[nr-1][nz-1]\n"
              "A_rz\n",
              r.A_rz);
    writeGrid(o,
              "# Rd[r][angle]. [1/(cm2sr)].\n"
              "# Rd[0][0], [0][1],..[0][na-1]\n"
              "# Rd[1][0], [1][1],..[1][na-1]\n"
              "# ...\n"
              "# Rd[nr-1][0], [nr-1][1],..[nr-1][na-1]\n"
              "Rd_ra\n",
              r.Rd_ra);
    writeGrid(o,
              "# Tt[r][angle]. [1/(cm2sr)].\n"
              "# Tt[0][0], [0][1],..[0][na-1]\n"
              "# Tt[1][0], [1][1],..[1][na-1]\n"
              "# ...\n"
              "# Tt[nr-1][0], [nr-1][1],..[nr-1][na-1]\n"
              "Tt_ra\n",
              r.Tt_ra);
}

void writeBody(std::ostream& o, const MCMLResult& r)
{
    writeHeader(o, r.userTime);
    writeInParm(o, r.run);
    writeRAT(o, r);
    writeArrays(o, r);
}

// Restores a caller's stream formatting and locale however writeMCO leaves.
class FormatGuard
{
public:
    explicit FormatGuard(std::ostream& o)
        : o_(o), locale_(o.getloc()), flags_(o.flags()), precision_(o.precision())
    {
    }
    ~FormatGuard()
    {
        o_.imbue(locale_);
        o_.flags(flags_);
        o_.precision(precision_);
    }
    FormatGuard(const FormatGuard&) = delete;
    FormatGuard& operator=(const FormatGuard&) = delete;

private:
    std::ostream& o_;
    std::locale locale_;
    std::ios::fmtflags flags_;
    std::streamsize precision_;
};

bool isExistingSpecialFile(const std::string& path)
{
    std::error_code ec;
    const std::filesystem::file_status st = std::filesystem::status(path, ec);
    return !ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st) &&
           !std::filesystem::is_directory(st);
}

// Writes the whole file; on failure removes what was written and throws.
void writeFile(const std::string& path, const MCMLResult& result)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out)
        throw std::runtime_error(path + ": cannot open for writing: " + std::strerror(errno));
    writeBody(classic(out), result);
    out.close();
    if (!out)
    {
        if (!isExistingSpecialFile(path))
            std::remove(path.c_str());
        throw std::runtime_error(path + ": write failed (disk full?)");
    }
}

}  // namespace

void writeMCO(std::ostream& out, const MCMLResult& result)
{
    checkResult(result);
    FormatGuard guard(out);
    classic(out);
    writeBody(out, result);
}

void writeMCO(const std::string& path, const MCMLResult& result)
{
    checkResult(result);  // before any file is created
    // Devices and pipes (/dev/stdout, a FIFO) are written in place: renaming a file over them
    // would replace the device node instead of writing to it.
    if (isExistingSpecialFile(path))
    {
        writeFile(path, result);
        return;
    }
    const std::string partial = path + ".partial";
    writeFile(partial, result);
    if (std::rename(partial.c_str(), path.c_str()) != 0)
    {
        const std::string reason = std::strerror(errno);
        std::remove(partial.c_str());
        throw std::runtime_error("cannot rename " + partial + " to " + path + ": " + reason);
    }
}
