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
    }
}
