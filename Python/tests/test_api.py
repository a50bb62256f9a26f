# SPDX-License-Identifier: GPL-3.0-or-later
"""The Python API: models from numpy, runs, results as views, queries, files, errors."""
import math
import os
import shutil
import subprocess
import sys
import warnings

import numpy as np
import pytest

from conftest import BUILD, assert_ctrl_c_interrupts, fm


def test_mesh_from_numpy_round_trips(slab_model):
    mesh, _ = slab_model
    again = fm.TetraMesh(mesh.points, mesh.tetras, mesh.regions)
    assert again.tetra_count == mesh.tetra_count == 12 ** 3 * 6
    assert np.array_equal(again.tetras, mesh.tetras)
    assert mesh.tetras.min() == 0 and mesh.tetras.max() == mesh.point_count - 1
    # 1-based input (TIM-OS/MMC style) gives the same mesh.
    one = fm.TetraMesh(mesh.points, mesh.tetras + 1, mesh.regions, one_based=True)
    assert np.array_equal(one.tetras, mesh.tetras)
    assert mesh.region_count == 3
    assert math.isclose(mesh.region_volume(1) + mesh.region_volume(2), 20.0 ** 3, rel_tol=1e-12)
    assert math.isclose(float(np.sum(mesh.volumes)), 8000.0, rel_tol=1e-12)
    assert mesh.locate((0.1, 0.2, -5)) >= 0 and mesh.regions[mesh.locate((0.1, 0.2, -5))] == 2
    assert mesh.locate((0, 0, 50)) == -1


def test_arrays_are_read_only_views_that_keep_their_owner_alive(slab_model):
    mesh, mats = slab_model
    r = fm.run(mesh, mats, fm.PointSource((0, 0, 0)), packets=2000, seed=5, threads=1)
    e = r.volume_energy
    assert e.shape == (mesh.tetra_count,)
    assert not e.flags.owndata and e.base is not None and not e.flags.writeable
    with pytest.raises(ValueError):
        e[0] = 1.0
    total = float(e.sum())
    del r  # the view holds the result
    assert float(e.sum()) == total
    pts = mesh.points
    assert not pts.flags.owndata and not pts.flags.writeable and pts.shape == (mesh.point_count, 3)


def test_ledger_closes_and_energy_sums_to_absorbed(slab_model):
    mesh, mats = slab_model
    r = fm.run(mesh, mats, fm.PointSource((1, 2, -3)), packets=20000, seed=2)
    L = r.ledger
    assert L["launched"] == 20000
    assert abs(L["imbalance"]) < 1e-9 * L["launched"]
    assert math.isclose(float(r.volume_energy.sum()), L["absorbed"], rel_tol=1e-9)
    assert math.isclose(float(r.surface_energy.sum()), L["exited"], rel_tol=1e-9)
    assert r.events["launch"] == 20000 and r.packets == 20000 and r.kernel == "cpu"


def test_fluence_normalisation_matches_definition(slab_model):
    mesh, mats = slab_model
    r = fm.run(mesh, mats, fm.PointSource((0, 0, 0)), packets=5000, seed=1)
    phi = r.fluence(energy=2.5)
    mua = np.where(mesh.regions == 2, 0.1, 0.02)
    expect = r.volume_energy * (2.5 / r.packets) / (mesh.volumes * mua)
    assert np.allclose(phi, expect, rtol=1e-12, atol=0)
    assert math.isclose(fm.value_at(mesh, phi, (0.01, 0.02, 0.03)), phi[mesh.locate((0.01, 0.02, 0.03))])


