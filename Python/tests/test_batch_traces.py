# SPDX-License-Identifier: GPL-3.0-or-later
"""Batches and the fluence matrix, fluence-matrix files, packet traces, Ctrl-C of a batch."""
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from conftest import BUILD, assert_ctrl_c_interrupts, fm


def _sources():
    return [fm.PointSource((0.5, -0.5, -2)), fm.BallSource((2, 1, 3), 1.5), fm.PencilBeam((0, 0, -10), (0, 0, 1))]


def test_batch_runs_equal_single_runs_and_matrix_is_their_fluence(slab_model):
    """Every batch run is bit-identical to the single run of its source and materials (same seed,
    threads); the fluence matrix is each run's E / (V mu_a) per packet, tetras x runs."""
    mesh, mats = slab_model
    other = fm.MaterialSet([fm.Material(0.04, 6.0, 0.85, 1.4), fm.Material(0.2, 9.0, 0.9, 1.4)])
    seen = []
    b = fm.run_batch(mesh, [mats, other], _sources(), packets=1500, seed=21, threads=1,
                     progress=lambda d, t: seen.append((d, t)))
    assert len(b) == 6 and b.sources == 3 and b.material_sets == 2
    assert seen and seen[-1] == (6, 6)
    # Where the seconds went: the CPU runs one run at a time, so set-up, busy, gaps and tail add up.
    t = b.time
    assert list(t) == ["setup_seconds", "kernel_busy_seconds", "kernel_gap_seconds", "tail_seconds",
                       "deliver_seconds", "slot_idle_seconds", "slot_held_seconds"]
    assert t["kernel_busy_seconds"] > 0 and all(v >= 0 for v in t.values())
    parts = t["setup_seconds"] + t["kernel_busy_seconds"] + t["kernel_gap_seconds"] + t["tail_seconds"]
    assert math.isclose(parts, b.seconds, rel_tol=1e-6)
    for m, ms in enumerate([mats, other]):
        for s, src in enumerate(_sources()):
            single = fm.run(mesh, ms, src, packets=1500, seed=21, threads=1)
            r = b.run(m, s)
            assert r is not None and np.array_equal(r.volume_energy, single.volume_energy)
            assert np.array_equal(b[m * 3 + s].surface_energy, single.surface_energy)
    phi = b.fluence_matrix()
    assert phi.shape == (mesh.tetra_count, 6)
    assert not phi.flags.writeable and not phi.flags.owndata and phi.flags.f_contiguous
    j = 4  # material set 1, source 1
    expect = b[j].fluence(energy=1.0)
    assert np.array_equal(phi[:, j], expect)


def test_fluence_matrix_files_round_trip_and_match_the_script_reader(slab_model, tmp_path):
    mesh, mats = slab_model
    b = fm.run_batch(mesh, mats, _sources()[:2], packets=800, seed=3, threads=1)
    path = str(tmp_path / "phi.fmm")
    b.write_fluence_matrix(path)
    back, header = fm.read_fluence_matrix(path)
    assert header["rows"] == mesh.tetra_count and header["cols"] == 2 and header["sources"] == 2
    assert header["quantity"] == "fluence" and "mm^-2" in header["units"]
    assert np.array_equal(back, b.fluence_matrix())
    assert not back.flags.writeable and back.base is not None
    # The batch's model fingerprint is in the file; the same batch run again has the same one.
    assert header["fingerprint"] == b.fingerprint and set(b.fingerprint) == {"mesh", "materials", "sources", "runs"}
    assert fm.run_batch(mesh, mats, _sources()[:2], packets=800, seed=4, threads=1).fingerprint == b.fingerprint
    assert fm.run_batch(mesh, mats, _sources()[:2], packets=900, seed=3, threads=1).fingerprint["runs"] != \
        b.fingerprint["runs"]
    # write_fluence_matrix from numpy with that fingerprint gives the same file; without, none.
    again = str(tmp_path / "again.fmm")
    fm.write_fluence_matrix(again, np.asarray(back), sources=2, fingerprint=header["fingerprint"])
    assert open(again, "rb").read() == open(path, "rb").read()
    fm.write_fluence_matrix(again, np.asarray(back), sources=2)
    assert fm.read_fluence_matrix(again)[1]["fingerprint"] is None
    with pytest.raises(ValueError, match="fingerprint"):
        fm.write_fluence_matrix(again, np.asarray(back), sources=2, fingerprint={"mesh": 1})
    with pytest.raises(fm.Error, match=re.escape(str(tmp_path)) + ": is a folder, not a file"):
        fm.write_fluence_matrix(str(tmp_path), np.asarray(back), sources=2)
    sys.path.insert(0, os.path.join(os.environ.get("FM_SOURCE_DIR", ""), "scripts"))
    try:
        from read_fluence_matrix import read_fluence_matrix as script_reader
    except ImportError:
        pytest.skip("scripts/read_fluence_matrix.py not found")
    script_header, phi = script_reader(path)
    assert np.array_equal(phi, back) and script_header["fingerprint"] == b.fingerprint
    with pytest.raises(ValueError, match="nope.fmm"):
        fm.read_fluence_matrix(str(tmp_path / "nope.fmm"))
    with pytest.raises(ValueError, match="sources"):
        fm.write_fluence_matrix(again, np.zeros((4, 3)), sources=2)


