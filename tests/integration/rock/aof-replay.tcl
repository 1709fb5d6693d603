# tests/integration/rock/aof-replay.tcl -- replaying an AOF while values move
# to disk keeps every change, including those that do not count as a
# modification upstream.
#
# Loading an AOF calls each command's implementation directly, not through
# call(), and stream consumer-group commands (XGROUP, XCLAIM, XACK, which is
# how XREADGROUP is propagated) change a value without signalModifiedKey().
# A cold stream such a command pages in must not stay "clean" (its disk copy
# valid): eviction under maxmemory during the replay would drop it and the
# old copy, without the change, would be read afterwards.
source tests/helpers/rock/util.tcl

# XINFO STREAM FULL without the consumers' seen-time (a replay sets it to
# the time of the replay, on stock too). DEBUG DIGEST does not cover
# consumer groups: this is the comparison that matters here.
proc aof_replay_xinfo {key} {
    regsub -all {seen-time [0-9]+} [r xinfo stream $key full] {seen-time *} info
    return $info
}

start_server {tags {"rock external:skip"} overrides {rock-enabled yes rock-min-value-size 0 appendonly yes aof-use-rdb-preamble no maxmemory-policy allkeys-lru}} {
    test {AOF replay under maxmemory keeps consumer-group changes of cold streams} {
        set n 150
        set base [s used_memory]
        set payload [string repeat x 1000]
        for {set i 0} {$i < $n} {incr i} {
            for {set j 1} {$j <= 10} {incr j} { r xadd s$i $j-0 f $payload }
        }
        # Each stream's consumer-group state comes later in the AOF than its
        # entries, so the replay meets it after the stream went to disk.
        for {set i 0} {$i < $n} {incr i} {
            r xgroup create s$i g 0
            r xreadgroup group g c1 count 6 streams s$i >
            r xack s$i g 1-0 2-0 3-0
            r xclaim s$i g c2 0 4-0
            r xgroup setid s$i g 5-0
        }
        set want {}
        for {set i 0} {$i < $n} {incr i} { lappend want [aof_replay_xinfo s$i] }
        set digest [r debug digest]

        # About a fifth of the streams fit: the replay moves the others to
        # disk as it goes, between their entries and their group changes.
        r config set maxmemory [expr {$base + ($n * 10 * 1100) / 5}]
        r config resetstat
        r debug loadaof
        assert {[rock_info_field rock_cold_keys] > $n / 2}
        assert_equal $digest [r debug digest]
        for {set i 0} {$i < $n} {incr i} {
            assert_equal [lindex $want $i] [aof_replay_xinfo s$i]
        }
        r config set maxmemory 0
    } {OK} {needs:debug}
}
