# SPDX-License-Identifier: GPL-3.0-or-later
"""Fuzz-style misuse of the bindings: random calls with wrong types, odd values and stale objects
must raise TypeError/ValueError (or fullmonte errors), never crash the interpreter. A fixed seed
keeps it reproducible; it runs in a child process so that a crash is seen as one."""
import os
import subprocess
import sys

from conftest import fm as fullmonte

CHILD = r'''
import math, random, sys
import numpy as np
import fullmonte as fm

rng = random.Random(20261126)
mesh = fm.box_mesh((-2, -2, -2), (2, 2, 2), (3, 3, 3))
mats = fm.MaterialSet([fm.Material(0.1, 5, 0.8, 1.4)])
values = [None, 0, -1, 1, 2**64, -2**70, 1e308, float("nan"), float("inf"), -0.0, "", "x", "1 2 3",
          (), (1, 2), (1, 2, 3), (1, 2, 3, 4), [0, 0, 0], (float("nan"), 0, 0), np.zeros(3),
          np.zeros((2, 3)), np.zeros(mesh.tetra_count), np.full(mesh.tetra_count, np.nan),
          np.zeros((0, 4)), np.array([[0, 1, 2, 3]]), np.array([[0, 0, 0], [1, 0, 0]]), mesh, mats,
          fm.PointSource((0, 0, 0)), object(), b"bytes", {"a": 1}, [fm.Material()], True]
calls = [
    lambda a, b: fm.TetraMesh(a, b),
    lambda a, b: fm.TetraMesh(a, b, a),
    lambda a, b: fm.box_mesh(a, b, (1, 1, 1)),
    lambda a, b: fm.box_mesh((0, 0, 0), (1, 1, 1), a),
    lambda a, b: fm.Material(a, b),
    lambda a, b: fm.MaterialSet(a),
    lambda a, b: fm.MaterialSet([fm.Material(a, b)]),
    lambda a, b: fm.PointSource(a, b),
    lambda a, b: fm.PencilBeam(a, b),
    lambda a, b: fm.BallSource(a, b),
    lambda a, b: fm.LineSource(a, b),
    lambda a, b: fm.VolumeSource(a, b),
    lambda a, b: fm.FiberSource(a, b),
    lambda a, b: fm.CylinderSource(a, b),
    lambda a, b: fm.SurfaceSource(a),
    lambda a, b: fm.Composite(a),
    lambda a, b: fm.Composite([fm.PointSource((0, 0, 0))]).add(a),
    lambda a, b: fm.Simulation(mesh, mats, fm.PointSource((0, 0, 0)), packets=a),
    lambda a, b: fm.Simulation(mesh, mats, fm.PointSource((0, 0, 0)), seed=a, packets=10).result(),
    lambda a, b: fm.Simulation(a, b, fm.PointSource((0, 0, 0))),
    lambda a, b: fm.Simulation(mesh, mats, a, packets=10),
    lambda a, b: fm.run(mesh, mats, fm.BallSource((0, 0, 0), 1), packets=10, wmin=a),
    lambda a, b: fm.fluence(mesh, mats, a),
    lambda a, b: fm.dose_histogram(mesh, a, b),
    lambda a, b: fm.value_at(mesh, a, b),
    lambda a, b: fm.values_along(mesh, np.zeros(mesh.tetra_count), a, b, 3),
    lambda a, b: fm.region_sum(mesh, a, b),
    lambda a, b: mesh.locate(a),
    lambda a, b: mesh.region_volume(a),
    lambda a, b: mats.__getitem__(a),
    lambda a, b: mats.__setitem__(a, b),
    lambda a, b: fm.read_timos_mesh(a),
    lambda a, b: fm.read_mci(a),
    lambda a, b: fm.write_values(a, mesh, b),
    lambda a, b: fm.RegionShape.sphere(a, b, 1),
    lambda a, b: fm.box_mesh((0, 0, 0), (1, 1, 1), (1, 1, 1), shapes=[fm.RegionShape.sphere(0, (0, 0, 0), a)]),
]
# Batches, fluence matrices, traces, and the optional components where built.
src0 = fm.PointSource((0, 0, 0))
batch = fm.run_batch(mesh, mats, [src0, src0], packets=20)
traces = fm.trace(mesh, mats, src0, packets=3)
calls += [
    lambda a, b: fm.run_batch(mesh, a, b, packets=10),
    lambda a, b: fm.run_batch(mesh, mats, [src0], packets=a, seed=b),
    lambda a, b: fm.run_batch(a, mats, [src0], packets=10, kernel=b),
    lambda a, b: fm.run_batch(mesh, [mats, a], [src0], packets=10, progress=b),
    lambda a, b: batch[a],
    lambda a, b: batch.run(a, b),
    lambda a, b: batch.write_fluence_matrix(a),
    lambda a, b: fm.read_fluence_matrix(a),
    lambda a, b: fm.write_fluence_matrix(a, b),
    lambda a, b: fm.write_fluence_matrix("m.fmm", a, b),
    lambda a, b: fm.trace(mesh, mats, a, packets=5),
    lambda a, b: fm.trace(mesh, mats, src0, packets=a, max_points=b),
    lambda a, b: traces[a],
    lambda a, b: traces.trace(a),
    lambda a, b: fm.mesh_quality(a),
]
if fm.has_mesher:
    cube = np.ones((3, 3, 3), dtype=np.int32)
    calls += [
        lambda a, b: fm.mesh_image(a, b),
        lambda a, b: fm.mesh_image(cube, a, b),
        lambda a, b: fm.mesh_image(cube, cell_size=a, seed=b),
        lambda a, b: fm.mesh_image(cube, facet_size_by_label=a),
        lambda a, b: fm.mesh_surfaces(a),
        lambda a, b: fm.mesh_image_file(a, label_map=b),
        lambda a, b: fm.read_label_image(a, b),
        lambda a, b: fm.write_label_image(a, b),
    ]
if fm.has_planner:
    calls += [
        lambda a, b: fm.Plan(a),
        lambda a, b: fm.Plan.from_json(a, b),
        lambda a, b: fm.render_dose_slice(a, mesh, b),
        lambda a, b: fm.render_dose_slice("s.png", mesh, np.ones(mesh.tetra_count), axis=a, at=b),
        lambda a, b: fm.render_dvh(a, b),
        lambda a, b: fm.render_dvh("d.png", [("x", a, b)]),
    ]
sim = fm.Simulation(mesh, mats, fm.PointSource((0, 0, 0)), packets=100)
calls += [lambda a, b: sim.wait(a), lambda a, b: sim.result(), lambda a, b: sim.start(), lambda a, b: sim.cancel()]
ok = bad = 0
for i in range(6000):
    f = rng.choice(calls)
    a, b = rng.choice(values), rng.choice(values)
    try:
        f(a, b)
        ok += 1
    except (TypeError, ValueError, IndexError, RuntimeError, OverflowError, ImportError, fm.Error):
        bad += 1
print("survived", ok, bad)
'''


def test_bindings_survive_random_misuse(tmp_path):
    # In an empty folder: some random calls write files (a path and valid data by chance).
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(fullmonte.__file__))))
    p = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                       env=env)
    assert p.returncode == 0, (p.returncode, p.stderr[-3000:])
    assert p.stdout.startswith("survived")
    ok, bad = (int(x) for x in p.stdout.split()[1:3])
    assert bad > 1000  # most random calls are misuse and must have raised
