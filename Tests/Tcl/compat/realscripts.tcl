# SPDX-License-Identifier: GPL-3.0-or-later
# Helpers for real_scripts.test: find FullMonte's and FullMonteWeb's repositories, build the
# substitute data their scripts expect (the Colin27, mouse and head-and-neck meshes are not
# public), and run a script unchanged in a child `fullmonte` with packet counts capped.

# A repository: $env(var) if set, else the default; a work tree or a bare git directory. "" when
# neither holds `probe` (a path in the repository).
proc realRepo {var default commit probe} {
    set dirs [expr {[info exists ::env($var)] ? [list $::env($var)] : [list $default]}]
    foreach d $dirs {
        if {$d eq ""} continue
        if {[file exists [file join $d $probe]]} { return [list tree $d] }
        if {[file isdirectory $d] && ![catch {exec git --git-dir=$d cat-file -e $commit:$probe}]} {
            return [list git $d $commit]
        }
    }
    return ""
}

# The text of `path` in a repository found by realRepo.
proc realFile {repo path} {
    lassign $repo kind dir commit
    if {$kind eq "tree"} { return [readFile [file join $dir $path]] }
    return [exec git --git-dir=$dir show $commit:$path]
}

proc writeText {path text} {
    file mkdir [file dirname $path]
    set f [open $path w]
    puts -nonewline $f $text
    close $f
}

# A box mesh (regions: 1 background, 2 a box, 3 a sphere) written as TIM-OS .mesh/.opt at
# prefix.mesh / prefix.opt; returns its tetra count.
proc writeTimosSubstitute {prefix lower upper divisions box2 sphere3} {
    file mkdir [file dirname $prefix]
    set B [BoxMeshBuilder]
    $B lower $lower
    $B upper $upper
    $B divisions {*}$divisions
    $B addBox 2 {*}$box2
    $B addSphere 3 {*}$sphere3
    $B update
    set M [$B mesh]
    set W [TIMOSMeshWriter]
    $W filename $prefix.mesh
    $W mesh $M
    $W write
    # TIM-OS optical file: 1 (per region), 3 regions (mu_a mu_s g n, 1/mm), matched exterior n.
    writeText $prefix.opt "1\n3\n0.02 2.0 0.9 1.37\n0.05 3.0 0.9 1.37\n0.1 2.5 0.8 1.4\n1\n1.0\n"
    set n [$M tetraCount]
    rename $W ""
    rename $B ""
    return $n
}

# Runs `script` (text) unchanged from `dir` with argv `args`: a wrapper caps every kernel's
# packetCount at $cap (the scripts ask for 1e6-1e7) and then sources the script. Returns
# {exitcode stdout stderr}.
proc runReal {name script dir cap args} {
    file mkdir $dir
    writeText [file join $dir $name] $script
    set wrapper [file join $dir $name.wrapper.tcl]
    writeText $wrapper [string map [list @CAP@ $cap @SCRIPT@ [list [file join $dir $name]] @ARGV@ [list $args]] {
        set ::argv @ARGV@
        set ::argc [llength $::argv]
        set ::argv0 @SCRIPT@
        package require FullMonte
        namespace eval ::realscripts {}
        # Each kernel object `k` keeps its command (object handles must name live objects); an
        # execution trace lowers `packetCount N` to the cap after the script's call.
        proc ::realscripts::cap {cmd code result op} {
            if {[lindex $cmd 1] eq "packetCount" && [llength $cmd] == 3 && [lindex $cmd 2] > @CAP@} {
                [lindex $cmd 0] packetCount @CAP@
            }
        }
        foreach cls {TetraVolumeKernel TetraSurfaceKernel TetraSVKernel TetraInternalKernel
                     TetraTraceKernel MCMLKernel} {
            if {[info commands ::$cls] eq ""} continue
            rename ::$cls ::realscripts::$cls
            proc ::$cls {args} [string map [list CLS $cls] {
                set obj [uplevel 1 [list ::realscripts::CLS {*}$args]]
                # `Class name` returns a pointer handle besides making `name`: trace the name.
                set name [expr {[llength $args] ? [lindex $args 0] : $obj}]
                set full [uplevel 1 [list namespace which -command $name]]
                trace add execution $full leave ::realscripts::cap
                return $obj
            }]
        }
        set ::realscripts::n 0
        source $::argv0
    }]
    set here [pwd]
    cd $dir
    try {
        return [fmRun $wrapper]
    } finally {
        cd $here
    }
}

# Cell array names and number of cells of a .vtk/.vtu grid, read back by VTK's reader.
proc gridArrays {path} {
    set r [vtkUnstructuredGridReader]
    $r SetFileName $path
    $r Update
    set g [$r GetOutput]
    set cd [$g GetCellData]
    set names {}
    for {set i 0} {$i < [$cd GetNumberOfArrays]} {incr i} { lappend names [$cd GetArrayName $i] }
    set n [$g GetNumberOfCells]
    $r Delete
    list $n [lsort $names]
}

# Sum, minimum and count of non-finite values of a cell array of a grid file.
proc gridArrayStats {path name} {
    set r [vtkUnstructuredGridReader]
    $r SetFileName $path
    $r Update
    set a [[[$r GetOutput] GetCellData] GetArray $name]
    set s 0.0
    set lo Inf
    set bad 0
    for {set i 0} {$i < [$a GetNumberOfTuples]} {incr i} {
        set v [$a GetValue $i]
        if {![string is double -strict $v] || $v != $v || abs($v) == Inf} { incr bad; continue }
        set s [expr {$s + $v}]
        set lo [expr {min($lo, $v)}]
    }
    $r Delete
    list $s $lo $bad
}
