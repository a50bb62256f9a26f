# SPDX-License-Identifier: GPL-3.0-or-later
"""The FM_* tuning variables (docs/PERFORMANCE.md "Tuning knobs") reach Python runs as they reach
fullmonte-run and Tcl: read when a run is set up, a bad value an error naming the variable."""
import numpy as np
import pytest

fm = pytest.importorskip("fullmonte", reason="the fullmonte module is not built (FM_USE_PYTHON=OFF)")

MCI = "1.0\n1\nt.mco A\n300\n0.01 0.01\n20 20 5\n1\n1.0\n1.37 1 100 0.9 0.1\n1.0\n"

BAD_VALUES = [("FM_CPU_ISA", "sse"), ("FM_CUDA_BLOCKS_PER_SM", "0"), ("FM_CUDA_CELL_LAYOUT", "tiled"),
              ("FM_CUDA_MCML_GROUP_CROSSINGS", "yes"), ("FM_BATCH_SLOTS_PER_DEVICE", "3")]


def _entry_points(mesh, mats, mci_path):
    src = fm.PointSource((0, 0, 0))
    return {
        "Simulation": lambda: fm.Simulation(mesh, mats, src, packets=100, threads=1),
        "run": lambda: fm.run(mesh, mats, src, packets=100, threads=1),
        "run_batch": lambda: fm.run_batch(mesh, mats, [src], packets=100, threads=1),
        "trace": lambda: fm.trace(mesh, mats, src, packets=10, threads=1),
        "run_mcml": lambda: fm.run_mcml(fm.read_mci(mci_path)[0], threads=1),
        "trace_mcml": lambda: fm.trace_mcml(fm.read_mci(mci_path)[0], packets=10, threads=1),
    }


@pytest.mark.parametrize("var,value", BAD_VALUES)
def test_bad_tuning_value_names_the_variable(slab_model, tmp_path, monkeypatch, var, value):
    mesh, mats = slab_model
    mci = tmp_path / "t.mci"
    mci.write_text(MCI)
    monkeypatch.setenv(var, value)
    for call in _entry_points(mesh, mats, str(mci)).values():
        with pytest.raises(fm.ParameterError, match=f"{var}={value}"):
            call()


def test_tuning_is_read_per_run_not_at_import(slab_model, monkeypatch):
    """A variable set after import applies to the next run; unsetting it makes runs work again."""
    mesh, mats = slab_model
    src = fm.PointSource((0, 0, 0))
    monkeypatch.setenv("FM_CPU_ISA", "bogus")
    with pytest.raises(fm.ParameterError, match="FM_CPU_ISA"):
        fm.run(mesh, mats, src, packets=100, threads=1)
    monkeypatch.delenv("FM_CPU_ISA")
    assert fm.run(mesh, mats, src, packets=100, threads=1).packets == 100


def test_generic_cpu_loop_follows_the_same_histories(slab_model, monkeypatch):
    """FM_CPU_ISA=generic (the one-packet loop) gives the tallies of the default loop: every
    packet keeps its history, only the order of summation may differ."""
    mesh, mats = slab_model
    src = fm.PointSource((0, 0, 0))
    best = fm.run(mesh, mats, src, packets=3000, seed=5, threads=1)
    monkeypatch.setenv("FM_CPU_ISA", "generic")
    generic = fm.run(mesh, mats, src, packets=3000, seed=5, threads=1)
    np.testing.assert_allclose(generic.volume_energy, best.volume_energy, rtol=1e-9, atol=1e-12)
    assert generic.ledger.keys() == best.ledger.keys()
    for k in best.ledger:
        assert generic.ledger[k] == pytest.approx(best.ledger[k], rel=1e-9, abs=1e-12)
    assert best.gpu_blocks_per_sm == 0


def test_blocks_per_sm_reaches_the_gpu_kernel(slab_model, monkeypatch):
    ok, why = fm.cuda_available()
    if not ok:
        pytest.skip("no CUDA device (" + why + "): FM_CUDA_BLOCKS_PER_SM is checked on a GPU machine")
    mesh, mats = slab_model
    monkeypatch.setenv("FM_CUDA_BLOCKS_PER_SM", "1")
    r = fm.run(mesh, mats, fm.PointSource((0, 0, 0)), packets=20000, kernel="cuda")
    assert r.gpu_blocks_per_sm == 1
    monkeypatch.delenv("FM_CUDA_BLOCKS_PER_SM")
    assert fm.run(mesh, mats, fm.PointSource((0, 0, 0)), packets=20000, kernel="cuda").gpu_blocks_per_sm > 1
