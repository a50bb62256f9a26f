// SPDX-License-Identifier: GPL-3.0-or-later
// The one translation unit that compiles the header-only Boost.Test runner.
#define BOOST_TEST_MODULE MCMLFiles
#include <boost/test/included/unit_test.hpp>
