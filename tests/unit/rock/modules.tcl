# tests/unit/rock/modules.tcl -- values of a module data type move to disk
# and back like the built-in types, behind one shared sentinel per module
# type (TYPE still names the module type, without a read). Uses the upstream
# test modules tests/modules/datatype.so and fork.so (built by tests/run.sh).
source tests/helpers/rock/util.tcl

set testmodule [file normalize tests/modules/datatype.so]

proc rock_field {f} { return [dict get [r rock report] $f] }

start_server {tags {"rock modules"} overrides {rock-enabled yes rock-min-value-size 0}} {
    r module load $testmodule

    test {A module value moves to disk and reads back equal} {
        r datatype.set dt 100 stringval
        assert_equal 1 [r rock evict dt]
        assert_equal cold [r rock status dt]
        assert_equal 1 [r rock diskkeys]
        r config resetstat
        assert_equal test___dt [r type dt]
        assert_equal 0 [rock_field reads]
        assert_equal {100 stringval} [r datatype.get dt]
        assert_equal 1 [rock_field loads]
        assert_equal hot-clean [r rock status dt]
    }

    test {Modifying a paged-in module value makes it dirty; the new value survives re-eviction} {
        r datatype.set dt 7 newer
        assert_equal hot [r rock status dt]
        assert_equal 1 [r rock evict dt]
        assert_equal {7 newer} [r datatype.get dt]
        # A module command that replaces values in place (RM_ModuleTypeReplaceValue).
        r datatype.set other 8 other
        r rock evict dt other
        assert_equal OK [r datatype.swap dt other]
        assert_equal {8 other} [r datatype.get dt]
        assert_equal {7 newer} [r datatype.get other]
        r rock evict dt other
        assert_equal {8 other} [r datatype.get dt]
        assert_equal {7 newer} [r datatype.get other]
    }

    test {COPY, DUMP/RESTORE, DEL and SAVE/DEBUG RELOAD of cold module values} {
        r flushall
        r datatype.set src 1234 AAA
        r rock evict src
        r copy src dst
        assert_equal {1234 AAA/src/dst} [r datatype.get dst]
        r rock evict src
        set payload [r dump src]
        r restore restored 0 $payload
        assert_equal {1234 AAA} [r datatype.get restored]
        r rock evict src dst restored
        assert_equal 3 [rock_field cold_keys]
        r debug reload
        assert_equal {1234 AAA} [r datatype.get src]
        assert_equal {1234 AAA/src/dst} [r datatype.get dst]
        r rock evict src
        r del src
        assert_equal 0 [r exists src]
        assert_equal [expr {[rock_field cold_keys] + [rock_field hot_clean_keys]}] [r rock diskkeys]
    }

    test {Module values are chosen by maxmemory eviction too} {
        r flushall
        for {set i 0} {$i < 2000} {incr i} {
            r datatype.set m$i $i [string repeat x 200]
        }
        r config set maxmemory [expr {[s used_memory] - 200000}]
        r ping
        assert_morethan [rock_field cold_keys] 100
        r config set maxmemory 0
        for {set i 0} {$i < 2000} {incr i 37} {
            assert_equal [list $i [string repeat x 200]] [r datatype.get m$i]
        }
    }
}

# RM_Scan hands the module a key handle opened on the dict's value, without a
# lookup: a cold value must be paged in first, never passed as the marker.
# Uses tests/modules/scan.so (built by tests/run.sh).
start_server {tags {"rock modules"} overrides {rock-enabled yes rock-min-value-size 0}} {
    r module load [file normalize tests/modules/scan.so]

    test {RM_Scan's callback sees cold string values, paged in} {
        r flushall
        set want {}
        for {set i 0} {$i < 50} {incr i} {
            set v [string repeat [format %04d $i] 50]
            r set s$i $v
            lappend want [list s$i $v]
        }
        r rock evict {*}[r keys s*]
        assert_equal 50 [rock_field cold_keys]
        r config resetstat
        assert_equal [lsort $want] [lsort [r scan.scan_strings]]
        assert_equal 50 [rock_field sync_loads]
        assert_equal 0 [rock_field cold_keys]
    }
}

# A module's fork child (RM_Fork) can't read cold values (it would see them
# as missing): while values are on disk the fork is refused, with a log line
# saying why. Uses tests/modules/fork.so.
start_server {tags {"rock modules"} overrides {rock-enabled yes rock-min-value-size 0}} {
    r module load [file normalize tests/modules/fork.so]

    test {RM_Fork: allowed with every value in RAM, refused while values are on disk} {
        r set k [string repeat v 100]
        assert_morethan [r fork.create 3 1000] 0
        wait_for_condition 100 50 { [r fork.exitcode] != -1 } else { fail "module child did not exit" }
        assert_equal 3 [r fork.exitcode]
        r rock evict k
        assert_error {*Fork failed*} {r fork.create 3 1000}
        verify_log_message 0 "*refusing a module's fork (RM_Fork): 1 values are on disk*" 0
        # Back in RAM: allowed again.
        assert_equal [string repeat v 100] [r get k]
        assert_morethan [r fork.create 4 1000] 0
        wait_for_condition 100 50 { [r fork.exitcode] != -1 } else { fail "module child did not exit" }
        assert_equal 4 [r fork.exitcode]
    }
}
