# tests/unit/rock/floor.tcl -- the maxmemory floor (ROCK REPORT
# maxmemory_floor): the smallest maxmemory at which eviction can always make
# room by moving values. Just above it no key is deleted; under it the policy
# deletes keys, and the server says so (rock_eviction nothing-movable, the
# nothing_movable_deletes counter, log warnings), without sampling the
# keyspace for values that are not there.
source tests/helpers/rock/util.tcl

proc rock_field {f} { return [dict get [r rock report] $f] }

# 10 clients of random GETs over the keys key:000000000000.. (the test
# harness's database 9). Each client's buffers (some 40 KB) count against
# maxmemory and are not in a floor taken before it connected: few of them
# next to a floor of a few MB.
# With `bg`, in the background: returns its pid.
proc rock_floor_gets {n nkeys {bg 0}} {
    set cmd [list src/redis-benchmark -h [srv 0 host] -p [srv 0 port] --dbnum 9 -q -t get -r $nkeys -n $n -c 10]
    if {$bg} { return [exec {*}$cmd > /dev/null &] }
    exec {*}$cmd
}

# A 500-byte value: a slice of a 1 MB random pool at a random offset.
# randstring costs 1.5 ms of Tcl a value, minutes for this file's 200,000
# values on 2 cores shared with 16 test clients; the slices are as random to
# the server and to RocksDB's compression (8 of them to a 4 KB block seldom
# overlap).
proc rock_floor_value {} {
    global rock_floor_pool
    if {![info exists rock_floor_pool]} { set rock_floor_pool [randstring 1048576 1048576 alpha] }
    set off [expr {int(rand() * (1048576 - 500))}]
    string range $rock_floor_pool $off [expr {$off + 499}]
}

# `nkeys` keys of 500 bytes, all in RAM (no maxmemory yet); with `ttls`,
# the even ones under a TTL far past the test.
proc rock_floor_write {nkeys {ttls 0}} {
    set rd [redis_deferring_client]
    for {set i 0} {$i < $nkeys} {incr i} {
        if {$ttls && $i % 2 == 0} {
            $rd set [format "key:%012d" $i] [rock_floor_value] ex 100000
        } else {
            $rd set [format "key:%012d" $i] [rock_floor_value]
        }
        if {$i % 1000 == 999} { for {set j 0} {$j < 1000} {incr j} { $rd read } }
    }
    $rd close
    assert_equal $nkeys [r dbsize]
}

# Waits until a walk of the keyspace (40,000 keys a second) that started
# after the call has completed: the floor then counts every key written
# before it (a walk that began while they were written counts the values
# that can't move as of where it passed them).
proc rock_floor_fresh {} {
    set walks [rock_field maxmemory_floor_walks]
    wait_for_condition 200 100 {
        [rock_field maxmemory_floor_walks] >= $walks + 2 && [rock_field maxmemory_floor] > 0
    } else { fail "no floor figure from a walk after the writes" }
}

# rock_floor_write's keys; returns the floor: with every value in RAM, far
# under used_memory.
proc rock_floor_populate {nkeys} {
    rock_floor_write $nkeys
    rock_floor_fresh
    set floor [rock_field maxmemory_floor]
    assert_lessthan $floor [expr {[s used_memory] / 4}]
    return $floor
}

