# SPDX-License-Identifier: GPL-3.0-or-later
"""The optional components from Python: the mesher (CGAL), the planner (JSON plans, LP, cairo
pictures) and the VTK renderer. Each test skips with the CMake option to turn on when its part
is not built, after checking that the missing names raise ImportError saying so."""
import json
import math
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from conftest import SOURCE, assert_ctrl_c_interrupts, fm

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _need(flag, option, names):
    if not getattr(fm, flag):
        for n in names:
            with pytest.raises(ImportError, match=option):
                getattr(fm, n)()
        pytest.skip(f"not built: rebuild with -D{option}=ON")


# ---- mesher ----

def _label_image():
    """16 x 12 x 8 voxels of 1 mm: label 1 everywhere, label 2 in the x > 0 half of a middle slab,
    so orientation errors (axes swapped or flipped) move or reshape region 2."""
    nx, ny, nz = 16, 12, 8
    labels = np.ones((nx, ny, nz), dtype=np.int16)
    labels[8:14, 3:9, 2:6] = 2
    return labels, (1.0, 1.0, 1.0), (-7.5, -5.5, -3.5)


def test_mesh_image_regions_follow_the_labels(tmp_path):
    _need("has_mesher", "FM_USE_CGAL", ["mesh_image", "mesh_image_file", "mesh_surfaces", "read_label_image"])
    labels, spacing, origin = _label_image()
    messages = []
    opts = dict(cell_size=1.2, facet_size=1.0, facet_distance=0.2, seed=3, perturb=False)
    mesh = fm.mesh_image(labels, spacing, origin, progress=messages.append, **opts)
    assert messages and mesh.region_count == 3
    # Image extent: voxel centres from origin, padded by half a voxel: x -8..8, y -6..6, z -4..4.
    lo, hi = mesh.bounds
    for a, (l, h) in enumerate([(-8, 8), (-6, 6), (-4, 4)]):
        assert abs(lo[a] - l) < 0.3 and abs(hi[a] - h) < 0.3, (a, lo, hi)
    vox2 = float((labels == 2).sum())  # mm^3
    assert abs(mesh.region_volume(2) / vox2 - 1) < 0.08
    assert abs((mesh.region_volume(1) + mesh.region_volume(2)) / labels.size - 1) < 0.05
    # Region 2's centroid sits where its voxels are: centres x 0.5..5.5, y -2.5..2.5, z -1.5..1.5.
    tets = mesh.tetras[mesh.regions == 2]
    c = (mesh.points[tets].mean(axis=1) * mesh.volumes[mesh.regions == 2, None]).sum(axis=0) / mesh.region_volume(2)
    assert np.allclose(c, [3.0, 0.0, 0.0], atol=0.3), c
    q = fm.mesh_quality(mesh)
    assert 0 < q["min_dihedral"] <= q["median_dihedral"] < 180
    # Through a file: the same image read back gives the same mesh (same seed and options).
    path = str(tmp_path / "labels.mha")
    fm.write_label_image(path, labels, spacing, origin)
    back, sp, org = fm.read_label_image(path)
    assert np.array_equal(back, labels) and sp == spacing and org == origin
    again = fm.mesh_image_file(path, **opts)
    assert again.tetra_count == mesh.tetra_count and np.array_equal(again.points, mesh.points)
    dropped = fm.mesh_image_file(path, label_map="2=0", **opts)
    assert dropped.region_count == 2  # label 2 mapped to the outside


