# SPDX-License-Identifier: GPL-3.0-or-later
"""A loop of Simulations over one mesh keeps the mesh's packed cells (issue 29): each run of a
loop over sources and material values equals, bit for bit, the same run packed afresh (after a
Simulation of another mesh has replaced the kept cells)."""
import numpy as np
import pytest

fm = pytest.importorskip("fullmonte", reason="the fullmonte module is not built (FM_USE_PYTHON=OFF)")


def materials(k):
    return fm.MaterialSet([fm.Material(mu_a=0.02 + 0.03 * k, mu_s=5.0 + k, g=0.8, n=1.37),
                           fm.Material(mu_a=0.1, mu_s=8.0 - k, g=0.9, n=1.4)])


def run(mesh, k):
    return fm.run(mesh, materials(k), fm.PointSource((k - 1.0, 0.5, -0.5 * k)), packets=2000, seed=3,
                  threads=2, directed_faces=[0, 5, 17])


def test_loop_over_sources_and_materials_equals_fresh_packs(slab_model):
    mesh, _ = slab_model
    other = fm.box_mesh((-5, -5, -5), (5, 5, 5), (3, 3, 3))
    loop = [run(mesh, k) for k in range(3)]  # the cells packed once, kept for runs 1 and 2
    for k in range(3):
        fm.run(other, fm.MaterialSet([fm.Material(0.1, 10, 0.9, 1.4)]), fm.PointSource((0, 0, 0)), packets=10)
        fresh = run(mesh, k)  # packed anew: the kept cells were the other mesh's
        for name in ("volume_energy", "surface_energy", "directed_energy"):
            assert np.array_equal(getattr(loop[k], name), getattr(fresh, name)), (k, name)
        assert loop[k].ledger == fresh.ledger and loop[k].events == fresh.events
    # The changed materials and sources reach the runs.
    sums = [float(np.sum(r.volume_energy)) for r in loop]
    assert len(set(sums)) == 3