def test_absorbed_fraction_of_a_non_scattering_cube_matches_beer_lambert():
    """Isotropic point at the centre of a non-scattering cube (matched index): a packet is
    absorbed with probability 1 - exp(-mu_a d(direction)), d the distance to the cube's surface
    along its direction. The expectation over directions is integrated numerically; the run's
    absorbed fraction (Bernoulli per packet) must agree within 4 standard deviations."""
    a, mua, n = 5.0, 0.15, 20000
    mesh = fm.box_mesh((-a, -a, -a), (a, a, a), (8, 8, 8))
    mats = fm.MaterialSet([fm.Material(mu_a=mua, mu_s=0.0, g=0.0, n=1.0)])
    r = fm.run(mesh, mats, fm.PointSource((0, 0, 0)), packets=n, seed=11)
    k = 1500  # midpoint rule in (cos theta, phi): error far below the statistical tolerance
    u = (np.arange(k) + 0.5) / k * 2 - 1
    phi = (np.arange(k) + 0.5) / k * 2 * np.pi
    U, P = np.meshgrid(u, phi)
    s = np.sqrt(1 - U ** 2)
    d = np.stack([s * np.cos(P), s * np.sin(P), U])
    dist = a / np.max(np.abs(d), axis=0)
    p = float(np.mean(1 - np.exp(-mua * dist)))
    absorbed = r.ledger["absorbed"] / n
    sigma = math.sqrt(p * (1 - p) / n)
    assert abs(absorbed - p) < 4 * sigma, (absorbed, p, sigma)
    assert r.ledger["specular"] == 0 and r.events["tir"] == 0


def test_disk_and_planar_beams_cross_a_non_scattering_cube_as_beer_lambert():
    """MMC's disk and planar beams from outside a non-scattering cube of matched index, along +z
    through its whole depth L: every packet is absorbed with probability 1 - exp(-mu_a L) (no
    reflection anywhere), within 4 standard deviations; energy only in tetras the beam's
    cross-section reaches (centroid within the beam plus a cell's diagonal); the sources read back."""
    a, mua, n = 5.0, 0.1, 20000
    mesh = fm.box_mesh((-a, -a, -a), (a, a, a), (8, 8, 8))
    mats = fm.MaterialSet([fm.Material(mu_a=mua, mu_s=0.0, g=0.0, n=1.0)])
    p = 1 - math.exp(-mua * 2 * a)
    sigma = math.sqrt(p * (1 - p) / n)
    cent = np.asarray(mesh.points)[mesh.tetras].mean(axis=1)
    cell = 2 * a / 8 * math.sqrt(3)
    disk = fm.DiskSource((1, -1, -8), 2.0, direction=(0, 0, 1))
    assert disk.centre == (1, -1, -8) and disk.radius == 2.0 and disk.specular_at_entry
    plane = fm.PlanarSource((-4, 0, -9), (3, 0, 0), (0, 2, 0))
    assert plane.side1 == (3, 0, 0) and plane.direction == (0, 0, 1)
    for src, inside in ((disk, lambda c: np.hypot(c[:, 0] - 1, c[:, 1] + 1) <= 2 + cell),
                        (plane, lambda c: (c[:, 0] >= -4 - cell) & (c[:, 0] <= -1 + cell) &
                                          (c[:, 1] >= -cell) & (c[:, 1] <= 2 + cell))):
        r = fm.run(mesh, mats, src, packets=n, seed=4)
        absorbed = r.ledger["absorbed"] / n
        assert abs(absorbed - p) < 4 * sigma, (src.type_name, absorbed, p, sigma)
        assert r.ledger["specular"] == 0
        e = np.asarray(r.volume_energy)
        assert e[~inside(cent)].sum() == 0 and e[inside(cent)].sum() > 0
    with pytest.raises(fm.ModelError, match="radius must be > 0"):
        fm.run(mesh, mats, fm.DiskSource((0, 0, -8), 0.0), packets=10)


def test_same_seed_same_tallies_at_any_thread_count_and_seeds_differ(slab_model):
    mesh, mats = slab_model
    src = fm.CylinderSource((-3, 0, -5), (3, 0, -5), radius=0.5)
    a = fm.run(mesh, mats, src, packets=3000, seed=9, threads=1)
    b = fm.run(mesh, mats, src, packets=3000, seed=9, threads=1)
    c = fm.run(mesh, mats, src, packets=3000, seed=10, threads=1)
    assert np.array_equal(a.volume_energy, b.volume_energy)
    assert not np.array_equal(a.volume_energy, c.volume_energy)
    d = fm.run(mesh, mats, src, packets=3000, seed=9, threads=2)
    assert np.allclose(a.volume_energy, d.volume_energy, rtol=1e-9, atol=1e-12)


