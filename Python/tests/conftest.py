# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared fixtures: a small two-region model, built the way a user would."""
import os
import subprocess
import sys
import time

import numpy as np
import pytest

fm = pytest.importorskip("fullmonte", reason="the fullmonte module is not built (FM_USE_PYTHON=OFF)")

BUILD = os.environ.get("FM_BUILD_DIR", "")
SOURCE = os.environ.get("FM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


@pytest.fixture(scope="session")
def slab_model():
    """A 20 mm cube of 8,000 cubes' tetras: region 2 (a 'tumour') for z < 0, region 1 above."""
    box = fm.box_mesh((-10, -10, -10), (10, 10, 10), (12, 12, 12))
    pts = np.asarray(box.points)
    tets = box.tetras
    centroid_z = pts[tets].mean(axis=1)[:, 2]
    regions = np.where(centroid_z < 0, 2, 1)
    mesh = fm.TetraMesh(pts, tets, regions)
    mats = fm.MaterialSet([fm.Material(mu_a=0.02, mu_s=5.0, g=0.8, n=1.37),
                           fm.Material(mu_a=0.1, mu_s=8.0, g=0.9, n=1.37)])
    return mesh, mats


def assert_ctrl_c_interrupts(tmp_path, call):
    """A script blocked in `call` (a statement using fm, m: a small mesh, ms: materials) stops
    within seconds of SIGINT with KeyboardInterrupt."""
    script = tmp_path / "interrupted.py"
    script.write_text(
        "import fullmonte as fm, sys\n"
        "m = fm.box_mesh((-5,-5,-5),(5,5,5),(6,6,6))\n"
        "ms = fm.MaterialSet([fm.Material(0.01, 10, 0.9, 1.4)])\n"
        "print('ready', flush=True)\n"
        "try:\n"
        f"    {call}\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True); sys.exit(130)\n")
    p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    time.sleep(0.5)
    t0 = time.monotonic()
    p.send_signal(2)
    out, _ = p.communicate(timeout=20)
    assert p.returncode == 130 and "interrupted" in out
    assert time.monotonic() - t0 < 5
