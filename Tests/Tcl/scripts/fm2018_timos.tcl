# SPDX-License-Identifier: GPL-3.0-or-later
# A FullMonte 2018-style script (workflow A in fullmonte-tcl-api.md): written only against that
# document, and run unchanged by fullmonte_compat.test. Do not "fix" it to our extensions.
#   fullmonte fm2018_timos.tcl mesh opt source outprefix
package require FullMonte 1.0

set meshfn [lindex $argv 0]
set optfn [lindex $argv 1]
set sourcefn [lindex $argv 2]
set outprefix [lindex $argv 3]

TIMOSMeshReader R
R filename $meshfn
R read
set M [R mesh]

TIMOSMaterialReader MR
MR filename $optfn
MR read
set opt [MR materials]

TIMOSSourceReader SR
SR filename $sourcefn
SR read
set src [SR source]

TetraVolumeKernel k
k geometry $M
k materials $opt
k source $src
k packetCount 20000
k threadCount $FullMonte::defaultThreadCount
k rouletteWMin 1e-5
k roulettePrWin 0.1
k maxSteps 100000
k maxHits 100000

for { set i 1 } { $i <= 2 } { incr i } {
    k randSeed $i
    k startAsync
    while { ![k done] } {
        puts -nonewline "Progress [format %6.2f [expr 100.0*[k progressFraction]]]%\r"
        flush stdout
        after 50
    }
    k finishAsync
    puts ""

    set ODC [k results]
    set E [$ODC getByIndex 2]

    EnergyToFluence EF
    EF mesh $M
    EF materials $opt
    EF source $E
    EF update

    set C [$ODC getByName "ConservationCounts"]
    set N [$ODC getByName "EventCounts"]
    puts "trial $i launch [$C w_launch] absorb [$C w_absorb] exit [$C w_exit] die [$C w_die] roulette [$C w_roulette] abnormal [$C w_abnormal] Nlaunch [$N Nlaunch] Nabsorb [$N Nabsorb]"

    TextFileMatrixWriter W
    W filename "$outprefix.$i.phi_v.txt"
    W source [EF result]
    W write
}

exit
