// SPDX-License-Identifier: GPL-3.0-or-later
#include "Geometry/Detectors.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "Common/Errors.hpp"
#include "Common/WholeNumber.hpp"

namespace fm {
namespace {

double segmentDistance(const Point3& p, const Point3& a, const Point3& b) {
    const Point3 ab = sub(b, a), ap = sub(p, a);
    const double len2 = dotP(ab, ab);
    const double t = len2 > 0 ? std::clamp(dotP(ap, ab) / len2, 0.0, 1.0) : 0.0;
    const Point3 q{a[0] + t * ab[0], a[1] + t * ab[1], a[2] + t * ab[2]};
    return normP(sub(p, q));
}

std::vector<std::string> splitCommas(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    for (std::string part; std::getline(ss, part, ',');) out.push_back(part);
    if (!s.empty() && s.back() == ',') out.emplace_back();
    return out;
}

double parseReal(const std::string& s, const std::string& what) {
    const char* b = s.c_str();
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(b, &end);
    if (s.empty() || end == b || *end != '\0' || errno == ERANGE || !std::isfinite(v))
        throw ParameterError(what + ": '" + s + "' is not a finite number");
    return v;
}

std::string detectorName(size_t i) { return "detector " + std::to_string(i); }

}  // namespace

double pointTriangleDistance(const Point3& p, const Point3& a, const Point3& b, const Point3& c) {
    const Point3 ab = sub(b, a), ac = sub(c, a), n = crossP(ab, ac);
    const double n2 = dotP(n, n);
    if (n2 > 0) {
        // Barycentric coordinates of p's projection onto the plane.
        const Point3 ap = sub(p, a);
        const double v = dotP(crossP(ap, ac), n) / n2, w = dotP(crossP(ab, ap), n) / n2;
        if (v >= 0 && w >= 0 && v + w <= 1) return std::fabs(dotP(ap, n)) / std::sqrt(n2);
    }
    return std::min({segmentDistance(p, a, b), segmentDistance(p, b, c), segmentDistance(p, c, a)});
}

Detector parseDetector(const std::string& text, const std::string& what) {
    Detector d;
    const std::string facesTag = "faces:";
    if (text.compare(0, facesTag.size(), facesTag) == 0) {
        for (const std::string& f : splitCommas(text.substr(facesTag.size()))) {
            const auto id = parseWholeNumber(f);
            if (!id || *id > std::numeric_limits<uint32_t>::max())
                throw ParameterError(what + ": face id '" + f + "' is not a whole number below 2^32");
            d.faces.push_back(uint32_t(*id));
        }
        if (d.faces.empty()) throw ParameterError(what + ": 'faces:' needs at least one face id");
        return d;
    }
    const std::vector<std::string> parts = splitCommas(text);
    if (parts.size() != 4)
        throw ParameterError(what + ": expected x,y,z,radius (mm) or faces:f1,f2,...; got '" + text + "'");
    for (int i = 0; i < 3; ++i) d.centre[i] = parseReal(parts[i], what + " centre");
    d.radius = parseReal(parts[3], what + " radius");
    return d;
}

void checkDisk(const Detector& d, const std::string& name) {
    if (!(d.radius > 0) || !std::isfinite(d.radius))
        throw ParameterError(name + " radius: must be > 0 mm and finite, got " + std::to_string(d.radius));
    for (int k = 0; k < 3; ++k)
        if (!std::isfinite(d.centre[k]))
            throw ParameterError(name + " centre: must be finite, got " + std::string("xyz").substr(k, 1) + " = " +
                                 std::to_string(d.centre[k]));
}

DetectionSpec compileDetectors(const TetraMesh& mesh, const std::vector<Detector>& detectors, uint64_t maxRecords) {
    if (detectors.size() > kMaxDetectors)
        throw ParameterError("detectors: " + std::to_string(detectors.size()) + " given, at most " +
                             std::to_string(kMaxDetectors) + " per run");
    if (maxRecords == 0) throw ParameterError("detectors: maxRecords must be at least 1");
    DetectionSpec spec;
    spec.maxRecords = maxRecords;
    spec.faceDetectors.assign(mesh.faceCount() + 1, 0);
    for (size_t i = 0; i < detectors.size(); ++i) {
        const Detector& d = detectors[i];
        const uint64_t bit = uint64_t(1) << i;
        DetectorZone z;
        size_t faces = 0;
        if (!d.faces.empty()) {
            z.radius2 = std::numeric_limits<double>::infinity();
            for (uint32_t f : d.faces) {
                if (f == 0 || f > mesh.faceCount())
                    throw ParameterError(detectorName(i) + " faces: face " + std::to_string(f) + " does not exist (faces 1.." +
                                         std::to_string(mesh.faceCount()) + ")");
                if (mesh.face(f).other != 0)
                    throw ParameterError(detectorName(i) + " faces: face " + std::to_string(f) + " is not on the mesh boundary");
                spec.faceDetectors[f] |= bit;
            }
            faces = d.faces.size();
        } else {
            checkDisk(d, detectorName(i));
            z.radius2 = d.radius * d.radius;
            std::copy(d.centre.begin(), d.centre.end(), z.centre);
            for (uint32_t f : mesh.boundaryFaces()) {
                const MeshFace& F = mesh.face(f);
                if (pointTriangleDistance(d.centre, mesh.point(F.points[0]), mesh.point(F.points[1]),
                                          mesh.point(F.points[2])) <= d.radius) {
                    spec.faceDetectors[f] |= bit;
                    ++faces;
                }
            }
            if (faces == 0) {
                std::ostringstream msg;
                msg << detectorName(i) << " centre/radius: the disk at (" << d.centre[0] << ", " << d.centre[1] << ", "
                    << d.centre[2] << ") of radius " << d.radius << " mm touches no boundary face of the mesh";
                throw ParameterError(msg.str());
            }
        }
        spec.detectors.push_back(z);
    }
    return spec;
}

}  // namespace fm
