// SPDX-License-Identifier: GPL-3.0-or-later
// A labelled 3-D image (a segmentation) in physical millimetres, axis-aligned: voxel (i,j,k) has
// its centre at origin + (i,j,k) * spacing, x varying fastest. Readers bring any image whose
// orientation is a permutation/flip of the axes into this form (orientToAxes); an oblique image
// is refused, since its voxels are not boxes along x, y and z. No CGAL here.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "Geometry/TetraMesh.hpp"

namespace fm {

// Voxel sizes validate() accepts, mm: a nanometre to a kilometre.
constexpr double kMinVoxelSpacingMm = 1e-6;
constexpr double kMaxVoxelSpacingMm = 1e6;

struct LabelImage {
    std::array<size_t, 3> dims{0, 0, 0};
    Point3 spacing{1, 1, 1};  // mm, all > 0
    Point3 origin{0, 0, 0};   // mm, centre of voxel (0,0,0)
    std::vector<int32_t> labels;  // dims[0]*dims[1]*dims[2], x fastest

    size_t index(size_t i, size_t j, size_t k) const { return i + dims[0] * (j + dims[1] * k); }
    int32_t at(size_t i, size_t j, size_t k) const { return labels[index(i, j, k)]; }
    double voxelVolume() const { return spacing[0] * spacing[1] * spacing[2]; }
    std::map<int32_t, size_t> labelCounts() const;  // voxels per label, every label present
    // Throws ParameterError (naming `what`) for zero dimensions, a wrong label count or a
    // spacing that is not finite and within kMinVoxelSpacingMm..kMaxVoxelSpacingMm.
    void validate(const std::string& what) const;
};

// Voxel data as stored in a file with axes i, j, k and the 3x3 matrix whose column a is the
// unit direction of axis a in physical space (x, y, z). The result has the same voxels, reordered
// so that its axes run along +x, +y, +z. Throws FormatError (naming `file`) when a column is not
// within 1e-3 of a signed coordinate axis (an oblique or sheared image) or two columns share one.
LabelImage orientToAxes(LabelImage stored, const std::array<std::array<double, 3>, 3>& direction,
                        const std::string& file);

// Reads .nii/.nii.gz (NIfTI-1 or -2: sform, else qform, else pixdim; units converted to mm) and
// .mha/.mhd (MetaImage, raw or zlib-compressed). Labels must be integers (float data with
// fractional values is refused, naming the first such voxel). .vti needs VTK: see
// Storage/VTK/VTKImageReader.hpp. Throws FormatError naming the file.
LabelImage readLabelImage(const std::string& path);
// The most memory readLabelImage(path) takes (bytes), from the file's header alone, so that a
// caller can refuse an image too large for the memory before its voxels are read (see
// Common/ResourceLimits.hpp); 0 when the header cannot say (readLabelImage names the problem).
double labelImageReadBytes(const std::string& path);
// True when this build reads the file's format with readLabelImage.
bool labelImageFormatSupported(const std::string& path, std::string* why = nullptr);

// Label map: label -> new label (0 drops a label into the outside). Text "a=b,c=d" or a file with
// one "a b" or "a=b" pair per line ('#' comments). Throws ParameterError naming the item/line.
using LabelMap = std::map<int32_t, int32_t>;
LabelMap parseLabelMap(const std::string& spec);
LabelMap readLabelMapFile(const std::string& path);
void applyLabelMap(LabelImage& image, const LabelMap& map);

// What to tell a user about an image before meshing it: a non-zero label on every voxel of the
// image's border, the usual sign of a background coded other than 0 (it would be meshed as a
// region filling the image's box; the label map L=0 makes it the outside). Empty when none.
std::vector<std::string> labelImageWarnings(const LabelImage& image);

// The map that renumbers the non-zero labels present to 1, 2, ... in ascending order (0 stays
// the outside): an atlas whose labels are sparse codes (1000, 2035, ...) becomes regions 1..N, so
// a material list has N entries instead of one per code up to the largest.
LabelMap compactLabelMap(const LabelImage& image);

// The image with blocks of factor^3 voxels made one voxel: the label most of the block's voxels
// have (ties: the lowest label). Spacing is factor times as large; the new voxel's centre is
// its block's centre; a partial block at the far edge counts its voxels only. For images too
// large to mesh at their resolution; structures thinner than a block may vanish.
LabelImage downsampleLabels(const LabelImage& image, unsigned factor);

// fullmonte-mesh's --compact-labels and --downsample N, shared by Tcl's ImageMesher and Python's
// mesh_image: applied after any label map, in this order.
struct ImagePreparation {
    bool compactLabels = false;  // the labels present renumbered 1..N (compactLabelMap)
    unsigned downsample = 1;     // blocks of downsample^3 voxels made one (downsampleLabels), 1..64
};
// A downsample factor given as a number: an integer from 1 to 64, else ParameterError naming `what`.
unsigned downsampleFactor(double value, const std::string& what);
// The line fullmonte-mesh shows for an image: "<what>: nx x ny x nz voxels of sx x sy x sz mm,
// origin (x, y, z) mm".
std::string describeLabelImage(const std::string& what, const LabelImage& image);
// Applies `p` to `image`; returns the lines a user is shown, as fullmonte-mesh prints them: the
// table "compact labels (image label -> region): 7->1 9->2" and "downsampled Nx: <image>". `table`
// (when not null) receives the compact map (empty without compactLabels).
std::vector<std::string> prepareLabelImage(LabelImage& image, const ImagePreparation& p, LabelMap* table = nullptr);

// Writes .mha (MetaImage, uncompressed) for tests and tools.
void writeMetaImage(const std::string& path, const LabelImage& image);

}  // namespace fm
