# SPDX-License-Identifier: GPL-3.0-or-later
# MCML from Tcl: layered tissue, normal pencil beam, MCML's outputs (.mco) - the same packet loop
# as the tetrahedral kernels, with the layers as cells and MCML's scorer.
#
#   fullmonte Examples/mcml.tcl ?outdir? ?packets? ?file.mci?
#
# 1. A three-layer skin model set up in Tcl: writes skin3.mco (MCML's ASCII format) and
#    skin3_depth.txt (absorption per depth bin).
# 2. A check against theory: an index-matched slab of optical thickness 2, albedo 0.9, g = 0.75
#    has diffuse reflectance 0.09739 and transmittance 0.66096 (van de Hulst 1980, the check in
#    Wang, Jacques & Zheng's MCML paper, 1995).
# 3. Given an .mci file, runs its first case (at `packets` photons) and writes its .mco into
#    outdir; a reference .mco next to the .mci with the same layers is not needed.
# Also writes summary.txt (a Tcl dict of the numbers printed).
package require FullMonte 1.0

if {![llength [info commands MCMLKernel]]} {
    puts "mcml: this build of FullMonte has no MCML mode (MCMLKernel); nothing to do"
    exit 0
}
set outdir [expr {$argc > 0 ? [lindex $argv 0] : "mcml-out"}]
set packets [expr {$argc > 1 ? [lindex $argv 1] : 100000}]
set mci [expr {$argc > 2 ? [lindex $argv 2] : ""}]
file mkdir $outdir

# Runs MCMLKernel on geometry L with materials MS; returns the MCMLOutput item and leaves the
# results collection in ::lastResults.
proc runMcml {L MS packets} {
    MCMLKernel k
    k geometry $L
    k materials $MS
    k packetCount $packets
    k runSync
    set ::lastResults [k results]
    set seconds [k seconds]
    rename k ""
    puts [format "mcml: %d photons in %.2f s" $packets $seconds]
    return [$::lastResults getByName MCMLOutput]
}
proc rat {o} {
    format "Rsp %.5f  Rd %.5f  A %.5f  Tt %.5f" [$o Rsp] [$o Rd] [$o A] [$o Tt]
}

# ---- 1. Three-layer skin near 630 nm (mm, 1/mm): epidermis, dermis, subcutaneous fat.
Layered skin
skin resolution 0.01 0.01     ;# dr dz, mm
skin dims 100 300             ;# 1 mm radius, 3 mm depth
skin angularBins 30
Material air
MaterialSet skinMS
skinMS exterior air
foreach {name d mua mus g n} {epidermis 0.1 0.4 40 0.8 1.4  dermis 1.5 0.15 20 0.8 1.4  fat 3.0 0.1 12 0.9 1.44} {
    Layer $name-layer
    $name-layer thickness $d
    skin addLayer $name-layer
    Material $name
    $name absorptionCoeff $mua
    $name scatteringCoeff $mus
    $name anisotropy $g
    $name refractiveIndex $n
    skinMS append $name
}
set o [runMcml skin skinMS $packets]
puts "mcml: three-layer skin: [rat $o]"
puts [format "mcml: absorbed per layer: epidermis %.4f, dermis %.4f, fat %.4f" \
    [$o layerAbsorption 1] [$o layerAbsorption 2] [$o layerAbsorption 3]]
MCMLOutputWriter W
W filename [file join $outdir skin3.mco]
W source $o
W write
TextFileMatrixWriter TW
TW filename [file join $outdir skin3_depth.txt]
TW source [$lastResults getByName Absorption_z]
TW write
set C [$lastResults getByName ConservationCounts]
set summary [dict create Rsp [$o Rsp] Rd [$o Rd] A [$o A] Tt [$o Tt] \
    layers [list [$o layerAbsorption 1] [$o layerAbsorption 2] [$o layerAbsorption 3]] \
    w_launch [$C w_launch] w_absorb [$C w_absorb] w_exit [$C w_exit] w_specular [$C w_specular] \
    w_die [$C w_die] w_roulette [$C w_roulette] w_abnormal [$C w_abnormal]]

# ---- 2. Slab check: 0.2 mm of mu_a 1, mu_s 9 /mm (optical thickness 2), n = 1 all round.
Layered slab
slab resolution 0.01 0.01
slab dims 10 20
Layer thin
thin thickness 0.2
slab addLayer thin
Material turbid 1.0 9.0 0.75 1.0
MaterialSet slabMS
slabMS exterior air
slabMS append turbid
set o2 [runMcml slab slabMS $packets]
puts [format "mcml: slab, optical thickness 2, albedo 0.9, g 0.75: Rd %.5f Tt %.5f (van de Hulst: 0.09739, 0.66096)" \
    [$o2 Rd] [$o2 Tt]]
dict set summary slab [list Rd [$o2 Rd] Tt [$o2 Tt]]

# ---- 3. An .mci file's first case.
if {$mci ne ""} {
    MCMLInputReader R
    R filename $mci
    R read
    set c [R get 0]
    set o3 [runMcml [$c geometry] [$c materials] $packets]
    puts "mcml: [file tail $mci] case 1 ([[$c geometry] layerCount] layers): [rat $o3]"
    MCMLOutputWriter W3
    W3 filename [file join $outdir [file tail [$c outputFilename]]]
    W3 source $o3
    W3 write
    dict set summary mci [list Rsp [$o3 Rsp] Rd [$o3 Rd] A [$o3 A] Tt [$o3 Tt]]
}

set f [open [file join $outdir summary.txt] w]
puts $f $summary
close $f
puts "mcml: wrote [file join $outdir skin3.mco], [file join $outdir skin3_depth.txt], [file join $outdir summary.txt]"
