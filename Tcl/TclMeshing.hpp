// SPDX-License-Identifier: GPL-3.0-or-later
// Beyond FullMonte: meshing segmentations from Tcl (Geometry/Meshing, CGAL builds only).
// `ImageMesher` meshes a labelled image, `SurfaceMesher` closed organ surfaces; both take the
// options of fullmonte-mesh as methods (getter without an argument, setter with one), mesh on
// `update` and hand the result out as a TetraMesh usable by every kernel.
#pragma once
#include <string>

#ifndef SWIG
#include <functional>
#include <memory>

#include "Geometry/Meshing/LabelImage.hpp"
#include "Geometry/Meshing/Mesher.hpp"
#endif
#include "Tcl/TclGeometry.hpp"

class MesherSettings {
public:
    double cellSize() const;
    void cellSize(double size);  // 0 = default
    double facetSize() const;
    void facetSize(double size);
    double facetDistance() const;
    void facetDistance(double distance);
    double facetAngle() const;
    void facetAngle(double angle);
    double radiusEdgeRatio() const;
    void radiusEdgeRatio(double ratio);
    void labelCellSize(unsigned label, double size);
    void labelFacetSize(unsigned label, double size);
    unsigned seed() const;
    void seed(unsigned seed);
    bool perturb() const;
    void perturb(bool enabled);
    bool exude() const;
    void exude(bool enabled);
    double sliverBound() const;
    void sliverBound(double angle);  // optimisers target tetras below this dihedral angle
    double timeLimit() const;
    void timeLimit(double seconds);  // per sliver optimiser, 0 = none
    bool progress() const;
    void progress(bool enabled);  // stage progress on stderr
    TetraMesh* mesh() const;  // after update
    std::string report() const;  // tetra count, per-region volumes, quality (as fullmonte-mesh)
    double meshVolume(unsigned label) const;
#ifndef SWIG
protected:
    fm::MeshingOptions options() const;
    void set(const char* method, const std::function<void(fm::MeshingOptions&)>& change);
    void finish(fm::TetraMesh m, const fm::LabelImage* image);
    fm::MeshingOptions o_;
    bool progress_ = false;
    std::shared_ptr<fm::TetraMesh> mesh_;
    std::string report_;
#endif
};

class ImageMesher : public MesherSettings {
public:
    std::string filename() const;
    void filename(const std::string& path);  // .nii .nii.gz .mha .mhd (.vti in VTK builds)
    std::string labelMap() const;
    void labelMap(const std::string& spec);  // "a=b,c=d" or a file of pairs; 0=K meshes the background
    bool compactLabels() const;
    void compactLabels(bool enabled);  // renumber the labels present (after labelMap) to regions 1..N
    unsigned downsample() const;
    void downsample(double blocks);    // mesh blocks of n^3 voxels as one voxel (majority label); n integer 1..64
    std::string compactTable() const;  // {image label, region} pairs of the last update's renumbering
    void update();
    std::string dims() const;     // "nx ny nz" of the image last meshed
    std::string spacing() const;  // mm
    std::string origin() const;   // mm, centre of voxel (0,0,0)
    double voxelVolume(unsigned label) const;  // mm^3 of the label in the (mapped) image
#ifndef SWIG
private:
    std::string file_, labelMap_;
    fm::ImagePreparation prepare_;
    fm::LabelMap table_;
    std::shared_ptr<fm::LabelImage> image_;
#endif
};

class SurfaceMesher : public MesherSettings {
public:
    void addSurface(const std::string& file, unsigned label);  // .stl .obj .off .ply (.vtp: VTK builds)
    void addLabelledSurface(const std::string& file);  // .vtp with cell array Labels (VTK builds); alone
    void clearSurfaces();
    unsigned surfaceCount() const;
    void update();
#ifndef SWIG
private:
    std::vector<fm::RegionSurface> surfaces_;
#endif
};
