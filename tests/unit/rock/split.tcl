# tests/unit/rock/split.tcl -- big hashes, sets and sorted sets stored element
# by element (rock_split.c, rock_point.c): point reads read only the elements
# they name and leave the collection cold, every other command sees the whole
# collection, and whole-key operations reclaim the element records.
source tests/helpers/rock/util.tcl

proc rock_field {f} { return [dict get [r rock report] $f] }

proc rock_wait_committed {} {
    wait_for_condition 500 10 { [rock_field pending_writes] == 0 } else { fail "writes never committed" }
}

# The same collection of `n` elements under `k` (to go cold) and `k:ref`.
proc rock_big {type k n} {
    foreach key [list $k $k:ref] {
        r del $key
        for {set i 0} {$i < $n} {incr i} {
            switch $type {
                hash { r hset $key f$i [string repeat v [expr {$i % 50}]]$i }
                set { r sadd $key m$i }
                zset { r zadd $key [expr {$i * 1.5 - 300}] m$i }
            }
        }
    }
}

# A fresh cold `k` (and `k:ref`) of 600 elements, reads held 300 ms and
# the writer 1500 ms: two commands' reads are in flight at once, and a write
# stays uncommitted while the other's read lands.
proc rock_big_held {type} {
    r flushall
    rock_big $type k 600
    r rock evict k
    rock_wait_committed
    r config set rock-debug-read-delay 300
    r config set rock-debug-write-delay 1500
}

# Each command of `cmds` (`%k` the key) answers on k as on k:ref (unordered
# replies sorted); with `evict`, k is pushed back to disk before each.
proc rock_compare_whole {cmds evict} {
    foreach cmd $cmds {
        if {$evict} { r rock evict k }
        set ref [r {*}[string map {%k k:ref} $cmd]]
        set got [r {*}[string map {%k k} $cmd]]
        if {[lindex $cmd 0] in {hgetall smembers hkeys}} {
            set ref [lsort $ref]
            set got [lsort $got]
        }
        assert_equal $ref $got "$cmd"
    }
}

