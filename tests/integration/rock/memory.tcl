# tests/integration/rock/memory.tcl -- the memory bound with values on disk:
# RocksDB's own memory counts against maxmemory, so the whole process (RSS),
# not just the Redis heap, stays near maxmemory while eleven times more data
# is written and then read and overwritten at random.
source tests/helpers/rock/util.tcl

proc rock_field {f} { return [dict get [r rock report] $f] }

proc rock_process_running {pid} {
    if {[catch {open /proc/$pid/stat} fd]} { return 0 }
    set stat [read $fd]
    close $fd
    # Field 3, after the parenthesised command name, is the state.
    set state [lindex [string range $stat [expr {[string last ")" $stat] + 2}] end] 0]
    return [expr {$state ne "Z" && $state ne "X"}]
}

# Run redis-benchmark against the server in the background and sample
# used_memory_rss every 100 ms until it ends; returns the largest sample.
proc rock_bench_peak_rss {args} {
    set cmd [list src/redis-benchmark -h [srv 0 host] -p [srv 0 port] --dbnum 9 -q {*}$args]
    set pid [exec {*}$cmd > /dev/null 2>@1 &]
    set peak 0
    # Until /proc says it is gone or a zombie (Tcl reaps it at its next exec).
    while {[rock_process_running $pid]} {
        set rss [s used_memory_rss]
        if {$rss > $peak} { set peak $rss }
        after 100
    }
    return $peak
}

start_server {tags {"rock external:skip"} overrides {rock-enabled yes maxmemory 64mb}} {
    set limit [expr {64 * 1024 * 1024}]
    set bound [expr {$limit * 1.15 + 64 * 1024 * 1024}]

    test {RocksDB's memory is sized from maxmemory and counted in ROCK REPORT} {
        # Block cache at most maxmemory/64 (and at most rock-block-cache-size).
        assert_equal [expr {$limit / 64}] [rock_field rocksdb_block_cache_capacity]
        r config set maxmemory 1gb
        wait_for_condition 250 20 {
            [rock_field rocksdb_block_cache_capacity] == 16*1024*1024
        } else { fail "block cache not resized with maxmemory" }
        r config set maxmemory 4gb
        wait_for_condition 250 20 {
            [rock_field rocksdb_block_cache_capacity] == 32*1024*1024
        } else { fail "block cache not capped by rock-block-cache-size" }
        r config set maxmemory 64mb
        wait_for_condition 250 20 {
            [rock_field rocksdb_block_cache_capacity] == $limit / 64
        } else { fail "block cache not resized back" }
    }

    test {Eleven times maxmemory written, then read and overwritten at random: RSS stays within maxmemory + 15% + 64 MB} {
        # About 175,000 distinct random keys of 4000-byte values (drawn from
        # 250,000): some 700 MB, eleven times maxmemory. (The keys alone
        # take ~16 MB of RAM: they never move.)
        r config resetstat
        set peak [rock_bench_peak_rss -t set -r 250000 -n 300000 -d 4000 -c 4 -P 16]
        set keys [r dbsize]
        assert {$keys > 160000}
        assert {[rock_field cold_percent] > 85}
        # No write was refused (-OOM) and no key deleted.
        assert_equal 0 [s total_error_replies]
        puts "    write phase: $keys keys, peak RSS [expr {$peak / 1048576}] MB (bound [expr {int($bound / 1048576)}] MB)"
        assert {$peak < $bound}
        set peak [rock_bench_peak_rss -t get,set -r 250000 -n 100000 -d 4000 -c 4 -P 4]
        puts "    read/overwrite phase: peak RSS [expr {$peak / 1048576}] MB, RocksDB [expr {[rock_field rocksdb_memory] / 1048576}] MB"
        assert {$peak < $bound}
        assert {[rock_field reads] > 50000}
        assert_equal 0 [s total_error_replies]
        assert_equal 0 [s evicted_keys]
    }
}

# No defrag runs while a forked child lives (it would copy pages the child
# shares), so pages held for freed slots when a child forks stay resident
# for its whole life. A fork no client asked for (here a replica's full
# sync) waits, at most 5 s, while the tier's defrag takes them back.
#
# rock_stage_held_sync: the master (srv -1, rock-defrag no) gets 60,000
# values of 600 bytes, then maxmemory cut to 24 MB: as in
# unit/rock/maxmemory.tcl, ~20 MB of pages are left held for freed slots. A
# BGSAVE child that lives until it is killed holds the replica's sync back.
# On return the child is still alive, the replica waits for its sync, and
# defrag is on: killing the child (SIGUSR1: not a failed save) lets the
# sync's fork ask. The sync's own child is slow enough (20 us a key, 2-5 s)
# to be sampled while it lives. Returns the master's log line count from
# before the replica asked.
proc rock_stage_held_sync {master replica master_host master_port} {
    $master debug populate 60000 f 600
    $master config set maxmemory 24mb
    wait_for_condition 200 50 {
        [s -1 used_memory] < 25 * 1024 * 1024 && [rock_info_field rock_pending_bytes $master] == 0
    } else {
        fail "eviction did not get under 24 MB: used_memory [s -1 used_memory]"
    }
    assert_morethan [rock_frag_bytes $master] [expr {16 * 1024 * 1024}]
    $master config set rdb-key-save-delay 100000
    $master bgsave
    wait_for_condition 100 50 {
        [s -1 rdb_bgsave_in_progress] == 1
    } else { fail "BGSAVE did not start" }
    set loglines [count_log_lines -1]
    $replica replicaof $master_host $master_port
    wait_for_log_messages -1 {"*Waiting for next BGSAVE for SYNC*"} $loglines 100 50
    $master config set rdb-key-save-delay 20
    $master config set rock-defrag yes
    return $loglines
}

