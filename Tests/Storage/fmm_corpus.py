#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Writes fluence-matrix files (docs/FLUENCE_MATRIX.md) that every reader must accept (ok_*.fmm)
or reject (bad_*.fmm) into the folder given, one per rule of the format. Standard library only.
Usage: fmm_corpus.py DIR"""
import struct
import sys


def header(bo="<", magic=b"FMFLUMAT", version=1, bom=0x01020304, dtype=1, layout=1, rows=3, cols=2,
           sources=2, material_sets=1, quantity=1, units=b"mm^-2 per J emitted", offset=128,
           reserved=b"\0" * 4, tail=b"\0" * 24):
    h = magic + struct.pack(bo + "4I", version, bom, dtype, layout)
    h += struct.pack(bo + "4Q", rows, cols, sources, material_sets)
    h += struct.pack(bo + "I", quantity) + reserved + units.ljust(32, b"\0")[:32]
    h += struct.pack(bo + "Q", offset) + tail
    assert len(h) == 128
    return h


def values(bo="<", n=6, vals=None):
    vals = vals if vals is not None else [0.5 * (k + 1) for k in range(n)]
    return struct.pack(bo + "%dd" % len(vals), *vals)


def files():
    nan, inf = float("nan"), float("inf")
    yield "ok_little", header() + values()
    yield "ok_big", header(">") + values(">")
    yield "ok_nan_inf", header() + values(vals=[1, nan, 2, nan, nan, nan])
    yield "ok_inf_column", header() + values(vals=[1, 2, 3, inf, nan, 4])
    yield "ok_absorbed", header(quantity=2) + values()
    yield "ok_sweep", header(cols=4, sources=2, material_sets=2) + values(n=12)
    yield "ok_empty", header(rows=0) + b""
    yield "ok_reserved_ignored", header(reserved=b"\1\2\3\4") + values()
    # The model fingerprint (offset 104): four 48-bit parts, in the file's byte order.
    parts = [0x0123456789AB, 0xFEDCBA987654, 1, 0xFFFFFFFFFFFF]
    yield "ok_fingerprint", header(tail=b"".join(p.to_bytes(6, "little") for p in parts)) + values()
    yield "ok_fingerprint_big", header(">", tail=b"".join(p.to_bytes(6, "big") for p in parts)) + values(">")
    yield "ok_units_empty", header(units=b"") + values()
    yield "bad_short", header()[:100]
    yield "bad_magic", header(magic=b"FMFLUMAX") + values()
    yield "bad_version", header(version=2) + values()
    yield "bad_bom", header(bom=0x01020403) + values()
    yield "bad_dtype", header(dtype=2) + values()
    yield "bad_layout", header(layout=2) + values()
    yield "bad_quantity", header(quantity=3) + values()
    yield "bad_units_no_nul", header(units=b"u" * 32) + values()
    yield "bad_units_not_ascii", header(units=b"mm\xb2") + values()
    yield "bad_units_control", header(units=b"mm\n") + values()
    yield "bad_offset", header(offset=256) + values()
    yield "bad_sources_x_sets", header(sources=3) + values()
    # 2^32 x 2^32 wraps to 0 in 64-bit arithmetic: a reader that multiplies would accept it.
    yield "bad_sources_x_sets_wraps", header(cols=0, sources=2**32, material_sets=2**32) + b""
    yield "bad_truncated", header() + values()[:-8]
    yield "bad_extra_byte", header() + values() + b"\0"
    yield "bad_huge_dims", header(rows=2**62, cols=2, sources=2) + values()


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    for name, data in files():
        with open(f"{argv[1]}/{name}.fmm", "wb") as f:
            f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