def test_mesher_bad_arguments():
    _need("has_mesher", "FM_USE_CGAL", ["mesh_image"])
    labels, spacing, origin = _label_image()
    with pytest.raises(TypeError, match="cel_size"):
        fm.mesh_image(labels, cel_size=1)
    with pytest.raises(ValueError, match="cell_size|cell size"):
        fm.mesh_image(labels, cell_size=-1)
    with pytest.raises(TypeError, match="integer"):
        fm.mesh_image(labels.astype(float))
    negative = labels.astype(np.int16)
    negative[0, 1, 2] = -1  # an 'unlabelled' code: refused, not wrapped to another label
    with pytest.raises(ValueError, match=r"voxel \(0, 1, 2\) has label -1: labels are integers >= 0"):
        fm.mesh_image(negative)
    with pytest.raises(ValueError, match="seed"):
        fm.mesh_image(labels, seed=2 ** 32)  # never wrapped
    with pytest.raises(TypeError, match="perturb"):
        fm.mesh_image(labels, perturb="no")
    with pytest.raises(TypeError, match="cell_size_by_label"):
        fm.mesh_image(labels, cell_size_by_label=[1, 2])
    with pytest.raises(ValueError, match="3-D"):
        fm.mesh_image(np.zeros((4, 4), dtype=int))
    with pytest.raises(ValueError, match="spacing"):
        fm.mesh_image(labels, (1, 0, 1))
    # Below a nanometre CGAL's refinement gave up or never ended: refused before meshing.
    with pytest.raises(ValueError, match=r"voxel spacing along axis 0 is 1e-20 mm, outside"):
        fm.mesh_image(labels, (1e-20, 1e-20, 1e-20))
    # A label volume too large to copy (a broadcast view: no memory of its own) is a MemoryError
    # naming the voxels, never a crash of the interpreter.
    huge = np.lib.stride_tricks.as_strided(np.ones(1, dtype=np.int32), (100000, 100000, 100000), (0, 0, 0))
    with pytest.raises(MemoryError, match="labels: 1000000000000000 voxels"):
        fm.mesh_image(huge)
    with pytest.raises(ValueError):
        fm.mesh_image(np.zeros((4, 4, 4), dtype=int))  # nothing but the outside
    with pytest.raises(ValueError, match="label"):
        fm.mesh_surfaces([("a.stl", 0)])
    with pytest.raises((ValueError, RuntimeError), match="missing.stl"):
        fm.mesh_surfaces([("missing.stl", 1)])
    with pytest.raises((ValueError, RuntimeError), match="nope.nii"):
        fm.read_label_image("nope.nii")


# ---- planner ----

def _small_plan_json():
    with open(os.path.join(SOURCE, "Examples", "pdt_plan.json")) as f:
        plan = json.load(f)
    plan["mesh"]["box"]["divisions"] = [12, 12, 9]
    plan["sources"] = plan["sources"][:4]
    plan["simulation"].update(packets_per_source=1200, batches=2, seed=5, threads=2)
    return plan


def test_plan_simulation_takes_the_tuning_variables(monkeypatch):
    """Plan.simulate reads the FM_* tuning variables as every Python run does (a bad one names
    itself); FM_CPU_ISA=generic gives the default loop's matrix."""
    _need("has_planner", "FM_USE_PLANNING", ["Plan"])
    plan = fm.Plan.from_json(json.dumps(_small_plan_json()), "small.json", SOURCE)
    monkeypatch.setenv("FM_CPU_ISA", "sse")
    with pytest.raises(fm.ParameterError, match="FM_CPU_ISA=sse"):
        plan.simulate()
    monkeypatch.setenv("FM_CPU_ISA", "generic")
    generic = plan.simulate()
    monkeypatch.delenv("FM_CPU_ISA")
    best = plan.simulate()
    np.testing.assert_allclose(generic.fluence, best.fluence, rtol=1e-9, atol=1e-12)


