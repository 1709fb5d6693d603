# tests/integration/rock/warm-aof.tcl -- rock-warm-saves with appendonly
# yes: an AOF rewrite's base is a keyspace snapshot paired with a RocksDB
# checkpoint of the fork's instant, so a start after kill -9 loads the keys
# and hot values of the base, reuses the values on disk and replays the
# incr files on top: with appendfsync always every acknowledged write is
# there, exactly.
source tests/helpers/rock/util.tcl

proc rock_field {f {client r}} { return [dict get [$client rock report] $f] }
proc aof_checkpoints {} { return [glob -nocomplain -directory [rock_info_field rock_dir] checkpoint-*] }

# kill -9, then the start (failing at once when it is refused), loaded.
proc aof_restart {} {
    catch {exec kill -9 [srv 0 pid]}
    rock_restart_checked
    wait_for_condition 500 20 {
        [s loading] == 0
    } else {
        fail "the AOF never finished loading"
    }
}

proc aof_writes {pool round n} {
    for {set i 0} {$i < $n} {incr i} {
        set k [expr {int(rand() * 6000)}]
        switch [expr {int(rand() * 5)}] {
            0 { r del k:$k }
            1 { r hset h f[expr {$k % 3500}] r$round }
            2 { r incr c:[expr {$k % 50}] }
            default { r set k:$k [lindex $pool [expr {$k % 20}]]r$round }
        }
    }
}

proc aof_warm_starts {} { return [count_message_lines [srv 0 stdout] "warm start done in .* the AOF.s base"] }

start_server {tags {"rock external:skip"} overrides {rock-enabled yes rock-min-value-size 0 maxmemory-policy allkeys-lru rock-split-min-elements 1000 rock-warm-saves yes appendonly yes appendfsync always save {}}} {
    test {an AOF rewrite's base is a snapshot, and kill -9 at any moment restarts warm with every acknowledged write (8 rounds)} {
        set pool [rock_random_pool 20 2000]
        for {set i 0} {$i < 5000} {incr i} { r set k:$i [lindex $pool [expr {$i % 20}]]$i }
        rock_big_hash h 3000 $pool
        r config set maxmemory [expr {[s used_memory] / 3}]
        r config rewrite
        wait_for_condition 100 100 {
            [rock_field cold_keys] > 2500
        } else {
            fail "values never went to disk"
        }
        r bgrewriteaof
        wait_for_condition 200 50 {
            [rock_field warm_saves] == 1
        } else {
            fail "the rewrite's pair was not committed: [rock_field warm_save_failures] failures"
        }
        assert_equal 1 [llength [aof_checkpoints]]
        set outcomes {}
        for {set round 0} {$round < 8} {incr round} {
            aof_writes $pool $round 300
            set how [lindex {plain rewrite-killed rewrite-done} [expr {$round % 3}]]
            if {$how eq "rewrite-killed"} {
                # The child waits for its checkpoint behind a slowed writer
                # when the server dies: the manifest keeps the old base, the
                # incr files opened for the rewrite hold the writes after it.
                r config set rock-debug-write-delay 2000
                aof_writes $pool $round 100
                r bgrewriteaof
                aof_writes $pool $round 100
            } elseif {$how eq "rewrite-done"} {
                set saves [rock_field warm_saves]
                r bgrewriteaof
                aof_writes $pool $round 100
                wait_for_condition 200 50 {
                    [rock_field warm_saves] == $saves + 1
                } else {
                    fail "round $round: the rewrite's pair was not committed"
                }
                aof_writes $pool $round 100
            }
            set digest [r debug digest]
            set warm [aof_warm_starts]
            aof_restart
            lappend outcomes $how
            assert_equal $digest [r debug digest]
            assert_equal [expr {$warm + 1}] [aof_warm_starts]
            assert {[rock_field warm_values_reused] > 1000}
        }
        if {$::verbose} { puts "rounds: $outcomes" }
        # Each committed rewrite removed the checkpoint of the base before.
        wait_for_condition 50 100 {
            [llength [aof_checkpoints]] == 1
        } else {
            fail "checkpoints left: [aof_checkpoints]"
        }
    }

    test {a start with appendonly no leaves the AOF base's checkpoint alone, and the AOF loads warm after it} {
        set digest [r debug digest]
        set conf [srv 0 config_file]
        r config set appendonly no
        r config rewrite
        aof_restart
        # dump.rdb does not exist: an empty dataset, as stock starts; the
        # AOF and its base's checkpoint are left as they are.
        assert_equal 0 [r dbsize]
        assert_equal 1 [llength [aof_checkpoints]]
        set fd [open $conf r]
        set text [read $fd]
        close $fd
        regsub -line {^appendonly no$} $text {appendonly yes} text
        set fd [open $conf w]
        puts -nonewline $fd $text
        close $fd
        set warm [aof_warm_starts]
        aof_restart
        assert_equal [expr {$warm + 1}] [aof_warm_starts]
        assert_equal $digest [r debug digest]
    }

    test {an AOF base whose checkpoint is gone stops the start} {
        r set x 1
        set dir [lindex [r config get dir] 1]
        set rockdir [rock_info_field rock_dir]
        catch {exec kill -9 [srv 0 pid]}
        wait_for_condition 100 50 {
            [catch {r ping}]
        } else {
            fail "the server did not die"
        }
        foreach cp [glob -directory $rockdir checkpoint-*] { file delete -force $cp }
        lassign [rock_exec_server --dir $dir --rock-enabled yes --rock-dir $rockdir --appendonly yes --rock-warm-saves yes] rc out
        assert_equal 1 $rc
        assert_match "*the AOF's base * is a keyspace snapshot whose values are in the checkpoint*missing*" $out
        # The AOF is untouched by the refusal; without it, the server starts.
        assert {[file exists $dir/appendonlydir]}
        file delete -force $dir/appendonlydir
        restart_server 0 true false
        assert_equal 0 [r dbsize]
    }
}
