# SPDX-License-Identifier: GPL-3.0-or-later
# PDT planning from Tcl: eight candidate cylindrical diffusers in a tumour between two organs at
# risk; PlanOptimizer chooses their energies by linear programming (Planning/, docs/PLANNING.md).
#
#   fullmonte Examples/pdt_plan.tcl ?outdir? ?packetsPerDiffuser?
#
# Light is linear in source energy, so each diffuser is simulated once (a BatchRunner: one run per
# diffuser, the mesh packed once) and any plan is a weighted sum of those runs. Two runners with
# different seeds are two independent batches: the plan's dose metrics then carry standard errors.
# The same plan from a plan file: fullmonte-plan Examples/pdt_plan.json -o DIR.
# Writes into outdir (default ./pdt_plan-out, replaced): plan.json, sources.csv, metrics.csv,
# constraints.csv, dvh.csv, dose.csv, dvh.png, slice_*.png and (VTK builds) dose.vtu.
package require FullMonte 1.0
if {![llength [info commands PlanOptimizer]]} {
    puts stderr "pdt_plan: this FullMonte was built without the planner (FM_USE_PLANNING: needs nlohmann-json, cairo and CLP or GLPK)"
    exit 1
}

set outdir [expr {$argc > 0 ? [lindex $argv 0] : "pdt_plan-out"}]
set packets [expr {$argc > 1 ? [lindex $argv 1] : 6000}]

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
$M unitDimension mm

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

# ---- Eight candidate 10 mm diffusers parallel to the urethra, on two rings around it.
set diffusers {}
foreach {x y} {-3.5 -3.5  3.5 -3.5  -3.5 3.5  3.5 3.5  0 -4.5  0 4.5  -4.5 0  4.5 0} {
    set c [Cylinder]
    $c endpoint 0 "$x $y -4"
    $c endpoint 1 "$x $y 6"
    $c radius 0.5
    lappend diffusers $c
}

# ---- Two independent batches of one run per diffuser (fluence per joule emitted).
set runners {}
foreach seed {1 2} {
    set R [BatchRunner]
    $R geometry $M
    $R materials MS
    foreach c $diffusers { $R source $c }
    $R packetCount $packets
    $R randSeed $seed
    $R runSync
    puts [format "pdt_plan: batch %d: %d diffusers x %d packets in %.1f s" $seed [llength $diffusers] $packets [$R seconds]]
    lappend runners $R
}

# ---- The prescription (doses in J/cm^2; the engine's J/mm^2 x 100): the tumour at 40 J/cm^2 on
# at least 90% of its volume (a goal, met by weighting), urethra D10 <= 80 and rectum maximum
# <= 20 (hard limits), each diffuser at most 0.5 W for 600 s, 2 W in all.
PlanOptimizer P
foreach R $runners { P batch $R }
foreach {r name} {1 tissue 2 tumour 3 rectum 4 urethra} { P regionName $r $name }
for {set i 0} {$i < [llength $diffusers]} {incr i} { P sourceName $i D[expr {$i + 1}] }
P prescription [string map [list @SOURCES@ [join [lrepeat [llength $diffusers] {{"max_power_W": 0.5}}] ", "]] {{
  "treatment_time_s": 600,
  "targets": [{"region": "tumour", "threshold_J_cm2": 40, "V100_goal_percent": 90}],
  "organs_at_risk": [
    {"region": "urethra", "threshold_J_cm2": 50, "max_doses": [{"D_percent": 10, "max_J_cm2": 80}]},
    {"region": "rectum", "threshold_J_cm2": 10, "max_doses": [{"max_J_cm2": 20}]}],
  "total_max_power_W": 2.0,
  "sources": [@SOURCES@]
}}]
puts "pdt_plan: [P solve]"
puts -nonewline [P report]
if {[string match optimal* [P status]]} {
    puts [format "pdt_plan: tumour D90 %.1f +- %.1f J/cm^2, V100 %.1f +- %.1f %%" \
        [P metric tumour D90] [P metricError tumour D90] [P metric tumour V100] [P metricError tumour V100]]
} else {
    foreach c [P conflicts] { puts "  conflict: [lindex $c 0] (needs [lindex $c 1] [lindex $c 2])" }
}
P write $outdir
puts "pdt_plan: wrote $outdir (plan.json, *.csv, dvh.png, slice_*.png)"
