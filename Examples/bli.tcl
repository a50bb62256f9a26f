# SPDX-License-Identifier: GPL-3.0-or-later
# Bioluminescence imaging (BLI): light made inside a tumour, seen as exit fluence on the skin.
#
#   fullmonte Examples/bli.tcl ?outdir? ?packets?
#
# A 30 x 20 x 14 mm body (skin layer, soft tissue) with a 2.5 mm-radius tumour 4 mm under the top
# surface; the tumour's cells emit 1 nW (a Volume source over the whole region). The surface
# kernel scores the weight leaving through each boundary face; EnergyToFluence turns it into exit
# fluence rate (W/mm^2). Writes into outdir (default ./bli-out):
#   surface_exit.csv   per boundary face: id, centroid, outward normal, exit fluence rate
#   top_view.pgm       the top surface as the camera sees it (grey levels, log scale)
#   skin.vtp           exit fluence on the surface for ParaView (when built with VTK)
#   skin.png           the same seen from an oblique angle (VTK build and an X display)
#   summary.txt        the numbers printed at the end, as a Tcl dict
package require FullMonte 1.0

set outdir [expr {$argc > 0 ? [lindex $argv 0] : "bli-out"}]
set packets [expr {$argc > 1 ? [lindex $argv 1] : 100000}]
file mkdir $outdir

set tumourCentre {4 2 3}
BoxMeshBuilder B
B lower "-15 -10 -7"
B upper "15 10 7"
B divisions 24 16 12          ;# 1.25 mm cubes
B region 1                    ;# soft tissue
B addSphere 3 $tumourCentre 2.5
B addShell 2 1.25             ;# skin
B update
set M [B mesh]

# Optical properties near 600 nm (luciferase emission), 1/mm.
MaterialSet MS
foreach {name mua mus g n} {air 0 0 0 1.0  tissue 0.12 10.0 0.9 1.37  skin 0.08 16.0 0.85 1.40
                            tumour 0.15 11.0 0.9 1.37} {
    Material $name
    $name absorptionCoeff $mua
    $name scatteringCoeff $mus
    $name anisotropy $g
    $name refractiveIndex $n
    if {$name eq "air"} { MS exterior $name } else { MS append $name }
}

Volume BL
BL region 3                   ;# every tetra of the tumour, weighted by volume

TetraSurfaceKernel k
k geometry $M
k materials MS
k source BL
k packetCount $packets
k isEnergy_or_Power W
k energyPowerValue 1e-9
puts "bli: [$M tetraCount] tetras, $packets packets..."
k runSync
set ODC [k results]
set ledger [$ODC getByName ConservationCounts]

EnergyToFluence EF
EF kernel k
EF data [$ODC getByName SurfaceExitEnergy]
EF outputFluence
EF update
set exit [EF result]          ;# per face id, W/mm^2

# ---- Per boundary face table, and the top surface (outward normal +z) binned into an image.
set nx 24
set ny 16
set img [lrepeat [expr {$nx * $ny}] 0.0]
set csv [open [file join $outdir surface_exit.csv] w]
puts $csv "face,x,y,z,nx,ny,nz,exit_fluence_W_per_mm2"
set peak 0.0
set peakAt {}
foreach f [$M boundaryFaceIDs] {
    set c [$M faceCentroid $f]
    set n [$M faceNormal $f]
    set v [$exit get $f]
    puts $csv [join [list $f {*}$c {*}$n $v] ,]
    lassign $c x y z
    if {[lindex $n 2] > 0.99} {
        set i [expr {min($nx - 1, int(($x + 15.0) / 30.0 * $nx))}]
        set j [expr {min($ny - 1, int(($y + 10.0) / 20.0 * $ny))}]
        lset img [expr {$j * $nx + $i}] [expr {[lindex $img [expr {$j * $nx + $i}]] + $v / 2.0}]
        if {$v > $peak} { set peak $v; set peakAt [list $x $y] }
    }
}
close $csv

# PGM: plain-text grey image, brightest = peak, 3 decades of log scale, y up.
set pgm [open [file join $outdir top_view.pgm] w]
puts $pgm "P2\n$nx $ny\n255"
for {set j [expr {$ny - 1}]} {$j >= 0} {incr j -1} {
    set row {}
    for {set i 0} {$i < $nx} {incr i} {
        set v [lindex $img [expr {$j * $nx + $i}]]
        set g [expr {$v > 0 ? int(255 * max(0.0, 1.0 + log10($v / $peak) / 3.0)) : 0}]
        lappend row [expr {min(255, $g)}]
    }
    puts $pgm $row
}
close $pgm
set wrote {surface_exit.csv top_view.pgm}
if {[llength [info commands VTKSurfaceWriter]]} {
    VTKSurfaceWriter W
    W filename [file join $outdir skin.vtp]
    W mesh $M
    W addData "ExitFluence" $exit
    W write
    lappend wrote skin.vtp
    # The body seen from an oblique angle, exit fluence on a log scale (needs an X display).
    FluenceRenderer R
    R mesh $M
    R faceData $exit "Exit fluence (W/mm^2)"
    R surface
    R filename [file join $outdir skin.png]
    if {[catch {R write} why]} {
        puts "bli: skin.png not written: $why"
    } else {
        lappend wrote skin.png
    }
}

set exited [expr {[$ledger w_exit] / [$ledger w_launch]}]
puts [format "bli: %.1f%% of the emitted light leaves the body; total exit power %.3g W" \
    [expr {100.0 * $exited}] [expr {1e-9 * $exited}]]
puts [format "bli: brightest top-surface face at (%.1f, %.1f) mm, %.3g W/mm^2; tumour centre at (%s)" \
    {*}$peakAt $peak [join [lrange $tumourCentre 0 1] ", "]]
set f [open [file join $outdir summary.txt] w]
puts $f [dict create packets [k packetsDone] w_launch [$ledger w_launch] w_exit [$ledger w_exit] \
    w_absorb [$ledger w_absorb] w_specular [$ledger w_specular] w_die [$ledger w_die] \
    w_roulette [$ledger w_roulette] w_abnormal [$ledger w_abnormal] \
    peak $peak peak_at $peakAt tumour $tumourCentre unit [$exit unit]]
close $f
lappend wrote summary.txt
puts "bli: wrote [join [lmap w $wrote {file join $outdir $w}] {, }]"
