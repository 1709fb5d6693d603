# tests/integration/rock/stock-replica.tcl -- a redis-rock master with most
# values on disk feeds a *stock* Redis 7.0.15 replica (built from the same
# tarball without our patches: `make stock`, bin/stock/redis-server), by
# disk-based and by diskless full sync: what goes over the wire is standard
# RDB and replication stream. tests/run.sh sets ROCK_STOCK_SERVER; without it
# the test fails (it is part of the default run).
source tests/helpers/rock/util.tcl

proc rock_field {f} { return [dict get [r rock report] $f] }

proc rock_start_stock {port dir} {
    if {![info exists ::env(ROCK_STOCK_SERVER)] || ![file executable $::env(ROCK_STOCK_SERVER)]} {
        fail "ROCK_STOCK_SERVER must name a stock redis-server 7.0.15 (make stock)"
    }
    file mkdir $dir
    exec $::env(ROCK_STOCK_SERVER) --port $port --dir $dir --save "" --daemonize yes \
        --logfile $dir/stock.log --pidfile $dir/stock.pid --enable-debug-command yes
    wait_for_condition 100 50 {
        ![catch {set c [redis 127.0.0.1 $port]}]
    } else { fail "stock server did not start" }
    return $c
}

start_server {tags {"rock repl external:skip needs:debug"} overrides {rock-enabled yes rock-min-value-size 0}} {
    set master_port [srv 0 port]
    foreach diskless {no yes} {
        test "A stock 7.0.15 replica syncs from redis-rock with every value cold (repl-diskless-sync $diskless)" {
            r flushall
            r config set repl-diskless-sync $diskless
            r config set repl-diskless-sync-delay 0
            r debug populate 20000 k 200
            for {set i 0} {$i < 50} {incr i} {
                r rpush list:$i {*}[lrepeat 20 "item-$i"]
                r hset hash:$i a $i b [string repeat b 100]
                r zadd zset:$i 1 a 2 [string repeat z 100]
                r xadd stream:$i 1-0 f $i
                r pexpire hash:$i 9000000
            }
            r config set rock-debug-evict-all yes
            r ping
            r config set rock-debug-evict-all no
            assert_equal [r dbsize] [rock_field cold_keys]
            set port [find_available_port $::baseport $::portcount]
            set dir [file normalize [tmpdir stock-replica]]
            set stock [rock_start_stock $port $dir]
            assert_match "*redis_version:7.0.15*" [$stock info server]
            $stock replicaof 127.0.0.1 $master_port
            wait_for_condition 200 50 {
                [string match "*master_link_status:up*" [$stock info replication]]
            } else { fail "stock replica did not sync" }
            # Writes after the sync go down the replication stream.
            r append k:1 "-after"
            r del list:3
            wait_for_ofs_sync r $stock
            $stock select 9
            assert_equal [r dbsize] [$stock dbsize]
            assert_equal [r debug digest] [$stock debug digest]
            catch {$stock shutdown nosave}
            $stock close
        }
    }
}
