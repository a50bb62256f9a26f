#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Read a FullMonte fluence matrix (docs/FLUENCE_MATRIX.md) into numpy.

    from read_fluence_matrix import read_fluence_matrix
    header, phi = read_fluence_matrix("out/fluence_matrix.fmm")
    phi.shape            # (tetras, runs); phi[i, j] = tetra i+1, run j
    dose = phi @ energies_J   # a plan: one energy (J) per source, fluence in J/mm^2

Run as a script it prints the header and per-column sums:
    scripts/read_fluence_matrix.py out/fluence_matrix.fmm

Needs numpy: Debian's python3-numpy (scripts/install-deps.sh installs it) for /usr/bin/python3.
It accepts exactly the files the C++ reader accepts (docs/FLUENCE_MATRIX.md, "Readers").
"""
import struct
import sys

try:
    import numpy as np
except ImportError as e:
    _HOW = ("read_fluence_matrix needs numpy: on Debian `apt-get install python3-numpy` and run it with "
            "/usr/bin/python3 (or `pip install numpy` for another Python)")
    if __name__ == "__main__":
        sys.exit(f"read_fluence_matrix: error: {_HOW}")
    raise ImportError(_HOW) from e

MAGIC = b"FMFLUMAT"
HEADER_BYTES = 128
QUANTITIES = {1: "fluence", 2: "absorbed_energy"}
FINGERPRINT_PARTS = ("mesh", "materials", "sources", "runs")


class FormatError(ValueError):
    pass


def read_header(path):
    with open(path, "rb") as f:
        raw = f.read(HEADER_BYTES)
        f.seek(0, 2)
        size = f.tell()
    if len(raw) < HEADER_BYTES:
        raise FormatError(f"{path}: {len(raw)} bytes is shorter than the 128-byte header")
    if raw[:8] != MAGIC:
        raise FormatError(f"{path}: not a FullMonte fluence matrix (magic is not FMFLUMAT)")
    if struct.unpack_from("<I", raw, 12)[0] == 0x01020304:
        bo = "<"
    elif struct.unpack_from(">I", raw, 12)[0] == 0x01020304:
        bo = ">"
    else:
        raise FormatError(f"{path}: byte-order mark at offset 12 is neither 0x01020304 nor its byte swap")
    version, _, dtype, layout = struct.unpack_from(bo + "4I", raw, 8)
    rows, cols, sources, material_sets = struct.unpack_from(bo + "4Q", raw, 24)
    quantity = struct.unpack_from(bo + "I", raw, 56)[0]
    if b"\0" not in raw[64:96]:
        raise FormatError(f"{path}: units field (offset 64, 32 bytes) is not NUL-terminated")
    units_raw = raw[64:96].split(b"\0", 1)[0]
    if any(c < 0x20 or c > 0x7E for c in units_raw):
        raise FormatError(f"{path}: units field (offset 64) is not printable ASCII")
    units = units_raw.decode("ascii")
    offset = struct.unpack_from(bo + "Q", raw, 96)[0]
    if version != 1:
        raise FormatError(f"{path}: version {version} is not supported (this reader knows version 1)")
    if dtype != 1 or layout != 1 or offset != HEADER_BYTES:
        raise FormatError(f"{path}: dtype {dtype} / layout {layout} / offset {offset} unknown (want 1 / 1 / 128)")
    if quantity not in QUANTITIES:
        raise FormatError(f"{path}: quantity {quantity} is unknown")
    if sources * material_sets != cols:
        raise FormatError(f"{path}: sources x material sets != columns")
    expected = HEADER_BYTES + 8 * rows * cols
    if size != expected:
        raise FormatError(f"{path}: {size} bytes, {rows} x {cols} float64 need {expected}")
    # The model fingerprint: four 48-bit parts at offsets 104, 110, 116, 122; all zero: none.
    order = "little" if bo == "<" else "big"
    parts = [int.from_bytes(raw[104 + 6 * i:110 + 6 * i], order) for i in range(4)]
    fingerprint = dict(zip(FINGERPRINT_PARTS, parts)) if any(parts) else None
    return {"version": version, "byteorder": order, "rows": rows,
            "cols": cols, "sources": sources, "material_sets": material_sets,
            "quantity": QUANTITIES[quantity], "units": units, "fingerprint": fingerprint}


def fingerprint_text(fingerprint):
    """The fingerprint as the C++ tools print it: 'mesh 0123456789ab, materials ..., ...' or 'none'."""
    if fingerprint is None:
        return "none"
    return ", ".join(f"{k} {fingerprint[k]:012x}" for k in FINGERPRINT_PARTS)


def read_fluence_matrix(path, mmap=False):
    """Returns (header dict, array of shape (tetras, runs)), column j = run j
    (material set j // sources, source j % sources). mmap=True maps the file instead of reading it."""
    h = read_header(path)
    dt = np.dtype("<f8" if h["byteorder"] == "little" else ">f8")
    n = h["rows"] * h["cols"]
    if mmap:
        data = np.memmap(path, dtype=dt, mode="r", offset=HEADER_BYTES, shape=(n,))
    else:
        data = np.fromfile(path, dtype=dt, count=n, offset=HEADER_BYTES)
    # Column-major on disk: run j's column is contiguous, so (cols, rows) in C order, transposed.
    return h, data.reshape(h["cols"], h["rows"]).T


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 1
    try:
        h, phi = read_fluence_matrix(argv[1])
    except (OSError, FormatError) as e:
        print(f"read_fluence_matrix: error: {e}", file=sys.stderr)
        return 1
    for k, v in h.items():
        print(f"{k}: {fingerprint_text(v) if k == 'fingerprint' else v}")
    for j in range(h["cols"]):
        col = phi[:, j]
        print(f"column {j}: finite {np.isfinite(col).sum()}, sum {np.nansum(col):.9g}, max {np.nanmax(col) if np.isfinite(col).any() else float('nan'):.9g}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