start_server {tags {"rock"} overrides {rock-enabled yes maxmemory-policy allkeys-lru}} {
    test {Above the maxmemory floor no key is deleted; under it the policy deletes keys, says so, and eviction stops sampling} {
        set nkeys 60000
        set floor [rock_floor_populate $nkeys]

        # 20% above it: every value that can move goes, no key is deleted.
        r config set maxmemory [expr {int($floor * 1.2)}]
        wait_for_condition 100 100 {
            [rock_field cold_percent] > 60 && [rock_field pending_writes] == 0
        } else { fail "values did not move: [rock_field cold_percent]% cold" }
        rock_floor_gets 20000 $nkeys
        assert_equal 0 [s evicted_keys]
        assert_equal 0 [rock_field nothing_movable_deletes]
        assert_equal running [dict get [r rock report] eviction]

        # 30% under it: a warning within a second or two, and once every
        # movable value is on disk the policy deletes keys, counted apart.
        set floor [rock_field maxmemory_floor]
        r config set maxmemory [expr {int($floor * 0.7)}]
        wait_for_log_messages 0 {"*rock: maxmemory * is under the floor*"} 0 50 100
        # The state says so for 10 s after the policy last acted: looked at
        # while the GETs run (the policy deletes keys until those left fit,
        # and under a loaded machine the GETs outlast those 10 s).
        set pid [rock_floor_gets 20000 $nkeys 1]
        wait_for_condition 600 50 {
            [dict get [r rock report] eviction] eq "nothing-movable" &&
            [rock_info_field rock_eviction] eq "nothing-movable"
        } else {
            fail "eviction [dict get [r rock report] eviction], [s evicted_keys] keys deleted"
        }
        wait_for_condition 600 100 { ![process_is_alive $pid] } else { fail "the GETs did not end" }
        set samples [rock_field eviction_samples]
        rock_floor_gets 20000 $nkeys
        set per_get [expr {double([rock_field eviction_samples] - $samples) / 20000}]
        assert_morethan [s evicted_keys] 0
        assert_equal [s evicted_keys] [rock_field nothing_movable_deletes]
        wait_for_log_messages 0 {"*rock: no value left in RAM can move to disk*allkeys-lru deletes keys*"} 0 100 100
        # Nothing movable: the values paged in for the GETs, noted as they
        # come and go, not rounds of samples of the keyspace at each command
        # (36 keys looked at per GET with 50 clients when pinned values were
        # looked at again at every command).
        assert_lessthan $per_get 5
        # ROCK SIZING's curve starts at the floor, and so do its suggestions.
        set floor_now [rock_field maxmemory_floor]
        assert_morethan_equal [lindex [r rock sizing] 0 0] [expr {int($floor_now * 0.9)}]
        assert_morethan_equal [rock_field sizing_maxmemory_90] [expr {int($floor_now * 0.9)}]
        # ...and the floor now is under maxmemory: the keys left fit.
        set mm [lindex [r config get maxmemory] 1]
        assert_range [rock_field maxmemory_floor] [expr {$mm / 2}] $mm
        assert_equal 0 [rock_field errors]
    }
}

start_server {tags {"rock"} overrides {rock-enabled yes maxmemory-policy volatile-lru}} {
    test {Near its floor, volatile-lru takes the values paged in from the hot-clean set, not from samples of keys mostly cold} {
        # Every other key with a TTL: only those values move, and the other
        # half of the values stays in RAM whatever maxmemory is.
        set nkeys 40000
        rock_floor_write $nkeys 1
        rock_floor_fresh
        set floor [rock_field maxmemory_floor]
        # Room for a third of the values that can move.
        r config set maxmemory [expr {$floor + ([s used_memory] - $floor) / 3}]
        wait_for_condition 100 100 {
            [rock_field cold_keys] > 10000 && [rock_field pending_writes] == 0
        } else { fail "values did not move: [rock_field cold_keys] cold" }
        rock_floor_gets 20000 $nkeys
        set samples [rock_field eviction_samples]
        rock_floor_gets 20000 $nkeys
        set per_get [expr {double([rock_field eviction_samples] - $samples) / 20000}]
        assert_equal 0 [s evicted_keys]
        assert_equal $nkeys [r dbsize]
        # A third of the GETs page a value in, and each eviction looks at 5
        # members of the hot-clean set (and 20 keys one call in 8): 3.3 keys
        # looked at per GET. 9.9 when the keys without a TTL counted as
        # values that could move: the keyspace was sampled at every call.
        assert_lessthan $per_get 6
    }
}