def _tcl_and_slab_files(slab_model, tmp_path):
    """The Tcl launcher (skips without it) and the slab model as TIM-OS files for it."""
    tclsh = os.path.join(BUILD, "bin", "fullmonte")
    if not BUILD or not os.path.exists(tclsh):
        pytest.skip("the Tcl launcher is not built (FM_USE_TCL=OFF)")
    mesh, _ = slab_model
    meshfn, optfn = str(tmp_path / "m.mesh"), str(tmp_path / "m.opt")
    fm.write_timos_mesh(meshfn, mesh)
    with open(optfn, "w") as f:
        f.write("1\n2\n0.02 5 0.8 1.37\n0.1 8 0.9 1.37\n1\n1.0\n")
    return tclsh, meshfn, optfn


BATCH_TCL = r"""
package require FullMonte
lassign $argv meshfn optfn out
TIMOSMeshReader R; R filename $meshfn; R read
TIMOSMaterialReader MR; MR filename $optfn; MR read
Point P1; P1 position "0.5 -0.5 -2"
Ball B1; B1 centre "2 1 3"; B1 radius 1.5
BatchRunner B
B geometry [R mesh]; B materials [MR materials]; B source P1; B source B1
B packetCount 1200; B threadCount 1; B randSeed 8; B progress 0
B runSync
B fluenceMatrix $out
"""


