# SPDX-License-Identifier: GPL-3.0-or-later
"""run_mcml_records: per-photon exit records of an MCML run (docs/DETECTORS.md "MCML")."""
import math

import numpy as np
import pytest

from conftest import fm


def test_mcml_records_sum_to_rd_and_tt(tmp_path):
    """The top records' weights per launched photon are the run's Rd, the bottom ones' its Tt;
    the layers are the regions and the signal reweights per layer."""
    mci = tmp_path / "one.mci"
    mci.write_text("1.0\n1\none.mco A\n3000\n0.01 0.02\n10 12 5\n1\n1.0\n1.37 1 100 0.9 0.1\n1.0\n")
    run = fm.read_mci(str(mci))[0]
    res, dp = fm.run_mcml_records(run, seed=3, threads=2)
    assert dp.model == "layered" and dp.regions == 1 and dp.packets == 3000 and not dp.truncated
    w, det = dp.weight.astype(float), dp.detector
    assert math.isclose(w[det == 0].sum() / 3000, res.diffuse_reflectance, rel_tol=1e-9)
    assert math.isclose(w[det == 1].sum() / 3000, res.transmittance, rel_tol=1e-9)
    assert np.all(dp.direction[det == 0, 2] < 0) and np.all(dp.direction[det == 1, 2] > 0)
    same = dp.reweighted_signal(list(dp.mua))
    assert np.allclose(same, dp.signal(), rtol=1e-12)
    assert dp.reweighted_signal([0.5])[0] < dp.signal()[0]
    _, few = fm.run_mcml_records(run, seed=3, threads=2, max_records=10)
    assert few.truncated and few.record_count == 10 and list(few.index) == list(dp.index[:10])
    with pytest.raises(Exception, match="max_records"):
        fm.run_mcml_records(run, max_records=0)
    with pytest.raises(Exception, match="radius"):
        fm.run_mcml_records(run, radius=-1.0)


def test_mcml_records_on_the_gpu(tmp_path):
    """kernel="cuda": the GPU's records, whose top and bottom weights are that run's Rd and Tt;
    truncated, the first records of the run with room for all. Skips without a GPU."""
    mci = tmp_path / "one.mci"
    mci.write_text("1.0\n1\none.mco A\n3000\n0.01 0.02\n10 12 5\n1\n1.0\n1.37 1 100 0.9 0.1\n1.0\n")
    run = fm.read_mci(str(mci))[0]
    with pytest.raises(Exception, match="unknown kernel"):
        fm.run_mcml_records(run, kernel="gpu")
    ok, why = fm.cuda_available()
    if not ok:
        pytest.skip("no CUDA device here: " + why)
    res, dp = fm.run_mcml_records(run, seed=3, kernel="cuda")
    assert dp.kernel == "cuda" and dp.packets == 3000 and not dp.truncated
    w, det = dp.weight.astype(float), dp.detector
    assert math.isclose(w[det == 0].sum() / 3000, res.diffuse_reflectance, rel_tol=1e-9)
    assert math.isclose(w[det == 1].sum() / 3000, res.transmittance, rel_tol=1e-9)
    _, few = fm.run_mcml_records(run, seed=3, kernel="cuda", max_records=10)
    assert few.truncated and few.record_count == 10 and list(few.index) == list(dp.index[:10])
