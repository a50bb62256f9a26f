// SPDX-License-Identifier: GPL-3.0-or-later
#include "Planning/Figures.hpp"

#include <cairo.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>

#include "Common/Errors.hpp"
#include "Storage/AtomicFile.hpp"

namespace fm::planning {

namespace {

using Surface = std::unique_ptr<cairo_surface_t, void (*)(cairo_surface_t*)>;
using Context = std::unique_ptr<cairo_t, void (*)(cairo_t*)>;

struct Rgb {
    double r, g, b;
};

// A blue-green-yellow ramp (perceptually ordered, dark to light), interpolated between stops.
Rgb ramp(double t) {
    static const Rgb stops[] = {{0.15, 0.05, 0.35}, {0.20, 0.30, 0.60}, {0.10, 0.55, 0.55},
                                {0.30, 0.75, 0.35}, {0.85, 0.85, 0.15}, {1.00, 0.55, 0.10}};
    const int n = int(sizeof stops / sizeof stops[0]) - 1;
    t = std::clamp(t, 0.0, 1.0) * n;
    int i = std::min(int(t), n - 1);
    double f = t - i;
    return {stops[i].r + f * (stops[i + 1].r - stops[i].r), stops[i].g + f * (stops[i + 1].g - stops[i].g),
            stops[i].b + f * (stops[i + 1].b - stops[i].b)};
}

// Distinct line colours for isodose levels and DVH curves (none of them magenta).
Rgb lineColour(size_t i) {
    static const Rgb c[] = {{0.90, 0.10, 0.10}, {1.0, 1.0, 1.0}, {0.0, 0.85, 0.95}, {0.10, 0.45, 0.85},
                            {0.95, 0.55, 0.0},  {0.20, 0.65, 0.20}, {0.55, 0.35, 0.15}, {0.45, 0.45, 0.45}};
    return c[i % (sizeof c / sizeof c[0])];
}
// DVH curves on white: the line colours without white and cyan.
Rgb curveColour(size_t k) { return lineColour(k < 1 ? k : k + 2); }

std::string fmt(double v, int prec = 5) {
    std::ostringstream o;
    o.precision(prec);
    o << v;
    return o.str();
}

double niceStep(double span, int ticks) {
    double raw = span / std::max(1, ticks), p = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * p >= raw) return m * p;
    return 10 * p;
}

void text(cairo_t* c, double x, double y, const std::string& s, double size, double alignX = 0, double alignY = 0,
          bool halo = false) {
    cairo_set_font_size(c, size);
    cairo_text_extents_t e;
    cairo_text_extents(c, s.c_str(), &e);
    double px = x - alignX * e.width - e.x_bearing, py = y - alignY * e.height - e.y_bearing;
    if (halo) {
        cairo_save(c);
        cairo_move_to(c, px, py);
        cairo_text_path(c, s.c_str());
        cairo_set_source_rgb(c, 1, 1, 1);
        cairo_set_line_width(c, 3);
        cairo_stroke(c);
        cairo_restore(c);
    }
    cairo_move_to(c, px, py);
    cairo_show_text(c, s.c_str());
}

void writePng(cairo_surface_t* s, const std::string& png) {
    const std::string tmp = stagingPath(png);
    if (cairo_surface_write_to_png(s, tmp.c_str()) != CAIRO_STATUS_SUCCESS) {
        std::remove(tmp.c_str());
        throw Error(png + ": cannot write the PNG");
    }
    if (!moveIntoPlace(tmp, png)) throw placeError(png, errno);
}

// Dose to the colour ramp's 0..1: linear from 0, or logarithmic over [lo, hi].
struct ColourScale {
    bool log = false;
    double lo = 0, hi = 1;
    double t(double d) const {
        if (!log) return d / hi;
        return d <= lo ? 0.0 : (std::log10(d) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
    }
};

const char* axisName(int a) { return a == 0 ? "x" : a == 1 ? "y" : "z"; }

// The slice sampled at pixel centres: region (0 outside the mesh) and dose per pixel.
struct Raster {
    int nu = 0, nv = 0;
    double u0 = 0, v0 = 0, step = 1;  // mm of pixel (0, 0)'s lower-left corner; mm per pixel
    std::vector<uint32_t> region;
    std::vector<double> dose;
    double u(double i) const { return u0 + i * step; }
    double v(double j) const { return v0 + j * step; }
};

Raster sample(const TetraMesh& mesh, const std::vector<double>& dose, const SlicePlane& plane, int maxW, int maxH) {
    auto [ua, va] = sliceAxes(plane.axis);
    auto bb = mesh.bounds();
    double su = bb[1][ua] - bb[0][ua], sv = bb[1][va] - bb[0][va];
    Raster r;
    r.step = std::max(su / maxW, sv / maxH);
    r.nu = std::max(1, int(std::ceil(su / r.step))), r.nv = std::max(1, int(std::ceil(sv / r.step)));
    r.u0 = bb[0][ua], r.v0 = bb[0][va];
    r.region.assign(size_t(r.nu) * r.nv, 0);
    r.dose.assign(size_t(r.nu) * r.nv, NAN);
    // A plane on mesh faces (structured meshes at whole mm) would pick either side pixel by pixel:
    // sample a hair beside it.
    const double at = plane.at + 1e-6 * std::max(1.0, bb[1][plane.axis] - bb[0][plane.axis]);
    for (int j = 0; j < r.nv; ++j)
        for (int i = 0; i < r.nu; ++i) {
            Point3 p{};
            p[plane.axis] = at, p[ua] = r.u(i + 0.5), p[va] = r.v(j + 0.5);
            uint32_t t = mesh.locate(p);
            if (!t) continue;
            r.region[size_t(j) * r.nu + i] = mesh.region(t);
            r.dose[size_t(j) * r.nu + i] = t < dose.size() ? dose[t] : NAN;
        }
    return r;
}

// Pixel (i, j) of the raster to device coordinates: v grows upwards.
struct Frame {
    double x0, y0, scale;  // device x of u0, device y of v0 (bottom), px per raster pixel
    int nv;
    double x(double i) const { return x0 + i * scale; }
    double y(double j) const { return y0 - j * scale; }
};

void drawDose(cairo_t* c, const Raster& r, const Frame& f, const ColourScale& cs) {
    for (int j = 0; j < r.nv; ++j)
        for (int i = 0; i < r.nu; ++i) {
            size_t k = size_t(j) * r.nu + i;
            if (!r.region[k]) continue;
            double d = r.dose[k];
            if (std::isnan(d)) cairo_set_source_rgb(c, 0.6, 0.6, 0.6);
            else {
                Rgb col = ramp(cs.t(d));
                cairo_set_source_rgb(c, col.r, col.g, col.b);
            }
            cairo_rectangle(c, f.x(i), f.y(j + 1), f.scale + 0.5, f.scale + 0.5);
            cairo_fill(c);
        }
}

void drawOutlines(cairo_t* c, const Raster& r, const Frame& f) {
    cairo_set_source_rgb(c, 0, 0, 0);
    cairo_set_line_width(c, 1.0);
    for (int j = 0; j < r.nv; ++j)
        for (int i = 0; i < r.nu; ++i) {
            uint32_t a = r.region[size_t(j) * r.nu + i];
            if (i + 1 < r.nu && a != r.region[size_t(j) * r.nu + i + 1])
                cairo_move_to(c, f.x(i + 1), f.y(j)), cairo_line_to(c, f.x(i + 1), f.y(j + 1));
            if (j + 1 < r.nv && a != r.region[size_t(j + 1) * r.nu + i])
                cairo_move_to(c, f.x(i), f.y(j + 1)), cairo_line_to(c, f.x(i + 1), f.y(j + 1));
        }
    cairo_stroke(c);
}

// Marching squares over pixel centres: the level line as segments.
void drawIsodose(cairo_t* c, const Raster& r, const Frame& f, double level, const Rgb& col) {
    auto val = [&](int i, int j) {
        double d = r.dose[size_t(j) * r.nu + i];
        return std::isnan(d) ? -1.0 : d;
    };
    cairo_set_source_rgb(c, col.r, col.g, col.b);
    cairo_set_line_width(c, 2.5);
    for (int j = 0; j + 1 < r.nv; ++j)
        for (int i = 0; i + 1 < r.nu; ++i) {
            double v[4] = {val(i, j), val(i + 1, j), val(i + 1, j + 1), val(i, j + 1)};
            double px[4] = {i + 0.5, i + 1.5, i + 1.5, i + 0.5}, py[4] = {j + 0.5, j + 0.5, j + 1.5, j + 1.5};
            std::vector<std::pair<double, double>> cut;
            for (int e = 0; e < 4; ++e) {
                int n = (e + 1) % 4;
                if ((v[e] >= level) == (v[n] >= level)) continue;
                double t = (level - v[e]) / (v[n] - v[e]);
                cut.push_back({px[e] + t * (px[n] - px[e]), py[e] + t * (py[n] - py[e])});
            }
            for (size_t k = 0; k + 1 < cut.size(); k += 2) {
                cairo_move_to(c, f.x(cut[k].first), f.y(cut[k].second));
                cairo_line_to(c, f.x(cut[k + 1].first), f.y(cut[k + 1].second));
            }
        }
    cairo_stroke(c);
}

// Each region's name at its pixel farthest from any other region (a two-pass chamfer distance),
// so names sit inside their regions, also for rings and regions with holes.
void drawRegionNames(cairo_t* c, const Raster& r, const Frame& f, const std::map<uint32_t, std::string>& names) {
    const int nu = r.nu, nv = r.nv;
    auto at = [&](int i, int j) { return r.region[size_t(j) * nu + i]; };
    std::vector<double> dist(size_t(nu) * nv, 1e9);
    for (int j = 0; j < nv; ++j)
        for (int i = 0; i < nu; ++i) {
            bool edge = i == 0 || j == 0 || i == nu - 1 || j == nv - 1;
            for (int d = 0; d < 4 && !edge; ++d) {
                int a = i + (d == 0) - (d == 1), b = j + (d == 2) - (d == 3);
                edge = at(a, b) != at(i, j);
            }
            if (edge) dist[size_t(j) * nu + i] = 0;
        }
    auto relax = [&](int i, int j, int a, int b, double w) {
        if (a < 0 || b < 0 || a >= nu || b >= nv) return;
        double& d = dist[size_t(j) * nu + i];
        d = std::min(d, dist[size_t(b) * nu + a] + w);
    };
    for (int j = 0; j < nv; ++j)
        for (int i = 0; i < nu; ++i) relax(i, j, i - 1, j, 1), relax(i, j, i, j - 1, 1), relax(i, j, i - 1, j - 1, 1.414), relax(i, j, i + 1, j - 1, 1.414);
    for (int j = nv - 1; j >= 0; --j)
        for (int i = nu - 1; i >= 0; --i) relax(i, j, i + 1, j, 1), relax(i, j, i, j + 1, 1), relax(i, j, i + 1, j + 1, 1.414), relax(i, j, i - 1, j + 1, 1.414);
    std::map<uint32_t, std::array<double, 4>> best;  // distance, i, j, pixel count
    for (int j = 0; j < nv; ++j)
        for (int i = 0; i < nu; ++i)
            if (uint32_t g = at(i, j)) {
                auto& b = best.try_emplace(g, std::array<double, 4>{-1, 0, 0, 0}).first->second;
                b[3] += 1;
                if (dist[size_t(j) * nu + i] > b[0]) b = {dist[size_t(j) * nu + i], i + 0.5, j + 0.5, b[3]};
            }
    cairo_set_source_rgb(c, 0, 0, 0);
    for (auto& [g, b] : best) {
        if (b[3] < 20) continue;
        auto it = names.find(g);
        text(c, f.x(b[1]), f.y(b[2]), it == names.end() ? std::to_string(g) : it->second, 13, 0.5, 0.5, true);
    }
}

void drawSources(cairo_t* c, const Raster& r, const Frame& f, const std::vector<SourceMarker>& src, const SlicePlane& plane) {
    auto [ua, va] = sliceAxes(plane.axis);
    auto px = [&](const Point3& p) { return std::make_pair(f.x((p[ua] - r.u0) / r.step), f.y((p[va] - r.v0) / r.step)); };
    for (const SourceMarker& s : src) {
        if (s.name.empty()) continue;
        auto [ax, ay] = px(s.a);
        auto [bx, by] = px(s.b);
        // Sources away from the plane are drawn dashed: they are seen through it.
        double near = std::min(std::fabs(s.a[plane.axis] - plane.at), std::fabs(s.b[plane.axis] - plane.at));
        bool crosses = (s.a[plane.axis] - plane.at) * (s.b[plane.axis] - plane.at) <= 0;
        double dash[] = {5, 4};
        cairo_set_dash(c, dash, crosses || near < 1.0 ? 0 : 2, 0);
        cairo_set_source_rgb(c, 1, 0, 1);
        cairo_set_line_width(c, 4);
        if (std::hypot(bx - ax, by - ay) < 3) {
            cairo_arc(c, ax, ay, 5, 0, 2 * M_PI);
            cairo_fill(c);
        } else {
            cairo_move_to(c, ax, ay), cairo_line_to(c, bx, by);
            cairo_stroke(c);
        }
        cairo_set_dash(c, dash, 0, 0);
        cairo_set_source_rgb(c, 0.5, 0, 0.5);
        text(c, std::max(ax, bx) + 6, std::min(ay, by), s.name, 11, 0, 0.5, true);
    }
}

void drawAxes(cairo_t* c, const Raster& r, const Frame& f, const SlicePlane& plane) {
    auto [ua, va] = sliceAxes(plane.axis);
    double left = f.x(0), right = f.x(r.nu), bottom = f.y(0), top = f.y(r.nv);
    cairo_set_source_rgb(c, 0, 0, 0);
    cairo_set_line_width(c, 1);
    cairo_rectangle(c, left, top, right - left, bottom - top);
    cairo_stroke(c);
    double uEnd = r.u(r.nu), vEnd = r.v(r.nv);
    double su = niceStep(uEnd - r.u0, 8), sv = niceStep(vEnd - r.v0, 8);
    for (double u = std::ceil(r.u0 / su) * su; u <= uEnd + 1e-9; u += su) {
        double x = f.x((u - r.u0) / r.step);
        cairo_move_to(c, x, bottom), cairo_line_to(c, x, bottom + 5);
        text(c, x, bottom + 8, fmt(std::fabs(u) < 1e-9 ? 0 : u), 11, 0.5, 0);
    }
    for (double v = std::ceil(r.v0 / sv) * sv; v <= vEnd + 1e-9; v += sv) {
        double y = f.y((v - r.v0) / r.step);
        cairo_move_to(c, left, y), cairo_line_to(c, left - 5, y);
        text(c, left - 8, y, fmt(std::fabs(v) < 1e-9 ? 0 : v), 11, 1, 0.5);
    }
    cairo_stroke(c);
    text(c, (left + right) / 2, bottom + 26, std::string(axisName(ua)) + " (mm)", 13, 0.5, 0);
    cairo_save(c);
    cairo_translate(c, left - 48, (top + bottom) / 2);
    cairo_rotate(c, -M_PI / 2);
    text(c, 0, 0, std::string(axisName(va)) + " (mm)", 13, 0.5, 0.5);
    cairo_restore(c);
    // Orientation labels on every edge, the same convention in every plane.
    cairo_set_source_rgb(c, 0.1, 0.1, 0.6);
    text(c, left + 4, (top + bottom) / 2, std::string("-") + axisName(ua), 14, 0, 0.5, true);
    text(c, right - 4, (top + bottom) / 2, std::string("+") + axisName(ua), 14, 1, 0.5, true);
    text(c, (left + right) / 2, top + 4, std::string("+") + axisName(va), 14, 0.5, 0, true);
    text(c, (left + right) / 2, bottom - 4, std::string("-") + axisName(va), 14, 0.5, 1, true);
}

void drawColourBar(cairo_t* c, double x, double top, double bottom, const ColourScale& cs, const std::vector<double>& levels) {
    const int steps = 100;
    double h = (bottom - top) / steps;
    for (int k = 0; k < steps; ++k) {
        Rgb col = ramp((k + 0.5) / steps);
        cairo_set_source_rgb(c, col.r, col.g, col.b);
        cairo_rectangle(c, x, bottom - (k + 1) * h, 22, h + 0.5);
        cairo_fill(c);
    }
    cairo_set_source_rgb(c, 0, 0, 0);
    cairo_set_line_width(c, 1);
    cairo_rectangle(c, x, top, 22, bottom - top);
    cairo_stroke(c);
    std::vector<double> ticks;
    if (cs.log)
        for (double d = std::pow(10.0, std::ceil(std::log10(cs.lo) - 1e-9)); d <= cs.hi * (1 + 1e-9); d *= 10) ticks.push_back(d);
    else
        for (double st = niceStep(cs.hi, 6), d = 0; d <= cs.hi + 1e-9; d += st) ticks.push_back(d);
    for (size_t k = 0; k < ticks.size(); ++k) {
        double y = bottom - cs.t(ticks[k]) * (bottom - top);
        cairo_move_to(c, x + 22, y), cairo_line_to(c, x + 27, y);
        cairo_stroke(c);
        text(c, x + 30, y, fmt(ticks[k]), 11, 0, 0.5);
    }
    text(c, x + 30, top - 8, "above: top colour", 9, 0, 0.5);
    for (size_t i = 0; i < levels.size(); ++i) {
        double y = bottom - std::clamp(cs.t(levels[i]), 0.0, 1.0) * (bottom - top);
        Rgb col = lineColour(i);
        cairo_set_source_rgb(c, col.r, col.g, col.b);
        cairo_set_line_width(c, 2.5);
        cairo_move_to(c, x - 4, y), cairo_line_to(c, x + 26, y);
        cairo_stroke(c);
    }
    cairo_set_source_rgb(c, 0, 0, 0);
    text(c, x - 6, top - 36, "Dose (J/cm^2)", 13, 0, 0);
    // Isodose legend under the bar.
    if (!levels.empty()) text(c, x - 6, bottom + 24, "isodose lines:", 12, 0, 0);
    for (size_t i = 0; i < levels.size(); ++i) {
        double y = bottom + 50 + 18 * i;
        Rgb col = lineColour(i);
        cairo_set_source_rgb(c, 0.5, 0.5, 0.5);
        cairo_rectangle(c, x - 8, y - 6, 34, 12);
        cairo_fill(c);
        cairo_set_source_rgb(c, col.r, col.g, col.b);
        cairo_set_line_width(c, 2.5);
        cairo_move_to(c, x - 6, y), cairo_line_to(c, x + 24, y);
        cairo_stroke(c);
        cairo_set_source_rgb(c, 0, 0, 0);
        text(c, x + 32, y, fmt(levels[i]) + " J/cm^2", 12, 0, 0.5);
    }
}

}  // namespace

std::pair<int, int> sliceAxes(int a) { return a == 0 ? std::make_pair(1, 2) : a == 1 ? std::make_pair(0, 2) : std::make_pair(0, 1); }

SourceMarker markerOf(const std::string& name, const Source& s) {
    if (auto* c = dynamic_cast<const CylinderSource*>(&s)) return {name, c->endpoint[0], c->endpoint[1]};
    if (auto* l = dynamic_cast<const LineSource*>(&s)) return {name, l->endpoint[0], l->endpoint[1]};
    if (auto* p = dynamic_cast<const PointSource*>(&s)) return {name, p->position, p->position};
    if (auto* p = dynamic_cast<const PencilBeamSource*>(&s)) return {name, p->position, p->position};
    if (auto* p = dynamic_cast<const FiberSource*>(&s)) return {name, p->position, p->position};
    if (auto* b = dynamic_cast<const BallSource*>(&s)) return {name, b->centre, b->centre};
    return {};
}

void renderDoseSlice(const std::string& png, const TetraMesh& mesh, const std::vector<double>& dose,
                     const std::map<uint32_t, std::string>& names, const std::vector<SourceMarker>& sources,
                     const SlicePlane& plane, const SliceStyle& style, const std::string& title) {
    const double mL = 90, mR = 190, mT = 70, mB = 70;
    // One sample per 2 x 2 pixels: finer than any tetra a picture can show, and 4x fewer point locations.
    Raster r = sample(mesh, dose, plane, int(style.width - mL - mR) / 2, int(style.height - mT - mB) / 2);
    double scale = std::min((style.width - mL - mR) / r.nu, (style.height - mT - mB) / r.nv);
    Frame f{mL, mT + r.nv * scale, scale, r.nv};
    ColourScale cs;
    double dmax = 0;
    for (double d : r.dose)
        if (std::isfinite(d)) dmax = std::max(dmax, d);
    cs.log = style.logScale;
    if (cs.log) {
        // Four decades below the slice's maximum, or down to a tenth of the lowest isodose level.
        cs.hi = dmax > 0 ? dmax : 1;
        cs.lo = cs.hi * 1e-4;
        for (double l : style.isodose) cs.lo = std::min(cs.lo, l / 10);
    } else {
        for (double l : style.isodose) cs.hi = std::max(cs.hi, 2 * l);
        if (style.isodose.empty()) cs.hi = dmax > 0 ? dmax : 1;
    }
    Surface s(cairo_image_surface_create(CAIRO_FORMAT_RGB24, style.width, style.height), cairo_surface_destroy);
    Context c(cairo_create(s.get()), cairo_destroy);
    cairo_select_font_face(c.get(), "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_source_rgb(c.get(), 1, 1, 1);
    cairo_paint(c.get());
    drawDose(c.get(), r, f, cs);
    for (size_t i = 0; i < style.isodose.size(); ++i)
        drawIsodose(c.get(), r, f, style.isodose[i], lineColour(i));
    drawOutlines(c.get(), r, f);
    drawRegionNames(c.get(), r, f, names);
    drawSources(c.get(), r, f, sources, plane);
    drawAxes(c.get(), r, f, plane);
    drawColourBar(c.get(), f.x(r.nu) + 40, mT + 30, std::min(f.y(0), style.height - mB - 24.0 * style.isodose.size() - 40), cs,
                  style.isodose);
    auto [ua, va] = sliceAxes(plane.axis);
    cairo_set_source_rgb(c.get(), 0, 0, 0);
    text(c.get(), mL, 14, title, 15, 0, 0);
    text(c.get(), mL, 36,
         std::string("plane ") + axisName(plane.axis) + " = " + fmt(plane.at) + " mm, seen with " + axisName(ua) +
             " to the right and " + axisName(va) + " up; sources magenta (dashed: off the plane)",
         12, 0, 0);
    writePng(s.get(), png);
}

void renderDvh(const std::string& png, const std::vector<DvhCurve>& curves, const std::vector<DvhMark>& marks,
               const std::string& title, int width, int height) {
    const double mL = 80, mR = 270, mT = 50, mB = 60;
    double dmax = 0;
    for (const auto& m : marks) dmax = std::max(dmax, 2 * m.dose);
    if (!(dmax > 0))
        for (const auto& cv : curves)
            if (!cv.dose.empty()) dmax = std::max(dmax, cv.dose.back());
    if (!(dmax > 0)) dmax = 1;
    double W = width - mL - mR, H = height - mT - mB;
    auto X = [&](double d) { return mL + std::min(d / dmax, 1.0) * W; };
    auto Y = [&](double f) { return mT + (1 - f) * H; };
    Surface s(cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height), cairo_surface_destroy);
    Context cc(cairo_create(s.get()), cairo_destroy);
    cairo_t* c = cc.get();
    cairo_select_font_face(c, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_source_rgb(c, 1, 1, 1);
    cairo_paint(c);
    cairo_set_source_rgb(c, 0.88, 0.88, 0.88);
    cairo_set_line_width(c, 1);
    double st = niceStep(dmax, 8);
    for (double d = 0; d <= dmax + 1e-9; d += st) cairo_move_to(c, X(d), Y(0)), cairo_line_to(c, X(d), Y(1));
    for (int p = 0; p <= 100; p += 10) cairo_move_to(c, X(0), Y(p / 100.0)), cairo_line_to(c, X(dmax), Y(p / 100.0));
    cairo_stroke(c);
    cairo_set_source_rgb(c, 0, 0, 0);
    for (double d = 0; d <= dmax + 1e-9; d += st) text(c, X(d), Y(0) + 8, fmt(d), 11, 0.5, 0);
    for (int p = 0; p <= 100; p += 20) text(c, X(0) - 8, Y(p / 100.0), std::to_string(p), 11, 1, 0.5);
    cairo_rectangle(c, X(0), Y(1), W, H);
    cairo_stroke(c);
    text(c, mL + W / 2, Y(0) + 30, "Dose (J/cm^2)", 13, 0.5, 0);
    cairo_save(c);
    cairo_translate(c, 30, mT + H / 2);
    cairo_rotate(c, -M_PI / 2);
    text(c, 0, 0, "Volume receiving at least the dose (%)", 13, 0.5, 0.5);
    cairo_restore(c);
    text(c, mL, 16, title, 15, 0, 0);
    for (size_t k = 0; k < curves.size(); ++k) {
        const DvhCurve& cv = curves[k];
        Rgb col = curveColour(k);
        cairo_set_source_rgb(c, col.r, col.g, col.b);
        cairo_set_line_width(c, 2.2);
        cairo_move_to(c, X(0), Y(1));
        for (size_t i = 0; i < cv.dose.size(); ++i) cairo_line_to(c, X(cv.dose[i]), Y(cv.fraction[i]));
        if (!cv.dose.empty() && cv.dose.back() <= dmax) cairo_line_to(c, X(cv.dose.back()), Y(0));
        cairo_stroke(c);
        cairo_move_to(c, mL + W + 20, mT + 20 + 20 * k), cairo_line_to(c, mL + W + 45, mT + 20 + 20 * k);
        cairo_stroke(c);
        cairo_set_source_rgb(c, 0, 0, 0);
        text(c, mL + W + 50, mT + 20 + 20 * k, cv.name, 12, 0, 0.5);
    }
    double y = mT + 40 + 20 * curves.size();
    for (const DvhMark& m : marks) {
        size_t k = m.curve;
        Rgb col = curveColour(k);
        cairo_set_source_rgb(c, col.r, col.g, col.b);
        cairo_set_line_width(c, 1.5);
        double dash[] = {6, 4};
        cairo_set_dash(c, dash, 2, 0);
        // A limit D_x <= Y forbids the region above-right of its point; a goal needs the curve there.
        cairo_move_to(c, X(m.dose), Y(0)), cairo_line_to(c, X(m.dose), Y(m.fraction));
        if (m.upper) cairo_line_to(c, X(dmax), Y(m.fraction));
        else cairo_line_to(c, X(0), Y(m.fraction));
        cairo_stroke(c);
        cairo_set_dash(c, dash, 0, 0);
        cairo_arc(c, X(m.dose), Y(m.fraction), 4.5, 0, 2 * M_PI);
        cairo_fill(c);
        cairo_arc(c, mL + W + 24, y, 4, 0, 2 * M_PI);
        cairo_fill(c);
        cairo_set_source_rgb(c, 0, 0, 0);
        text(c, mL + W + 34, y, m.label, 11, 0, 0.5);
        y += 18;
    }
    writePng(s.get(), png);
}

}  // namespace fm::planning
