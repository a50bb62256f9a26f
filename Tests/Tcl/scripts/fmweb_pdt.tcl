# SPDX-License-Identifier: GPL-3.0-or-later
# A script in the form FullMonteWeb generated in 2020-21 (workflow B in fullmonte-tcl-api.md),
# with a TIM-OS mesh where FullMonteWeb read VTK: written only against that document, and run
# unchanged by fullmonte_compat.test. Mesh coordinates and coefficients are in cm.
#   fullmonte fmweb_pdt.tcl mesh.mesh outprefix
package require FullMonte

###################### Mesh ######################
TIMOSMeshReader R
    R filename [lindex $argv 0]
    R read
set M [R mesh]
$M unitDimension "cm"

###################### Materials ######################
MaterialSet MS

Material air
    air absorptionCoeff 0
    air scatteringCoeff 0
    air anisotropy 0.0
    air refractiveIndex 1.0
    air unitDimension "cm"
MS exterior air

Material tissue
    tissue absorptionCoeff 0.5
    tissue scatteringCoeff 80
    tissue anisotropy 0.9
    tissue refractiveIndex 1.37
    tissue unitDimension "cm"
MS append tissue

Material tumour
    tumour absorptionCoeff 1.0
    tumour scatteringCoeff 100
    tumour anisotropy 0.9
    tumour refractiveIndex 1.37
    tumour unitDimension "cm"
MS append tumour

###################### Sources ######################
Cylinder CY1
    CY1 endpoint 0 "-0.1 0 -0.2"
    CY1 endpoint 1 "-0.1 0 0.2"
    CY1 radius 0.05
    CY1 power 1
    CY1 emitVolume false
    CY1 emitHemiSphere false

Cylinder CY2
    CY2 endpoint 0 "0.1 0 -0.2"
    CY2 endpoint 1 "0.1 0 0.2"
    CY2 radius 0.05
    CY2 power 1
    CY2 emitVolume false
    CY2 emitHemiSphere true
    CY2 hemiSphereEmitDistribution "LAMBERT"

Composite C
    C add CY1
    C add CY2

###################### Kernel ######################
TetraVolumeKernel k
    k geometry $M
    k materials MS
    k source C
    k packetCount 10000
    k isEnergy_or_Power "J"
    k energyPowerValue 50

k startAsync
while { ![k done] } { after 50 }
k finishAsync

set ODC [k results]

EnergyToFluence EF
    EF kernel k
    EF inputPhotonWeight
    EF data [$ODC getByName "VolumeEnergy"]
    EF outputFluence
    EF update

TextFileMatrixWriter TW
    TW filename "[lindex $argv 1].phi_v.txt"
    TW source [EF result]
    TW write

DoseVolumeHistogramGenerator DVHG
    DVHG mesh $M
    DVHG dose [EF result]
    DVHG update

set DHC [DVHG result]

TextFileMatrixWriter TW
    TW filename "[lindex $argv 1].dvh.txt"
    TW source [$DHC get 1]
    TW write

TextFileDoseHistogramWriter TDH
    TDH filename "[lindex $argv 1].dvh.txt"
    TDH collection $DHC
    TDH write
