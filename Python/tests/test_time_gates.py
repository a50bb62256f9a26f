# SPDX-License-Identifier: GPL-3.0-or-later
"""Time-resolved tallies from Python (time_gates; docs/TIME_DOMAIN.md)."""
import math

import numpy as np
import pytest

from conftest import fm


def test_gated_tallies_sum_to_cw(slab_model):
    mesh, mats = slab_model
    src = fm.PointSource((0, 0, 1))
    r = fm.run(mesh, mats, src, packets=4000, seed=5, threads=2, time_gates=(0, 0.5, 0.05))
    assert r.time_gates == (0.0, 0.5, 0.05, 10)
    gv, gs = r.gated_volume_energy, r.gated_surface_energy
    assert gv.shape == (12, r.volume_energy.shape[0]) and not gv.flags.writeable
    # The exit tally per gate covers the boundary faces only, named by gated_faces (ascending ids).
    faces = r.gated_faces
    assert gs.shape == (12, len(faces)) and 0 < len(faces) < r.surface_energy.shape[0]
    assert np.all(np.diff(faces.astype(np.int64)) > 0) and faces[0] >= 1 and faces[-1] <= r.surface_energy.shape[0]
    interior = np.ones(r.surface_energy.shape[0], bool)
    interior[faces - 1] = False
    assert r.surface_energy[interior].sum() == 0 and r.surface_energy[faces - 1].sum() > 0
    # Each tetra's and face's bins (gates, early, late) hold its CW tally, to double rounding.
    np.testing.assert_allclose(gv.sum(axis=0), r.volume_energy, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(gs.sum(axis=0), r.surface_energy[faces - 1], rtol=1e-12, atol=1e-300)
    assert gv[10].sum() == 0  # nothing before a gate that opens at t = 0
    assert gv[:10].sum() > 0 and r.gated_volume_energy_stderr.shape == gv.shape
    # The same histories as a CW run: gating changes no tally.
    cw = fm.run(mesh, mats, src, packets=4000, seed=5, threads=2)
    assert cw.time_gates is None and cw.gated_volume_energy is None
    np.testing.assert_array_equal(cw.volume_energy, r.volume_energy)


def test_bad_time_gates(slab_model):
    mesh, mats = slab_model
    src = fm.PointSource((0, 0, 1))
    for bad, part in (((0, 1, 0), "step must be > 0"), ((0, 1), "(start, stop, step)"),
                      ((1, 0, 0.1), "must be after start"), ((0, 1, 0.3), "whole number")):
        try:
            fm.run(mesh, mats, src, packets=100, time_gates=bad)
        except ValueError as e:
            assert "time_gates" in str(e) and part in str(e), str(e)
        else:
            raise AssertionError(f"time_gates={bad!r} accepted")


def test_batch_time_gates_equal_single_runs(slab_model):
    """run_batch(time_gates=...): each run's gated tallies equal the single run's (same seed)."""
    mesh, mats = slab_model
    srcs = [fm.PointSource((0, 0, 1)), fm.PointSource((0.5, 0, 1.5))]
    b = fm.run_batch(mesh, mats, srcs, packets=3000, seed=7, threads=2, time_gates=(0, 0.5, 0.05))
    for j, src in enumerate(srcs):
        one = fm.run(mesh, mats, src, packets=3000, seed=7, threads=2, batches=1, time_gates=(0, 0.5, 0.05))
        assert b[j].time_gates == (0.0, 0.5, 0.05, 10)
        np.testing.assert_array_equal(b[j].gated_volume_energy, one.gated_volume_energy)
        np.testing.assert_array_equal(b[j].gated_surface_energy, one.gated_surface_energy)
        np.testing.assert_array_equal(b[j].gated_faces, one.gated_faces)
    assert not np.array_equal(b[0].gated_volume_energy, b[1].gated_volume_energy)
    with pytest.raises(ValueError, match="time_gates"):
        fm.run_batch(mesh, mats, srcs, packets=100, time_gates=(0, 1, 0.3))


def test_batch_time_gate_regions_equal_single_runs(slab_model):
    """run_batch(time_gate_regions=...): each run's gated tetras and values equal the single run's
    with the same regions (same seed); bad ids are refused."""
    mesh, mats = slab_model
    srcs = [fm.PointSource((0, 0, 1)), fm.PointSource((0.5, 0, 1.5))]
    kw = dict(packets=3000, seed=7, threads=2, time_gates=(0, 0.5, 0.05))
    b = fm.run_batch(mesh, mats, srcs, time_gate_regions=[2], **kw)
    for j, src in enumerate(srcs):
        one = fm.run(mesh, mats, src, batches=1, time_gate_regions=[2], **kw)
        assert len(b[j].gated_tetras) > 0
        np.testing.assert_array_equal(b[j].gated_tetras, one.gated_tetras)
        np.testing.assert_array_equal(b[j].gated_volume_energy, one.gated_volume_energy)
    with pytest.raises(ValueError, match="region 7 has no tetras"):
        fm.run_batch(mesh, mats, srcs, time_gate_regions=[2, 7], **kw)


def test_time_gate_regions(slab_model):
    """time_gate_regions: the gated volume tally over region 2's tetras equals the all-tetras
    run's columns there (same seed), and each column's bins sum to its CW tally."""
    mesh, mats = slab_model
    src = fm.PointSource((0, 0, 1))
    kw = dict(packets=3000, seed=5, threads=2, batches=1, time_gates=(0, 0.5, 0.05))
    full = fm.run(mesh, mats, src, **kw)
    part = fm.run(mesh, mats, src, time_gate_regions=[2], **kw)
    ids = part.gated_tetras
    assert full.gated_tetras is None and len(ids) > 0
    assert part.gated_volume_energy.shape == (12, len(ids))
    np.testing.assert_array_equal(part.gated_volume_energy, full.gated_volume_energy[:, ids - 1])
    np.testing.assert_array_equal(part.gated_surface_energy, full.gated_surface_energy)
    np.testing.assert_allclose(part.gated_volume_energy.sum(axis=0), part.volume_energy[ids - 1], rtol=1e-12,
                               atol=1e-300)
    for bad, text in (([], "at least one region id"), ([2, 7], "region 7 has no tetras")):
        with pytest.raises(ValueError, match=text):
            fm.run(mesh, mats, src, time_gate_regions=bad, **kw)


def test_mcml_time_bins_sum_to_rat(tmp_path):
    """run_mcml_time: Rd(r,t), Tt(r,t), A(z,t) per launched photon; the bins of each radius sum
    to the run's Rd_r (times the annulus area), and all bins to Rd, Tt and A."""
    mci = tmp_path / "one.mci"
    mci.write_text("1.0\n1\none.mco A\n3000\n0.01 0.02\n10 12 5\n1\n1.0\n1.37 1 100 0.9 0.1\n1.0\n")
    run = fm.read_mci(str(mci))[0]
    res, t = fm.run_mcml_time(run, (0, 0.05, 0.005), seed=3, threads=2)
    assert t["gates"] == (0, 0.05, 0.005)
    assert t["Rd_rt"].shape == (12, 12) and t["Tt_rt"].shape == (12, 12) and t["A_zt"].shape == (12, 10)
    assert math.isclose(t["Rd_rt"].sum(), res.diffuse_reflectance, rel_tol=1e-9)
    assert math.isclose(t["Tt_rt"].sum(), res.transmittance, rel_tol=1e-9)
    assert math.isclose(t["A_zt"].sum(), res.absorbed, rel_tol=1e-9)
    ring = [2 * math.pi * (i + 0.5) * 0.02 ** 2 for i in range(12)]
    for i in range(12):
        assert math.isclose(t["Rd_rt"][:, i].sum() / ring[i], res.Rd_r[i], rel_tol=1e-9, abs_tol=1e-12)
    with pytest.raises(Exception, match="time_gates"):
        fm.run_mcml_time(run, (0, 1, 0.3))


def _write_fmtg(path, quantity, values, stderr=None, start=0.0, stop=1.0, step=0.5):
    import struct
    bins, n = values.shape
    h = b"FMTGATED" + struct.pack("<6IQ3d", 1, 0x01020304, quantity, bins - 2, bins, stderr is not None, n,
                                  start, stop, step)
    h += b"J/mm^2 (--power in J)".ljust(32, b"\0") + struct.pack("<Q", 128) + bytes(24)
    with open(path, "wb") as f:
        f.write(h + values.astype("<f8").tobytes() + (b"" if stderr is None else stderr.astype("<f8").tobytes()))


def test_read_time_gated(tmp_path):
    """read_time_gated: values and standard errors as (bins, elements), and the elements' ids from
    the list beside a file of listed faces (surface_exit_gated_faces.txt) or of chosen tetras;
    every id in order otherwise; a missing or mismatched list is a FormatError naming it."""
    v = np.arange(8.0).reshape(4, 2)
    exit_dir = tmp_path / "exit"
    exit_dir.mkdir()
    _write_fmtg(exit_dir / "surface_exit_gated.fmtg", 3, v, stderr=v / 10)
    with pytest.raises(fm.FormatError, match="surface_exit_gated_faces.txt"):
        fm.read_time_gated(str(exit_dir / "surface_exit_gated.fmtg"))
    (exit_dir / "surface_exit_gated_faces.txt").write_text("# face p1 p2 p3\n4 1 2 3\n9 2 3 5\n")
    d = fm.read_time_gated(str(exit_dir / "surface_exit_gated.fmtg"))
    assert d["gates"] == (0.0, 1.0, 0.5, 2) and d["quantity"] == "exit_fluence"
    assert d["units"] == "J/mm^2 (--power in J)"
    np.testing.assert_array_equal(d["values"], v)
    np.testing.assert_array_equal(d["stderr"], v / 10)
    np.testing.assert_array_equal(d["elements"], [4, 9])
    (exit_dir / "surface_exit_gated_faces.txt").write_text("# face p1 p2 p3\n4 1 2 3\n")
    with pytest.raises(fm.FormatError, match="1 elements for the 2"):
        fm.read_time_gated(str(exit_dir / "surface_exit_gated.fmtg"))
    (exit_dir / "surface_exit_gated_faces.txt").write_text("# face p1 p2 p3\n4 1 2 3\n9 2 x 5\n")
    with pytest.raises(fm.FormatError, match=r"surface_exit_gated_faces.txt:3: '9 2 x 5' is not a face id"):
        fm.read_time_gated(str(exit_dir / "surface_exit_gated.fmtg"))
    # A volume file without a list: every tetra, in order; with one (per-region gating): its ids.
    vol_dir = tmp_path / "vol"
    vol_dir.mkdir()
    _write_fmtg(vol_dir / "fluence_gated.fmtg", 1, v)
    d = fm.read_time_gated(str(vol_dir / "fluence_gated.fmtg"))
    assert d["quantity"] == "fluence" and d["stderr"] is None
    np.testing.assert_array_equal(d["elements"], [1, 2])
    (vol_dir / "fluence_gated_tetras.txt").write_text("# tetra ids ...; regions 2\n7\n12\n")
    np.testing.assert_array_equal(fm.read_time_gated(str(vol_dir / "fluence_gated.fmtg"))["elements"], [7, 12])
    (vol_dir / "bad.fmtg").write_bytes(b"FMTGATEX" + bytes(120))
    with pytest.raises(fm.FormatError, match="bad.fmtg: not a time-gated tally file"):
        fm.read_time_gated(str(vol_dir / "bad.fmtg"))