start_server {tags {"rock"} overrides {rock-enabled yes maxmemory-policy noeviction}} {
    test {The maxmemory floor taken with values paged in is the memory once they are all on disk} {
        set nkeys 60000
        set floor [rock_floor_populate $nkeys]
        # Room for about a third of the values; the GETs page values in, so
        # those in RAM are hot-clean: each has an entry in the hot-clean set
        # besides its value, and both go when it moves out.
        r config set maxmemory [expr {int($floor * 3)}]
        wait_for_condition 100 100 {
            [rock_field cold_percent] > 50 && [rock_field pending_writes] == 0
        } else { fail "values did not move: [rock_field cold_percent]% cold" }
        rock_floor_gets 100000 $nkeys
        assert_morethan [rock_field hot_clean_keys] 10000
        # (The walk's average sizes, from rock_floor_populate's walk, hold:
        # every value is alike.)
        set taken [rock_field maxmemory_floor]
        # Every value out (noeviction deletes nothing): the floor is then
        # what the policy's memory is, nothing left to subtract.
        r config set maxmemory 1
        wait_for_condition 100 100 {
            [rock_field cold_percent] == 100 && [rock_field pending_writes] == 0
        } else { fail "values did not move: [rock_field cold_percent]% cold" }
        set empty [rock_field maxmemory_floor]
        r config set maxmemory 0
        assert_equal $nkeys [r dbsize]
        # Left in, the hot-clean entries put the floor 13% over.
        assert_range $taken [expr {int($empty * 0.97)}] [expr {int($empty * 1.03)}]
    }
}

start_server {tags {"rock"} overrides {rock-enabled yes maxmemory-policy noeviction}} {
    test {Under the maxmemory floor with noeviction: reads are served without sampling, writes refused, and the server says so} {
        set nkeys 60000
        set floor [rock_floor_populate $nkeys]
        r config set maxmemory [expr {int($floor * 0.7)}]
        wait_for_log_messages 0 {"*rock: maxmemory * is under the floor*noeviction refuses writes*"} 0 50 100
        wait_for_condition 100 100 {
            [rock_field pending_writes] == 0 && [rock_field cold_percent] > 99
        } else { fail "values did not move: [rock_field cold_percent]% cold" }
        rock_floor_gets 20000 $nkeys
        set samples [rock_field eviction_samples]
        rock_floor_gets 20000 $nkeys
        set per_get [expr {double([rock_field eviction_samples] - $samples) / 20000}]
        assert_error {OOM*} {r set newkey [randstring 500 500 alpha]}
        assert_equal $nkeys [r dbsize]
        assert_equal 0 [s evicted_keys]
        assert_equal nothing-movable [dict get [r rock report] eviction]
        wait_for_log_messages 0 {"*rock: no value left in RAM can move to disk*noeviction refuses writes*"} 0 100 100
        assert_lessthan $per_get 5
        assert_equal 0 [rock_field errors]
    }
}

start_server {tags {"rock repl"} overrides {rock-enabled yes maxmemory-policy allkeys-lru}} {
    start_server {overrides {rock-enabled yes maxmemory-policy allkeys-lru}} {
        test {A replica knows its maxmemory floor too, and it is its master's} {
            set master [srv -1 client]
            set replica [srv 0 client]
            $replica replicaof [srv -1 host] [srv -1 port]
            wait_for_condition 100 100 {
                [getInfoProperty [$replica info replication] master_link_status] eq "up"
            } else { fail "no sync" }
            set rd [redis_deferring_client -1]
            for {set i 0} {$i < 20000} {incr i} {
                $rd set [format "key:%012d" $i] [rock_floor_value]
                if {$i % 1000 == 999} { for {set j 0} {$j < 1000} {incr j} { $rd read } }
            }
            $rd close
            wait_for_ofs_sync $master $replica
            # Once both walks have gone round after the last write: the
            # figures of the same keys, within what the replication buffers
            # and clients make them differ by.
            wait_for_condition 100 100 {
                [dict get [$replica rock report] maxmemory_floor] > 0 &&
                abs([dict get [$replica rock report] maxmemory_floor] - [dict get [$master rock report] maxmemory_floor]) <
                    [dict get [$master rock report] maxmemory_floor] / 4
            } else {
                fail "replica floor [dict get [$replica rock report] maxmemory_floor], master's [dict get [$master rock report] maxmemory_floor]"
            }
            assert_morethan [dict get [$replica rock report] maxmemory_floor] 1000000
        }
    }
}
