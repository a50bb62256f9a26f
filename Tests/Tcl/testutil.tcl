# SPDX-License-Identifier: GPL-3.0-or-later
# Helpers shared by the FullMonte Tcl test files (sourced by each; tcltest is loaded here).
package require tcltest 2
namespace import ::tcltest::*
package require FullMonte 1.0
configure -verbose {pass skip error}

# Output folder for this test file: $FM_TEST_OUT (set by ctest) or a temporary one.
proc testOutDir {name} {
    set base [expr {[info exists ::env(FM_TEST_OUT)] ? $::env(FM_TEST_OUT) : [file join /tmp fm-tcltest-[pid]]}]
    set d [file join $base $name]
    file delete -force $d
    file mkdir $d
    return $d
}

set ::fmExamples [expr {[info exists ::env(FM_EXAMPLES)] ? $::env(FM_EXAMPLES) :
    [file join [file dirname [file normalize [info script]]] .. .. Examples]}]

# Runs a Tcl script with the fullmonte launcher (this interpreter's executable) in a child
# process; returns {exitcode stdout stderr}.
proc fmRun {script args} {
    set out [file join [tcltest::temporaryDirectory] run-[pid]-[clock clicks].out]
    set err $out.err
    set code [catch {exec [info nameofexecutable] $script {*}$args >$out 2>$err}]
    set o [read [set f [open $out]]][close $f]
    set e [read [set f [open $err]]][close $f]
    file delete $out $err
    if {$code} { set code [expr {[lindex $::errorCode 0] eq "CHILDSTATUS" ? [lindex $::errorCode 2] : -1}] }
    list $code $o $e
}

proc readFile {path} {
    set f [open $path]
    set s [read $f]
    close $f
    return $s
}

# FullMonte text matrix "1 <dim>" then values -> list of values (index 0 included).
proc readMatrix {path} {
    set words [readFile $path]
    if {[lindex $words 0] != 1} { error "$path: not a 1-D FullMonte matrix" }
    set dim [lindex $words 1]
    set v [lrange $words 2 end]
    if {[llength $v] != $dim} { error "$path: header says $dim values, found [llength $v]" }
    return $v
}

# TextFileDoseHistogramWriter output -> list of histograms, each a list of {cmeasure cdf dose}.
proc readDVH {path} {
    set w [readFile $path]
    set n [lindex $w 0]
    set i 1
    set out {}
    for {set h 0} {$h < $n} {incr h} {
        set rows [lindex $w $i]
        incr i
        set hist {}
        for {set r 0} {$r < $rows} {incr r} {
            lappend hist [lrange $w $i [expr {$i + 2}]]
            incr i 3
        }
        lappend out $hist
    }
    if {$i != [llength $w]} { error "$path: [expr {[llength $w] - $i}] words after the last histogram" }
    return $out
}

# "" when every histogram has dose ascending, cdf and cmeasure non-increasing, cdf from 1 to >0.
proc dvhProblems {hists} {
    set p {}
    set k 0
    foreach h $hists {
        lassign [lindex $h 0] cm0 cdf0 d0
        if {abs($cdf0 - 1.0) > 1e-9} { lappend p "histogram $k starts at cdf $cdf0" }
        foreach row [lrange $h 1 end] {
            lassign $row cm cdf d
            if {$d < $d0 || $cdf > $cdf0 + 1e-12 || $cm > $cm0 * (1 + 1e-12)} {
                lappend p "histogram $k not monotone at dose $d"
                break
            }
            lassign $row cm0 cdf0 d0
        }
        incr k
    }
    return $p
}

# Values that are not finite numbers (NaN allowed where nanOK).
proc nonFinite {values {nanOK 0}} {
    set bad 0
    foreach v $values {
        if {$nanOK && [string tolower $v] in {nan -nan}} continue
        if {![string is double -strict $v] || [string tolower $v] in {nan -nan inf -inf}} { incr bad }
    }
    return $bad
}

# |launch + roulette gained - (absorb + exit + specular + roulette lost + abnormal)| / launch,
# from a dict or a ConservationCounts object.
proc ledgerImbalance {d} {
    if {![catch {$d w_launch}]} {
        set d [dict create w_launch [$d w_launch] w_roulette [$d w_roulette] w_absorb [$d w_absorb] \
            w_exit [$d w_exit] w_specular [$d w_specular] w_die [$d w_die] w_abnormal [$d w_abnormal]]
    }
    dict with d {
        expr {abs($w_launch + $w_roulette - ($w_absorb + $w_exit + $w_specular + $w_die + $w_abnormal)) / $w_launch}
    }
}

proc dist {a b} {
    expr {sqrt(([lindex $a 0]-[lindex $b 0])**2 + ([lindex $a 1]-[lindex $b 1])**2 + ([lindex $a 2]-[lindex $b 2])**2)}
}
# Distance from p to segment a-b.
proc distToSegment {p a b} {
    set d [lmap x $b y $a {expr {$x - $y}}]
    set L2 [expr {[lindex $d 0]**2 + [lindex $d 1]**2 + [lindex $d 2]**2}]
    set t [expr {(([lindex $p 0]-[lindex $a 0])*[lindex $d 0] + ([lindex $p 1]-[lindex $a 1])*[lindex $d 1] +
                  ([lindex $p 2]-[lindex $a 2])*[lindex $d 2]) / $L2}]
    set t [expr {max(0.0, min(1.0, $t))}]
    dist $p [lmap x $a y $d {expr {$x + $t * $y}}]
}

# Exit status for ctest: non-zero when any test failed.
proc finish {} {
    set failed $::tcltest::numTests(Failed)
    cleanupTests
    exit [expr {$failed > 0}]
}

# A small model every API test can use: 10 x 10 x 10 mm in 2 mm cubes (750 tetras), a
# sphere region 2 in the middle, point source at the centre.
proc smallModel {{prefix sm}} {
    BoxMeshBuilder ${prefix}B
    ${prefix}B lower "-5 -5 -5"
    ${prefix}B upper "5 5 5"
    ${prefix}B divisions 5 5 5
    ${prefix}B addSphere 2 "0 0 0" 2.5
    ${prefix}B update
    set M [${prefix}B mesh]
    Material ${prefix}air
    Material ${prefix}t1 0.1 5 0.8 1.37
    Material ${prefix}t2 0.2 8 0.9 1.4
    MaterialSet ${prefix}MS
    ${prefix}MS exterior ${prefix}air
    ${prefix}MS append ${prefix}t1
    ${prefix}MS append ${prefix}t2
    Point ${prefix}P
    ${prefix}P position "0.1 0.2 0.3"
    return $M
}