def test_async_progress_cancel_and_context_manager(slab_model):
    mesh, mats = slab_model
    sim = fm.Simulation(mesh, mats, fm.PointSource((0, 0, 0)), packets=50_000_000, seed=1, threads=1)
    assert not sim.running and sim.progress == 0
    sim.start()
    sim.wait(0.3)
    assert sim.running
    sim.cancel()
    assert sim.wait(30)
    with pytest.raises(fm.Error, match="cancelled"):
        sim.result()
    with fm.Simulation(mesh, mats, fm.PointSource((0, 0, 0)), packets=50_000_000, threads=1) as s2:
        s2.start()
    assert s2.done  # leaving the block cancelled and waited
    ok = fm.Simulation(mesh, mats, fm.PointSource((0, 0, 0)), packets=1000)
    ok.start()
    assert ok.result().packets == 1000 and ok.progress == 1.0


def test_ctrl_c_cancels_a_run(tmp_path):
    """A script interrupted by SIGINT stops within seconds with KeyboardInterrupt."""
    assert_ctrl_c_interrupts(tmp_path, "fm.run(m, ms, fm.PointSource((0,0,0)), packets=10**10, threads=1)")


def test_ctrl_c_cancels_an_mcml_run(tmp_path):
    mci = tmp_path / "long.mci"
    mci.write_text("1.0\n1\nlong.mco A\n10000000000\n0.01 0.01\n20 20 5\n1\n1.0\n1.37 0.1 100 0.9 10\n1.0\n")
    assert_ctrl_c_interrupts(tmp_path, f"fm.run_mcml(fm.read_mci({str(mci)!r})[0], threads=1)")


def test_dose_histogram_and_region_sum(slab_model):
    mesh, mats = slab_model
    r = fm.run(mesh, mats, fm.BallSource((0, 0, -4), 2.0), packets=5000, seed=4)
    dose = r.fluence(energy=1.0) * fm.J_PER_MM2_TO_J_PER_CM2
    h = fm.dose_histogram(mesh, dose, 2)
    assert h.region == 2 and math.isclose(h.total_volume, mesh.region_volume(2), rel_tol=1e-12)
    assert np.all(np.diff(h.dose) >= 0) and np.all(np.diff(h.cdf) <= 1e-15)
    d90 = h.dose_at_fraction(0.9)
    in2 = dose[mesh.regions == 2]
    vol2 = mesh.volumes[mesh.regions == 2]
    assert vol2[in2 >= d90].sum() >= 0.9 * h.total_volume * (1 - 1e-12)
    # A fraction outside [0, 1] has no D-value (it gave 0, or the highest dose for -1).
    for bad in (2.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="fraction must be in \\[0, 1\\]"):
            h.dose_at_fraction(bad)
    assert math.isclose(fm.region_sum(mesh, r.volume_energy, 0), r.ledger["absorbed"], rel_tol=1e-9)
    line = fm.values_along(mesh, dose, (0, 0, -9), (0, 0, 9), 19)
    assert line.shape == (19,)


