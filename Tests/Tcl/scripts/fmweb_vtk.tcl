# SPDX-License-Identifier: GPL-3.0-or-later
# FullMonteWeb's generated form with its own mesh reader (workflow B in fullmonte-tcl-api.md):
# VTKMeshReader -> materials -> Cylinder -> TetraVolumeKernel -> EnergyToFluence -> VTKMeshWriter
# and DVH. Written only against that document; run unchanged by fullmonte_compat.test.
#   fullmonte fmweb_vtk.tcl mesh.vtk outprefix
package require FullMonte

VTKMeshReader R
    R filename [lindex $argv 0]
    R read
set M [R mesh]
$M unitDimension "mm"

MaterialSet MS
Material air
    air absorptionCoeff 0
    air scatteringCoeff 0
    air anisotropy 0.0
    air refractiveIndex 1.0
    air unitDimension "mm"
MS exterior air
Material tissue
    tissue absorptionCoeff 0.05
    tissue scatteringCoeff 8
    tissue anisotropy 0.9
    tissue refractiveIndex 1.37
    tissue unitDimension "mm"
MS append tissue
Material tumour
    tumour absorptionCoeff 0.1
    tumour scatteringCoeff 10
    tumour anisotropy 0.9
    tumour refractiveIndex 1.37
    tumour unitDimension "mm"
MS append tumour

Cylinder CY1
    CY1 endpoint 0 "0 0 -2"
    CY1 endpoint 1 "0 0 2"
    CY1 radius 0.5
    CY1 power 1
    CY1 emitVolume false
Composite C
    C add CY1

TetraVolumeKernel k
    k geometry $M
    k materials MS
    k source C
    k packetCount 5000
    k isEnergy_or_Power "J"
    k energyPowerValue 10

k startAsync
k finishAsync
set ODC [k results]

EnergyToFluence EF
    EF kernel k
    EF inputPhotonWeight
    EF data [$ODC getByName "VolumeEnergy"]
    EF outputFluence
    EF update

VTKMeshWriter W
    W filename "[lindex $argv 1].out.vtk"
    W addData "Fluence" [EF result]
    W mesh $M
    W addHeaderComment "MeshUnit: mm EnergyUnit: J"
    W write

DoseVolumeHistogramGenerator DVHG
    DVHG mesh $M
    DVHG dose [EF result]
    DVHG update
set DHC [DVHG result]

TextFileDoseHistogramWriter TDH
    TDH filename "[lindex $argv 1].dvh.txt"
    TDH collection $DHC
    TDH write