def test_python_batch_matrix_is_bit_identical_to_tcl_batchrunner(slab_model, tmp_path):
    tclsh, meshfn, optfn = _tcl_and_slab_files(slab_model, tmp_path)
    (tmp_path / "b.tcl").write_text(BATCH_TCL)
    tcl_out = str(tmp_path / "tcl.fmm")
    p = subprocess.run([tclsh, str(tmp_path / "b.tcl"), meshfn, optfn, tcl_out], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    b = fm.run_batch(fm.read_timos_mesh(meshfn), fm.read_timos_materials(optfn),
                     [fm.PointSource((0.5, -0.5, -2)), fm.BallSource((2, 1, 3), 1.5)], packets=1200, seed=8, threads=1)
    py_out = str(tmp_path / "py.fmm")
    b.write_fluence_matrix(py_out)
    tcl_phi, _ = fm.read_fluence_matrix(tcl_out)
    assert np.array_equal(tcl_phi, b.fluence_matrix())
    assert open(tcl_out, "rb").read() == open(py_out, "rb").read()


def test_batch_bad_arguments(slab_model):
    mesh, mats = slab_model
    with pytest.raises(ValueError, match="no sources"):
        fm.run_batch(mesh, mats, [])
    with pytest.raises(TypeError, match="MaterialSet"):
        fm.run_batch(mesh, "x", _sources())
    with pytest.raises(ValueError, match="kernel"):
        fm.run_batch(mesh, mats, _sources(), kernel="gpu")
    with pytest.raises(TypeError, match="packets"):
        fm.run_batch(mesh, mats, _sources(), packets=1e3)
    with pytest.raises(ValueError, match="source 0"):  # named by the batch packer
        fm.run_batch(mesh, mats, [fm.PointSource((0, 0, 99))], packets=10)
    with pytest.raises(TypeError, match="progress"):
        fm.run_batch(mesh, mats, _sources(), packets=10, progress=3)
    with pytest.raises(ZeroDivisionError):  # a failing progress callback stops the batch with its error
        fm.run_batch(mesh, mats, _sources(), packets=200000, threads=1, progress=lambda d, t: 1 / 0)
    b = fm.run_batch(mesh, mats, _sources()[:1], packets=10)
    with pytest.raises(IndexError):
        b[1]
    with pytest.raises(IndexError):
        b.run(0, 5)


def test_ctrl_c_cancels_a_batch(tmp_path):
    assert_ctrl_c_interrupts(tmp_path, "fm.run_batch(m, ms, [fm.PointSource((0,0,0))] * 4, packets=10**10, threads=1)")


def test_ctrl_c_cancels_a_trace(tmp_path):
    assert_ctrl_c_interrupts(tmp_path, "fm.trace(m, ms, fm.PointSource((0,0,0)), packets=10**7, threads=1, "
                                       "max_points=10**12)")


def test_traces_are_views_consistent_with_the_tallies(slab_model):
    """Trace run: tallies equal an untraced run's; each trace starts with a launch and ends with
    exit, death or abnormal; positions move by the recorded step lengths; the weight leaving in
    exit steps sums to the ledger's exited weight."""
    mesh, mats = slab_model
    src = fm.PointSource((0, 0, 0))
    t = fm.trace(mesh, mats, src, packets=60, seed=4, threads=1)
    plain = fm.run(mesh, mats, src, packets=60, seed=4, threads=1)
    assert np.allclose(t.result.volume_energy, plain.volume_energy, rtol=1e-9, atol=1e-12)
    assert len(t) == 60 and t.offsets[-1] == len(t.steps)
    steps = t.steps
    assert not steps.flags.writeable and not steps.flags.owndata and steps.dtype.itemsize == 36
    names = fm.Traces.event_names
    exited = 0.0
    for i in range(len(t)):
        tr = t[i]
        assert names[tr["event"][0]] == "launch"
        assert names[tr["event"][-1]] in ("exit", "death", "abnormal")
        d = np.linalg.norm(np.diff(tr["pos"].astype(np.float64), axis=0), axis=1)
        assert np.allclose(d, tr["step"][1:], rtol=1e-4, atol=1e-4)
        assert np.allclose(np.cumsum(tr["step"]), tr["path"], rtol=1e-4, atol=1e-4)
        if names[tr["event"][-1]] == "exit":
            exited += float(tr["weight"][-1])
        inside = tr["tetra_id"][:-1]
        assert inside.min() >= 1 and inside.max() <= mesh.tetra_count
    assert math.isclose(exited, t.result.ledger["exited"], rel_tol=1e-5)
    with pytest.raises(IndexError):
        t[60]
    with pytest.raises(ValueError, match="fewer packets|maxTracePoints"):
        fm.trace(mesh, mats, src, packets=1000, max_points=50)


def test_comsol_text_values_and_mmc_inputs(slab_model, tmp_path):
    mesh, mats = slab_model
    path = str(tmp_path / "m.mphtxt")
    fm.write_comsol_mesh(path, mesh)
    back = fm.read_comsol_mesh(path)
    assert np.array_equal(back.tetras, mesh.tetras) and np.array_equal(back.regions, mesh.regions)
    assert np.allclose(back.points, mesh.points, rtol=0, atol=1e-12)
    vals = np.linspace(-1, 1, mesh.tetra_count)
    vals[3] = np.nan
    fm.write_values(str(tmp_path / "v.txt"), mesh, vals)
    again = fm.read_values(str(tmp_path / "v.txt"), mesh)
    # The text format keeps 9 significant digits.
    assert np.isnan(again[3]) and np.allclose(np.nan_to_num(again), np.nan_to_num(vals), rtol=1e-8, atol=1e-300)
    with pytest.raises(ValueError, match="v.txt"):
        fm.read_values(str(tmp_path / "v.txt"), fm.box_mesh((0, 0, 0), (1, 1, 1), (1, 1, 1)))
    # MMC JSON input with an inline two-tetra mesh (1-based nodes, label last).
    small = fm.box_mesh((0, 0, 0), (10, 10, 10), (1, 1, 1))
    node = [[float(x) for x in p] for p in small.points]
    elem = [[int(i) + 1 for i in t] + [1] for t in small.tetras]
    spec = {"Session": {"ID": "cube", "Photons": 1234, "RNGSeed": 7},
            "Forward": {"T0": 0, "T1": 5e-9, "Dt": 5e-9},
            "Optode": {"Source": {"Type": "pencil", "Pos": [5.1, 4.9, 0.0], "Dir": [0, 0, 1]}},
            "Domain": {"Media": [{"mua": 0, "mus": 0, "g": 1, "n": 1}, {"mua": 0.02, "mus": 7, "g": 0.89, "n": 1.37}]},
            "Mesh": {"MeshNode": node, "MeshElem": elem}}
    import json
    jpath = tmp_path / "cube.json"
    jpath.write_text(json.dumps(spec))
    try:
        sim = fm.read_mmc_input(str(jpath))
    except fm.Error as e:
        if "JSON" in str(e) and "FM_USE_JSON" in str(e):
            pytest.skip("built without nlohmann-json (FM_USE_JSON=OFF)")
        raise
    assert sim["photons"] == 1234 and sim["seed"] == 7 and sim["mesh"].tetra_count == small.tetra_count
    assert sim["materials"][1].mu_s == 7 and sim["source"].type_name
    r = fm.run(sim["mesh"], sim["materials"], sim["source"], packets=200, seed=sim["seed"])
    assert r.packets == 200 and sim["seed_note"] == ""
    # A negative seed (MMC: from the clock) has one drawn, which seed_note names.
    spec["Session"]["RNGSeed"] = -1
    jpath.write_text(json.dumps(spec))
    sim = fm.read_mmc_input(str(jpath))
    assert 1 <= sim["seed"] <= 2**31 - 1
    assert f"seed {sim['seed']} was drawn" in sim["seed_note"] and "Session.RNGSeed -1" in sim["seed_note"]
    spec["Session"]["RNGSeed"] = 2.5
    jpath.write_text(json.dumps(spec))
    with pytest.raises(ValueError, match=r"Session.RNGSeed: must be a whole number"):
        fm.read_mmc_input(str(jpath))
    spec["Session"]["RNGSeed"] = 7
    spec["Optode"]["Source"]["Type"] = "slit"
    jpath.write_text(json.dumps(spec))
    with pytest.raises(ValueError, match=r"Optode.Source: .*slit"):
        fm.read_mmc_input(str(jpath))


def test_mmc_mesh_background_elements_are_left_out_with_a_warning(tmp_path):
    """read_mmc_mesh leaves MMC's background elements (labels 0 and -1) out, as read_mmc_input
    and fullmonte-run do, and says so: a RuntimeWarning with the count."""
    box = fm.box_mesh((0, 0, 0), (10, 10, 10), (2, 2, 2))
    pts, tets = list(box.points), list(box.tetras)
    node = tmp_path / "node_b.dat"
    elem = tmp_path / "elem_b.dat"
    node.write_text(f"1\t{len(pts)}\n" + "".join(f"{i + 1}\t{p[0]}\t{p[1]}\t{p[2]}\n" for i, p in enumerate(pts)))
    labels = [0] + [1] * (len(tets) - 2) + [-1]
    elem.write_text(f"1\t{len(tets)}\n" + "".join(
        f"{k + 1}\t" + "\t".join(str(int(v) + 1) for v in t) + f"\t{labels[k]}\n" for k, t in enumerate(tets)))
    with pytest.warns(RuntimeWarning, match=f"2 of the {len(tets)} MMC elements are background"):
        mesh = fm.read_mmc_mesh(str(node), str(elem))
    assert mesh.tetra_count == len(tets) - 2


@pytest.mark.skipif(not fm.has_vtk, reason="built without VTK (FM_USE_VTK=OFF)")
def test_traces_written_as_vtk_polylines(slab_model, tmp_path):
    mesh, mats = slab_model
    t = fm.trace(mesh, mats, fm.PointSource((0, 0, 0)), packets=5, seed=2)
    path = tmp_path / "traces.vtp"
    t.write_vtk(str(path))
    text = path.read_bytes()
    assert b"<VTKFile" in text and b'NumberOfLines="5"' in text and b"Time of flight (ns)" in text


def test_batch_and_trace_warn_about_a_source_partly_outside(slab_model):
    mesh, mats = slab_model
    with pytest.warns(RuntimeWarning, match="outside"):
        fm.run_batch(mesh, mats, [fm.BallSource((10, 0, 0), 2.0)], packets=50)
    with pytest.warns(RuntimeWarning, match="outside"):
        fm.trace(mesh, mats, fm.BallSource((10, 0, 0), 2.0), packets=5)


TRACE_TCL = r"""
package require FullMonte
lassign $argv meshfn optfn
TIMOSMeshReader R; R filename $meshfn; R read
TIMOSMaterialReader MR; MR filename $optfn; MR read
Point P; P position "0.5 -0.5 -2"
TetraTraceKernel k
k geometry [R mesh]; k materials [MR materials]; k source P
k packetCount 30; k threadCount 1; k randSeed 12
k runSync
set tr [[k results] getByName PacketTraces]
puts [[[k results] getByName VolumeEnergy] values]
for {set i 0} {$i < [$tr nTraces]} {incr i} { puts [$tr trace $i] }
"""


def test_python_traces_equal_tcl_traces(slab_model, tmp_path):
    tclsh, meshfn, optfn = _tcl_and_slab_files(slab_model, tmp_path)
    (tmp_path / "t.tcl").write_text(TRACE_TCL)
    p = subprocess.run([tclsh, str(tmp_path / "t.tcl"), meshfn, optfn], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    tcl_volume = np.array([float(x) for x in lines[0].split()])
    t = fm.trace(fm.read_timos_mesh(meshfn), fm.read_timos_materials(optfn), fm.PointSource((0.5, -0.5, -2)),
                 packets=30, seed=12, threads=1)
    py_volume = t.result.volume_energy
    assert np.array_equal(tcl_volume[-py_volume.size:], py_volume)
    assert len(lines) - 1 == len(t) == 30
    for i, line in enumerate(lines[1:]):
        steps = [s.strip("{}").split() for s in line.split("} {")]
        tr = t[i]
        assert len(steps) == len(tr)
        for s, row in zip(steps, tr):
            # Tcl prints floats with 9 significant digits: equal float32 values print equal.
            assert [float(x) for x in s[:3]] == [float(f"{v:.9g}") for v in row["pos"]]
            assert float(s[3]) == float(f"{row['weight']:.9g}") and int(s[4]) == row["tetra_id"]
            assert s[9] == fm.Traces.event_names[row["event"]]


def test_cuda_batch_runs_or_says_why(slab_model):
    mesh, mats = slab_model
    ok, why = fm.cuda_available()
    if not ok:
        with pytest.raises(ValueError, match="CUDA|cuda"):
            fm.run_batch(mesh, mats, _sources(), packets=100, kernel="cuda")
        pytest.skip("no CUDA device here: " + why)
    cpu = fm.run_batch(mesh, mats, _sources(), packets=100000, seed=3)
    gpu = fm.run_batch(mesh, mats, _sources(), packets=100000, seed=3, kernel="cuda")
    for j in range(len(cpu)):
        a, b = cpu[j].volume_energy, gpu[j].volume_energy
        assert np.abs(b - a).sum() / np.abs(a).sum() < 1e-3  # same streams: float rounding only


def test_mcml_traces_follow_the_layers(tmp_path):
    """An MCML run's packets traced over its layers: each trace starts at the top surface (z = 0)
    and ends leaving through the top (reflected), the bottom (transmitted) or dies; the weight
    leaving sums to the ledger's exited weight."""
    mci = tmp_path / "two.mci"
    mci.write_text("1.0\n1\ntwo.mco A\n200\n0.01 0.01\n20 20 5\n2\n1.0\n"
                   "1.37 1 100 0.9 0.05\n1.37 0.5 50 0.8 0.05\n1.0\n")
    run = fm.read_mci(str(mci))[0]
    t = fm.trace_mcml(run, packets=40, seed=2, threads=1)
    assert len(t) == 40 and t.result.mesh is None
    names = fm.Traces.event_names
    thickness = 1.0  # mm: two layers of 0.05 cm
    exited = 0.0
    for i in range(len(t)):
        tr = t[i]
        assert abs(float(tr["pos"][0][2])) < 1e-6 and names[tr["event"][0]] == "launch"
        z = tr["pos"][:, 2]
        assert z.min() >= -1e-4 and z.max() <= thickness + 1e-4
        end = names[tr["event"][-1]]
        assert end in ("exit", "death", "abnormal")
        if end == "exit":
            assert min(abs(z[-1]), abs(z[-1] - thickness)) < 1e-4
            exited += float(tr["weight"][-1])
        inside = tr["material"][:-1]
        assert set(np.unique(inside)) <= {1, 2}
    assert math.isclose(exited, t.result.ledger["exited"], rel_tol=1e-5)
    with pytest.raises(ValueError, match="no tetra mesh"):
        t.result.fluence()
