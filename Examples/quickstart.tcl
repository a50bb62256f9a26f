# SPDX-License-Identifier: GPL-3.0-or-later
# Quickstart: interstitial photodynamic therapy (PDT) of a tumour, start to finish.
#
#   fullmonte Examples/quickstart.tcl ?outdir? ?packets?
#
# Builds its own model (no input files needed): a 40 x 40 x 30 mm block of muscle with a 2 mm
# skin layer on every face and a 7 mm-radius tumour in the middle, treated by two 10 mm
# cylindrical diffusers delivering 100 J together. Writes into outdir (default ./quickstart-out):
#   fluence.vtu   fluence per tetra for ParaView (when FullMonte was built with VTK)
#   fluence.png   a slice through the diffusers in J/cm^2 with isodose lines (the planner's
#                 renderer; without it VTK's, which needs an X display, e.g. xvfb-run -a)
#   model.mesh + fluence.txt   the same data as TIM-OS mesh + FullMonte text matrix (always)
#   dvh.txt       dose-volume histograms per region (FullMonte's text format)
#   summary.txt   the numbers printed at the end, as a Tcl dict
package require FullMonte 1.0

set outdir [expr {$argc > 0 ? [lindex $argv 0] : "quickstart-out"}]
set packets [expr {$argc > 1 ? [lindex $argv 1] : 30000}]
file mkdir $outdir

# ---- 1. Geometry: ~2 mm cubes, 6 tetras each (39,690 tetras). Later shapes paint over earlier.
BoxMeshBuilder B
B lower "-20 -20 -15"
B upper "20 20 15"
B divisions 21 21 15      ;# odd: the y = 0 slice runs through cell centres
B region 1                ;# muscle (background)
B addSphere 2 "0 0 0" 7   ;# tumour
B addShell 3 2.0          ;# skin: within 2 mm of any face
B update
set M [B mesh]
$M unitDimension mm
set regionName {0 exterior 1 muscle 2 tumour 3 skin}

# ---- 2. Optical properties near 690 nm (mu_a and mu_s in 1/mm; region i = material i).
proc material {name mua mus g n} {
    Material $name
    $name absorptionCoeff $mua
    $name scatteringCoeff $mus
    $name anisotropy $g
    $name refractiveIndex $n
    $name unitDimension mm
}
material air    0     0    0    1.0
material muscle 0.05  8.0  0.9  1.37
material tumour 0.08  10.0 0.9  1.37
material skin   0.03  18.0 0.85 1.40
MaterialSet MS
MS exterior air
MS append muscle
MS append tumour
MS append skin

# ---- 3. Sources: two cylindrical diffusers through the tumour, equal power.
set diffusers {CY1 {-3 0 -5} {-3 0 5} CY2 {3 0 -5} {3 0 5}}
Composite S
foreach {name a b} $diffusers {
    Cylinder $name
    $name endpoint 0 $a
    $name endpoint 1 $b
    $name radius 0.5
    $name emitVolume false  ;# from the surface, isotropically
    $name power 1
    S add $name
}

# ---- 4. Run: the packets together carry 100 J.
TetraVolumeKernel k
k geometry $M
k materials MS
k source S
k packetCount $packets
k isEnergy_or_Power J
k energyPowerValue 100
puts "quickstart: [$M tetraCount] tetras, $packets packets on [k threadCount] threads..."
k runSync
set ODC [k results]
set ledger [$ODC getByName ConservationCounts]

# ---- 5. Fluence (J/mm^2) from absorbed energy: E / (V mu_a), scaled to 100 J.
EnergyToFluence EF
EF kernel k
EF data [$ODC getByName VolumeEnergy]
EF outputFluence
EF update
set phi [EF result]

