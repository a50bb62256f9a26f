# SPDX-License-Identifier: GPL-3.0-or-later
"""mesh_image's compact_labels and downsample: fullmonte-mesh's --compact-labels and
--downsample N from Python, with the same table and image line printed and the same checks."""
import numpy as np
import pytest

fm = pytest.importorskip("fullmonte", reason="the fullmonte module is not built (FM_USE_PYTHON=OFF)")

SPACING, ORIGIN = (0.5, 0.5, 0.5), (-5.0, -5.0, -5.0)


def _ball(outer, inner):
    """20^3 voxels of 0.5 mm from -5 mm: a ball of radius 3 mm (`inner`) at (1, 0, 0) inside an
    8 mm cube (`outer`), 0 around."""
    c = -5 + 0.5 * np.arange(20)
    x, y, z = np.meshgrid(c, c, c, indexing="ij")
    labels = np.zeros((20, 20, 20), dtype=np.int32)
    labels[(abs(x) < 4) & (abs(y) < 4) & (abs(z) < 4)] = outer
    labels[(x - 1) ** 2 + y ** 2 + z ** 2 < 9] = inner
    return labels


def _need_mesher():
    if not fm.has_mesher:
        pytest.skip("not built: rebuild with -DFM_USE_CGAL=ON")


def test_compact_labels_renumber_codes_and_print_the_table(capsys):
    _need_mesher()
    labels = _ball(9, 7)
    mesh = fm.mesh_image(labels, SPACING, ORIGIN, compact_labels=True, perturb=False, seed=2,
                         cell_size=1.0, facet_size=0.5, facet_distance=0.1)
    assert "compact labels (image label -> region): 7->1 9->2" in capsys.readouterr().out
    assert mesh.region_count == 3  # the outside, 7 -> 1 and 9 -> 2: no region per code up to 9
    voxel = 0.125
    for region, code in ((1, 7), (2, 9)):
        assert abs(mesh.region_volume(region) / (voxel * (labels == code).sum()) - 1) < 0.05


def _downsampled(labels, f):
    """The majority label of each f^3 block (ties: the lowest label), as the mesher takes it."""
    n = labels.shape[0] // f
    blocks = labels.reshape(n, f, n, f, n, f).transpose(0, 2, 4, 1, 3, 5).reshape(n, n, n, f ** 3)
    present = np.unique(labels)
    counts = np.stack([(blocks == l).sum(axis=3) for l in present], axis=3)
    return present[np.argmax(counts, axis=3)]


def test_downsample_meshes_the_majority_blocks(capsys, tmp_path):
    _need_mesher()
    labels = _ball(1, 2)
    opts = dict(perturb=False, seed=4, cell_size=1.0, facet_size=0.8, facet_distance=0.1)
    mesh = fm.mesh_image(labels, SPACING, ORIGIN, downsample=2, **opts)
    assert ("downsampled 2x: 10 x 10 x 10 voxels of 1 x 1 x 1 mm, origin (-4.75, -4.75, -4.75) mm"
            in capsys.readouterr().out)
    coarse = _downsampled(labels, 2)
    for region in (1, 2):  # within 10%: a ball of radius 3 voxels loses its staircase corners
        assert abs(mesh.region_volume(region) / float((coarse == region).sum()) - 1) < 0.1, region
    # The same through a file (label map, then compact, then downsample, as fullmonte-mesh).
    path = str(tmp_path / "ball.mha")
    fm.write_label_image(path, labels, SPACING, ORIGIN)
    again = fm.mesh_image_file(path, label_map="2=5", compact_labels=True, downsample=2, **opts)
    assert "compact labels (image label -> region): 1->1 5->2" in capsys.readouterr().out
    assert np.array_equal(again.points, mesh.points) and np.array_equal(again.regions, mesh.regions)


def test_bad_preparation_arguments_are_refused_before_meshing():
    _need_mesher()
    labels = _ball(1, 2)
    for bad in (0, 65, -1):
        with pytest.raises(fm.ParameterError, match=rf"downsample must be an integer in \[1, 64\], got {bad}"):
            fm.mesh_image(labels, SPACING, ORIGIN, downsample=bad)
    for bad in (2.0, True, "2"):
        with pytest.raises(TypeError, match="downsample: expected an integer"):
            fm.mesh_image(labels, SPACING, ORIGIN, downsample=bad)
    with pytest.raises(TypeError, match="compact_labels: expected True or False"):
        fm.mesh_image(labels, SPACING, ORIGIN, compact_labels=1)
    with pytest.raises(fm.ParameterError, match="downsample must be"):
        fm.mesh_image_file("/nonexistent.mha", downsample=0)


def test_a_background_coded_other_than_0_is_named():
    _need_mesher()
    labels = _ball(1, 2)
    labels[labels == 0] = 3  # the background coded 3: every border voxel
    with pytest.warns(RuntimeWarning, match="label 3 covers every voxel of the image's border"):
        fm.mesh_image(labels, SPACING, ORIGIN, downsample=2, cell_size=2.0, perturb=False)