def test_plan_simulate_optimise_evaluate_write(tmp_path):
    _need("has_planner", "FM_USE_PLANNING", ["Plan", "render_dose_slice", "render_dvh"])
    spec = _small_plan_json()
    plan = fm.Plan.from_json(json.dumps(spec), "small.json", SOURCE)
    assert plan.source_names == ["D1", "D2", "D3", "D4"] and plan.region_names[2] == "tumour"
    seen = []
    matrix = plan.simulate(progress=lambda d, t: seen.append((d, t)))
    assert matrix.fluence.shape == (2, 4, plan.mesh.tetra_count) and seen[-1] == (8, 8)
    assert not matrix.fluence.flags.writeable and not matrix.fluence.flags.owndata
    # Column (batch b, source s) is the batch run of that source with seed + b and half the packets.
    b = fm.run_batch(plan.mesh, plan.materials, [plan.sources[2]], packets=600, seed=6, threads=2)
    assert np.array_equal(matrix.fluence[1, 2], b.fluence_matrix()[:, 0])
    sol = plan.optimise(matrix)
    assert sol.status and len(sol.energies) == 4 and all(e >= 0 for e in sol.energies)
    ev = plan.evaluate(matrix, sol.energies)
    assert np.array_equal(ev.dose, matrix.dose(sol.energies))
    # dose = 100 x sum_s E_s x mean_b phi[b, s] (J/cm^2).
    expect = 100 * np.einsum("s,bst->t", np.asarray(sol.energies), np.asarray(matrix.fluence)) / 2
    assert np.allclose(ev.dose, expect, rtol=1e-12, atol=1e-12)
    tumour = [r for r in ev.regions if r["name"] == "tumour"][0]
    assert tumour["D90"]["value"] <= tumour["D50"]["value"] <= tumour["Dmax"]["value"]
    assert "tumour" in plan.summary(sol, ev)
    out = str(tmp_path / "out")
    plan.write(out, matrix, sol, ev)
    assert os.path.exists(os.path.join(out, "plan.json"))
    with pytest.raises(ValueError, match="exists|overwrite"):
        plan.write(out, matrix, sol, ev)
    plan.write(out, matrix, sol, ev, overwrite=True)
    # A saved matrix comes back the same, its model fingerprint the plan's.
    mpath = str(tmp_path / "m.fmm")
    matrix.write(mpath)
    again = plan.load_matrix(mpath, batches=2)
    assert np.array_equal(again.fluence, matrix.fluence) and again.origin == mpath
    assert again.fingerprint_check == "matches the plan"
    with pytest.raises(ValueError, match="energies"):
        plan.evaluate(matrix, [1.0, 2.0])


def test_load_matrix_checks_the_model_fingerprint(tmp_path):
    """A matrix of another model (a moved diffuser, other mu_a, other packets) is refused, naming
    the part; unchecked=True loads it with a warning; a file without a fingerprint loads with a
    warning that it cannot be checked."""
    _need("has_planner", "FM_USE_PLANNING", ["Plan"])
    spec = _small_plan_json()
    spec["sources"] = spec["sources"][:2]
    spec["simulation"].update(packets_per_source=200)
    plan = fm.Plan.from_json(json.dumps(spec), "small.json", SOURCE)
    mpath = str(tmp_path / "m.fmm")
    plan.simulate().write(mpath)

    def variant(change):
        s = json.loads(json.dumps(spec))
        change(s)
        return fm.Plan.from_json(json.dumps(s), "other.json", SOURCE)

    moved = variant(lambda s: s["sources"][0].update({"from": [c + 0.5 for c in s["sources"][0]["from"]]}))
    for other, part in ((moved, "sources"),
                        (variant(lambda s: s["regions"][0].update(mu_a=s["regions"][0]["mu_a"] * 1.1)), "materials"),
                        (variant(lambda s: s["simulation"].update(packets_per_source=300)),
                         "packets or kernel settings")):
        with pytest.raises(fm.ParameterError, match=f"m.fmm: .*different {part}.*unchecked=True"):
            other.load_matrix(mpath, batches=2)
    with pytest.warns(RuntimeWarning, match="different sources"):
        m = moved.load_matrix(mpath, batches=2, unchecked=True)
    assert m.fingerprint_check == "differs (sources): used unchecked"
    # A file without a fingerprint, as written before there was one.
    phi, header = fm.read_fluence_matrix(mpath)
    old = str(tmp_path / "old.fmm")
    fm.write_fluence_matrix(old, np.asarray(phi), sources=header["sources"])
    with pytest.warns(RuntimeWarning, match="no model fingerprint"):
        m = moved.load_matrix(old, batches=2)
    assert m.fingerprint_check == "none in the file: not checked"


