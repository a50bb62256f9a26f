# SPDX-License-Identifier: GPL-3.0-or-later
# A FullMonte 2018-style script with the VTK pipeline of FullMonte's examples (runOneFullMonte.tcl,
# mouse_paths.tcl): TIM-OS inputs -> TetraTraceKernel -> vtkFullMonteTetraMeshWrapper +
# vtkFullMonteArrayAdaptor -> vtkUnstructuredGridWriter, and the packet traces through
# vtkFullMontePacketPositionTraceSetToPolyData -> vtkPolyDataWriter. Written against
# fullmonte-tcl-api.md and FullMonte's example scripts only; run unchanged by traces.test.
#   fullmonte fm2018_vtk_traces.tcl mesh opt outprefix
package require vtk
package require FullMonte 1.0

set meshfn [lindex $argv 0]
set optfn [lindex $argv 1]
set outprefix [lindex $argv 2]

TIMOSMeshReader R
R filename $meshfn
R read
set M [R mesh]

TIMOSMaterialReader MR
MR filename $optfn
MR read
set opt [MR materials]

Point P
P position "0.5 0.5 0.5"

TetraTraceKernel k
k geometry $M
k materials $opt
k source P
k packetCount 100
k threadCount 8
k randSeed 1
k rouletteWMin 1e-4

k startAsync
while { ![k done] } { after 10 }
k finishAsync

set RES [k results]
puts "absorbed [[$RES getByName ConservationCounts] w_absorb]"

vtkFullMonteTetraMeshWrapper VTKM
    VTKM mesh $M
    VTKM update

vtkFullMonteArrayAdaptor vtkPhi
    vtkPhi source [$RES getByName "VolumeEnergy"]

set ug [VTKM regionMesh]
[$ug GetCellData] AddArray [vtkPhi array]

vtkFullMontePacketPositionTraceSetToPolyData TR
    TR source [$RES getByName "PacketTraces"]
    TR update

vtkPolyDataWriter PDW
    PDW SetInputData [TR getPolyData]
    PDW SetFileName "$outprefix.traces.vtk"
    PDW Update
    PDW Delete

vtkUnstructuredGridWriter W
    W SetInputData $ug
    W SetFileName "$outprefix.vol.vtk"
    W Update
    W Delete

exit
