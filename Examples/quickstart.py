# SPDX-License-Identifier: GPL-3.0-or-later
"""Quickstart in Python: interstitial PDT of a tumour, the same model and numbers as quickstart.tcl.

    PYTHONPATH=build/python /usr/bin/python3 Examples/quickstart.py [outdir] [packets]

A 40 x 40 x 30 mm block of muscle with a 2 mm skin layer on every face and a 7 mm-radius tumour
in the middle, treated by two 10 mm cylindrical diffusers delivering 100 J together. Prints the
conservation ledger, fluence at a few points and D90/D50/mean/max per region in J/cm^2, and
writes fluence.vtu (builds with VTK) and fluence.txt into outdir (default ./quickstart-py-out).
"""
import os
import sys

import numpy as np

import fullmonte as fm

outdir = sys.argv[1] if len(sys.argv) > 1 else "quickstart-py-out"
packets = int(sys.argv[2]) if len(sys.argv) > 2 else 30000
os.makedirs(outdir, exist_ok=True)

# 1. Geometry: ~2 mm cubes, 6 tetras each; later shapes paint over earlier ones.
mesh = fm.box_mesh((-20, -20, -15), (20, 20, 15), (21, 21, 15), region=1, shapes=[
    fm.RegionShape.sphere(2, (0, 0, 0), 7),   # tumour
    fm.RegionShape.shell(3, 2.0),             # skin: within 2 mm of any face
])
region_name = {1: "muscle", 2: "tumour", 3: "skin"}

# 2. Optical properties near 690 nm (mu_a, mu_s in 1/mm); material i belongs to region i.
materials = fm.MaterialSet([
    fm.Material(mu_a=0.05, mu_s=8.0, g=0.9, n=1.37),    # muscle
    fm.Material(mu_a=0.08, mu_s=10.0, g=0.9, n=1.37),   # tumour
    fm.Material(mu_a=0.03, mu_s=18.0, g=0.85, n=1.40),  # skin
], exterior=fm.Material(n=1.0))

# 3. Two cylindrical diffusers through the tumour, equal power.
diffusers = fm.Composite([fm.CylinderSource((-3, 0, -5), (-3, 0, 5), radius=0.5),
                          fm.CylinderSource((3, 0, -5), (3, 0, 5), radius=0.5)])

# 4. Run (Ctrl-C cancels); the packets together carry 100 J.
energy_J = 100.0
print(f"quickstart: {mesh.tetra_count} tetras, {packets} packets...")
result = fm.run(mesh, materials, diffusers, packets=packets, seed=1)
ledger = result.ledger

# 5. Fluence in J/mm^2 per tetra, E / (V mu_a) scaled to 100 J; J/cm^2 = 100 x J/mm^2.
phi = result.fluence(energy=energy_J)
dose = phi * fm.J_PER_MM2_TO_J_PER_CM2

# 6. Outputs.
fm.write_values(os.path.join(outdir, "fluence.txt"), mesh, phi)
if fm.has_vtk:
    fm.write_vtk_mesh(os.path.join(outdir, "fluence.vtu"), mesh, {"Fluence (J/mm^2)": phi})

# 7. Report, as quickstart.tcl prints it.
print(f"quickstart: {result.packets} packets in {result.seconds:.2f} s; absorbed "
      f"{100 * ledger['absorbed'] / ledger['launched']:.1f}%, exited "
      f"{100 * ledger['exited'] / ledger['launched']:.1f}% of the launched weight")
print("fluence (J/cm^2) at points:")
for what, p in [("1 mm beside diffuser 1", (-1.5, 0, 0)), ("tumour centre", (0, 0, 0)),
                ("tumour edge", (7, 0, 0)), ("muscle, 12 mm out", (12, 0, 0)), ("skin above", (0, 0, 14))]:
    print(f"  {what:<24s} ({' '.join(str(x) for x in p)}) {fm.value_at(mesh, dose, p):10.3f}")
print("dose-volume histogram per region (J/cm^2):")
print(f"  {'region':<8s} {'D90':>10s} {'D50':>10s} {'mean':>10s} {'max':>10s}")
for r in sorted(region_name):
    h = fm.dose_histogram(mesh, dose, r)
    print(f"  {region_name[r]:<8s} {h.dose_at_fraction(0.9):10.3f} {h.dose_at_fraction(0.5):10.3f} "
          f"{h.mean_dose:10.3f} {h.max_dose:10.3f}")
np.savetxt(os.path.join(outdir, "dose_J_per_cm2.csv"), dose, header="dose per tetra (J/cm^2)")
print(f"quickstart: wrote {outdir}")
