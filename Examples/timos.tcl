# SPDX-License-Identifier: GPL-3.0-or-later
# TIM-OS benchmark cube_5med (Shen & Wang 2010), driven the way FullMonte 2018 scripts did it:
# TIM-OS readers -> TetraVolumeKernel (async, polled) -> EnergyToFluence -> writers.
#
#   fullmonte Examples/timos.tcl ?outdir? ?packets? ?datadir?
#
# The data is not part of FullMonte: it is looked for in datadir, in ::FullMonte::datadir (set at
# build time) and in ../shared/data beside the checkout. Without it the script says so and exits 0.
# Writes into outdir (default ./timos-out): fluence.txt (FullMonte text matrix, per tetra),
# fluence.vtu (when built with VTK) and summary.txt.
package require FullMonte 1.0

set outdir [expr {$argc > 0 ? [lindex $argv 0] : "timos-out"}]
set packets [expr {$argc > 1 ? [lindex $argv 1] : 50000}]
set candidates [list [file join $::FullMonte::datadir timos cube_5med] \
    [file join [file dirname [file normalize [info script]]] .. .. shared data timos cube_5med]]
if {$argc > 2} { set candidates [linsert $candidates 0 [file join [lindex $argv 2] timos cube_5med]] }
set dir ""
foreach d $candidates {
    if {[file exists [file join $d cube_5med.mesh]]} { set dir $d; break }
}
if {$dir eq ""} {
    puts "timos: cube_5med not found (looked in [join $candidates {, }]); nothing to do"
    exit 0
}
file mkdir $outdir

TIMOSMeshReader R
R filename [file join $dir cube_5med.mesh]
R read
set M [R mesh]

TIMOSMaterialReader MR
MR filename [file join $dir cube_5med.opt]
MR read
set opt [MR materials]

TIMOSSourceReader SR
SR filename [file join $dir cube_5med.source]
SR read
set src [SR source]

TetraVolumeKernel k
k geometry $M
k materials $opt
k source $src
k packetCount $packets
k randSeed 1
puts "timos: cube_5med, [$M tetraCount] tetras, $packets packets"
k startAsync
set shown ""
while {![k done]} {
    after 500
    set p [format "%5.1f%%" [expr {100.0 * [k progressFraction]}]]
    if {$p ne $shown} {
        puts -nonewline "\rtimos: $p"
        flush stdout
        set shown $p
    }
}
k finishAsync
puts ""

set ODC [k results]
EnergyToFluence EF
EF mesh $M
EF materials $opt
EF source [$ODC getByIndex 2]
EF update
set phi [EF result]   ;# 2018 form: E/(V mu_a) in packet weight per mm^2, not normalised

TextFileMatrixWriter TW
TW filename [file join $outdir fluence.txt]
TW source $phi
TW write
if {[llength [info commands VTKMeshWriter]]} {
    VTKMeshWriter W
    W filename [file join $outdir fluence.vtu]
    W mesh $M
    W addData "Fluence" $phi
    W write
}

set C [$ODC getByName ConservationCounts]
set absorbed [expr {[$C w_absorb] / [$C w_launch]}]
puts [format "timos: absorbed %.3f%% of the launched weight (MMC at 1e8 packets: 76.735%%), %.1f s" \
    [expr {100.0 * $absorbed}] [k seconds]]
set f [open [file join $outdir summary.txt] w]
puts $f [dict create packets [k packetsDone] absorbed $absorbed w_launch [$C w_launch] \
    w_absorb [$C w_absorb] w_exit [$C w_exit] w_specular [$C w_specular] w_die [$C w_die] \
    w_roulette [$C w_roulette] w_abnormal [$C w_abnormal] seconds [k seconds] data $dir]
close $f
puts "timos: wrote [file join $outdir fluence.txt], [file join $outdir summary.txt]"
