# SPDX-License-Identifier: GPL-3.0-or-later
# FullMonte scripts that used VTK's Tcl bindings start with `package require vtk`. Debian's VTK 9
# has no Tcl bindings, and FullMonte's own VTK classes (VTKMeshReader, VTKMeshWriter, ...) do not
# need them, so this placeholder lets such scripts run. It is version 0.0, so a real VTK Tcl
# package, where one is installed, always wins; it defines no vtk* commands (the FullMonte package
# itself provides the few that FullMonte 2018 scripts use, see FullMonte.tcl, ::FullMonte::vtk).
package ifneeded vtk 0.0 [list package provide vtk 0.0]