# A master (rock-defrag no) and a replica for rock_stage_held_sync; `body`
# runs at the global level with master, master_host, master_port and
# replica set. Only with jemalloc (its figures are what is measured).
proc rock_held_sync_servers {body} {
    start_server {tags {"rock repl external:skip"} overrides {rock-enabled yes maxmemory-policy noeviction maxmemory 256mb rock-defrag no repl-diskless-sync-delay 0}} {
        if {[string match {*jemalloc*} [s mem_allocator]]} {
            start_server {overrides {rock-enabled yes}} {
                uplevel #0 [list set master [srv -1 client]]
                uplevel #0 [list set master_host [srv -1 host]]
                uplevel #0 [list set master_port [srv -1 port]]
                uplevel #0 [list set replica [srv 0 client]]
                uplevel #0 $body
            }
        }
    }
}

rock_held_sync_servers {
    test {A replica's full-sync fork waits while the tier's defrag takes back the pages values moved out left thinly used} {
        set loglines [rock_stage_held_sync $master $replica $master_host $master_port]
        exec kill -USR1 [get_child_pid -1]
        wait_for_log_messages -1 {"*Starting BGSAVE for SYNC*"} $loglines 200 50
        # While the sync's child lives no defrag runs: what is
        # fragmented now was so at the fork. The code before forked at
        # once, with the ~20 MB staged above; now the fork waits until
        # defrag has it under the allowance (8 MB here), or 5 s.
        set during [rock_frag_bytes $master]
        assert_equal 1 [s -1 rdb_bgsave_in_progress]
        assert_lessthan $during [expr {14 * 1024 * 1024}]
        verify_log_message -1 "*Holding a background fork*" $loglines
        assert_equal 1 [dict get [rock_report $master] fork_waits]
        $master config set rdb-key-save-delay 0
        wait_for_condition 300 100 {
            [s master_link_status] eq "up"
        } else { fail "the replica did not sync" }
        assert_equal 60000 [$replica dbsize]
        for {set i 0} {$i < 60000} {incr i 4999} {
            assert_equal [$master get f:$i] [$replica get f:$i]
        }
        assert_equal 0 [rock_info_field rock_errors $master]
    }
}

# A replica's sync that was held goes first: a save point due at the same
# time (serverCron asks ten times a second, replicationCron once) would
# otherwise fork the moment the hold lifts, and the replica, which can't
# join a child that is not for replication, would wait for all of it.
rock_held_sync_servers {
    test {A held full-sync fork goes before a save point that came due while it was held} {
        set loglines [rock_stage_held_sync $master $replica $master_host $master_port]
        # A change since the last good save (DEBUG POPULATE counts none),
        # and a save point of 1 change in 1 s: due as soon as the child is
        # gone.
        $master set changed 1
        $master config set save "1 1"
        assert_morethan [s -1 rdb_changes_since_last_save] 0
        exec kill -USR1 [get_child_pid -1]
        wait_for_log_messages -1 {"*Starting BGSAVE for SYNC*"} $loglines 200 50
        verify_log_message -1 "*Holding a background fork*" $loglines
        # The first fork after the killed child is the replica's.
        set lines [split [exec tail -n +[expr {$loglines + 1}] [srv -1 stdout]] "\n"]
        set sync [lsearch -glob $lines "*Starting BGSAVE for SYNC*"]
        set save [lsearch -glob $lines "*changes in * seconds. Saving*"]
        assert {$save == -1 || $save > $sync}
        $master config set rdb-key-save-delay 0
        wait_for_condition 300 100 {
            [s master_link_status] eq "up"
        } else { fail "the replica did not sync" }
        # And the dataset is saved (the sync's RDB, or the save point after
        # it).
        wait_for_condition 100 100 {
            [s -1 rdb_changes_since_last_save] == 0
        } else { fail "the save point did not save" }
        assert_equal ok [s -1 rdb_last_bgsave_status]
        assert_equal 60001 [$replica dbsize]
    }
}
