# PDT planning: four cylindrical diffusers in a tumour between two organs at risk (OAR), and a
# simple loop that sets the diffusers' energies until the tumour D90 reaches the prescription
# while each OAR stays under its limit.
#
#   fullmonte Examples/pdt_plan.tcl ?outdir? ?packetsPerDiffuser?
#
# Light is linear in source power, so each diffuser is simulated once at 1 J; any plan is then a
# weighted sum of those four fluence maps (WeightedMapSum), evaluated in the Tcl loop in
# milliseconds. Writes into outdir (default ./pdt_plan-out): dvh.txt (final DVH per region),
# plan.txt (energies and dose metrics per iteration), dose.vtu or dose.txt + model.mesh.
package require FullMonte 1.0

set outdir [expr {$argc > 0 ? [lindex $argv 0] : "pdt_plan-out"}]
set packets [expr {$argc > 1 ? [lindex $argv 1] : 15000}]
file mkdir $outdir

# ---- Prescription (fluence in J/cm^2; FullMonte works in J/mm^2 = 100 J/cm^2).
set target 40.0                        ;# tumour D90
set limits {3 {rectum 0.02 12.0} 4 {urethra 0.10 60.0}}  ;# region {name fraction limit}: D(fraction) <= limit
proc perCm2 {x} { expr {100.0 * $x} }

# ---- Model: tissue block, tumour (2), rectum below it (3), urethra through it (4).
BoxMeshBuilder B
B lower "-20 -20 -15"
B upper "20 20 15"
B divisions 20 20 15
B region 1
B addSphere 2 "0 0 1" 6.5
B addCylinder 3 "-20 -11 0" "20 -11 0" 3.0
B addCylinder 4 "0 0 -15" "0 0 15" 1.5
B update
set M [B mesh]
set names {1 tissue 2 tumour 3 rectum 4 urethra}

MaterialSet MS
foreach {name mua mus g n} {air 0 0 0 1.0  tissue 0.04 9.0 0.9 1.37  tumour 0.06 10.0 0.9 1.37
                            rectum 0.05 9.0 0.9 1.37  urethra 0.04 8.0 0.9 1.37} {
    Material $name
    $name absorptionCoeff $mua
    $name scatteringCoeff $mus
    $name anisotropy $g
    $name refractiveIndex $n
    if {$name eq "air"} { MS exterior $name } else { MS append $name }
}

# ---- Four 10 mm diffusers parallel to the urethra, 3.5 mm from it.
set diffusers {}
foreach {x y} {-3.5 -3.5  3.5 -3.5  -3.5 3.5  3.5 3.5} {
    set c [Cylinder]
    $c endpoint 0 "$x $y -4"
    $c endpoint 1 "$x $y 6"
    $c radius 0.5
    lappend diffusers $c
}

# ---- One run per diffuser at 1 J: fluence per joule delivered by that diffuser.
TetraVolumeKernel k
k geometry $M
k materials MS
k packetCount $packets
k isEnergy_or_Power J
k energyPowerValue 1.0
set unitMaps {}
set i 0
foreach c $diffusers {
    k source $c
    k randSeed [incr i]
    k runSync
    EnergyToFluence EF
    EF kernel k
    EF data [[k results] getByName VolumeEnergy]
    EF outputFluence
    EF update
    lappend unitMaps [EF result]
    rename EF ""
    puts [format "pdt_plan: diffuser %d simulated (%d packets, %.1f s)" $i [k packetsDone] [k seconds]]
}

# Dose of a plan (energies in J, one per diffuser) and its DVH collection.
proc planDose {energies} {
    WeightedMapSum W
    foreach m $::unitMaps e $energies { W add $m $e }
    W update
    set d [W result]
    rename W ""
    return $d
}
proc planDVH {dose} {
    DoseVolumeHistogramGenerator G
    G mesh $::M
    G dose $dose
    G update
    set c [G result]
    rename G ""
    return $c
}
# {D90 {region dose ...}} in J/cm^2 for the current plan.
proc metrics {dhc} {
    set oar {}
    dict for {r spec} $::limits {
        lassign $spec name f limit
        dict set oar $r [perCm2 [[$dhc forRegion $r] doseAtFraction $f]]
    }
    list [perCm2 [[$dhc forRegion 2] doseAtFraction 0.9]] $oar
}

