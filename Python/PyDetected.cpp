// SPDX-License-Identifier: GPL-3.0-or-later
// Detected-packet files (.fmd, docs/DETECTORS.md): the records as numpy arrays, the detected
// signal, its reweighting to other mu_a, the per-region Jacobian and the detector TPSF.
#include "Kernels/Detection.hpp"
#include "Python/PyCommon.hpp"
#include "Storage/Detected/DetectedFile.hpp"
#include "Storage/Detected/MchFile.hpp"

namespace fmpy {
namespace {

using DP = fm::DetectedPackets;

// One field of every record, copied into a numpy array.
template <class T, class F>
py::array_t<T> column(const DP& dp, F field) {
    py::array_t<T> a(py::ssize_t(dp.records.size()));
    auto v = a.template mutable_unchecked<1>();
    for (size_t k = 0; k < dp.records.size(); ++k) v(py::ssize_t(k)) = field(dp.records[k]);
    return a;
}

template <class F>
py::array_t<float> vectors(const DP& dp, F field) {
    py::array_t<float> a({py::ssize_t(dp.records.size()), py::ssize_t(3)});
    auto v = a.mutable_unchecked<2>();
    for (size_t k = 0; k < dp.records.size(); ++k)
        for (int i = 0; i < 3; ++i) v(py::ssize_t(k), i) = field(dp.records[k])[i];
    return a;
}

std::vector<double> perPacket(std::vector<double> s, const DP& dp) {
    for (double& x : s) x /= double(dp.packets);
    return s;
}

}  // namespace

void bindDetected(py::module_& m) {
    py::class_<DP, std::shared_ptr<DP>>(m, "DetectedPackets",
                                       "Detected-packet records of a run with detectors (read_detected)")
        .def_readonly("regions", &DP::regions, "Regions (materials 1..R) with a path length each")
        .def_readonly("packets", &DP::packets, "Packets the run launched")
        .def_readonly("seed", &DP::seed, "The run's seed: with a record's index, its packet's random stream")
        .def_readonly("kernel", &DP::kernel, "The kernel that detected the packets (cpu or cuda): replays run there")
        .def_readonly("cells", &DP::cells, "The GPU cell layout the records were made in (record or compact): GPU replays read it")
        .def_readonly("model", &DP::model, "mesh, or layered (fullmonte-mcml --records: regions are layers, detector 0 the top)")
        .def_readonly("detected", &DP::detected, "Detections found (more than the records when truncated)")
        .def_property_readonly("truncated", &DP::truncated, "Whether the run kept fewer records than it found")
        .def_property_readonly("record_count", [](const DP& d) { return d.records.size(); }, "Records kept")
        .def_readonly("mua", &DP::mua, "The run's mu_a per region 1..R (1/mm)")
        .def_property_readonly("index", [](const DP& d) { return column<uint64_t>(d, [](auto& r) { return r.index; }); },
                               "Packet index per record")
        .def_property_readonly("detector", [](const DP& d) { return column<uint32_t>(d, [](auto& r) { return r.detector; }); },
                               "Detector per record")
        .def_property_readonly("scatters", [](const DP& d) { return column<uint32_t>(d, [](auto& r) { return r.scatters; }); },
                               "Interactions each packet survived")
        .def_property_readonly("weight", [](const DP& d) { return column<float>(d, [](auto& r) { return r.weight; }); },
                               "Exit weight (launched packet weight)")
        .def_property_readonly("time", [](const DP& d) { return column<float>(d, [](auto& r) { return r.time; }); },
                               "Time of flight (ns)")
        .def_property_readonly("position", [](const DP& d) { return vectors(d, [](auto& r) { return r.pos; }); },
                               "Exit point (mm), records x 3")
        .def_property_readonly("direction", [](const DP& d) { return vectors(d, [](auto& r) { return r.dir; }); },
                               "Direction after leaving the mesh, records x 3")
        .def_property_readonly("path_lengths", [](py::object self) {
            const DP& d = self.cast<const DP&>();
            return view2(d.pathLengths.data(), d.records.size(), d.regions, self);
        }, "Path length per record and region 1..R (mm), records x R")
        .def_property_readonly("scatter_counts", [](py::object self) -> py::object {
            const DP& d = self.cast<const DP&>();
            if (d.scatterCounts.empty()) return py::none();
            return view2(d.scatterCounts.data(), d.records.size(), d.regions, self);
        }, "Scattering events per record and region 1..R, records x R (rows sum to scatters); "
           "None for a version 1 file")
        .def("signal", [](const DP& d) { return perPacket(fm::detectedSignal(d), d); },
             "Detected weight per launched packet, per detector")
        .def("reweighted_signal", [](const DP& d, const std::vector<double>& mua) {
            const std::vector<double> w = fm::reweightedWeights(d, mua);
            return perPacket(fm::detectedSignal(d, &w), d);
        }, py::arg("mua"), "The signal at other mu_a (1/mm, one per region 1..R), mu_s held")
        .def("region_jacobian", [](const DP& d) { return perPacket(fm::regionJacobian(d), d); },
             "d(signal)/d(mu_a) per detector and region, [d * R + r - 1] (mm)")
        .def("tpsf", [](const DP& d, uint32_t detector, double start, double stop, double step) {
            return perPacket(fm::detectorTpsf(d, detector, fm::makeTimeGates(start, stop, step, "tpsf")), d);
        }, py::arg("detector"), py::arg("start"), py::arg("stop"), py::arg("step"),
             "Signal per time gate from start to stop by step (ns)");
    m.def("read_detected", [](const std::string& path) { return std::make_shared<DP>(fm::readDetected(path)); },
          py::arg("path"), "Reads a .fmd file of fullmonte-run --detectors (docs/DETECTORS.md)");
    m.def("write_detected", [](const DP& d, const std::string& path) { fm::writeDetected(path, d); },
          py::arg("records"), py::arg("path"), "Writes records as a .fmd file");
    m.def("write_mch", [](const DP& d, const std::string& path) { fm::writeMch(path, d); }, py::arg("records"),
          py::arg("path"), "Writes records as an MMC/MCX .mch file (docs/DETECTORS.md field mapping)");
}

}  // namespace fmpy
