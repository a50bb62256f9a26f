// SPDX-License-Identifier: GPL-3.0-or-later
// Contexts only on the devices a run uses (issue 29): after runs on device 0 (alone and as a
// batch), every other GPU of the host has no CUDA context. Its own executable, so that no other
// test case has touched the other devices first. Skips without a GPU; says so with one GPU.
#include <boost/test/unit_test.hpp>

#include <cuda.h>
#include <dlfcn.h>

#include "Geometry/BatchModel.hpp"
#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/Batch.hpp"
#include "Kernels/Dispatch.hpp"
#include "Tests/TestUtil.hpp"

using namespace fm;

namespace {
// The driver API, loaded at run time: the test then starts (and skips) on a machine with no
// NVIDIA driver, like the other GPU tests.
struct Driver {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    decltype(&cuInit) init = lib ? reinterpret_cast<decltype(&cuInit)>(dlsym(lib, "cuInit")) : nullptr;
    decltype(&cuDeviceGetCount) count =
        lib ? reinterpret_cast<decltype(&cuDeviceGetCount)>(dlsym(lib, "cuDeviceGetCount")) : nullptr;
    decltype(&cuDeviceGet) get = lib ? reinterpret_cast<decltype(&cuDeviceGet)>(dlsym(lib, "cuDeviceGet")) : nullptr;
    decltype(&cuDevicePrimaryCtxGetState) state =
        lib ? reinterpret_cast<decltype(&cuDevicePrimaryCtxGetState)>(dlsym(lib, "cuDevicePrimaryCtxGetState")) : nullptr;
    bool ok() const { return init && count && get && state; }
    bool contextActive(int device) const {
        CUdevice d;
        unsigned flags = 0;
        int active = 0;
        BOOST_REQUIRE_EQUAL(get(&d, device), CUDA_SUCCESS);
        BOOST_REQUIRE_EQUAL(state(d, &flags, &active), CUDA_SUCCESS);
        return active != 0;
    }
};
}  // namespace

BOOST_AUTO_TEST_CASE(runs_on_device_0_leave_the_other_devices_untouched) {
    if (!fmtest::haveGpu()) return;
    const Driver drv;
    BOOST_REQUIRE_MESSAGE(drv.ok(), "a GPU is present but libcuda.so.1's driver API could not be loaded");
    BOOST_REQUIRE_EQUAL(drv.init(0), CUDA_SUCCESS);
    int n = 0;
    BOOST_REQUIRE_EQUAL(drv.count(&n), CUDA_SUCCESS);
    TetraMesh mesh = makeBoxMesh({-5, -5, -5}, {5, 5, 5}, 4, 4, 4, [](const Point3&) { return 1u; });
    MaterialSet mats;
    mats.exterior(Material(0, 0, 0, 1.0));
    mats.append(Material(0.05, 5, 0.8, 1.4));
    auto p = std::make_shared<PointSource>();
    p->position = {0.5, 0.2, -1};
    RunOptions ro;
    ro.packets = 10000;
    ro.devices = {0};
    runKernel("cuda", packModel(mesh, mats, *p), ro);
    BatchModel bm = packBatch(mesh, {mats}, {p, p}, {10000}, 1);
    BatchOptions o;
    o.kernel = "cuda";
    o.devices = {0};
    runBatch(bm.mesh, bm.runs, o, {});
    KernelWarmUp({"cuda"}, {0}).join();
    BOOST_CHECK(drv.contextActive(0));
    if (n == 1) BOOST_TEST_MESSAGE("one GPU on this host: no other device to leave untouched");
    for (int d = 1; d < n; ++d) {
        const bool active = drv.contextActive(d);
        BOOST_TEST_MESSAGE("GPU " << d << ": context " << (active ? "created (wrong)" : "none"));
        BOOST_CHECK(!active);
    }
}