start_server {tags {"rock"} overrides {rock-enabled yes rock-min-value-size 0 rock-split-min-elements 100}} {

    set point {
        hash {{hget %k f7} {hget %k nope} {hmget %k f1 nope f499 f1} {hexists %k f3} {hexists %k x} {hstrlen %k f49} {hstrlen %k x}}
        set {{sismember %k m7} {sismember %k nope} {smismember %k m1 nope m499}}
        zset {{zscore %k m7} {zscore %k nope} {zmscore %k m1 nope m499}}
    }
    set whole {
        hash {{hlen %k} {hgetall %k} {hkeys %k} {object encoding %k}}
        set {{scard %k} {smembers %k} {object encoding %k}}
        zset {{zcard %k} {zrange %k 0 -1 withscores} {zrank %k m9} {zrangebyscore %k 0 10} {object encoding %k}}
    }

    foreach type {hash set zset} {
        test "Split $type: stored element by element, point reads read only the named elements and leave it cold" {
            r flushall
            # 600: past hash-max-listpack-entries (512) and the zset's (128).
            rock_big $type k 600
            assert_equal 1 [r rock evict k]
            rock_wait_committed
            assert_equal 1 [r rock diskkeys]
            assert_equal 600 [r rock diskelements]
            assert_equal 1 [rock_field split_keys]
            set points [rock_field point_reads]
            set loads0 [rock_field loads]
            foreach cmd [dict get $point $type] {
                set c [string map {%k k} $cmd]
                set ref [r {*}[string map {%k k:ref} $cmd]]
                set reads [rock_field element_reads]
                set records [rock_field reads]
                set loads [rock_field split_loads]
                assert_equal $ref [r {*}$c] "$c"
                # One record per element named, and nothing else: not the
                # metadata record (its version and count are in RAM).
                set named [llength [lsort -unique [lrange $c 2 end]]]
                assert_equal $named [expr {[rock_field element_reads] - $reads}] "$c"
                assert_equal $named [expr {[rock_field reads] - $records}] "$c"
                assert_equal $loads [rock_field split_loads] "$c"
                assert_equal cold [r rock status k] "$c"
            }
            assert_equal [llength [dict get $point $type]] [expr {[rock_field point_reads] - $points}]
            assert_equal $loads0 [rock_field loads]
        }

        test "Split $type: every other command sees the whole collection" {
            rock_compare_whole [dict get $whole $type] 1
            assert_equal [r debug digest-value k:ref] [r debug digest-value k]
            assert {[rock_field split_loads] >= 1}
        }

        test "Split $type: a point read in a transaction pages the collection in" {
            r rock evict k
            rock_wait_committed
            set loads [rock_field split_loads]
            set cmd [string map {%k k} [lindex [dict get $point $type] 0]]
            r multi
            r {*}$cmd
            set got [r exec]
            assert_equal [list [r {*}[string map {%k k:ref} [lindex [dict get $point $type] 0]]]] $got
            assert_equal [expr {$loads + 1}] [rock_field split_loads]
            assert_equal hot-clean [r rock status k]
        }
    }

    set writes {
        hash {{hset %k f1 new f9999 added} {hsetnx %k f2 x} {hsetnx %k fresh y} {hdel %k f3 nope f3}
              {hincrby %k cnt 5} {hincrby %k cnt 2} {hincrbyfloat %k flt 1.5} {hmset %k a 1 b 2} {hlen %k}
              {hget %k f1} {hmget %k f9999 fresh f3 cnt flt}}
        set {{sadd %k m1 new1 new2 new1} {srem %k m2 nope} {scard %k} {smismember %k new1 m2 m1} {sadd %k m2}}
        zset {{zadd %k 5 m1 7 newm} {zadd %k xx ch 9 m2 9 nope} {zadd %k nx 1 m3 1 newer} {zadd %k gt 1000 m4}
              {zadd %k lt 1000 m4} {zadd %k incr 2 m5} {zincrby %k 3 m6} {zrem %k m7 nope} {zcard %k}
              {zmscore %k m1 newm nope m7 m5}}
    }

    foreach type {hash set zset} {
        test "Split $type: point writes change only the elements they name and leave it cold" {
            r flushall
            rock_big $type k 600
            r rock evict k
            rock_wait_committed
            set loads [rock_field split_loads]
            foreach cmd [dict get $writes $type] {
                set c [string map {%k k} $cmd]
                set ref [r {*}[string map {%k k:ref} $cmd]]
                set reads [rock_field element_reads]
                set ew [rock_field element_writes]
                assert_equal $ref [r {*}$c] "$c"
                rock_wait_committed
                # At most the elements named are read, and written (plus the
                # metadata record's count).
                set named [expr {[llength $c] - 2}]
                assert_range [expr {[rock_field element_reads] - $reads}] 0 $named
                assert_range [expr {[rock_field element_writes] - $ew}] 0 [expr {$named + 1}]
                assert_equal cold [r rock status k] "$c"
            }
            assert_equal $loads [rock_field split_loads]
            assert_equal 1 [r rock diskkeys]
            # HLEN/SCARD/ZCARD read nothing: the count is in RAM.
            set reads [rock_field element_reads]
            set len [dict get {hash hlen set scard zset zcard} $type]
            assert_equal [r $len k:ref] [r $len k]
            assert_equal $reads [rock_field element_reads]
            assert_equal [r $len k] [r rock diskelements]
            # The whole collection, paged in, is the reference's.
            assert_equal [r debug digest-value k:ref] [r debug digest-value k]
            rock_compare_whole [dict get $whole $type] 0
        }
    }

    foreach type {hash set zset} {
        test "Split $type: paged in whole and changed by point writes, its eviction writes those elements alone" {
            r flushall
            rock_big $type k 600
            r rock evict k
            rock_wait_committed
            switch $type { hash { r hgetall k } set { r smembers k } zset { r zrange k 0 -1 } }
            assert_equal hot-clean [r rock status k]
            set writes [rock_field writes]
            set ew [rock_field element_writes]
            set flushes [rock_field dirty_flushes]
            # Each changes these elements: f1 newf f2 cnt / new m1 m2 / m1 new m2 m3
            foreach key {k k:ref} {
                switch $type {
                    hash { r hset $key f1 new newf v; r hdel $key f2; r hincrby $key cnt 5 }
                    set { r sadd $key new; r srem $key m1 m2 }
                    zset { r zadd $key 9 m1 5 new; r zrem $key m2; r zincrby $key 2 m3 }
                }
            }
            set changed [dict get {hash 4 set 3 zset 4} $type]
            assert_equal hot-clean [r rock status k]
            assert_equal 1 [r rock evict k]
            assert_equal cold [r rock status k]
            rock_wait_committed
            assert_equal $writes [rock_field writes]
            assert_equal [expr {$ew + $changed + 1}] [rock_field element_writes]
            assert_equal [expr {$flushes + 1}] [rock_field dirty_flushes]
            foreach cmd [dict get $point $type] {
                assert_equal [r {*}[string map {%k k:ref} $cmd]] [r {*}[string map {%k k} $cmd]] $cmd
            }
            rock_compare_whole [dict get $whole $type] 1
            assert_equal [r debug digest-value k:ref] [r debug digest-value k]
        }
    }

    test {Split: a hot collection changed by point writes and then by another write is rewritten whole} {
        r flushall
        rock_big zset k 600
        r rock evict k
        rock_wait_committed
        r zrange k 0 -1
        set writes [rock_field writes]
        set flushes [rock_field dirty_flushes]
        foreach key {k k:ref} { r zadd $key 1000 m5; r zpopmin $key 3 }
        assert_equal 1 [r rock evict k]
        rock_wait_committed
        assert_equal [expr {$writes + 1}] [rock_field writes]
        assert_equal $flushes [rock_field dirty_flushes]
        assert_equal [r zrange k:ref 0 -1 withscores] [r zrange k 0 -1 withscores]
        assert_equal [r zscore k:ref m5] [r zscore k m5]
    }

    test {Split: a point write's error leaves the collection as it was} {
        r flushall
        rock_big hash k 600
        r rock evict k
        rock_wait_committed
        set ew [rock_field element_writes]
        assert_error {*not an integer*} {r hincrby k f5 1}
        assert_error {*wrong number*} {r hset k f1}
        set reads [rock_field reads]
        assert_error {*WRONGTYPE*} {r sadd k x}
        assert_error {*WRONGTYPE*} {r zscore k x}
        assert_equal $reads [rock_field reads]
        rock_wait_committed
        assert_equal $ew [rock_field element_writes]
        assert_equal cold [r rock status k]
        assert_equal [r hget k:ref f5] [r hget k f5]
    }

    test {Split: the LFU counter of a cold collection counts point commands and survives clean drops and point writes} {
        r flushall
        r config set maxmemory-policy allkeys-lfu
        r config set lfu-decay-time 0
        rock_big hash k 600
        # From here on every access counts (the load's did not saturate it).
        r config set lfu-log-factor 0
        r rock evict k
        rock_wait_committed
        # Paged in whole and read: the counter moves in RAM; the clean drop
        # stores it in the metadata record (a merge) and in the RAM copy.
        for {set i 0} {$i < 4} {incr i} { r hlen k; r hgetall k }
        set freq [r object freq k]
        assert_range $freq 6 254
        set drops [rock_field clean_drops]
        set updates [rock_field access_updates]
        assert_equal 1 [r rock evict k]
        assert_equal cold [r rock status k]
        assert_equal [expr {$drops + 1}] [rock_field clean_drops]
        wait_for_condition 100 10 { [rock_field access_updates] > $updates } else { fail "no access update" }
        # A point write rewrites the metadata record (its count) from RAM;
        # its lookup counts as an access, as on stock.
        assert_equal 1 [r hset k new v]
        assert_equal cold [r rock status k]
        rock_wait_committed
        assert_equal [expr {$freq + 1}] [r object freq k]
        # Point reads count too (the field lives in RAM while cold), and
        # HLEN; OBJECT FREQ does not (NOTOUCH), nor does the page-in.
        set freq [r object freq k]
        assert_equal 1 [r rock evict k]
        for {set i 0} {$i < 5} {incr i} { r hget k f$i }
        r hlen k
        assert_equal cold [r rock status k]
        assert_equal [expr {$freq + 6}] [r object freq k]
        r config set maxmemory-policy noeviction
        r config set lfu-log-factor 10
        r config set lfu-decay-time 1
    }

    test {Split: removing every element of a cold collection deletes the key and its records} {
        r flushall
        rock_big set k 600
        r rock evict k
        rock_wait_committed
        set members {}
        for {set i 0} {$i < 600} {incr i} { lappend members m$i }
        assert_equal 599 [r srem k {*}[lrange $members 0 598]]
        assert_equal cold [r rock status k]
        assert_equal 1 [r scard k]
        assert_equal 1 [r srem k m599 nope]
        assert_equal 0 [r exists k]
        rock_wait_committed
        assert_equal 0 [r rock diskelements]
        assert_equal 0 [r rock diskkeys]
    }

    test {Split: reads after a point write see it, committed or not (element, page-in, fork)} {
        r flushall
        rock_big hash k 600
        r rock evict k
        rock_wait_committed
        r config set rock-debug-write-delay 400
        r hset k f1 changed
        r hdel k f2
        assert_equal {changed {}} [r hmget k f1 f2]
        assert_equal 599 [r hlen k]
        # A page-in waits for the writes; so does a fork.
        r hset k:ref f1 changed
        r hdel k:ref f2
        assert_equal [lsort [r hgetall k:ref]] [lsort [r hgetall k]]
        r rock evict k
        r hset k f3 again
        r hset k:ref f3 again
        set digest [r debug digest]
        r bgsave
        waitForBgsave r
        r config set rock-debug-write-delay 0
        r debug reload
        assert_equal $digest [r debug digest]
    }

    test {Split: a point read queued behind a point write of the same element sees the write} {
        # Both reads are in flight at once; the write runs first (it came
        # first) and stays uncommitted (the writer is held), so the element
        # the read fetched from disk is stale by the time it runs.
        rock_big_held hash
        set rw [redis_deferring_client]
        set rr [redis_deferring_client]
        $rw hset k f1 written
        rock_wait_blocked 1
        $rr hmget k f1 f2
        rock_wait_blocked 2
        assert_equal 0 [$rw read]
        assert_equal [list written [r hget k:ref f2]] [$rr read]
        # A write of other elements leaves what the read fetched current:
        # no second read (one record for the write, two for the read).
        set reads [rock_field element_reads]
        $rw hset k f5 written
        rock_wait_blocked 1
        $rr hmget k f6 f7
        rock_wait_blocked 2
        assert_equal 0 [$rw read]
        assert_equal [r hmget k:ref f6 f7] [$rr read]
        assert_equal 3 [expr {[rock_field element_reads] - $reads}]
        $rw close
        $rr close
        r config set rock-debug-read-delay 0
        r config set rock-debug-write-delay 0
        rock_wait_committed
        assert_equal written [r hget k f1]
        assert_equal cold [r rock status k]
    }

    foreach pop {zpopmax bzpopmax} {
        test "Split: a page-in queued behind a point write sees the write ($pop)" {
            # The ZADD came first and waits for its element read; the pop,
            # behind it, has its page-in of the whole set queued at once.
            # The element read is back first and the ZADD runs as a point
            # write, uncommitted (the writer is held), while the page-in is
            # still in flight: the value it brings back lacks the new member
            # and must not be used.
            rock_big_held zset
            set rw [redis_deferring_client]
            set rp [redis_deferring_client]
            $rw zadd k 10000 top
            rock_wait_blocked 1
            if {$pop eq "zpopmax"} { $rp zpopmax k } else { $rp bzpopmax k 0 }
            rock_wait_blocked 2
            assert_equal 1 [$rw read]
            set got [$rp read]
            r config set rock-debug-read-delay 0
            r config set rock-debug-write-delay 0
            r zadd k:ref 10000 top
            if {$pop eq "zpopmax"} { set want [r zpopmax k:ref] } else { set want [r bzpopmax k:ref 0] }
            assert_equal [string map {k:ref k} $want] $got
            assert_equal [r zrange k:ref 0 -1 withscores] [r zrange k 0 -1 withscores]
            $rw close
            $rp close
        }
    }

    test {Split: point commands leave nothing behind in RAM} {
        # Each point command builds and drops a stand-in object, a stash and
        # a job; 3,000 of them leaking even one small object would show.
        r flushall
        rock_big hash k 600
        r rock evict k
        rock_wait_committed
        for {set i 0} {$i < 200} {incr i} { r hget k f$i }
        set before [s used_memory]
        for {set i 0} {$i < 1000} {incr i} {
            r hget k f$i
            r hset k f$i x$i
            r hlen k
        }
        rock_wait_committed
        assert_equal cold [r rock status k]
        assert_lessthan [expr {[s used_memory] - $before}] 100000
    }

    test {Split: point writes keep no per-element state when no point read is in flight} {
        # The staleness table (rockSplitInfo.written) serves reads in flight
        # only; kept after them it was RAM eviction could not free (seen
        # as -OOM by the differential test at maxmemory 2mb): about 50
        # bytes per element written, 150 KB here.
        r flushall
        foreach k {a b c d} { rock_big hash $k 1000; r del $k:ref }
        r rock evict a b c d
        rock_wait_committed
        # The first key's writes grow the writer's and readers' tables once.
        for {set i 0} {$i < 1000} {incr i} { r hset a f$i x$i }
        rock_wait_committed
        set before [s used_memory]
        foreach k {b c d} {
            for {set i 0} {$i < 1000} {incr i} { r hset $k f$i y$i }
            rock_wait_committed
        }
        foreach k {a b c d} { assert_equal cold [r rock status $k] }
        assert_lessthan [expr {[s used_memory] - $before}] 75000
        assert_equal y999 [r hget d f999]
    }

    test {Split: a big collection moved to disk is freed by the lazyfree thread, not the event loop} {
        r flushall
        set args {}
        for {set i 0} {$i < 10000} {incr i} { lappend args f$i v$i }
        r hset k {*}$args
        set lazy [s lazyfreed_objects]
        assert_equal 1 [r rock evict k]
        wait_for_condition 100 10 { [s lazyfreed_objects] == $lazy + 1 } else { fail "not freed by the lazyfree thread" }
        rock_wait_committed
        assert_equal v9999 [r hget k f9999]
        # Small ones are freed in place.
        rock_big set small 600
        set lazy [s lazyfreed_objects]
        r rock evict small
        assert_equal $lazy [s lazyfreed_objects]
    }

    test {Split: a collection under rock-split-min-elements, or in a compact encoding, stays one record} {
        r flushall
        rock_big hash small 50
        r hset lp a 1 b 2
        r sadd ints 1 2 3 4 5
        for {set i 0} {$i < 200} {incr i} { r sadd ints $i }
        r rock evict small small:ref lp ints
        rock_wait_committed
        # intset of 200 ints, listpack hash, 50-field hash: no elements.
        assert_equal 0 [r rock diskelements]
        assert_equal 0 [rock_field split_keys]
    }

    test {Split: encodings across evictions (listpack -> hashtable, intset -> hashtable, listpack -> skiplist)} {
        r flushall
        r hset h a 1
        r sadd s 1 2 3
        r zadd z 1 a
        r rock evict h s z
        assert_equal {listpack intset listpack} [list [r object encoding h] [r object encoding s] [r object encoding z]]
        for {set i 0} {$i < 600} {incr i} { r hset h f$i $i; r sadd s m$i; r zadd z $i m$i }
        assert_equal {hashtable hashtable skiplist} [list [r object encoding h] [r object encoding s] [r object encoding z]]
        r rock evict h s z
        rock_wait_committed
        assert_equal [expr {601 + 603 + 601}] [r rock diskelements]
        assert_equal {hashtable hashtable skiplist} [list [r object encoding h] [r object encoding s] [r object encoding z]]
        assert_equal {601 603 601} [list [r hlen h] [r scard s] [r zcard z]]
        assert_equal 1 [r hget h a]
        assert_equal 1 [r sismember s 2]
        assert_equal 599 [r zscore z m599]
    }

    test {Split: DEL, overwrite, FLUSHDB and a re-eviction after a change reclaim the element records} {
        r flushall
        rock_big hash a 600
        rock_big set b 300
        rock_big zset c 300
        r rock evict a b c
        rock_wait_committed
        assert_equal 1200 [r rock diskelements]
        r del a
        rock_wait_committed
        assert_equal 600 [r rock diskelements]
        r set b overwritten
        rock_wait_committed
        assert_equal 300 [r rock diskelements]
        # Changed while in RAM, evicted again: a new version replaces the old.
        r zadd c 1000 extra
        r zrem c m0 m1
        r rock evict c
        rock_wait_committed
        assert_equal 299 [r rock diskelements]
        assert_equal 299 [r zcard c]
        assert_equal 1000 [r zscore c extra]
        assert_equal {} [r zscore c m0]
        r rock evict c
        r flushdb
        rock_wait_committed
        assert_equal 0 [r rock diskelements]
        assert_equal 0 [r rock diskkeys]
        assert_equal 0 [rock_field split_keys]
    }

    test {Split: a point read whose key expires while the read is in flight answers as stock (nothing)} {
        r flushall
        rock_big hash k 600
        r rock evict k
        rock_wait_committed
        r pexpire k 200
        r config set rock-debug-read-delay 600
        set rd [redis_deferring_client]
        $rd hget k f7
        rock_wait_blocked 1
        # The active expiry deletes the key while its elements are read.
        wait_for_condition 100 10 { [r exists k] == 0 } else { fail "k did not expire" }
        assert_equal {} [$rd read]
        $rd close
        r config set rock-debug-read-delay 0
        rock_wait_committed
        assert_equal 0 [r rock diskelements]
        r rock evict k:ref
        rock_wait_committed
        assert_equal 600 [r rock diskelements]
        r del k:ref
        rock_wait_committed
        assert_equal 0 [r rock diskelements]
    }

    test {Split: a point read while the collection's write is still pending is served from RAM} {
        r flushall
        rock_big set k 300
        r config set rock-debug-write-delay 500
        r rock evict k
        assert_equal 1 [r sismember k m5]
        assert_equal {1 0} [r smismember k m6 nope]
        r config set rock-debug-write-delay 0
        rock_wait_committed
    }

    test {Split: many clients' point reads of one cold collection, and a DEL queued behind them} {
        r flushall
        rock_big hash k 600
        r rock evict k
        rock_wait_committed
        r config set rock-debug-read-delay 200
        set clients {}
        for {set i 0} {$i < 5} {incr i} {
            set rd [redis_deferring_client]
            $rd hmget k f$i f[expr {$i + 100}]
            lappend clients $rd
        }
        rock_wait_blocked 5
        set rdel [redis_deferring_client]
        $rdel del k
        set i 0
        foreach rd $clients {
            assert_equal [r hmget k:ref f$i f[expr {$i + 100}]] [$rd read]
            $rd close
            incr i
        }
        assert_equal 1 [$rdel read]
        $rdel close
        r config set rock-debug-read-delay 0
        rock_wait_committed
        assert_equal 0 [r exists k]
        assert_equal 0 [r rock diskelements]
    }

    foreach type {hash set zset} {
        test "Split $type: RENAME of a cold collection rewrites its metadata alone (no page-in, no element write)" {
            r flushall
            rock_big $type k 600
            r rock evict k
            rock_wait_committed
            set loads [rock_field split_loads]
            set reads [rock_field reads]
            set ew [rock_field element_writes]
            set renames [rock_field split_renames]
            r expire k 1000
            assert_equal OK [r rename k k2]
            assert_equal [expr {$renames + 1}] [rock_field split_renames]
            assert_equal $loads [rock_field split_loads]
            assert_equal $reads [rock_field reads]
            assert_equal 0 [r exists k]
            assert_equal cold [r rock status k2]
            assert_range [r ttl k2] 900 1000
            r persist k2 ;# (DEBUG DIGEST-VALUE mixes the TTL in)
            rock_wait_committed
            # One metadata record written (counted as an element write).
            assert_equal [expr {$ew + 1}] [rock_field element_writes]
            assert_equal 1 [r rock diskkeys]
            assert_equal 600 [r rock diskelements]
            # Point commands under the new name, then back, then whole.
            set len [dict get {hash hlen set scard zset zcard} $type]
            assert_equal 600 [r $len k2]
            switch $type {
                hash { assert_equal [r hmget k:ref f1 f599 nope] [r hmget k2 f1 f599 nope]; r hset k2 f1 new; r hset k:ref f1 new }
                set { assert_equal {1 1 0} [r smismember k2 m1 m599 nope]; r srem k2 m1; r srem k:ref m1 }
                zset { assert_equal [r zmscore k:ref m1 m599 nope] [r zmscore k2 m1 m599 nope]; r zadd k2 7 m1; r zadd k:ref 7 m1 }
            }
            assert_equal cold [r rock status k2]
            assert_equal OK [r rename k2 k]
            assert_equal cold [r rock status k]
            assert_equal [expr {$renames + 2}] [rock_field split_renames]
            assert_equal $loads [rock_field split_loads]
            rock_wait_committed
            assert_equal [r debug digest-value k:ref] [r debug digest-value k]
            assert_equal [expr {$loads + 1}] [rock_field split_loads]
        }
    }

    test {Split: RENAME onto a cold collection reclaims the old one; RENAMENX and an expired source change nothing} {
        r flushall
        rock_big hash k 600
        rock_big set d 700
        r rock evict k d
        rock_wait_committed
        assert_equal 1300 [r rock diskelements]
        assert_equal 0 [r renamenx k d]
        assert_equal cold [r rock status k]
        assert_equal cold [r rock status d]
        assert_equal OK [r rename k d]
        assert_equal hash [r type d]
        assert_equal cold [r rock status d]
        rock_wait_committed
        assert_equal 600 [r rock diskelements]
        assert_equal 1 [r rock diskkeys]
        assert_equal [r hget k:ref f5] [r hget d f5]
        # A source of the same type that expires on the lookup: RENAME
        # answers "no such key" and the destination (cold) keeps its own
        # value.
        rock_big hash k 650
        r del k:ref
        r rock evict k
        rock_wait_committed
        r debug set-active-expire 0
        r pexpire k 1
        after 5
        assert_error {*no such key*} {r rename k d}
        r debug set-active-expire 1
        assert_equal 0 [r exists k]
        assert_equal 600 [r hlen d]
        assert_equal cold [r rock status d]
        rock_wait_committed
        assert_equal 600 [r rock diskelements]
        rock_big hash k 600
        r del k
        assert_equal [r debug digest-value k:ref] [r debug digest-value d]
    }

    test {Split: BGSAVE, AOF rewrite and DEBUG RELOAD write cold split collections whole} {
        r flushall
        rock_big hash h 600
        rock_big set s 300
        rock_big zset z 300
        r hset h 12345 67890
        set digest [r debug digest]
        r rock evict h s z
        rock_wait_committed
        r bgsave
        waitForBgsave r
        r debug reload
        assert_equal $digest [r debug digest]
        r rock evict h s z
        rock_wait_committed
        r config set appendonly yes
        waitForBgrewriteaof r
        r rock evict h s z
        rock_wait_committed
        r bgrewriteaof
        waitForBgrewriteaof r
        r debug loadaof
        assert_equal $digest [r debug digest]
        assert_equal 67890 [r hget h 12345]
        r config set appendonly no
    }

    foreach state {cold hot} {
        test "Split: an overwritten $state collection leaves no record a fork's stream trips on" {
            # The overwrite deletes the old copy's elements; its metadata
            # record must go with them: a fork's stream walks every record,
            # and one without its elements fails the BGSAVE.
            r flushall
            rock_big hash h 600
            r set other [string repeat x 300]
            r rock evict h other
            rock_wait_committed
            if {$state eq "hot"} { assert_equal 600 [llength [r hkeys h]] }
            r set h [string repeat y 200]
            set digest [r debug digest]
            r bgsave
            waitForBgsave r
            assert_equal ok [s rdb_last_bgsave_status]
            r debug reload
            assert_equal $digest [r debug digest]
            rock_wait_committed
            assert_equal 0 [r rock diskelements]
        }
    }

    test {rock-split-min-elements: bad values are refused} {
        assert_error {*} {r config set rock-split-min-elements -1}
        assert_error {*} {r config set rock-split-min-elements abc}
        assert_equal 100 [lindex [r config get rock-split-min-elements] 1]
    }
}

