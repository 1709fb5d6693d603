# tests/integration/rock/replication.tcl -- a replica's master link while
# the master client waits for a disk read.
#
# On a redis-rock replica the master client pages cold values in like any
# client. If the link drops while it waits, the client must still be cached
# for a partial resync (a stock replica caches any master client that is not
# blocked; a blocked one would cost a full resync), the command it waited
# for is discarded with the rest of its query buffer and resent by PSYNC,
# and the resurrected client must go on parsing the stream.
source tests/helpers/rock/util.tcl

start_server {tags {"rock repl external:skip needs:debug"} overrides {rock-enabled yes rock-min-value-size 0}} {
    set master [srv 0 client]
    set master_host [srv 0 host]
    set master_port [srv 0 port]
    start_server {overrides {rock-enabled yes rock-min-value-size 0}} {
        set replica [srv 0 client]

        test {A replica's master link dropped while the master client waits for a disk read resumes with PSYNC} {
            $master config set repl-backlog-size 10mb
            $replica replicaof $master_host $master_port
            wait_for_condition 100 50 {
                [string match {*master_link_status:up*} [$replica info replication]]
            } else {
                fail "replica did not connect"
            }
            for {set i 0} {$i < 20} {incr i} { $master set counter:$i 100 }
            wait_for_ofs_sync $master $replica
            set full_before [status $master sync_full]
            set partial_before [status $master sync_partial_ok]

            foreach round {1 2 3} {
                # Every value cold on the replica; its reads held for a while.
                $replica rock evict {*}[$replica keys counter:*]
                assert_equal 20 [dict get [$replica rock report] cold_keys]
                $replica config set rock-debug-read-delay 500
                for {set i 0} {$i < 20} {incr i} { $master incr counter:$i }
                wait_for_condition 300 10 {
                    [dict get [$replica rock report] waiting_clients] == 1
                } else {
                    fail "the replica's master client did not wait for a read"
                }
                $replica client kill type master
                $replica config set rock-debug-read-delay 0
                wait_for_ofs_sync $master $replica
                for {set i 0} {$i < 20} {incr i} {
                    assert_equal [expr {100 + $round}] [$replica get counter:$i]
                }
            }
            # No full resync: the cached master was resurrected each time.
            assert_equal $full_before [status $master sync_full]
            assert_equal [expr {$partial_before + 3}] [status $master sync_partial_ok]
            # The stream goes on being applied after the last resync.
            $master set after done
            wait_for_ofs_sync $master $replica
            assert_equal done [$replica get after]
            assert_equal [$master debug digest] [$replica debug digest]
        }

        # While the master client waits for a disk read, the replica stops
        # reading its link, as for any client: the stream waits in the
        # kernel and in the master's output buffer for the replica (which
        # has a limit), not in the replica's query buffer (which has none
        # for its master).
        test {A replica's master link is not read while its client waits for a disk read} {
            $replica replicaof $master_host $master_port
            wait_for_condition 100 50 {
                [string match {*master_link_status:up*} [$replica info replication]]
            } else {
                fail "replica did not connect"
            }
            $master set cold [string repeat c 1000]
            wait_for_ofs_sync $master $replica
            assert_equal 1 [$replica rock evict cold]
            $replica config set rock-debug-read-delay 3000
            # The APPEND needs the cold value: the master client waits 3 s.
            $master append cold +1
            wait_for_condition 300 10 {
                [dict get [$replica rock report] waiting_clients] == 1
            } else {
                fail "the replica's master client did not wait for a read"
            }
            # 16 MB more of the stream meanwhile.
            set big [string repeat b 1048576]
            for {set i 0} {$i < 16} {incr i} { $master set big$i $big }
            set master_offset [status $master master_repl_offset]
            # The master has sent it (into the socket, or still holds it in
            # its output buffer for the replica), and the replica holds at
            # most what it had read when its client began to wait.
            assert_equal 1 [dict get [$replica rock report] waiting_clients]
            set qbuf [lindex [regexp -inline {qbuf=([0-9]+)} [$replica client list type master]] 1]
            assert_lessthan $qbuf 1048576
            $replica config set rock-debug-read-delay 0
            wait_for_ofs_sync $master $replica
            assert_equal $master_offset [status $replica master_repl_offset]
            assert_equal [string repeat c 1000]+1 [$replica get cold]
            assert_equal [$master debug digest] [$replica debug digest]
        }
    }
}

# A replica that can't read a value a command of its master needs (a damaged
# SST file here) must not skip the command: it drops the link and resyncs in
# full, which also gives it a fresh RocksDB.

start_server {tags {"rock repl external:skip needs:debug"} overrides {rock-enabled yes rock-min-value-size 0}} {
    set master [srv 0 client]
    set master_host [srv 0 host]
    set master_port [srv 0 port]
    start_server {overrides {rock-enabled yes rock-min-value-size 0 rock-compression none rock-block-cache-size 1mb}} {
        set replica [srv 0 client]

        test {A replica that can't read a value its master's command needs resyncs in full instead of skipping it} {
            $replica replicaof $master_host $master_port
            wait_for_condition 100 50 {
                [string match {*master_link_status:up*} [$replica info replication]]
            } else {
                fail "replica did not connect"
            }
            set n 20000
            # Incompressible: RDB payloads are LZF-compressed.
            set payload [lindex [rock_random_pool 1 1000] 0]
            set rd [redis_deferring_client -1]
            for {set i 0} {$i < $n} {incr i} { $rd set k$i $i:$payload }
            for {set i 0} {$i < $n} {incr i} { $rd read }
            $rd close
            wait_for_ofs_sync $master $replica
            # Every value on the replica's disk, in SST files, then damaged.
            for {set i 0} {$i < $n} {incr i 500} {
                set keys {}
                for {set j $i} {$j < $i + 500} {incr j} { lappend keys k$j }
                $replica rock evict {*}$keys
            }
            set rockdir [dict get [$replica rock report] dir]
            assert_equal $n [dict get [$replica rock report] cold_keys]
            wait_for_condition 100 100 {
                [dict get [$replica rock report] rocksdb_disk_bytes] > 8000000
            } else {
                fail "no SST file was written: [$replica rock report]"
            }
            assert_morethan [rock_damage_ssts $rockdir] 0
            set full_before [status $master sync_full]
            # APPENDs that need the old values: some of them hit damage.
            for {set i 0} {$i < $n} {incr i 97} { $master append k$i +more }
            $master set after done
            wait_for_condition 200 100 {
                [dict get [$replica rock report] master_resyncs] > 0 &&
                [string match {*master_link_status:up*} [$replica info replication]] &&
                [$replica get after] eq {done}
            } else {
                fail "the replica did not resync"
            }
            wait_for_ofs_sync $master $replica
            assert_morethan [status $master sync_full] $full_before
            verify_log_message 0 "*dropping the link for a full resync rather than skip it*" 0
            assert_equal [$master debug digest] [$replica debug digest]
            for {set i 0} {$i < $n} {incr i 97} {
                assert_equal "$i:$payload+more" [$replica get k$i]
            }
        }
    }
}

