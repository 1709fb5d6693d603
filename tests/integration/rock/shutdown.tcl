# tests/integration/rock/shutdown.tcl -- SHUTDOWN and SIGTERM stop the server
# whatever the tier is doing: clients waiting for disk reads, values waiting
# for the writer, a script that will never end, an initial AOF rewrite whose
# child finished while that script ran.
#
# rock-debug-read-delay and rock-debug-write-delay hold every read and every
# write batch in its thread for 20 seconds, far longer than an exit may take:
# the tier's threads must give up their work when told to stop, and writes
# still queued are dropped (RocksDB is wiped at the next start; the dataset
# is in the RDB/AOF the shutdown wrote).
source tests/helpers/rock/util.tcl

proc rock_field {f} { return [dict get [r rock report] $f] }

set ::shutdown_delay 20000

# Clients waiting for reads of cold values, and values pending in the
# writer, both held for `delay` ms. Returns the waiting clients.
proc shutdown_stage_tier {delay} {
    r flushall
    r config set maxmemory 0
    for {set i 0} {$i < 300} {incr i} {
        r set p$i [string repeat [format %06d $i] 200]
    }
    for {set i 0} {$i < 5} {incr i} {
        r set c$i [string repeat [format c%05d $i] 200]
    }
    r rock evict c0 c1 c2 c3 c4
    r config set rock-debug-read-delay $delay
    r config set rock-debug-write-delay $delay
    set clients {}
    for {set i 0} {$i < 3} {incr i} {
        set rd [redis_deferring_client]
        $rd get c$i
        lappend clients $rd
    }
    rock_wait_blocked 3
    # Values move out through maxmemory and wait in the writer.
    r config set maxmemory [expr {[s used_memory] - 150000}]
    r ping
    assert {[rock_field pending_writes] > 0}
    assert_equal 3 [rock_info_field rock_waiting_clients]
    return $clients
}

# Start a script that writes, then loops forever (SCRIPT KILL can't stop
# it); returns once the server answers -BUSY.
proc shutdown_busy_script {} {
    r config set lua-time-limit 10
    set rs [redis_deferring_client]
    $rs eval {redis.call('set',KEYS[1],'y'); while true do end} 1 busy-key
    wait_for_condition 100 50 {
        [catch {r ping} e] == 1 && [string match {BUSY*} $e]
    } else {
        fail "the script never became busy"
    }
    return $rs
}

# The server process is gone within `ms` and no longer accepts connections.
proc shutdown_wait_exit {pid ms what} {
    wait_for_condition [expr {$ms / 50}] 50 {
        ![process_is_alive $pid]
    } else {
        fail "server still running [expr {$ms / 1000}] s after $what"
    }
    catch {redis_deferring_client} e
    assert_match {*connection refused*} $e
}

start_server {tags {"rock external:skip"} overrides {rock-enabled yes rock-min-value-size 0 maxmemory-policy allkeys-lru}} {
    test {SHUTDOWN NOSAVE stops a busy script's server at once while reads and writes are held in the tier's threads} {
        set clients [shutdown_stage_tier $::shutdown_delay]
        shutdown_busy_script
        set pid [srv 0 pid]
        catch {r shutdown nosave}
        # Reads and write batches are held for 20 s: the exit must not wait
        # for them (it took 20 s per write batch when shutdown committed the
        # queue first, and a reader's delay could not be cut short).
        shutdown_wait_exit $pid 5000 "SHUTDOWN NOSAVE"
        verify_log_message 0 "*rock: shutdown with * RocksDB writes not committed*" 0
        verify_log_message 0 "*rock: RocksDB closed*" 0
        foreach rd $clients { catch {$rd close} }
    }
}

start_server {tags {"rock external:skip"} overrides {rock-enabled yes rock-min-value-size 0 maxmemory-policy allkeys-lru}} {
    test {SIGTERM stops the server promptly with reads and writes held, and the RDB it saves holds every value} {
        set clients [shutdown_stage_tier $::shutdown_delay]
        set digest [r debug digest]
        set pid [srv 0 pid]
        # The test config has save points: SIGTERM saves an RDB, reading the
        # pending values from the pending buffer and the cold ones from
        # RocksDB, then drops the queued writes.
        exec kill -TERM $pid
        shutdown_wait_exit $pid 5000 SIGTERM
        verify_log_message 0 "*DB saved on disk*" 0
        verify_log_message 0 "*rock: shutdown with * RocksDB writes not committed*" 0
        foreach rd $clients { catch {$rd close} }

        restart_server 0 true false
        assert_equal $digest [r debug digest]
        for {set i 0} {$i < 5} {incr i} {
            assert_equal [string repeat [format c%05d $i] 200] [r get c$i]
        }
        for {set i 0} {$i < 300} {incr i} {
            assert_equal [string repeat [format %06d $i] 200] [r get p$i]
        }
    }
}

start_server {tags {"rock external:skip"} overrides {rock-enabled yes rock-min-value-size 0 maxmemory-policy allkeys-lru}} {
    test {SHUTDOWN NOSAVE stops a busy script's server once the initial AOF rewrite's child has finished} {
        # Upstream refuses to exit while the first AOF is being written
        # ("Writing initial AOF, can't exit"). Its child is reaped by
        # serverCron, which does not run during a busy script: a rewrite
        # that ends while the script runs used to count as unfinished
        # forever, and SHUTDOWN NOSAVE failed.
        # No delays in the tier here: this is upstream's own check at work.
        r flushall
        for {set i 0} {$i < 300} {incr i} {
            r set p$i [string repeat [format %06d $i] 200]
        }
        r rock evict p0 p1 p2 p3 p4
        set dir [lindex [r config get dir] 1]
        set from [count_log_lines 0]
        # About 0.6 s for the child's 300 keys: it ends during the script.
        r config set rdb-key-save-delay 2000
        r config set appendonly yes
        shutdown_busy_script
        set started [wait_for_log_messages 0 {"*Background append only file rewriting started by pid*"} $from 100 50]
        regexp {by pid ([0-9]+)} [lindex $started 0] -> child
        wait_for_condition 200 50 {
            ![process_is_alive $child]
        } else {
            fail "the AOF rewrite child never finished"
        }
        set pid [srv 0 pid]
        catch {r shutdown nosave}
        shutdown_wait_exit $pid 5000 "SHUTDOWN NOSAVE"
        verify_log_message 0 "*Background AOF rewrite finished successfully*" $from
        assert {[file exists $dir/appendonlydir/appendonly.aof.manifest]}
    }
}
