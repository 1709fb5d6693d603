# tests/integration/rock/replica-swapdb.tcl -- a redis-rock replica with
# values on disk (cold, and hot-clean) does a full sync with
# repl-diskless-load swapdb: the loaded dataset replaces the old one in one
# swap, and the tier must forget everything it knew about the old one (no
# stale "clean" copy ever served, no cold count left behind).
source tests/helpers/rock/util.tcl

start_server {tags {"rock repl external:skip"} overrides {rock-enabled no repl-diskless-sync yes
        repl-diskless-sync-delay 0}} {
    set master [srv 0 client]
    set master_host [srv 0 host]
    set master_port [srv 0 port]
    set mval "master-[string repeat m 300]"
    $master set k $mval
    $master set only-on-master x

    start_server {overrides {rock-enabled yes repl-diskless-load swapdb rock-min-value-size 0}} {
        set replica [srv 0 client]

        test {Replica with cold and hot-clean values does a swapdb full sync} {
            $replica set k "replica-[string repeat r 300]"
            assert_equal 1 [$replica rock evict k]
            $replica get k
            assert_equal hot-clean [$replica rock status k]
            $replica set gone [string repeat g 300]
            assert_equal 1 [$replica rock evict gone]

            $replica replicaof $master_host $master_port
            wait_for_condition 100 100 {
                [string match "*master_link_status:up*" [$replica info replication]]
            } else {
                fail "replica didn't sync"
            }
            assert_equal $mval [$replica get k]
            assert_equal 0 [$replica exists gone]
            assert_equal x [$replica get only-on-master]
            set rep [$replica rock report]
            assert_equal 0 [dict get $rep cold_keys]
            assert_equal 0 [dict get $rep hot_clean_keys]
        }

        test {After the swap, evicting a key writes the new value (no stale clean copy)} {
            assert_equal hot [$replica rock status k]
            assert_equal 1 [$replica rock evict k]
            assert_equal $mval [$replica get k]
            assert_equal 1 [$replica rock diskkeys]
        }

        test {The replica keeps following the master} {
            $master set k "after-sync"
            wait_for_condition 100 50 {
                [$replica get k] eq "after-sync"
            } else {
                fail "write not replicated"
            }
        }
    }
}