# ---- 6. Outputs.
set wrote {}
TIMOSMeshWriter MW
MW filename [file join $outdir model.mesh]
MW mesh $M
MW write
TextFileMatrixWriter TW
TW filename [file join $outdir fluence.txt]
TW source $phi
TW write
lappend wrote model.mesh fluence.txt
if {[llength [info commands VTKMeshWriter]]} {
    VTKMeshWriter W
    W filename [file join $outdir fluence.vtu]
    W mesh $M
    W addData "Fluence" $phi
    W addHeaderComment "FullMonte quickstart: fluence in J/mm^2 for 100 J"
    W write
    lappend wrote fluence.vtu
}
# The picture: the planner's slice renderer where built (headless: mm axes, orientation labels,
# colour bar in J/cm^2, isodose lines, region names, diffusers); else VTK's, which needs an X
# display (on a headless machine: xvfb-run -a fullmonte ...). Without either the rest is written.
if {[llength [info commands DoseSlicePicture]]} {
    DoseSlicePicture R
    R dose $phi 100             ;# J/mm^2 -> J/cm^2
    dict for {r name} $regionName { if {$r > 0} { R regionName $r $name } }
    foreach {name a b} $diffusers { R source $name $name }
    R plane y 0                 ;# the y = 0 plane holds both diffusers
    R isodose "10 40 100"
    R scale log
    R title "Fluence for 100 J (J/cm^2)"
    R write [file join $outdir fluence.png]
    lappend wrote fluence.png
} elseif {[llength [info commands FluenceRenderer]]} {
    FluenceRenderer R
    R mesh $M
    R data $phi "Fluence (J/mm^2)"
    R slice "0 0 0" "0 1 0"   ;# the y = 0 plane holds both diffusers
    R filename [file join $outdir fluence.png]
    if {[catch {R write} why]} {
        puts "quickstart: fluence.png not written: $why"
    } else {
        lappend wrote fluence.png
    }
}

DoseVolumeHistogramGenerator DVH
DVH mesh $M
DVH dose $phi
DVH update
set DHC [DVH result]
TextFileDoseHistogramWriter DW
DW filename [file join $outdir dvh.txt]
DW collection $DHC
DW write
lappend wrote dvh.txt

# ---- 7. Report (fluence in J/cm^2 = 100 x J/mm^2, the unit PDT doses are quoted in).
set summary [dict create packets [k packetsDone] seconds [k seconds] tetras [$M tetraCount] \
    w_launch [$ledger w_launch] w_absorb [$ledger w_absorb] w_exit [$ledger w_exit] \
    w_specular [$ledger w_specular] w_die [$ledger w_die] w_roulette [$ledger w_roulette] \
    w_abnormal [$ledger w_abnormal] unit [$phi unit] diffusers $diffusers]
puts [format "quickstart: %d packets in %.2f s; absorbed %.1f%%, exited %.1f%% of the launched weight" \
    [k packetsDone] [k seconds] [expr {100.0*[$ledger w_absorb]/[$ledger w_launch]}] \
    [expr {100.0*[$ledger w_exit]/[$ledger w_launch]}]]
puts "fluence (J/cm^2) at points:"
foreach {what p} {"1 mm beside diffuser 1" {-1.5 0 0} "tumour centre" {0 0 0} \
                  "tumour edge" {7 0 0} "muscle, 12 mm out" {12 0 0} "skin above" {0 0 14}} {
    set v [$phi valueAt $p]
    puts [format "  %-24s (%s) %10.3f" $what $p [expr {100.0*$v}]]
    dict set summary at [list $p] $v
}
puts "dose-volume histogram per region (J/cm^2):"
puts [format "  %-8s %10s %10s %10s %10s" region D90 D50 mean max]
for {set i 0} {$i < [$DHC count]} {incr i} {
    set h [$DHC get $i]
    set r [$h region]
    set row [list [$h doseAtFraction 0.9] [$h doseAtFraction 0.5] [$h meanDose] [$h maxDose]]
    puts [format "  %-8s %10.3f %10.3f %10.3f %10.3f" [dict get $regionName $r] \
        {*}[lmap x $row {expr {100.0*$x}}]]
    dict set summary dvh $r $row
}
dict set summary files $wrote
set f [open [file join $outdir summary.txt] w]
puts $f $summary
close $f
lappend wrote summary.txt
puts "quickstart: wrote [join [lmap w $wrote {file join $outdir $w}] {, }]"
