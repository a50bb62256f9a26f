# SPDX-License-Identifier: GPL-3.0-or-later
"""Dose-volume histograms in Python, notebook style: model, run, DVH per region, plot.

    PYTHONPATH=build/python /usr/bin/python3 Examples/dvh.py [outdir] [packets] [mesh.mesh materials.opt]

Without files it builds the quickstart's model (a tumour in muscle under skin, two cylindrical
diffusers); with a TIM-OS mesh and .opt it uses them (the same two diffusers, which must lie in
the mesh). Normalisation: the packets together carry ENERGY_J joules of light, so the dose of a
tetra is its fluence E / (V mu_a) scaled to that energy, in J/mm^2, times 100: J/cm^2.
The cumulative DVH of a region gives, for each dose d, the fraction of its volume receiving at
least d. With matplotlib installed it saves dvh.png in outdir (headless, Agg backend); without
it, it says so and prints the DVH table only.
"""
import os
import sys

import numpy as np

import fullmonte as fm

ENERGY_J = 100.0  # light delivered by both diffusers together over the treatment (J)

# %% Inputs
outdir = sys.argv[1] if len(sys.argv) > 1 else "dvh-out"
packets = int(sys.argv[2]) if len(sys.argv) > 2 else 30000
os.makedirs(outdir, exist_ok=True)

# %% Model: from TIM-OS files, or the quickstart's block
if len(sys.argv) > 4:
    mesh = fm.read_timos_mesh(sys.argv[3])
    materials = fm.read_timos_materials(sys.argv[4])
    names = {r: f"region {r}" for r in range(1, mesh.region_count)}
else:
    mesh = fm.box_mesh((-20, -20, -15), (20, 20, 15), (21, 21, 15), region=1, shapes=[
        fm.RegionShape.sphere(2, (0, 0, 0), 7), fm.RegionShape.shell(3, 2.0)])
    materials = fm.MaterialSet([fm.Material(mu_a=0.05, mu_s=8.0, g=0.9, n=1.37),
                                fm.Material(mu_a=0.08, mu_s=10.0, g=0.9, n=1.37),
                                fm.Material(mu_a=0.03, mu_s=18.0, g=0.85, n=1.40)])
    names = {1: "muscle", 2: "tumour", 3: "skin"}
diffusers = fm.Composite([fm.CylinderSource((-3, 0, -5), (-3, 0, 5), radius=0.5),
                          fm.CylinderSource((3, 0, -5), (3, 0, 5), radius=0.5)])

# %% Run and normalise: J/mm^2 for ENERGY_J joules, x100 for J/cm^2
result = fm.run(mesh, materials, diffusers, packets=packets, seed=1)
dose = result.fluence(energy=ENERGY_J) * fm.J_PER_MM2_TO_J_PER_CM2
print(f"dvh: {mesh.tetra_count} tetras, {result.packets} packets carrying {ENERGY_J:g} J; dose in J/cm^2")

# %% DVH per region
histograms = {r: fm.dose_histogram(mesh, dose, r) for r in sorted(names) if mesh.region_volume(r) > 0}
levels = [1, 2, 5, 10, 20, 50, 100, 200]  # J/cm^2
print("volume fraction (%) receiving at least each dose (J/cm^2), and D90/D50/mean:")
print(f"  {'region':<10s}" + "".join(f"{'>=' + str(d):>8s}" for d in levels) + f"{'D90':>9s}{'D50':>9s}{'mean':>9s}")
for r, h in histograms.items():
    cdf = np.asarray(h.cdf)
    at = [100 * float(cdf[np.searchsorted(h.dose, d, side="left")]) if d <= h.max_dose else 0.0 for d in levels]
    print(f"  {names[r]:<10s}" + "".join(f"{v:8.1f}" for v in at) +
          f"{h.dose_at_fraction(0.9):9.2f}{h.dose_at_fraction(0.5):9.2f}{h.mean_dose:9.2f}")

# %% Plot (matplotlib if present)
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("dvh: matplotlib is not installed (apt-get install python3-matplotlib): no plot, table only")
else:
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for r, h in histograms.items():
        ax.step(h.dose, 100 * np.asarray(h.cdf), where="post", label=names[r])
    ax.set_xscale("log")
    ax.set_xlabel("dose (J/cm$^2$)")
    ax.set_ylabel("volume receiving at least this dose (%)")
    ax.set_title(f"Cumulative DVH, {ENERGY_J:g} J delivered")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    png = os.path.join(outdir, "dvh.png")
    fig.savefig(png, dpi=120, bbox_inches="tight")
    print(f"dvh: wrote {png}")