def test_composite_cycles_and_bad_arguments_raise(slab_model):
    mesh, mats = slab_model
    a = fm.Composite([fm.PointSource((0, 0, 0))])
    b = fm.Composite([a])
    with pytest.raises(ValueError, match="cycle"):
        a.add(b)
    with pytest.raises(ValueError, match="cycle"):
        a.add(a)
    with pytest.raises(TypeError):
        fm.PointSource("x")
    with pytest.raises(ValueError, match="three numbers"):
        fm.PointSource((1, 2))
    with pytest.raises(ValueError, match="finite"):
        fm.PointSource((1, 2, float("nan")))
    with pytest.raises(ValueError, match="packets"):
        fm.Simulation(mesh, mats, fm.PointSource((0, 0, 0)), packets=0)
    with pytest.raises(TypeError, match="packets"):
        fm.Simulation(mesh, mats, fm.PointSource((0, 0, 0)), packets=1e6)
    # One run launches at most 2^53-1 packets, as from Tcl and the command line (fm::kMaxPackets).
    fm.Simulation(mesh, mats, fm.PointSource((0, 0, 0)), packets=2 ** 53 - 1)
    for too_many in (2 ** 53, 2 ** 64 - 1):
        with pytest.raises(ValueError, match=r"packets: must be in 1\.\.9007199254740991, got " + str(too_many)):
            fm.Simulation(mesh, mats, fm.PointSource((0, 0, 0)), packets=too_many)
        with pytest.raises(ValueError, match=r"packets: must be in 1\.\.9007199254740991"):
            fm.run_batch(mesh, mats, [fm.PointSource((0, 0, 0))], packets=too_many)
    with pytest.raises(ValueError, match="seed"):
        fm.Simulation(mesh, mats, fm.PointSource((0, 0, 0)), seed=2 ** 64)
    with pytest.raises(ValueError, match="seed"):
        fm.Simulation(mesh, mats, fm.PointSource((0, 0, 0)), seed=-1)
    with pytest.raises(ValueError, match="kernel"):
        fm.Simulation(mesh, mats, fm.PointSource((0, 0, 0)), kernel="gpu")
    with pytest.raises(ValueError, match="outside"):
        fm.run(mesh, mats, fm.PointSource((0, 0, 100)), packets=10)
    with pytest.raises(ValueError, match="anisotropy"):
        fm.MaterialSet([fm.Material(0.1, 1, 1.5, 1.4)])
    with pytest.raises(ValueError, match="point index"):
        fm.TetraMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 1, 2, 4]])
    with pytest.raises(ValueError, match=r"\(N, 3\)"):
        fm.TetraMesh([[0, 0], [1, 0]], [[0, 1, 2, 3]])
    with pytest.raises(ValueError, match="one per tetra"):
        fm.fluence(mesh, mats, np.zeros(3))
    with pytest.raises(ValueError, match="region"):
        fm.dose_histogram(mesh, np.zeros(mesh.tetra_count), 7)
    with pytest.raises(ValueError, match="directed_faces"):
        fm.Simulation(mesh, mats, fm.PointSource((0, 0, 0)), directed_faces=[10 ** 9])


def test_cuda_kernel_runs_or_says_why(slab_model):
    mesh, mats = slab_model
    ok, why = fm.cuda_available()
    if not ok:
        with pytest.raises(ValueError, match="CUDA"):
            fm.Simulation(mesh, mats, fm.PointSource((0, 0, 0)), kernel="cuda")
        pytest.skip("no CUDA device here: " + why)
    cpu = fm.run(mesh, mats, fm.PointSource((0, 0, 0)), packets=100000, seed=3)
    gpu = fm.run(mesh, mats, fm.PointSource((0, 0, 0)), packets=100000, seed=3, kernel="cuda")
    l1 = np.abs(gpu.volume_energy - cpu.volume_energy).sum() / np.abs(cpu.volume_energy).sum()
    assert l1 < 1e-3  # same streams: float rounding only


def test_hybrid_kernel_runs_or_says_why(slab_model):
    mesh, mats = slab_model
    with pytest.raises(ValueError, match="'cpu', 'cuda' or 'hybrid'"):
        fm.Simulation(mesh, mats, fm.PointSource((0, 0, 0)), kernel="gpu")
    ok, why = fm.cuda_available()
    if not ok:
        with pytest.raises(ValueError, match="CUDA"):
            fm.Simulation(mesh, mats, fm.PointSource((0, 0, 0)), kernel="hybrid")
        pytest.skip("no CUDA device here: " + why)
    cpu = fm.run(mesh, mats, fm.PointSource((0, 0, 0)), packets=100000, seed=3)
    both = fm.run(mesh, mats, fm.PointSource((0, 0, 0)), packets=100000, seed=3, kernel="hybrid")
    assert both.kernel.startswith("hybrid") and 0 <= both.cpu_packets <= 100000
    assert both.events["launch"] == 100000
    l1 = np.abs(both.volume_energy - cpu.volume_energy).sum() / np.abs(cpu.volume_energy).sum()
    assert l1 < 1e-3  # same streams whoever runs a packet: float rounding only


def test_timos_files_and_text_output(slab_model, tmp_path):
    mesh, mats = slab_model
    path = str(tmp_path / "m.mesh")
    fm.write_timos_mesh(path, mesh)
    back = fm.read_timos_mesh(path)
    assert back.tetra_count == mesh.tetra_count and np.array_equal(back.regions, mesh.regions)
    with pytest.raises(ValueError, match="nope.mesh"):
        fm.read_timos_mesh(str(tmp_path / "nope.mesh"))
    bad = tmp_path / "bad.mesh"
    bad.write_text("4\n1\n0 0 0\n1 0 0\n0 1 0\nx\n")
    with pytest.raises(ValueError, match="bad.mesh:"):
        fm.read_timos_mesh(str(bad))


