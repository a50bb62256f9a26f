# SPDX-License-Identifier: GPL-3.0-or-later
"""FullMonte: Monte Carlo simulation of light in tissue on tetrahedral meshes.

The same C++ classes the Tcl package (``package require FullMonte``) wraps, with numpy arrays in
and out. Lengths are millimetres and coefficients 1/mm; indices are 0-based; per-tetra arrays
hold one value per tetra in mesh order. Raw tallies are in units of launched packet weight;
``Result.fluence(energy=E)`` normalises to a delivery of E joules (J/mm^2; x100 for J/cm^2).

    import fullmonte as fm
    mesh = fm.box_mesh((-10, -10, -10), (10, 10, 10), (20, 20, 20))
    mats = fm.MaterialSet([fm.Material(mu_a=0.05, mu_s=10, g=0.9, n=1.37)])
    result = fm.run(mesh, mats, fm.PointSource((0, 0, 0)), packets=100_000, seed=1)
    phi = result.fluence(energy=1.0)          # J/mm^2 per tetra
"""
from ._fullmonte import *  # noqa: F401,F403
from ._fullmonte import __version__, Simulation  # noqa: F401
from . import _fullmonte

# Optional components: without them their names still exist and raise ImportError naming the
# CMake option (and the Debian packages) that builds them, so a script fails with a clear reason.
_OPTIONAL = {
    "has_mesher": ("the mesher (CGAL): rebuild with -DFM_USE_CGAL=ON (apt-get install libcgal-dev)",
                   ["read_label_image", "write_label_image", "mesh_image", "mesh_image_file", "mesh_surfaces"]),
    "has_planner": ("the planner: rebuild with -DFM_USE_PLANNING=ON (apt-get install nlohmann-json3-dev "
                    "libcairo2-dev coinor-libclp-dev or libglpk-dev)",
                    ["Plan", "render_dose_slice", "render_dvh"]),
    "has_vtk": ("VTK: rebuild with -DFM_USE_VTK=ON (apt-get install libvtk9-dev)",
                ["read_vtk_mesh", "write_vtk_mesh", "render_fluence"]),
}


def _not_built(name, what):
    message = f"fullmonte.{name} needs {what}; this build has none"
    doc = f"Not built: {name} needs {what}."
    if name[0].isupper():  # a class: making one or using its static methods says why
        class _Missing(type):
            def __getattr__(cls, attr):
                raise ImportError(message)

        def refuse(cls, *args, **kwargs):
            raise ImportError(message)
        return _Missing(name, (), {"__new__": refuse, "__doc__": doc})

    def missing(*args, **kwargs):
        raise ImportError(message)
    missing.__name__ = missing.__qualname__ = name
    missing.__doc__ = doc
    return missing


def _install_fallbacks():
    for flag, (what, names) in _OPTIONAL.items():
        if not getattr(_fullmonte, flag):
            for name in names:
                if not hasattr(_fullmonte, name):
                    globals()[name] = _not_built(name, what)


_install_fallbacks()

J_PER_MM2_TO_J_PER_CM2 = 100.0
"""Multiply a fluence in J/mm^2 by this to get J/cm^2, the unit PDT doses are quoted in."""


def run(mesh, materials, source, **options):
    """Runs a Simulation to the end and returns its Result (see Simulation for the options).

    The GIL is released while packets run; Ctrl-C cancels the run and raises KeyboardInterrupt.
    """
    with Simulation(mesh, materials, source, **options) as sim:
        sim.start()
        return sim.result()