def test_ctrl_c_cancels_a_plan_simulation(tmp_path):
    _need("has_planner", "FM_USE_PLANNING", ["Plan"])
    spec = _small_plan_json()
    spec["simulation"].update(packets_per_source=10 ** 10, batches=1, threads=1)
    path = tmp_path / "long.json"
    path.write_text(json.dumps(spec))
    assert_ctrl_c_interrupts(tmp_path, f"fm.Plan({str(path)!r}).simulate()")


def test_plan_errors_name_the_json_path():
    if not fm.has_planner:
        with pytest.raises(ImportError, match="FM_USE_PLANNING"):
            fm.Plan.from_json("{}")
    _need("has_planner", "FM_USE_PLANNING", ["Plan"])
    spec = _small_plan_json()
    spec["prescription"]["targets"][0]["region"] = "tumor"
    with pytest.raises(ValueError, match=r"/prescription/targets/0/region"):
        fm.Plan.from_json(json.dumps(spec), "bad.json", SOURCE)
    with pytest.raises(ValueError, match="nope.json"):
        fm.Plan("nope.json")


def test_cairo_pictures_render_without_a_display(slab_model, tmp_path):
    _need("has_planner", "FM_USE_PLANNING", ["render_dose_slice"])
    mesh, mats = slab_model
    r = fm.run(mesh, mats, fm.PointSource((0, 0, 0)), packets=3000, seed=1)
    dose = r.fluence(energy=10.0) * fm.J_PER_MM2_TO_J_PER_CM2
    png = str(tmp_path / "slice.png")
    fm.render_dose_slice(png, mesh, dose, axis="y", at=0.0, region_names={1: "top", 2: "tumour"},
                         sources={"P": fm.PointSource((0, 0, 0))}, isodose=[1, 5], log_scale=True)
    assert open(png, "rb").read(8) == PNG_MAGIC
    h = fm.dose_histogram(mesh, dose, 2)
    dvh = str(tmp_path / "dvh.png")
    fm.render_dvh(dvh, [("tumour", h.dose, h.cdf)])
    assert open(dvh, "rb").read(8) == PNG_MAGIC
    with pytest.raises(ValueError, match="axis"):
        fm.render_dose_slice(png, mesh, dose, axis="w")
    with pytest.raises(ValueError, match="one per tetra"):
        fm.render_dose_slice(png, mesh, dose[:5])
    with pytest.raises(ValueError, match="same"):
        fm.render_dvh(dvh, [("x", [1, 2], [1])])


def test_vtk_renderer_needs_a_display(slab_model, tmp_path):
    """render_fluence draws with OpenGL: with an X display it writes a PNG (run here under
    xvfb-run when there is none), without one it raises fm.Error, never crashes."""
    _need("has_vtk", "FM_USE_VTK", ["render_fluence"])
    xvfb = shutil.which("xvfb-run")
    if not os.environ.get("DISPLAY") and not xvfb:
        pytest.skip("no X display and no xvfb-run (apt-get install xvfb xauth)")
    png = str(tmp_path / "phi.png")
    code = ("import fullmonte as fm, numpy as np\n"
            "m = fm.box_mesh((-5,-5,-5),(5,5,5),(5,5,5))\n"
            "v = np.linspace(1, 100, m.tetra_count)\n"
            f"lo, hi = fm.render_fluence({png!r}, m, v, title='Fluence (J/mm^2)', width=200, height=150)\n"
            "assert 0 < lo < hi <= 100, (lo, hi)\n"
            "print('ok')\n")
    cmd = [sys.executable, "-c", code]
    if not os.environ.get("DISPLAY"):
        cmd = [xvfb, "-a"] + cmd
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "ok" in p.stdout, p.stderr[-2000:]
    assert open(png, "rb").read(8) == PNG_MAGIC
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode != 0 and "Error" in p.stderr and "xvfb-run" in p.stderr, p.stderr[-2000:]
    mesh, _ = slab_model
    with pytest.raises(ValueError, match="surface_region"):
        fm.render_fluence(png, mesh, np.ones(mesh.tetra_count), surface_region=9)