@pytest.mark.skipif(not fm.has_vtk, reason="built without VTK")
def test_vtk_round_trip(slab_model, tmp_path):
    mesh, mats = slab_model
    r = fm.run(mesh, mats, fm.PointSource((0, 0, 0)), packets=2000, seed=1)
    path = str(tmp_path / "f.vtu")
    fm.write_vtk_mesh(path, mesh, {"Fluence (J/mm^2)": r.fluence(1.0)})
    back = fm.read_vtk_mesh(path)
    assert back.tetra_count == mesh.tetra_count and np.array_equal(back.regions, mesh.regions)


def test_mcml_run_matches_its_own_ledger(tmp_path):
    mci = tmp_path / "one.mci"
    mci.write_text("1.0\n1\none.mco A\n2000\n0.01 0.01\n20 20 5\n1\n1.0\n1.37 1 100 0.9 0.1\n1.0\n")
    runs = fm.read_mci(str(mci))
    assert len(runs) == 1 and runs[0].layer_count == 1
    assert runs[0].layers == [{"n": 1.37, "mua": 1.0, "mus": 100.0, "g": 0.9, "d": 0.1}]
    assert runs[0].n_above == 1.0 and runs[0].n_below == 1.0
    res = fm.run_mcml(runs[0], seed=3, threads=1)
    total = res.specular + res.diffuse_reflectance + res.absorbed + res.transmittance
    assert abs(total - 1) < 1e-6
    assert res.A_rz.shape == (20, 20) and res.Rd_ra.shape == (20, 5)
    out = str(tmp_path / "one.mco")
    res.write(out)
    again = fm.read_mco(out)
    assert math.isclose(again.absorbed, res.absorbed, rel_tol=1e-5)  # .mco: 6 significant digits


TCL_SCRIPT = r"""
package require FullMonte
lassign $argv meshfn optfn srcfn
TIMOSMeshReader R; R filename $meshfn; R read
TIMOSMaterialReader MR; MR filename $optfn; MR read
TIMOSSourceReader SR; SR filename $srcfn; SR read
TetraVolumeKernel k
k geometry [R mesh]; k materials [MR materials]; k source [SR source]
k packetCount 4000; k threadCount 1; k randSeed 77
k runSync
puts [[[k results] getByName VolumeEnergy] values]
"""


