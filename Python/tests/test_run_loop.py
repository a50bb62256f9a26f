# SPDX-License-Identifier: GPL-3.0-or-later
"""A loop of Simulations over one mesh keeps the mesh's packed cells (issue 29): each run of a
loop over sources and material values equals, bit for bit, the same run packed afresh (after a
Simulation of another mesh has replaced the kept cells); run_batch shares those cells."""
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


def test_batches_keep_the_packed_cells(slab_model):
    """run_batch takes the mesh's cells from the cells Simulations keep (fm.mesh_packs counts):
    batches and runs after the first on one mesh pack only materials and sources, and each of
    their runs equals, bit for bit, the run of a batch packed afresh."""
    mesh, _ = slab_model
    other = fm.box_mesh((-5, -5, -5), (5, 5, 5), (3, 3, 3))
    sources = [fm.PointSource((0.0, 0.5, 0.0)), fm.PointSource((1.0, -0.5, -0.5))]

    def batch(sets):
        return fm.run_batch(mesh, sets, sources, packets=1500, seed=5, threads=2)

    fm.run(other, fm.MaterialSet([fm.Material(0.1, 10, 0.9, 1.4)]), fm.PointSource((0, 0, 0)), packets=10)
    packs, reuses = fm.mesh_packs()
    batch(materials(0))
    kept = batch([materials(1), materials(2)])
    fm.run(mesh, materials(1), sources[0], packets=10)
    assert fm.mesh_packs() == (packs + 1, reuses + 2)
    fm.run(other, fm.MaterialSet([fm.Material(0.1, 10, 0.9, 1.4)]), fm.PointSource((0, 0, 0)), packets=10)
    fresh = batch([materials(1), materials(2)])  # packed anew: the kept cells were the other mesh's
    assert fm.mesh_packs()[0] == packs + 3
    assert len(kept) == len(fresh) == 4
    for j in range(4):
        assert np.array_equal(kept[j].volume_energy, fresh[j].volume_energy), j
        assert np.array_equal(kept[j].surface_energy, fresh[j].surface_energy), j
        assert kept[j].ledger == fresh[j].ledger
    assert len({float(np.sum(kept[j].volume_energy)) for j in range(4)}) == 4