# Metrics of a plan; the temporary dose map and histograms are deleted (each is a Tcl command
# owning its data until renamed away).
proc evaluate {energies} {
    set d [planDose $energies]
    set c [planDVH $d]
    set m [metrics $c]
    rename $c ""
    rename $d ""
    return $m
}

# How much diffuser i currently gives OAR r per unit of what it gives the tumour.
proc harm {i e r} {
    set m [lindex $::unitMaps $i]
    expr {$e * [$m regionMean $r] / [$m regionMean 2]}
}

# ---- The loop: scale to the prescription; if an OAR is over its limit, cut by 15% the diffuser
# that now gives it the most (relative to its tumour dose), and repeat.
set energies [lrepeat [llength $diffusers] 1.0]
set log [open [file join $outdir plan.txt] w]
puts $log "# iteration energies(J) tumourD90 OAR-doses (J/cm^2)"
set status "iteration limit reached"
for {set it 1} {$it <= 40} {incr it} {
    lassign [evaluate $energies] d90 oar
    set energies [lmap e $energies {expr {$e * $target / $d90}}]
    lassign [evaluate $energies] d90 oar
    set worst ""
    set worstRatio 1.0
    dict for {r dose} $oar {
        set ratio [expr {$dose / [lindex [dict get $limits $r] 2]}]
        if {$ratio > $worstRatio} { set worst $r; set worstRatio $ratio }
    }
    puts $log [list $it [lmap e $energies {format %.3f $e}] [format %.2f $d90] $oar]
    puts [format "pdt_plan: iteration %2d  energies %s J  tumour D90 %.1f  %s" $it \
        [join [lmap e $energies {format %.2f $e}] " "] $d90 \
        [join [lmap {r d} $oar {format "%s %.1f" [dict get $names $r] $d}] "  "]]
    if {$worst eq ""} { set status "prescription met, all OAR under their limits"; break }
    set hs {}
    for {set i 0} {$i < [llength $energies]} {incr i} { lappend hs [harm $i [lindex $energies $i] $worst] }
    set cut [lsearch -exact $hs [tcl::mathfunc::max {*}$hs]]
    lset energies $cut [expr {[lindex $energies $cut] * 0.85}]
}
close $log

# ---- Final plan: DVH table, dose map, report.
set dose [planDose $energies]
set dhc [planDVH $dose]
TextFileDoseHistogramWriter DW
DW filename [file join $outdir dvh.txt]
DW collection $dhc
DW write
TIMOSMeshWriter MW
MW filename [file join $outdir model.mesh]
MW mesh $M
MW write
TextFileMatrixWriter TW
TW filename [file join $outdir dose.txt]
TW source $dose
TW write
if {[llength [info commands VTKMeshWriter]]} {
    VTKMeshWriter W
    W filename [file join $outdir dose.vtu]
    W mesh $M
    W addData "Fluence" $dose
    W write
}
puts "pdt_plan: $status"
puts [format "  %-8s %8s %8s %8s %8s" region D90 D50 D10 max]
for {set i 0} {$i < [$dhc count]} {incr i} {
    set h [$dhc get $i]
    puts [format "  %-8s %8.1f %8.1f %8.1f %8.1f" [dict get $names [$h region]] \
        [perCm2 [$h doseAtFraction 0.9]] [perCm2 [$h doseAtFraction 0.5]] \
        [perCm2 [$h doseAtFraction 0.1]] [perCm2 [$h maxDose]]]
}
set f [open [file join $outdir summary.txt] w]
puts $f [dict create status $status energies $energies target $target d90 $d90 oar $oar \
    limits $limits diffusers [lmap c $diffusers {list [$c endpoint 0] [$c endpoint 1]}]]
close $f
puts "pdt_plan: wrote $outdir/{plan.txt, dvh.txt, dose.txt, model.mesh, summary.txt}"
