# SPDX-License-Identifier: GPL-3.0-or-later
"""Builds the `fullmonte` extension with the project's CMake and packages it.

FM_BUILD_DIR: reuse an existing CMake build folder (only the Python target is built there);
otherwise a private one under build/ is configured with the interpreter running this script.
FM_CMAKE_ARGS: extra arguments for that configure (e.g. -DFM_USE_CUDA=OFF).
"""
import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
os.makedirs(os.path.join(ROOT, "build"), exist_ok=True)  # setup.cfg keeps scratch files there


def version():
    text = open(os.path.join(ROOT, "CMakeLists.txt")).read()
    return re.search(r"project\(FullMonte VERSION ([0-9.]+)", text).group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = os.environ.get("FM_BUILD_DIR") or os.path.join(ROOT, "build", "python-wheel")
        if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
            os.makedirs(build, exist_ok=True)
            subprocess.check_call(["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                                   "-DFM_BUILD_TESTS=OFF", "-DFM_USE_PYTHON=ON",
                                   "-DPython_EXECUTABLE=" + sys.executable]
                                  + shlex.split(os.environ.get("FM_CMAKE_ARGS", "")))
        jobs = os.environ.get("FM_JOBS", str(os.cpu_count() or 2))
        subprocess.check_call(["cmake", "--build", build, "--target", "_fullmonte", "-j", jobs])
        target = os.path.join(os.path.abspath(self.build_lib), "fullmonte")
        shutil.copytree(os.path.join(build, "python", "fullmonte"), target, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__"))


setup(
    version=version(),
    packages=[],
    ext_modules=[Extension("fullmonte._fullmonte", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
)
