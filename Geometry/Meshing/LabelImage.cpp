// SPDX-License-Identifier: GPL-3.0-or-later
#include "Geometry/Meshing/LabelImage.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "Common/Errors.hpp"

namespace fm {

std::map<int32_t, size_t> LabelImage::labelCounts() const {
    std::map<int32_t, size_t> n;
    for (int32_t l : labels) ++n[l];
    return n;
}

void LabelImage::validate(const std::string& what) const {
    if (!dims[0] || !dims[1] || !dims[2])
        throw ParameterError(what + ": image has a zero dimension (" + std::to_string(dims[0]) + " x " +
                             std::to_string(dims[1]) + " x " + std::to_string(dims[2]) + ")");
    if (labels.size() != dims[0] * dims[1] * dims[2])
        throw ParameterError(what + ": image has " + std::to_string(labels.size()) + " labels for " +
                             std::to_string(dims[0] * dims[1] * dims[2]) + " voxels");
    for (int a = 0; a < 3; ++a)
        if (!(spacing[a] > 0) || !std::isfinite(spacing[a]))
            throw ParameterError(what + ": voxel spacing along axis " + std::to_string(a) +
                                 " must be finite and > 0 (got " + std::to_string(spacing[a]) + ")");
    // The mesher works in mm: voxels below a nanometre make CGAL's refinement give up (no
    // tetrahedra) or never end; no tissue is imaged in voxels beyond a kilometre. Either is a
    // length unit gone wrong (a header in um read as m, or the reverse).
    for (int a = 0; a < 3; ++a)
        if (spacing[a] < kMinVoxelSpacingMm * (1 - 1e-6) || spacing[a] > kMaxVoxelSpacingMm * (1 + 1e-6)) {  // float headers
            std::ostringstream o;
            o << what << ": voxel spacing along axis " << a << " is " << spacing[a] << " mm, outside "
              << kMinVoxelSpacingMm << " to " << kMaxVoxelSpacingMm << " mm (is the image's length unit right?)";
            throw ParameterError(o.str());
        }
    for (int a = 0; a < 3; ++a)
        if (!std::isfinite(origin[a])) throw ParameterError(what + ": image origin is not finite");
    for (size_t i = 0; i < labels.size(); ++i)
        if (labels[i] < 0) {
            const size_t x = i % dims[0], y = (i / dims[0]) % dims[1], z = i / (dims[0] * dims[1]);
            throw ParameterError(what + ": voxel (" + std::to_string(x) + ", " + std::to_string(y) + ", " +
                                 std::to_string(z) + ") has label " + std::to_string(labels[i]) +
                                 ": labels are integers >= 0 (0 is the outside; map an 'unlabelled' value such as "
                                 "-1 to 0 first)");
        }
}

namespace {

// Which physical axis (0..2) and sign axis `a`'s direction column points along, or -1.
std::pair<int, int> axisOf(const std::array<std::array<double, 3>, 3>& d, int a) {
    for (int r = 0; r < 3; ++r) {
        double v = d[r][a];
        bool othersZero = true;
        for (int q = 0; q < 3; ++q)
            if (q != r && std::fabs(d[q][a]) > 1e-3) othersZero = false;
        if (othersZero && std::fabs(std::fabs(v) - 1) < 1e-3) return {r, v > 0 ? 1 : -1};
    }
    return {-1, 0};
}

std::string columnText(const std::array<std::array<double, 3>, 3>& d, int a) {
    std::ostringstream s;
    s << "(" << d[0][a] << ", " << d[1][a] << ", " << d[2][a] << ")";
    return s.str();
}

}  // namespace

LabelImage orientToAxes(LabelImage in, const std::array<std::array<double, 3>, 3>& direction,
                        const std::string& file) {
    int physOf[3], sign[3];
    bool used[3] = {false, false, false};
    for (int a = 0; a < 3; ++a) {
        auto [r, s] = axisOf(direction, a);
        if (r < 0 || used[r])
            throw FormatError(file + ": image axis " + std::to_string(a) + " has direction " +
                              columnText(direction, a) +
                              ", not along x, y or z: oblique images are not supported "
                              "(resample the segmentation onto an axis-aligned grid first)");
        used[r] = true;
        physOf[a] = r;
        sign[a] = s;
    }
    bool identity = physOf[0] == 0 && physOf[1] == 1 && physOf[2] == 2 && sign[0] > 0 && sign[1] > 0 &&
                    sign[2] > 0;
    if (identity) return in;
    LabelImage out;
    for (int a = 0; a < 3; ++a) {
        int r = physOf[a];
        out.dims[r] = in.dims[a];
        out.spacing[r] = in.spacing[a];
        // The lowest coordinate along r is at index 0 for +, at index n-1 for -.
        double extent = in.spacing[a] * double(in.dims[a] - 1);
        out.origin[r] = sign[a] > 0 ? in.origin[r] : in.origin[r] - extent;
    }
    out.labels.resize(in.labels.size());
    size_t src = 0;
    for (size_t k = 0; k < in.dims[2]; ++k)
        for (size_t j = 0; j < in.dims[1]; ++j)
            for (size_t i = 0; i < in.dims[0]; ++i, ++src) {
                const size_t idx[3] = {i, j, k};
                size_t o[3];
                for (int a = 0; a < 3; ++a)
                    o[physOf[a]] = sign[a] > 0 ? idx[a] : in.dims[a] - 1 - idx[a];
                out.labels[out.index(o[0], o[1], o[2])] = in.labels[src];
            }
    return out;
}

// ---- Label maps ----

namespace {

int32_t parseLabel(const std::string& text, const std::string& where) {
    size_t used = 0;
    long v = 0;
    try {
        v = std::stol(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != text.size() || v < 0 || v > INT32_MAX)
        throw ParameterError(where + ": '" + text + "' is not a label (an integer >= 0)");
    return int32_t(v);
}

std::string trim(const std::string& s) {
    size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

void addPair(LabelMap& m, const std::string& item, const std::string& where) {
    std::string t = trim(item);
    size_t eq = t.find('=');
    std::string a, b;
    if (eq != std::string::npos) {
        a = trim(t.substr(0, eq));
        b = trim(t.substr(eq + 1));
    } else {
        std::istringstream s(t);
        s >> a >> b;
        std::string extra;
        if (s >> extra) b.clear();
    }
    if (a.empty() || b.empty())
        throw ParameterError(where + ": '" + t + "' is not a label pair (a=b: label a becomes label b)");
    int32_t from = parseLabel(a, where);
    if (m.count(from)) throw ParameterError(where + ": label " + a + " is mapped twice");
    m[from] = parseLabel(b, where);
}

}  // namespace

LabelMap parseLabelMap(const std::string& spec) {
    LabelMap m;
    std::istringstream s(spec);
    std::string item;
    int n = 0;
    while (std::getline(s, item, ',')) {
        ++n;
        if (trim(item).empty()) continue;
        addPair(m, item, "label map item " + std::to_string(n));
    }
    if (m.empty()) throw ParameterError("label map '" + spec + "' has no pairs (a=b,c=d)");
    return m;
}

LabelMap readLabelMapFile(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw Error(path + ": cannot open label map file");
    LabelMap m;
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
        line = trim(line.substr(0, line.find('#')));
        if (!line.empty()) addPair(m, line, path + ":" + std::to_string(n));
    }
    if (m.empty()) throw FormatError(path + ":1: label map file has no pairs ('a b' or 'a=b' per line)");
    return m;
}

void applyLabelMap(LabelImage& image, const LabelMap& map) {
    if (map.empty()) return;
    for (int32_t& l : image.labels) {
        auto it = map.find(l);
        if (it != map.end()) l = it->second;
    }
}

std::vector<std::string> labelImageWarnings(const LabelImage& im) {
    const int32_t first = im.labels.empty() ? 0 : im.labels.front();
    if (first == 0) return {};
    const size_t n[3] = {im.dims[0], im.dims[1], im.dims[2]};
    for (size_t k = 0; k < n[2]; ++k)
        for (size_t j = 0; j < n[1]; ++j) {
            const bool face = k == 0 || k + 1 == n[2] || j == 0 || j + 1 == n[1];
            for (size_t i = 0; i < n[0]; i += face ? 1 : std::max<size_t>(n[0] - 1, 1))
                if (im.at(i, j, k) != first) return {};
        }
    const std::string l = std::to_string(first);
    return {"label " + l + " covers every voxel of the image's border: if it is the background, map it to the outside "
            "(fullmonte-mesh --label-map " + l + "=0, Tcl labelMap " + l + "=0, Python label_map='" + l +
            "=0'; as it is, it is meshed as a region filling the image's box)"};
}

LabelMap compactLabelMap(const LabelImage& image) {
    LabelMap m;
    int32_t next = 1;
    for (const auto& [label, n] : image.labelCounts())
        if (label != 0) m[label] = next++;
    return m;
}

namespace {

// The most frequent label among `votes` (ties: the lowest label); `votes` is emptied.
int32_t majority(std::vector<int32_t>& votes) {
    std::sort(votes.begin(), votes.end());
    int32_t best = votes.front();
    size_t bestRun = 0;
    for (size_t i = 0; i < votes.size();) {
        size_t j = i;
        while (j < votes.size() && votes[j] == votes[i]) ++j;
        if (j - i > bestRun) best = votes[i], bestRun = j - i;
        i = j;
    }
    votes.clear();
    return best;
}

}  // namespace

LabelImage downsampleLabels(const LabelImage& in, unsigned factor) {
    in.validate("downsampleLabels");
    if (factor < 1) throw ParameterError("downsample factor must be an integer >= 1");
    if (factor == 1) return in;
    LabelImage out;
    for (int a = 0; a < 3; ++a) {
        out.dims[a] = (in.dims[a] + factor - 1) / factor;
        out.spacing[a] = in.spacing[a] * factor;
        out.origin[a] = in.origin[a] + 0.5 * (factor - 1) * in.spacing[a];
    }
    out.labels.resize(out.dims[0] * out.dims[1] * out.dims[2]);
    std::vector<int32_t> votes;
    votes.reserve(size_t(factor) * factor * factor);
    for (size_t K = 0; K < out.dims[2]; ++K)
        for (size_t J = 0; J < out.dims[1]; ++J)
            for (size_t I = 0; I < out.dims[0]; ++I) {
                for (size_t k = K * factor; k < std::min(in.dims[2], (K + 1) * factor); ++k)
                    for (size_t j = J * factor; j < std::min(in.dims[1], (J + 1) * factor); ++j)
                        for (size_t i = I * factor; i < std::min(in.dims[0], (I + 1) * factor); ++i)
                            votes.push_back(in.at(i, j, k));
                out.labels[out.index(I, J, K)] = majority(votes);
            }
    return out;
}

unsigned downsampleFactor(double value, const std::string& what) {
    if (!(value >= 1 && value <= 64) || value != std::floor(value)) {
        std::ostringstream m;
        m << what << " must be an integer in [1, 64], got " << value;
        throw ParameterError(m.str());
    }
    return unsigned(value);
}

std::string describeLabelImage(const std::string& what, const LabelImage& image) {
    std::ostringstream s;
    s << what << ": " << image.dims[0] << " x " << image.dims[1] << " x " << image.dims[2] << " voxels of "
      << image.spacing[0] << " x " << image.spacing[1] << " x " << image.spacing[2] << " mm, origin ("
      << image.origin[0] << ", " << image.origin[1] << ", " << image.origin[2] << ") mm";
    return s.str();
}

std::vector<std::string> prepareLabelImage(LabelImage& image, const ImagePreparation& p, LabelMap* table) {
    const unsigned factor = downsampleFactor(p.downsample, "downsample");
    std::vector<std::string> lines;
    LabelMap map;
    if (p.compactLabels) {
        map = compactLabelMap(image);
        std::string line = "compact labels (image label -> region):";
        for (const auto& [from, to] : map) line += " " + std::to_string(from) + "->" + std::to_string(to);
        lines.push_back(line);
        applyLabelMap(image, map);
    }
    if (factor > 1) {
        image = downsampleLabels(image, factor);
        lines.push_back(describeLabelImage("downsampled " + std::to_string(factor) + "x", image));
    }
    if (table) *table = std::move(map);
    return lines;
}

}  // namespace fm
