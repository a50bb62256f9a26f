#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Writes the 3-D integer array of a MATLAB v5 .mat file as a NIfTI-1 label image.

For benchmark inputs published as .mat (MCX's mcxlab/examples/colin27_v3.mat): the mesher
(fullmonte-mesh) reads NIfTI. Reads the MAT v5 layout (128-byte header, then tagged data
elements, zlib-compressed or not); takes the named variable, or the only 3-D numeric array in the
file; writes it with 1 mm voxels (or --spacing) and the origin at 0.

Usage: mat_labels_to_nii.py IN.mat OUT.nii[.gz] [--var NAME] [--spacing MM]
"""
import argparse, gzip, struct, sys, zlib
import numpy as np

MI_MATRIX, MI_COMPRESSED = 14, 15
DATA_TYPES = {1: '<i1', 2: '<u1', 3: '<i2', 4: '<u2', 5: '<i4', 6: '<u4', 7: '<f4', 9: '<f8', 12: '<i8', 13: '<u8'}
NUMERIC_CLASSES = set(range(6, 16))  # double .. uint64


def tagged(buf, pos):
    """One data element at pos: (type, payload, position after it)."""
    kind, size = struct.unpack_from('<II', buf, pos)
    if kind >> 16:  # small element: size in the upper half, payload in the tag's second word
        return kind & 0xFFFF, buf[pos + 4:pos + 4 + (kind >> 16)], pos + 8
    end = pos + 8 + size
    return kind, buf[pos + 8:end], pos + 8 + (size + 7) // 8 * 8


def numeric_matrix(body):
    """(name, array) of a numeric miMATRIX payload, or None for other classes."""
    _, flags, pos = tagged(body, 0)
    cls = struct.unpack_from('<I', flags)[0] & 0xFF
    if cls not in NUMERIC_CLASSES:
        return None
    _, dims, pos = tagged(body, pos)
    _, name, pos = tagged(body, pos)
    kind, real, _ = tagged(body, pos)
    shape = tuple(np.frombuffer(dims, '<i4'))
    return name.decode('latin1'), np.frombuffer(real, DATA_TYPES[kind]).reshape(shape, order='F')


def read_arrays(path):
    buf = open(path, 'rb').read()
    if len(buf) < 128 or buf[:6] != b'MATLAB':
        sys.exit(f'{path}: not a MATLAB v5 .mat file')
    if buf[126:128] != b'IM':
        sys.exit(f'{path}: big-endian .mat files are not read')
    pos, arrays = 128, {}
    while pos + 8 <= len(buf):
        kind, payload, pos = tagged(buf, pos)
        if kind == MI_COMPRESSED:
            kind, payload, _ = tagged(zlib.decompress(payload), 0)
        if kind == MI_MATRIX:
            m = numeric_matrix(payload)
            if m:
                arrays[m[0]] = m[1]
    return arrays


def write_nifti(path, vol, spacing):
    codes = {np.dtype('uint8'): (2, 8), np.dtype('int16'): (4, 16), np.dtype('int32'): (8, 32),
             np.dtype('uint16'): (512, 16)}
    if vol.dtype not in codes:
        if vol.min() < 0 or vol.max() > 65535 or np.any(vol != np.round(vol)):
            sys.exit('the array holds values that are not labels 0..65535')
        vol = vol.astype(np.uint8 if vol.max() < 256 else np.uint16)
    code, bits = codes[vol.dtype]
    hdr = bytearray(348)
    struct.pack_into('<i', hdr, 0, 348)
    struct.pack_into('<8h', hdr, 40, 3, *vol.shape, 1, 1, 1, 1)
    struct.pack_into('<hh', hdr, 70, code, bits)
    struct.pack_into('<8f', hdr, 76, 1.0, spacing, spacing, spacing, 1, 1, 1, 1)
    struct.pack_into('<f', hdr, 108, 352.0)  # vox_offset
    hdr[123] = 2  # xyzt_units: mm
    hdr[344:348] = b'n+1\0'
    data = bytes(hdr) + b'\0' * 4 + vol.tobytes(order='F')
    (gzip.open if path.endswith('.gz') else open)(path, 'wb').write(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('mat'); ap.add_argument('out')
    ap.add_argument('--var', help='variable name (default: the only 3-D numeric array)')
    ap.add_argument('--spacing', type=float, default=1.0, help='voxel size in mm (default 1)')
    a = ap.parse_args()
    arrays = read_arrays(a.mat)
    if a.var:
        if a.var not in arrays:
            sys.exit(f'{a.mat}: no numeric variable {a.var!r} (has: {", ".join(arrays) or "none"})')
        vol = arrays[a.var]
    else:
        vols = [k for k, v in arrays.items() if v.ndim == 3]
        if len(vols) != 1:
            sys.exit(f'{a.mat}: {len(vols)} 3-D numeric arrays ({", ".join(vols)}): name one with --var')
        vol = arrays[vols[0]]
    if vol.ndim != 3:
        sys.exit(f'{a.mat}: variable is {vol.ndim}-D, not a 3-D image')
    if not a.spacing > 0:
        sys.exit('--spacing must be > 0 mm')
    write_nifti(a.out, np.asarray(vol), a.spacing)
    labels = np.unique(vol)
    print(f'{a.out}: {vol.shape[0]} x {vol.shape[1]} x {vol.shape[2]} voxels of {a.spacing} mm, labels {labels.tolist()[:20]}')


if __name__ == '__main__':
    main()
