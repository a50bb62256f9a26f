# SPDX-License-Identifier: GPL-3.0-or-later
# Bioluminescence in a mouse, from a segmentation: the Digimouse atlas (a labelled NIfTI image,
# 21 tissues, 0.2 mm voxels) is meshed with ImageMesher, each tissue gets its optical properties
# from digimouse_tissues.json, and light made in the kidneys (1 nW) is followed to the skin.
#
#   fullmonte Examples/mouse_bli.tcl ?outdir? ?packets? ?size? ?cpu|cuda?
#
# size (mm) scales the mesh: cell size = size, facet size = 0.8 size, facet distance = 0.2 size;
# 0 (the default) keeps the mesher's defaults for 0.2 mm voxels (0.5, 0.4, 0.1 mm).
# The atlas is read from $FM_SHARED_DATA_DIR/anatomy/digimouse, else ../shared/data/anatomy/
# digimouse beside the repository; without it (or in a build without the mesher) the script
# says so and exits 0. Writes into outdir (default ./mouse-bli-out):
#   mouse.mesh      the mesh (TIM-OS), regions = atlas labels
#   mesh_report.txt tetra count, each tissue's mesh volume next to its voxel volume, quality
#   fluence.vtu     fluence rate per tetra, W/mm^2 for 1 nW (VTK builds)
#   fluence.png     a slice through the kidneys, log scale (VTK build and an X display)
#   skin.png        exit fluence rate on the skin, the camera's view (the same)
#   summary.txt     the numbers printed at the end, as a Tcl dict
package require FullMonte 1.0

set outdir [expr {$argc > 0 ? [lindex $argv 0] : "mouse-bli-out"}]
set packets [expr {$argc > 1 ? [lindex $argv 1] : 100000}]
set size [expr {$argc > 2 ? [lindex $argv 2] : 0}]
set device [expr {$argc > 3 ? [lindex $argv 3] : "cpu"}]   ;# cuda: the same run on the GPU
if {$device ni {cpu cuda}} { error "mouse_bli: device '$device' is not cpu or cuda" }

set here [file dirname [file normalize [info script]]]
set dataDir [expr {[info exists env(FM_SHARED_DATA_DIR)] ? $env(FM_SHARED_DATA_DIR)
                   : [file join $here .. .. shared data]}]
set atlas [file join $dataDir anatomy digimouse digimouse_labels.nii.gz]
set tissues [file join $dataDir anatomy digimouse digimouse_tissues.json]
if {![file exists $atlas] || ![file exists $tissues]} {
    puts "mouse_bli: skipped: the Digimouse atlas is not at $atlas (set FM_SHARED_DATA_DIR)"
    exit 0
}
if {![llength [info commands ImageMesher]]} {
    puts "mouse_bli: skipped: this FullMonte build has no mesher (CGAL was not found)"
    exit 0
}
file mkdir $outdir

# ---- 1. Mesh the atlas: regions = labels, label 0 (background) is the outside.
ImageMesher IM
IM filename $atlas
IM cellSize $size
IM facetSize [expr {0.8 * $size}]
IM facetDistance [expr {0.2 * $size}]
IM seed 1
IM progress 1
IM update
set M [IM mesh]
set f [open [file join $outdir mesh_report.txt] w]
puts -nonewline $f [IM report]
close $f
puts "mouse_bli: [$M tetraCount] tetras, [expr {[$M regionCount] - 1}] tissues"

# ---- 2. Optical properties per label (1/mm) from the atlas's JSON (tcllib's json).
package require json
set f [open $tissues]
set table [json::json2dict [read $f]]
close $f
set byLabel [dict create]
foreach t [dict get $table tissues] { dict set byLabel [dict get $t label] $t }
MaterialSet MS
for {set label 0} {$label < [$M regionCount]} {incr label} {
    if {![dict exists $byLabel $label]} { error "mouse_bli: label $label has no entry in $tissues" }
    set t [dict get $byLabel $label]
    set m [Material mat$label]
    $m absorptionCoeff [dict get $t mua_per_mm]
    $m scatteringCoeff [dict get $t mus_per_mm]
    $m anisotropy [expr {$label == 0 ? 0.0 : [dict get $t g]}]
    $m refractiveIndex [dict get $t n]
    if {$label == 0} { MS exterior $m } else { MS append $m }
}