def test_python_and_tcl_give_bit_identical_tallies(slab_model, tmp_path):
    tclsh = os.path.join(BUILD, "bin", "fullmonte")
    if not BUILD or not os.path.exists(tclsh):
        pytest.skip("the Tcl launcher is not built (FM_USE_TCL=OFF)")
    mesh, mats = slab_model
    meshfn, optfn, srcfn = (str(tmp_path / n) for n in ("m.mesh", "m.opt", "m.source"))
    fm.write_timos_mesh(meshfn, mesh)
    with open(optfn, "w") as f:
        f.write("1\n2\n0.02 5 0.8 1.37\n0.1 8 0.9 1.37\n1\n1.0\n")
    with open(srcfn, "w") as f:
        f.write("1\n1 0.5 -0.5 -2 1\n")
    (tmp_path / "run.tcl").write_text(TCL_SCRIPT)
    out = subprocess.run([tclsh, str(tmp_path / "run.tcl"), meshfn, optfn, srcfn], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    tcl = np.array([float(x) for x in out.stdout.split()])
    r = fm.run(fm.read_timos_mesh(meshfn), fm.read_timos_materials(optfn), fm.read_timos_source(srcfn),
               packets=4000, seed=77, threads=1)
    py = r.volume_energy
    if tcl.size == py.size + 1:  # Tcl lists include the dummy tetra 0
        tcl = tcl[1:]
    assert tcl.size == py.size
    assert np.array_equal(tcl, py)


def _numbers(text):
    """The quickstart's result lines (points and DVH), without the timing line."""
    keep = [ln for ln in text.splitlines() if ln.startswith("  ") or "absorbed" in ln]
    return [" ".join(ln.split()).split(" in ")[0] if "packets in" in ln else " ".join(ln.split()) for ln in keep]


def test_quickstart_py_prints_the_same_numbers_as_quickstart_tcl(tmp_path):
    tclsh = os.path.join(BUILD, "bin", "fullmonte")
    if not BUILD or not os.path.exists(tclsh):
        pytest.skip("the Tcl launcher is not built (FM_USE_TCL=OFF)")
    ex = os.path.join(os.environ.get("FM_SOURCE_DIR", ""), "Examples")
    env = dict(os.environ, DISPLAY="")
    py = subprocess.run([sys.executable, os.path.join(ex, "quickstart.py"), str(tmp_path / "py"), "3000"],
                        capture_output=True, text=True, timeout=300, env=env)
    assert py.returncode == 0, py.stderr
    tcl = subprocess.run([tclsh, os.path.join(ex, "quickstart.tcl"), str(tmp_path / "tcl"), "3000"],
                         capture_output=True, text=True, timeout=300, env=env)
    assert tcl.returncode == 0, tcl.stderr
    a, b = _numbers(py.stdout), _numbers(tcl.stdout)
    assert len(a) >= 10 and a == b


def test_type_stubs_name_every_public_binding():
    import ast
    stub = os.path.join(os.path.dirname(fm.__file__), "__init__.pyi")
    tree = ast.parse(open(stub).read())
    named = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    named |= {t.id for n in tree.body if isinstance(n, ast.AnnAssign) for t in [n.target]}
    public = {n for n in dir(fm) if not n.startswith("_") and n not in ("annotations",)}
    modules = {n for n in public if type(getattr(fm, n)).__name__ == "module"}
    assert public - modules - named == set()


def test_mesh_checks_cracks_repair_and_source_warnings(tmp_path):
    """Two tetras meshed apart (their shared triangle written twice): a crack is an error, kept as
    a warning with allow_defects, joined by merge_coincident_vertices; a source partly outside the
    mesh is warned about (RuntimeWarning and Simulation.warnings)."""
    pts = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, -1], [0, 0, 0], [1, 0, 0], [0, 1, 0]]
    tets = [[0, 1, 2, 3], [5, 6, 7, 4]]
    with pytest.raises(fm.ModelError, match="crack"):
        fm.TetraMesh(pts, tets, [1, 2])
    cracked = fm.TetraMesh(pts, tets, [1, 2], allow_defects=True)
    assert any("crack" in w for w in cracked.check_warnings)
    joined, report = fm.merge_coincident_vertices(cracked)
    assert report["points_merged"] == 3 and joined.point_count == 5 and joined.check_warnings == []
    path = str(tmp_path / "crack.mesh")
    with open(path, "w") as f:
        f.write("8\n2\n" + "".join(" ".join(map(str, p)) + "\n" for p in pts) + "1 2 3 4 1\n6 7 8 5 2\n")
    with pytest.raises(fm.ModelError, match="crack"):
        fm.read_timos_mesh(path)
    assert fm.read_timos_mesh(path, allow_defects=True).tetra_count == 2
    mesh = fm.box_mesh((-5, -5, -5), (5, 5, 5), (4, 4, 4))
    mats = fm.MaterialSet([fm.Material(0.1, 5, 0.8, 1.4)])
    with pytest.warns(RuntimeWarning, match="outside"):
        sim = fm.Simulation(mesh, mats, fm.BallSource((5, 0, 0), 2.0), packets=100)
    assert any("outside" in w for w in sim.warnings)


def test_counts_accept_numpy_integers_not_floats_or_bools():
    """Packet counts and seeds often come from numpy arrays: their integers are counts too."""
    mesh = fm.box_mesh((-5, -5, -5), (5, 5, 5), (2, 2, 2))
    mats = fm.MaterialSet([fm.Material(0.1, 5, 0.8, 1.4)])
    src = fm.PointSource((0, 0, 0))
    r = fm.run(mesh, mats, src, packets=np.int64(300), seed=np.uint32(5))
    assert r.packets == 300
    for bad in (300.0, np.float64(300), True):
        with pytest.raises(TypeError, match="packets: expected an integer"):
            fm.run(mesh, mats, src, packets=bad)
    with pytest.raises(ValueError, match="packets: must be in 1"):
        fm.run(mesh, mats, src, packets=np.int64(0))


