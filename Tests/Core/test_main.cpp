// SPDX-License-Identifier: GPL-3.0-or-later
// The one translation unit that holds the Boost.Test runner (shared library or header-only).
#define BOOST_TEST_MODULE FullMonte
#ifdef FM_BOOST_TEST_LIB
#include <boost/test/unit_test.hpp>
#else
#include <boost/test/included/unit_test.hpp>
#endif
