// SPDX-License-Identifier: GPL-3.0-or-later
#include "Storage/VTK/FluenceRenderer.hpp"
#include "Storage/AtomicFile.hpp"

#include <vtkActor.h>
#include <vtkActor2D.h>
#include <vtkCamera.h>
#include <vtkCellData.h>
#include <vtkCutter.h>
#include <vtkDoubleArray.h>
#include <vtkImageData.h>
#include <vtkLookupTable.h>
#include <vtkPNGWriter.h>
#include <vtkPlane.h>
#include <vtkPolyData.h>
#include <vtkPolyDataMapper.h>
#include <vtkProperty.h>
#include <vtkRenderWindow.h>
#include <vtkRenderer.h>
#include <vtkScalarBarActor.h>
#include <vtkTextProperty.h>
#include <vtkUnstructuredGrid.h>
#include <vtkWindowToImageFilter.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>

#ifdef FM_VTK_HAVE_X11
#include <X11/Xlib.h>
#endif

#include "Common/Errors.hpp"
#include "Storage/VTK/VTKSupport.hpp"

namespace fm {

namespace {

constexpr double kMaxDecades = 6;  // a log scale wider than this hides the structure near sources

// VTK's X render window aborts the process when it cannot open the display, so the display
// is opened here first. The connection is kept for the life of the process and handed to VTK:
// an X server (Xvfb too) resets when its last client leaves, and a window opened during that
// reset fails, which VTK turns into abort().
void* requireDisplay() {
    const char* d = std::getenv("DISPLAY");
    if (!d || !*d)
        throw Error("FluenceRenderer: no X display for off-screen OpenGL rendering (DISPLAY is not set); "
                    "run under `xvfb-run -a`");
#ifdef FM_VTK_HAVE_X11
    static std::mutex lock;
    static std::map<std::string, Display*> open;
    std::lock_guard<std::mutex> g(lock);
    Display*& dpy = open[d];
    if (!dpy) dpy = XOpenDisplay(nullptr);
    if (!dpy) throw Error(std::string("FluenceRenderer: cannot open X display '") + d + "'; run under `xvfb-run -a`");
    return dpy;
#else
    return nullptr;
#endif
}

Point3 unit(const Point3& v, const char* what) {
    double n = normP(v);
    if (!(n > 0) || !std::isfinite(n)) throw ParameterError(std::string("FluenceRenderer: ") + what + " must be a non-zero vector");
    return {v[0] / n, v[1] / n, v[2] / n};
}

// Values the colour map sees: NaN where a log scale has nothing to show (<= 0), so those
// cells are drawn in the neutral NaN colour instead of being clamped to the lowest colour.
double shown(double v, bool log) { return (log && !(v > 0)) ? std::numeric_limits<double>::quiet_NaN() : v; }

struct Range {
    double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
    void add(double x) {
        if (!std::isfinite(x)) return;
        lo = std::min(lo, x);
        hi = std::max(hi, x);
    }
    bool empty() const { return !(hi >= lo); }
    // At most kMaxDecades on a log scale, and never an empty interval (a uniform field).
    Range finished(bool log) const {
        Range r = *this;
        if (log) r.lo = std::max(r.lo, r.hi * std::pow(10.0, -kMaxDecades));
        if (r.lo == r.hi) {
            r.lo = log ? r.lo / 2 : r.lo - 0.5 * (std::fabs(r.lo) + 1);
            r.hi = log ? r.hi * 2 : r.hi + 0.5 * (std::fabs(r.hi) + 1);
        }
        return r;
    }
};

Range dataRange(const std::vector<double>& v, size_t first, bool log) {
    Range r;
    for (size_t i = first; i < v.size(); ++i) r.add(shown(v[i], log));
    if (r.empty())
        throw Error(std::string("FluenceRenderer: the data has no finite") + (log ? " positive" : "") +
                    " values to show" + (log ? " on a log scale (try logScale(false))" : ""));
    return r.finished(log);
}

// The colours span what is in the picture, not the whole volume: a slice far from the source
// would otherwise use a sliver of the scale.
Range shownRange(vtkPolyData* pd, const Range& fallback, bool log) {
    Range r;
    vtkDataArray* a = pd->GetCellData()->GetScalars();
    for (vtkIdType i = 0; a && i < a->GetNumberOfTuples(); ++i) r.add(a->GetComponent(i, 0));
    return r.empty() ? fallback : r.finished(log);
}

// A viridis-like ramp: perceptually ordered and readable in greyscale print.
vtkSmartPointer<vtkLookupTable> makeLut(double lo, double hi, bool log) {
    static const double kStops[5][3] = {{0.267, 0.005, 0.329}, {0.229, 0.322, 0.546}, {0.128, 0.567, 0.551},
                                        {0.369, 0.789, 0.383}, {0.993, 0.906, 0.144}};
    auto lut = vtkSmartPointer<vtkLookupTable>::New();
    const int n = 256;
    lut->SetNumberOfTableValues(n);
    for (int i = 0; i < n; ++i) {
        double s = 4.0 * i / (n - 1);
        int k = std::min(3, int(s));
        double f = s - k;
        double c[3];
        for (int j = 0; j < 3; ++j) c[j] = kStops[k][j] * (1 - f) + kStops[k + 1][j] * f;
        lut->SetTableValue(i, c[0], c[1], c[2], 1.0);
    }
    if (log) lut->SetScaleToLog10();
    lut->SetRange(lo, hi);
    lut->SetNanColor(0.75, 0.75, 0.75, 1.0);
    return lut;
}

vtkSmartPointer<vtkScalarBarActor> colourBar(vtkLookupTable* lut, const std::string& title) {
    auto bar = vtkSmartPointer<vtkScalarBarActor>::New();
    bar->SetLookupTable(lut);
    bar->SetTitle(title.c_str());
    bar->SetNumberOfLabels(5);
    bar->SetLabelFormat("%.2g");
    // Placed in its own renderer (the right strip of the image), so it never covers the data.
    bar->SetPosition(0.05, 0.08);
    bar->SetWidth(0.9);
    bar->SetHeight(0.84);
    // Fixed font sizes: VTK's automatic sizing makes labels larger than the title.
    bar->UnconstrainedFontSizeOn();
    for (vtkTextProperty* p : {bar->GetTitleTextProperty(), bar->GetLabelTextProperty()}) {
        p->SetColor(0, 0, 0);
        p->ShadowOff();
        p->ItalicOff();
        p->SetFontSize(14);
    }
    bar->GetTitleTextProperty()->BoldOn();
    bar->SetBarRatio(0.25);
    bar->SetVerticalTitleSeparation(10);
    return bar;
}

vtkSmartPointer<vtkActor> colouredActor(vtkPolyData* pd, vtkLookupTable* lut) {
    auto mapper = vtkSmartPointer<vtkPolyDataMapper>::New();
    mapper->SetInputData(pd);
    mapper->SetLookupTable(lut);
    mapper->UseLookupTableScalarRangeOn();
    mapper->SetScalarModeToUseCellData();
    mapper->ScalarVisibilityOn();
    auto actor = vtkSmartPointer<vtkActor>::New();
    actor->SetMapper(mapper);
    // Mostly ambient: the colour must read as the value, not as the angle to the light.
    actor->GetProperty()->SetAmbient(0.5);
    actor->GetProperty()->SetDiffuse(0.5);
    actor->GetProperty()->SetSpecular(0);
    return actor;
}

vtkSmartPointer<vtkPolyData> cut(vtkDataObject* in, const Point3& origin, const Point3& normal) {
    auto plane = vtkSmartPointer<vtkPlane>::New();
    plane->SetOrigin(origin[0], origin[1], origin[2]);
    plane->SetNormal(normal[0], normal[1], normal[2]);
    auto cutter = vtkSmartPointer<vtkCutter>::New();
    cutter->SetCutFunction(plane);
    cutter->SetInputData(in);
    cutter->Update();
    return cutter->GetOutput();
}

// Faces where the region changes (incl. the outer boundary): cut by the slice plane they give
// the region outlines a planner needs to read the slice.
vtkSmartPointer<vtkPolyData> interfaces(const TetraMesh& mesh) {
    std::vector<vtkio::FaceRef> faces;
    for (uint32_t f = 1; f <= mesh.faceCount(); ++f) {
        const MeshFace& F = mesh.face(f);
        if (F.other == 0 || mesh.region(F.owner) != mesh.region(F.other)) faces.push_back({f, F.owner});
    }
    return vtkio::makeFaces(mesh, faces);
}

vtkSmartPointer<vtkActor> outlineActor(vtkPolyData* lines) {
    auto mapper = vtkSmartPointer<vtkPolyDataMapper>::New();
    mapper->SetInputData(lines);
    mapper->ScalarVisibilityOff();
    auto actor = vtkSmartPointer<vtkActor>::New();
    actor->SetMapper(mapper);
    actor->GetProperty()->SetColor(0, 0, 0);
    actor->GetProperty()->SetLineWidth(2);
    actor->GetProperty()->LightingOff();
    return actor;
}

// Looks along -viewDir with a stable "up" (world z unless looking along z, then y). Slices use
// a parallel projection fitted to the slice, so the picture is a map with no wasted margin.
void aimCamera(vtkRenderer* ren, const double b[6], const Point3& viewDir, bool parallel, double aspect) {
    Point3 n = unit(viewDir, "view direction");
    Point3 up = std::fabs(n[2]) < 0.9 ? Point3{0, 0, 1} : Point3{0, 1, 0};
    Point3 c{(b[0] + b[1]) / 2, (b[2] + b[3]) / 2, (b[4] + b[5]) / 2};
    vtkCamera* cam = ren->GetActiveCamera();
    cam->SetFocalPoint(c.data());
    cam->SetPosition(c[0] + n[0], c[1] + n[1], c[2] + n[2]);
    cam->SetViewUp(up.data());
    cam->OrthogonalizeViewUp();
    cam->SetParallelProjection(parallel);
    ren->ResetCamera(b);
    if (!parallel) {
        cam->Zoom(0.9);
        return;
    }
    Point3 v;
    cam->GetViewUp(v.data());
    Point3 right = crossP(v, n);
    double halfW = 0, halfH = 0;
    for (int i = 0; i < 8; ++i) {
        Point3 d = sub(Point3{b[i & 1], b[2 + ((i >> 1) & 1)], b[4 + ((i >> 2) & 1)]}, c);
        halfW = std::max(halfW, std::fabs(dotP(d, right)));
        halfH = std::max(halfH, std::fabs(dotP(d, v)));
    }
    cam->SetParallelScale(1.08 * std::max(halfH, halfW / aspect));
}

void writePng(void* display, vtkRenderer* scene, vtkRenderer* bar, unsigned w, unsigned h, const std::string& path,
              const vtkio::MessageCapture& vtkMessages) {
    auto win = vtkSmartPointer<vtkRenderWindow>::New();
    if (display) win->SetDisplayId(display);
    win->SetOffScreenRendering(1);
    win->SetMultiSamples(0);
    win->SetSize(int(w), int(h));
    win->AddRenderer(scene);
    win->AddRenderer(bar);
    win->Render();
    auto grab = vtkSmartPointer<vtkWindowToImageFilter>::New();
    grab->SetInput(win);
    grab->SetInputBufferTypeToRGB();
    grab->ReadFrontBufferOff();
    grab->Update();
    std::string tmp = stagingPath(path);
    auto png = vtkSmartPointer<vtkPNGWriter>::New();
    png->SetFileName(tmp.c_str());
    png->SetInputConnection(grab->GetOutputPort());
    png->Write();
    bool ok = png->GetErrorCode() == 0;
    win->Finalize();
    if (vtkMessages.hasError()) {  // e.g. no OpenGL context: the image would be blank
        std::remove(tmp.c_str());
        throw Error("FluenceRenderer: " + path + ": rendering failed (" + vtkMessages.firstProblem() + ")");
    }
    if (!ok || !moveIntoPlace(tmp, path)) {
        std::remove(tmp.c_str());
        throw Error("FluenceRenderer: " + path + ": cannot write the PNG (disk full or not writable?)");
    }
}

}  // namespace

void FluenceRenderer::data(const std::vector<double>& perTetra, const std::string& title) {
    tetraValues_ = perTetra;
    title_ = title;
}

void FluenceRenderer::faceData(const std::vector<double>& perFace, const std::string& title) {
    faceValues_ = perFace;
    faceTitle_ = title;
}

void FluenceRenderer::slice(const Point3& origin, const Point3& normal) {
    normal_ = unit(normal, "slice normal");
    origin_ = origin;
    sliceMode_ = true;
    centred_ = false;
}

void FluenceRenderer::sliceThroughCentre(const Point3& normal) {
    normal_ = unit(normal, "slice normal");
    sliceMode_ = true;
    centred_ = true;
}

void FluenceRenderer::surface(uint32_t region) {
    sliceMode_ = false;
    region_ = region;
}

void FluenceRenderer::size(unsigned width, unsigned height) {
    if (width < 16 || height < 16 || width > 16384 || height > 16384)
        throw ParameterError("FluenceRenderer: image size " + std::to_string(width) + "x" + std::to_string(height) +
                             " is outside 16..16384 pixels");
    width_ = width;
    height_ = height;
}

namespace {

struct Scene {
    vtkSmartPointer<vtkPolyData> coloured;  // cell scalars = the values to colour by
    vtkSmartPointer<vtkPolyData> outlines;  // may be null
    Point3 viewDir;
    bool parallel;
};

vtkSmartPointer<vtkDoubleArray> valueArray(const std::string& name, const std::vector<double>& v, size_t first,
                                           bool log) {
    std::vector<double> s(v.size());
    for (size_t i = first; i < v.size(); ++i) s[i] = shown(v[i], log);
    return vtkio::makeArray(name, s, first);
}

Scene sliceScene(const TetraMesh& mesh, const std::vector<double>& v, size_t first, bool log, Point3 origin,
                 const Point3& normal, bool outlines) {
    auto grid = vtkio::makeGrid(mesh);
    auto values = valueArray("value", v, first, log);
    grid->GetCellData()->SetScalars(values);
    Scene s{cut(grid, origin, normal), nullptr, normal, true};
    if (s.coloured->GetNumberOfCells() == 0) {
        auto b = mesh.bounds();
        char msg[256];
        std::snprintf(msg, sizeof msg, "the slice through (%g, %g, %g) misses the mesh (bounds %g..%g, %g..%g, %g..%g)",
                      origin[0], origin[1], origin[2], b[0][0], b[1][0], b[0][1], b[1][1], b[0][2], b[1][2]);
        throw Error(std::string("FluenceRenderer: ") + msg);
    }
    if (outlines) s.outlines = cut(interfaces(mesh), origin, normal);
    return s;
}

Scene surfaceScene(const TetraMesh& mesh, const std::vector<double>& tetraV, const std::vector<double>& faceV,
                   uint32_t region, bool log) {
    std::vector<vtkio::FaceRef> faces = vtkio::surfaceFaces(mesh, region);
    if (faces.empty()) throw ParameterError("FluenceRenderer: region " + std::to_string(region) + " has no surface");
    bool perFace = !faceV.empty();
    size_t first = perFace ? vtkio::firstIndexFor("FluenceRenderer", "face data", faceV.size(), mesh.faceCount(), "faces")
                           : vtkio::firstIndexFor("FluenceRenderer", "data", tetraV.size(), mesh.tetraCount(), "tetras");
    std::vector<double> perTriangle(1, 0.0);
    for (const auto& f : faces) {
        uint32_t id = perFace ? f.face : f.inside;
        perTriangle.push_back((perFace ? faceV : tetraV)[id - (1 - first)]);
    }
    Scene s{vtkio::makeFaces(mesh, faces), nullptr, {1, -1.3, 0.9}, false};
    s.coloured->GetCellData()->SetScalars(valueArray("value", perTriangle, 1, log));
    return s;
}

}  // namespace

void FluenceRenderer::write() const {
    if (filename_.empty()) throw ParameterError("FluenceRenderer: no filename set");
    if (!mesh_) throw ParameterError("FluenceRenderer: " + filename_ + ": no mesh set");
    bool useFaces = !sliceMode_ && !faceValues_.empty();
    if (tetraValues_.empty() && !useFaces) throw ParameterError("FluenceRenderer: " + filename_ + ": no data set");
    const std::vector<double>& v = useFaces ? faceValues_ : tetraValues_;
    size_t first = useFaces ? vtkio::firstIndexFor("FluenceRenderer", faceTitle_, v.size(), mesh_->faceCount(), "faces")
                            : vtkio::firstIndexFor("FluenceRenderer", title_, v.size(), mesh_->tetraCount(), "tetras");
    if (lo_ < hi_ && log_ && !(lo_ > 0)) throw ParameterError("FluenceRenderer: a log colour range needs lo > 0");
    Range all = dataRange(v, first, log_);
    void* display = requireDisplay();
    vtkio::MessageCapture capture;  // keep VTK's chatter off the user's terminal
    Point3 origin = origin_;
    if (centred_) {
        auto b = mesh_->bounds();
        for (int k = 0; k < 3; ++k) origin[k] = (b[0][k] + b[1][k]) / 2;
    }
    Scene s = sliceMode_ ? sliceScene(*mesh_, v, first, log_, origin, normal_, outlines_)
                         : surfaceScene(*mesh_, tetraValues_, faceValues_, region_, log_);
    Range r = lo_ < hi_ ? Range{lo_, hi_} : shownRange(s.coloured, all, log_);
    auto lut = makeLut(r.lo, r.hi, log_);
    // The colour bar's strip is about 180 px whatever the image size, so its text always fits.
    double strip = std::min(0.45, std::max(0.15, 180.0 / width_));
    auto ren = vtkSmartPointer<vtkRenderer>::New();
    ren->SetBackground(1, 1, 1);
    ren->SetViewport(0, 0, 1 - strip, 1);
    ren->AddActor(colouredActor(s.coloured, lut));
    if (s.outlines && s.outlines->GetNumberOfCells() > 0) ren->AddActor(outlineActor(s.outlines));
    aimCamera(ren, s.coloured->GetBounds(), s.viewDir, s.parallel, (1 - strip) * width_ / height_);
    auto barRen = vtkSmartPointer<vtkRenderer>::New();
    barRen->SetBackground(1, 1, 1);
    barRen->SetViewport(1 - strip, 0, 1, 1);
    barRen->AddActor2D(colourBar(lut, useFaces ? faceTitle_ : title_));
    writePng(display, ren, barRen, width_, height_, filename_, capture);
    usedLo_ = r.lo;
    usedHi_ = r.hi;
}

}  // namespace fm