def test_abnormal_weight_warned():
    """A run whose step guard books most packets abnormal warns (RuntimeWarning, Simulation.warnings,
    run_batch), as fullmonte-run does; a normal run does not."""
    mesh = fm.box_mesh((-5, -5, -5), (5, 5, 5), (4, 4, 4))
    mats = fm.MaterialSet([fm.Material(0.1, 5, 0.8, 1.4)])
    src = fm.BallSource((0, 0, 0), 1.0)
    sim = fm.Simulation(mesh, mats, src, packets=500, max_steps=1)
    sim.start()
    with pytest.warns(RuntimeWarning, match="booked abnormal"):
        r = sim.result()
    assert r.ledger["abnormal"] > 0.5 * r.ledger["launched"]
    assert sum("booked abnormal" in w for w in sim.warnings) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fm.run(mesh, mats, src, packets=500)  # a normal run: no warning
    with pytest.warns(RuntimeWarning, match="run_batch run 0: .*booked abnormal"):
        fm.run_batch(mesh, mats, [src], packets=200, max_steps=1)


def _run_dvh_example(tmp_path, block_matplotlib):
    script = os.path.join(os.environ.get("FM_SOURCE_DIR", ""), "Examples", "dvh.py")
    # sys.modules["matplotlib"] = None makes `import matplotlib` raise ImportError, as when absent.
    pre = "import sys; sys.modules['matplotlib'] = None; " if block_matplotlib else "import sys; "
    code = pre + f"sys.argv = [{script!r}, {str(tmp_path)!r}, '3000']; import runpy; runpy.run_path({script!r})"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    rows = [ln.split() for ln in p.stdout.splitlines() if ln.startswith("  ") and ln.split()[0] in
            ("muscle", "tumour", "skin")]
    assert [r[0] for r in rows] == ["muscle", "tumour", "skin"]
    for r in rows:
        frac = [float(x) for x in r[1:9]]
        assert all(0 <= f <= 100 for f in frac) and frac == sorted(frac, reverse=True)
        d90, d50 = float(r[9]), float(r[10])
        assert 0 <= d90 <= d50 and (d90 > 0 or r[0] != "tumour")
    assert "J/cm^2" in p.stdout and "100 J" in p.stdout
    return p.stdout


def test_dvh_example_prints_the_table_without_matplotlib(tmp_path):
    out = _run_dvh_example(tmp_path, block_matplotlib=True)
    assert "matplotlib is not installed" in out and not (tmp_path / "dvh.png").exists()


def test_dvh_example_plots_with_matplotlib(tmp_path):
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        pytest.skip("matplotlib is not installed (apt-get install python3-matplotlib): the plot is not checked")
    out = _run_dvh_example(tmp_path, block_matplotlib=False)
    assert "wrote" in out and open(tmp_path / "dvh.png", "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_every_public_function_method_and_property_has_a_docstring():
    import inspect

    def described(obj, name):
        doc = getattr(obj, "__doc__", "") or ""
        return any(ln.strip() and not ln.strip().startswith(name + "(") and "->" not in ln
                   and not ln.strip().startswith("Overloaded") for ln in doc.splitlines())

    missing = []
    for n in dir(fm):
        obj = getattr(fm, n)
        if n.startswith("_") or not callable(obj):
            continue
        if not described(obj, n):
            missing.append(n)
        if inspect.isclass(obj):
            for a, v in vars(obj).items():
                if not a.startswith("_") and (callable(v) or isinstance(v, property)) and not described(v, a):
                    missing.append(f"{n}.{a}")
    assert missing == []


def test_long_calls_release_the_gil(slab_model):
    """While run_batch and trace work in a Python thread, the main thread keeps running Python."""
    import threading
    import time
    mesh, mats = slab_model
    for work in (lambda: fm.run_batch(mesh, mats, [fm.PointSource((0, 0, 0))] * 2, packets=100_000, threads=1),
                 lambda: fm.trace(mesh, mats, fm.PointSource((0, 0, 0)), packets=15_000, threads=1)):
        t = threading.Thread(target=work)
        t0 = time.monotonic()
        t.start()
        ticks = 0
        while t.is_alive() and time.monotonic() - t0 < 0.3:
            ticks += 1
            time.sleep(0.001)
        busy = t.is_alive()
        t.join()
        assert busy, "the call ended too soon to tell"
        assert ticks > 50  # a call holding the GIL would have stalled this loop