# A collection bigger than maxmemory in an RDB: loading spills it to disk
# element by element (rock_load.c) instead of building it whole in RAM.
start_server {tags {"rock"} overrides {rock-enabled yes rock-min-value-size 0 rock-split-min-elements 100 maxmemory-policy noeviction}} {

    # `n` elements of about 100 bytes under `key`, 1,000 a command.
    proc rock_big_fast {type key n} {
        for {set i 0} {$i < $n} {incr i 1000} {
            set args {}
            for {set j $i} {$j < $n && $j < $i + 1000} {incr j} {
                set v [format %0100d $j]
                switch $type {
                    hash { lappend args f$j $v }
                    set { lappend args m$v }
                    zset { lappend args [expr {$j * 0.5}] m$v }
                }
            }
            switch $type {
                hash { r hset $key {*}$args }
                set { r sadd $key {*}$args }
                zset { r zadd $key {*}$args }
            }
        }
    }

    foreach type {hash set zset} {
        test "Split $type: bigger than maxmemory in an RDB, it loads element by element under the bound" {
            r config set maxmemory 0
            r flushall
            # The last test's collection may still be being freed by the
            # lazyfree thread.
            wait_for_condition 100 50 { [s lazyfree_pending_objects] == 0 } else { fail "lazyfree never done" }
            set base [s used_memory]
            # 60,050: the rest after the last spill is small (a sorted set's
            # becomes a listpack in rdbLoadObject(), converted back).
            rock_big_fast $type k 60050
            r set other x
            set digest [r debug digest-value k]
            r save
            # Room for 3 MB; the collection takes more than twice that.
            set maxmemory [expr {$base + 3 * 1024 * 1024}]
            assert {[s used_memory] - $base > 6 * 1024 * 1024}
            r config set maxmemory $maxmemory
            r config resetstat
            r debug reload nosave
            assert_equal 1 [rock_field loading_spills]
            set peak [rock_field loading_peak_memory]
            assert {$peak > 0 && $peak <= $maxmemory * 1.1}
            assert_equal cold [r rock status k]
            assert_equal 1 [rock_field split_keys]
            assert_equal x [r get other]
            switch $type {
                hash {
                    assert_equal 60050 [r hlen k]
                    assert_equal [format %0100d 60049] [r hget k f60049]
                    assert_equal [format %0100d 7] [r hget k f7]
                }
                set {
                    assert_equal 60050 [r scard k]
                    assert_equal 1 [r sismember k m[format %0100d 60049]]
                }
                zset {
                    assert_equal 60050 [r zcard k]
                    assert_equal 30024.5 [r zscore k m[format %0100d 60049]]
                }
            }
            assert_equal 0 [rock_field split_loads]
            assert_equal cold [r rock status k]
            assert_equal 60050 [r rock diskelements]
            assert_equal $digest [r debug digest-value k]
            assert_equal 1 [rock_field split_loads]
        }
    }

    test {Split: a collection spilled while loading whose key had expired is dropped with its records} {
        r config set maxmemory 0
        r flushall
        wait_for_condition 100 50 { [s lazyfree_pending_objects] == 0 } else { fail "lazyfree never done" }
        set base [s used_memory]
        rock_big_fast hash k 30000
        r pexpire k 1500
        r save
        r config set maxmemory [expr {$base + 2 * 1024 * 1024}]
        wait_for_condition 100 50 { [r exists k] == 0 } else { fail "k never expired" }
        r config resetstat
        r debug reload nosave
        assert_equal 1 [rock_field loading_spills]
        assert_equal 0 [r dbsize]
        assert_equal 0 [rock_field split_keys]
        assert_equal 0 [rock_field cold_keys]
        assert_equal 0 [r rock diskelements]
        assert_equal 0 [r rock diskkeys]
    }
}
