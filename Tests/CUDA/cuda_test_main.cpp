// SPDX-License-Identifier: GPL-3.0-or-later
// The Boost.Test runner of the GPU suites: where a test case found no usable CUDA device
// (fmtest::haveGpu), a run with no failure exits 77, which ctest reports as skipped (a check that
// could not run never shows as passed); failures still fail.
#define BOOST_TEST_MODULE FullMonteCUDA
#define BOOST_TEST_NO_MAIN
#ifndef BOOST_TEST_ALTERNATIVE_INIT_API
#define BOOST_TEST_ALTERNATIVE_INIT_API
#endif
#ifdef FM_BOOST_TEST_LIB
#include <boost/test/unit_test.hpp>
#else
#include <boost/test/included/unit_test.hpp>
#endif
#include <cstdio>

#include "Tests/TestUtil.hpp"

int main(int argc, char* argv[]) {
    const int rc = boost::unit_test::unit_test_main(&init_unit_test, argc, argv);
    if (rc == 0 && fmtest::gpuSkips() > 0) {
        std::printf("SKIP: %d GPU test case(s) did not run: no usable CUDA device\n", fmtest::gpuSkips());
        return 77;
    }
    return rc;
}
