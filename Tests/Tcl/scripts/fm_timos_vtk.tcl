# SPDX-License-Identifier: GPL-3.0-or-later
# A FullMonte-style script: TIM-OS readers -> TetraVolumeKernel -> EnergyToFluence ->
# VTKMeshWriter, written only against fullmonte-tcl-api.md and run unchanged by
# fullmonte_compat.test (when FullMonte is built with VTK).
#   fullmonte fm_timos_vtk.tcl mesh opt source out.vtk
package require vtk
package require FullMonte 1.0

TIMOSMeshReader R
R filename [lindex $argv 0]
R read
set M [R mesh]

TIMOSMaterialReader MR
MR filename [lindex $argv 1]
MR read
set opt [MR materials]

TIMOSSourceReader SR
SR filename [lindex $argv 2]
SR read

TetraVolumeKernel k
k geometry $M
k materials $opt
k source [SR source]
k packetCount 10000
k runSync

EnergyToFluence EF
EF mesh $M
EF materials $opt
EF source [[k results] getByName "VolumeEnergy"]
EF update

VTKMeshWriter W
W filename [lindex $argv 3]
W mesh $M
W addData "Fluence" [EF result]
W addData "Energy" [[k results] getByName "VolumeEnergy"]
W addHeaderComment "FullMonte-style script"
W write

exit
