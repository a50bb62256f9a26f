# SPDX-License-Identifier: GPL-3.0-or-later
"""Result's batch-means standard errors (10 batches by default; docs/USER_GUIDE.md)."""
import numpy as np

from conftest import fm


def test_result_carries_standard_errors(slab_model):
    mesh, mats = slab_model
    r = fm.run(mesh, mats, fm.PointSource((0, 0, 1)), packets=20000, seed=3, threads=2)
    assert r.batches == 10
    e, se = r.volume_energy, r.volume_energy_stderr
    assert se.shape == e.shape and not se.flags.writeable
    hot = e > 0.01 * e.max()
    assert np.all(se[hot] > 0) and np.all(se[hot] < e[hot])
    assert r.surface_energy_stderr.shape == r.surface_energy.shape
    led = r.ledger_stderr
    assert 0 < led["absorbed"] < 0.05 * r.ledger["absorbed"]


def test_batches_keyword(slab_model):
    mesh, mats = slab_model
    src = fm.PointSource((0, 0, 1))
    one = fm.run(mesh, mats, src, packets=4000, seed=3, threads=1, batches=1)
    assert one.batches == 0 and one.volume_energy_stderr is None and one.ledger_stderr is None
    many = fm.run(mesh, mats, src, packets=4000, seed=3, threads=1, batches=20)
    assert many.batches == 20 and many.volume_energy_stderr is not None
    # The batching changes the estimate, not the tallies (up to summation rounding).
    np.testing.assert_allclose(many.volume_energy, one.volume_energy, rtol=1e-12, atol=1e-15)
    for bad in (-1, 2.5, "x"):
        try:
            fm.run(mesh, mats, src, packets=4000, batches=bad)
        except (ValueError, TypeError) as e:
            assert "batches" in str(e)
        else:
            raise AssertionError(f"batches={bad!r} accepted")
