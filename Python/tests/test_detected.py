# SPDX-License-Identifier: GPL-3.0-or-later
"""Detected-packet files (.fmd, docs/DETECTORS.md): reading, arrays, reweighting, TPSF."""
import struct

import numpy as np
import pytest

fm = pytest.importorskip("fullmonte", reason="the fullmonte module is not built (FM_USE_PYTHON=OFF)")


def fmd_bytes(records, regions=2, packets=100, mua=(0.05, 0.02), kernel=None, counts=None, cells=None):
    """A version 1 file, or version 2 with `counts` (scatter counts per record and region)."""
    version = 2 if counts else 1
    head = [f"fullmonte-detected {version}", f"packets {packets}", "seed 3"]
    head += [f"kernel {kernel}"] if kernel else []
    head += [f"cells {cells}"] if cells else []
    head += [f"regions {regions}"]
    head += [f"material {r + 1} {mua[r]} 5 0.8 1.4" for r in range(regions)]
    head += ["detectors 2", "detector 0 disk 3 0 0 1.5", "detector 1 faces",
             f"detected {len(records)}", f"records {len(records)}", f"record_bytes {48 + 4 * version * regions}", "data"]
    body = b"".join(struct.pack("<QIIff3f3f%df" % regions, *r) +
                    (struct.pack("<%dI" % regions, *counts[k]) if counts else b"") for k, r in enumerate(records))
    return ("\n".join(head) + "\n").encode() + body


RECORDS = [
    (4, 0, 10, 0.5, 0.02, 3, 0, 0, 0, 0, -1, 2.0, 1.0),
    (9, 1, 30, 0.25, 0.05, 1, 1, 0, 0, 0, -1, 4.0, 6.0),
    (9, 0, 30, 0.25, 0.05, 1, 1, 0, 0, 0, -1, 4.0, 6.0),
]


def test_read_and_reweight(tmp_path):
    p = tmp_path / "d.fmd"
    p.write_bytes(fmd_bytes(RECORDS))
    d = fm.read_detected(str(p))
    assert d.record_count == 3 and d.regions == 2 and d.packets == 100 and not d.truncated
    assert list(d.index) == [4, 9, 9] and list(d.detector) == [0, 1, 0]
    L = np.asarray(d.path_lengths)
    assert L.shape == (3, 2) and L[1, 1] == 6.0
    w = np.asarray(d.weight, dtype=float)
    assert d.signal() == pytest.approx([(w[0] + w[2]) / 100, w[1] / 100])
    new = np.array([0.1, 0.03])
    w2 = w * np.exp(-(L @ (new - np.array([0.05, 0.02]))))
    assert d.reweighted_signal(list(new)) == pytest.approx([(w2[0] + w2[2]) / 100, w2[1] / 100])
    assert d.region_jacobian()[0] == pytest.approx(-(w[0] * L[0, 0] + w[2] * L[2, 0]) / 100)
    assert sum(d.tpsf(0, 0, 1, 0.01)) == pytest.approx(d.signal()[0])
    assert d.kernel == "cpu"  # no kernel line: a file from before GPU detection


def test_kernel_line(tmp_path):
    p = tmp_path / "g.fmd"
    p.write_bytes(fmd_bytes(RECORDS, kernel="cuda"))
    d = fm.read_detected(str(p))
    assert d.kernel == "cuda" and d.cells == "record"  # no cells line: the records' layout


def test_cells_line(tmp_path):
    p = tmp_path / "c.fmd"
    p.write_bytes(fmd_bytes(RECORDS, kernel="cuda", cells="compact"))
    d = fm.read_detected(str(p))
    assert d.kernel == "cuda" and d.cells == "compact" and d.record_count == 3
    out = tmp_path / "c2.fmd"
    fm.write_detected(d, str(out))
    assert b"\nkernel cuda\ncells compact\n" in out.read_bytes()
    assert fm.read_detected(str(out)).cells == "compact"
    p.write_bytes(fmd_bytes(RECORDS, kernel="cpu", cells="compact"))
    with pytest.raises(ValueError, match="c.fmd:5.*needs kernel cuda"):
        fm.read_detected(str(p))


def test_bad_files(tmp_path):
    p = tmp_path / "bad.fmd"
    p.write_bytes(fmd_bytes(RECORDS)[:-5])
    with pytest.raises(ValueError, match="bad.fmd"):
        fm.read_detected(str(p))
    p.write_bytes(fmd_bytes(RECORDS))
    d = fm.read_detected(str(p))
    with pytest.raises(ValueError, match="regions"):
        d.reweighted_signal([0.1])


def test_write_mch(tmp_path):
    """The records as an MMC/MCX .mch file: header counts, then per row detector id from 1,
    paths per region, exit position and direction, and w0 = w exp(sum mu_a L)."""
    p = tmp_path / "d.fmd"
    p.write_bytes(fmd_bytes(RECORDS))
    d = fm.read_detected(str(p))
    m = tmp_path / "d.mch"
    fm.write_mch(d, str(m))
    raw = m.read_bytes()
    assert raw[:4] == b"MCXH"
    version, media, dets, cols, total, found, saved = np.frombuffer(raw[4:32], dtype="<u4")
    assert (version, media, cols, total, found, saved) == (1, 2, 10, 100, 3, 3)
    rows = np.frombuffer(raw[64:], dtype="<f4").reshape(3, 10)
    L = np.asarray(d.path_lengths)
    assert list(rows[:, 0]) == [1, 2, 1]
    assert np.array_equal(rows[:, 1:3], L)
    w0 = np.asarray(d.weight, dtype=float) * np.exp(L @ np.array(d.mua))
    assert rows[:, 9] == pytest.approx(w0, rel=1e-6)


def test_scatter_counts_of_version_2(tmp_path):
    p = tmp_path / "d2.fmd"
    p.write_bytes(fmd_bytes(RECORDS, counts=[(6, 4), (10, 20), (25, 5)]))
    d = fm.read_detected(str(p))
    C = np.asarray(d.scatter_counts)
    assert C.shape == (3, 2) and list(C[1]) == [10, 20]
    assert list(C.sum(axis=1)) == list(d.scatters)
    bad = tmp_path / "bad.fmd"
    bad.write_bytes(fmd_bytes(RECORDS, counts=[(6, 5), (10, 20), (25, 5)]))
    with pytest.raises(Exception, match="record 0: its scatter counts per region sum to 11"):
        fm.read_detected(str(bad))
    v1 = tmp_path / "d1.fmd"
    v1.write_bytes(fmd_bytes(RECORDS))
    assert fm.read_detected(str(v1)).scatter_counts is None