# ---- 3. Source: the kidneys' cells emit 1 nW in all (a Volume source over label 19).
set kidneys 19
Volume BL
BL region $kidneys

# ---- 4. Run: volume and surface scoring in one kernel (CPU threads or the GPU, same physics).
[expr {$device eq "cuda" ? "TetraCUDASVKernel" : "TetraSVKernel"}] k
k geometry $M
k materials MS
k source BL
k packetCount $packets
k isEnergy_or_Power W
k energyPowerValue 1e-9
puts "mouse_bli: $packets packets on [expr {$device eq "cuda" ? "the GPU" : "[k threadCount] threads"}]..."
k runSync
set ODC [k results]
set ledger [$ODC getByName ConservationCounts]

EnergyToFluence EF
EF kernel k
EF data [$ODC getByName VolumeEnergy]
EF outputFluence
EF update
set phi [EF result]             ;# W/mm^2 per tetra
EnergyToFluence ES
ES kernel k
ES data [$ODC getByName SurfaceExitEnergy]
ES outputFluence
ES update
set exit [ES result]            ;# W/mm^2 per boundary face

# The kidneys' centre (volume-weighted tetra centroids), for the slice.
set c {0 0 0}
set v 0.0
for {set t 1} {$t <= [$M tetraCount]} {incr t} {
    if {[$M region $t] != $kidneys} continue
    set w [$M volume $t]
    set c [lmap a $c b [$M tetraCentroid $t] {expr {$a + $w * $b}}]
    set v [expr {$v + $w}]
}
set kidneyCentre [lmap a $c {expr {$a / $v}}]

# ---- 5. Outputs.
set wrote {mesh_report.txt mouse.mesh}
TIMOSMeshWriter MW
MW filename [file join $outdir mouse.mesh]
MW mesh $M
MW write
if {[llength [info commands VTKMeshWriter]]} {
    VTKMeshWriter W
    W filename [file join $outdir fluence.vtu]
    W mesh $M
    W addData "Fluence rate (W/mm^2)" $phi
    W addHeaderComment "FullMonte mouse_bli: Digimouse, kidneys emitting 1 nW"
    W write
    lappend wrote fluence.vtu
}
# The pictures need an X display for OpenGL (headless: xvfb-run -a fullmonte ...).
if {[llength [info commands FluenceRenderer]]} {
    FluenceRenderer R
    R mesh $M
    R data $phi "Fluence rate (W/mm^2)"
    R slice [join $kidneyCentre] "0 0 1"   ;# the horizontal plane through the kidneys
    R filename [file join $outdir fluence.png]
    FluenceRenderer S
    S mesh $M
    S faceData $exit "Exit fluence rate (W/mm^2)"
    S surface
    S filename [file join $outdir skin.png]
    foreach {r name} {R fluence.png S skin.png} {
        if {[catch {$r write} why]} { puts "mouse_bli: $name not written: $why" } else { lappend wrote $name }
    }
}

set exited [expr {[$ledger w_exit] / [$ledger w_launch]}]
set absorbed [expr {[$ledger w_absorb] / [$ledger w_launch]}]
puts [format "mouse_bli: kidneys at (%.1f, %.1f, %.1f) mm; %.1f%% of the light absorbed, %.1f%% leaves through the skin" \
    {*}$kidneyCentre [expr {100 * $absorbed}] [expr {100 * $exited}]]
set f [open [file join $outdir summary.txt] w]
puts $f [dict create tetras [$M tetraCount] packets [k packetsDone] w_launch [$ledger w_launch] \
    w_absorb [$ledger w_absorb] w_exit [$ledger w_exit] w_die [$ledger w_die] \
    w_roulette [$ledger w_roulette] w_abnormal [$ledger w_abnormal] kidney_centre $kidneyCentre \
    kidney_volume_mm3 [$M regionVolume $kidneys] kidney_voxel_volume_mm3 [IM voxelVolume $kidneys]]
close $f
lappend wrote summary.txt
puts "mouse_bli: wrote [join [lmap w $wrote {file join $outdir $w}] {, }]"
