# tests/unit/rock/tiering.tcl -- values moving to RocksDB and back:
# every type read back equal, modified while cold, metadata access that never
# reads the disk, clean re-eviction, disk space reclaimed, SWAPDB/FLUSHDB,
# in-process persistence of cold values, WATCH unaffected by paging.
source tests/helpers/rock/util.tcl

proc rock_field {f} { return [dict get [r rock report] $f] }

# Build the same value under two keys: `k` will go cold, `k:ref` never does.
proc rock_build {type k} {
    foreach key [list $k $k:ref] {
        switch $type {
            string { r set $key [string repeat "value-" 50] }
            int { r set $key 123456789 }
            list { for {set i 0} {$i < 200} {incr i} { r rpush $key "item-$i" } }
            smalllist { r rpush $key a b c 1 2 3 }
            set { for {set i 0} {$i < 200} {incr i} { r sadd $key "m-$i" } }
            intset { r sadd $key 1 2 3 4 5 100 200 }
            zset { for {set i 0} {$i < 200} {incr i} { r zadd $key $i "z-$i" } }
            smallzset { r zadd $key 1 a 2 b 3 c }
            hash { for {set i 0} {$i < 200} {incr i} { r hset $key "f-$i" "v-$i" } }
            smallhash { r hset $key a 1 b 2 c 3 }
            stream {
                for {set i 1} {$i <= 50} {incr i} { r xadd $key $i-0 f $i }
                r xgroup create $key g1 0
                r xreadgroup group g1 c1 count 5 streams $key >
            }
        }
    }
}

# Read commands per type; `%k` is the key.
set ::rock_reads {
    string {{get %k} {strlen %k} {getrange %k 2 10} {substr %k 0 3} {dump %k} {object encoding %k}}
    int {{get %k} {strlen %k} {getrange %k 0 -1} {object encoding %k}}
    list {{lrange %k 0 -1} {llen %k} {lindex %k 7} {lpos %k item-9} {lrange %k 5 15}}
    smalllist {{lrange %k 0 -1} {llen %k} {object encoding %k}}
    set {{smembers %k} {scard %k} {sismember %k m-3} {smismember %k m-1 nope}}
    intset {{smembers %k} {scard %k} {object encoding %k}}
    zset {{zrange %k 0 -1 withscores} {zcard %k} {zscore %k z-7} {zrank %k z-9} {zrangebyscore %k 3 8}}
    smallzset {{zrange %k 0 -1 withscores} {object encoding %k}}
    hash {{hgetall %k} {hlen %k} {hget %k f-3} {hmget %k f-1 f-2 nope} {hexists %k f-9} {hstrlen %k f-10}}
    smallhash {{hgetall %k} {object encoding %k}}
    stream {{xrange %k - +} {xlen %k} {xrevrange %k + - count 3} {xpending %k g1} {xinfo stream %k}}
}

# Write commands per type, applied to cold and reference alike.
set ::rock_writes {
    string {{append %k tail} {setrange %k 3 XYZ}}
    int {{incr %k} {decrby %k 10}}
    list {{lpush %k new} {rpop %k} {lset %k 3 changed}}
    smalllist {{rpush %k more}}
    set {{sadd %k added} {srem %k m-1}}
    intset {{sadd %k 7}}
    zset {{zadd %k 1000 top} {zincrby %k 5 z-2}}
    smallzset {{zadd %k 9 d}}
    hash {{hset %k f-new x} {hincrby %k counter 3} {hdel %k f-4}}
    smallhash {{hset %k d 4}}
    stream {{xadd %k 100-0 f new} {xack %k g1 1-0} {xreadgroup group g1 c2 count 2 streams %k >}}
}

proc rock_cmd {tmpl key} { return [string map [list %k $key] $tmpl] }

start_server {tags {"rock"} overrides {rock-enabled yes rock-min-value-size 0}} {
    foreach {type reads} $::rock_reads {
        test "Cold $type: every read command returns what a never-evicted copy returns" {
            r flushall
            rock_build $type k
            foreach tmpl $reads {
                assert_equal 1 [r rock evict k]
                assert_equal cold [r rock status k]
                set got [r {*}[rock_cmd $tmpl k]]
                set want [r {*}[rock_cmd $tmpl k:ref]]
                if {[lindex $tmpl 0] eq "dump"} {
                    # DUMP payloads embed the encoding; compare by restoring.
                    r restore k:d1 0 $got
                    r restore k:d2 0 $want
                    assert_equal [r debug digest-value k:d1] [r debug digest-value k:d2]
                } elseif {[lindex $tmpl 0] eq "smembers"} {
                    # Hash-table sets have no defined order (as after DEBUG RELOAD).
                    assert_equal [lsort $want] [lsort $got]
                } elseif {[lindex $tmpl 0] ne "xinfo"} {
                    assert_equal $want $got
                }
                assert_equal hot-clean [r rock status k]
            }
            assert_equal [r debug digest-value k] [r debug digest-value k:ref]
        }

        test "Cold $type: writes while cold give what they give on a hot copy" {
            r flushall
            rock_build $type k
            foreach tmpl [dict get $::rock_writes $type] {
                r rock evict k
                assert_equal cold [r rock status k]
                set want [string map {k:ref k} [r {*}[rock_cmd $tmpl k:ref]]]
                assert_equal $want [r {*}[rock_cmd $tmpl k]]
                assert_equal hot [r rock status k]
            }
            r rock evict k
            assert_equal [r debug digest-value k:ref] [r debug digest-value k]
        }
    }

    test {Metadata and overwrite-only commands never read the disk} {
        r flushall
        r config resetstat
        foreach k {a b c d e f g h} { r set $k [string repeat x 100] }
        r expire b 1000
        r rock evict a b c d e f g h
        set reads [rock_field reads]
        assert_equal 1 [r exists a]
        assert_equal string [r type a]
        assert_range [r ttl b] 900 1000
        assert_range [r pttl b] 900000 1000000
        assert {[r expiretime b] > 0}
        assert {[r pexpiretime b] > 0}
        assert_equal 1 [r expire c 500]
        assert_equal 1 [r persist c]
        assert_equal 1 [r del e]
        assert_equal 1 [r unlink f]
        assert_equal OK [r set g newvalue]
        assert_equal {a b c d g h} [lsort [lindex [r scan 0 type string count 100] 1]]
        assert_equal {} [lindex [r scan 0 type list count 100] 1]
        assert_equal OK [r mset h 1 zz 2]
        assert_equal 0 [r exists e f]
        assert_equal $reads [rock_field reads]
        assert_equal 0 [rock_field sync_loads]
        foreach k {a b c d} { assert_equal cold [r rock status $k] }
        assert_equal newvalue [r get g]
    }

    test {Clean re-eviction writes nothing; a modification makes the value dirty} {
        r flushall
        r config resetstat
        r set k [string repeat v 500]
        assert_equal 1 [r rock evict k]
        assert_equal 1 [rock_field writes]
        # Read, evict, repeatedly: no more writes.
        for {set i 0} {$i < 10} {incr i} {
            assert_equal [string repeat v 500] [r get k]
            assert_equal hot-clean [r rock status k]
            assert_equal 1 [r rock evict k]
        }
        assert_equal 1 [rock_field writes]
        assert_equal 10 [rock_field clean_drops]
        assert_equal 10 [rock_field loads]
        # Modify: the old disk copy goes away, the next eviction writes.
        r get k
        r append k more
        assert_equal hot [r rock status k]
        r rock evict k
        assert_equal 2 [rock_field writes]
        assert_equal "[string repeat v 500]more" [r get k]
    }

    test {A consumer-group read makes a clean stream dirty} {
        r flushall
        r xadd s 1-0 f v
        r xadd s 2-0 f v
        r xgroup create s g 0
        r rock evict s
        r xlen s
        assert_equal hot-clean [r rock status s]
        r xreadgroup group g c count 1 streams s >
        assert_equal hot [r rock status s]
        r rock evict s
        assert_equal 1 [lindex [r xpending s g] 0]
    }

    test {A value comes back from disk in the encoding it had} {
        r flushall
        # Strings a fresh load would make int or embstr.
        r set setrange 1234
        r setrange setrange 0 2
        r set appended ab
        r append appended cd
        r set short abcd
        r set number 12345
        # A hash table set of integers (a fresh load makes an intset).
        r sadd htset 1 2 3 a
        r srem htset a
        # A hash and a zset that outgrew their listpack, then shrank.
        r config set hash-max-listpack-entries 4
        r config set zset-max-listpack-entries 4
        r hset hthash f1 1 f2 2 f3 3 f4 4 f5 5
        r hdel hthash f5
        r zadd slzset 1 a 2 b 3 c 4 d 5 e
        r zrem slzset e
        # Listpacks and an intset over limits lowered afterwards.
        r hset lphash z 1 y 2 x 3 w 4
        r zadd lpzset 1 a 2 b 3 c
        r sadd lpint 5 3 1 4
        r config set hash-max-listpack-entries 2
        r config set zset-max-listpack-entries 2
        r config set set-max-intset-entries 2
        set keys {setrange appended short number htset hthash slzset lphash lpzset lpint}
        set want {}
        foreach k $keys { lappend want [r object encoding $k] }
        assert_equal {raw raw embstr int hashtable hashtable skiplist listpack listpack intset} $want
        set order [r hgetall lphash]
        r rock evict {*}$keys
        foreach k $keys { assert_equal cold [r rock status $k] }
        set got {}
        foreach k $keys { lappend got [r object encoding $k] }
        assert_equal $want $got
        assert_equal $order [r hgetall lphash]
        assert_equal 2234 [r get setrange]
        r config set hash-max-listpack-entries 128
        r config set zset-max-listpack-entries 128
        r config set set-max-intset-entries 512
    }

    test {SORT_RO's conversion of a listpack sorted set to a skiplist survives a round trip through disk} {
        # Stock's SORT and SORT_RO convert the sorted set they sort in place
        # (sort.c). SORT_RO is a read: the value must still count as
        # modified, or a clean drop would bring the listpack back.
        r flushall
        r zadd z 1 a 2 b 3 c
        r rock evict z
        assert_equal {a b c} [r sort_ro z by nokey]
        assert_equal skiplist [r object encoding z]
        r rock evict z
        assert_equal cold [r rock status z]
        assert_equal skiplist [r object encoding z]
        assert_equal {a 1 b 2 c 3} [r zrange z 0 -1 withscores]
        # Already a skiplist: nothing to write again.
        r rock evict z
        set writes [dict get [r rock report] writes]
        r sort_ro z by nokey
        r rock evict z
        assert_equal $writes [dict get [r rock report] writes]
    }

    # An empty keyspace under allkeys-lru, and a DUMP payload (of the string
    # "bar") to RESTORE with a chosen IDLETIME or FREQ.
    proc tiering_fresh_dump {} {
        r flushall
        r config set maxmemory-policy allkeys-lru
        r set foo bar
        set dump [r dump foo]
        r del foo
        return $dump
    }

    test {A value's idle time and LFU counter survive a round trip through disk} {
        set dump [tiering_fresh_dump]
        r restore foo 0 $dump idletime 1000
        r rock evict foo
        assert_equal cold [r rock status foo]
        # Metadata commands neither read the disk nor touch the value.
        r ttl foo
        r type foo
        r exists foo
        assert_equal cold [r rock status foo]
        assert_range [r object idletime foo] 1000 1010
        # TOUCH reads the value in and sets its access time; the value is
        # unchanged, so its next eviction writes no value, only the new
        # access field (a merge, access_updates).
        r rock evict foo
        set writes [rock_field writes]
        set updates [rock_field access_updates]
        assert_equal 1 [r touch foo]
        assert_equal hot-clean [r rock status foo]
        assert_range [r object idletime foo] 0 2
        r rock evict foo
        wait_for_condition 50 20 {[rock_field access_updates] == $updates + 1} else {
            fail "no access update after TOUCH"
        }
        assert_equal $writes [rock_field writes]
        assert_range [r object idletime foo] 0 2
        # RDB files carry a cold value's idle time: BGSAVE (a forked child
        # writes the record its parent streams) and SAVE (in this process).
        r restore bar 0 $dump idletime 2000
        r rock evict bar
        r bgsave
        waitForBgsave r
        assert_equal OK [r debug reload nosave]
        assert_range [r object idletime bar] 2000 2010
        r rock evict bar
        assert_equal OK [r debug reload]
        assert_range [r object idletime bar] 2000 2010
        # LFU: the counter, likewise.
        r config set maxmemory-policy allkeys-lfu
        r restore baz 0 $dump freq 100
        r rock evict baz
        assert_equal cold [r rock status baz]
        assert_equal 100 [r object freq baz]
        r config set maxmemory-policy noeviction
    } {OK} {needs:debug needs:save}

    test {A cold value's access field is read in the policy's kind after maxmemory-policy changes LRU <-> LFU} {
        # A record says whether its field is an LRU clock or LFU data; read
        # under the other kind of policy it is converted, keeping the last
        # access: an LRU clock becomes LFU data with a new key's counter
        # (5), decayed by lfu-decay-time (1 per idle minute), LFU data the
        # LRU clock of its last access.
        set dump [tiering_fresh_dump]
        r restore old 0 $dump idletime 100000
        r restore new 0 $dump
        r rock evict old new
        r config set maxmemory-policy allkeys-lfu
        assert_range [r object freq new] 4 5
        assert_equal 0 [r object freq old]
        r restore lfu 0 $dump freq 100
        r rock evict lfu
        r config set maxmemory-policy allkeys-lru
        assert_equal cold [r rock status lfu]
        assert_range [r object idletime lfu] 0 60
        # Paged in and dropped clean under LRU, its record takes the LRU
        # clock (an access update), read back the same.
        r rock evict lfu
        r restore lru2 0 $dump idletime 5000
        r rock evict lru2
        assert_range [r object idletime lru2] 5000 5010
        r config set maxmemory-policy noeviction
    } {OK} {needs:debug}

    test {A cold value's LFU counter counts its reads, TOUCH its access time, with no value write} {
        # A value paged in and dropped again unchanged is not written again
        # (a clean drop). Under an LFU policy its record's access field is
        # updated (a 3-byte merge, access_updates), or a value read often and
        # never written would keep the counter of its last write; TOUCH
        # updates it under any policy. A read under an LRU policy does not
        # (it would cost a write per cold read: docs/performance.md).
        set dump [tiering_fresh_dump]
        r restore foo 0 $dump idletime 1000
        r rock evict foo
        set writes [rock_field writes]
        set updates [rock_field access_updates]
        assert_equal bar [r get foo]
        assert_equal hot-clean [r rock status foo]
        r rock evict foo
        assert_equal cold [r rock status foo]
        assert_range [r object idletime foo] 1000 1010
        assert_equal $updates [rock_field access_updates]
        r rock evict foo
        assert_equal 1 [r touch foo]
        r rock evict foo ;# waits for its writes: the update is committed
        assert_range [r object idletime foo] 0 2
        r rock evict foo
        wait_for_condition 50 20 {[rock_field access_updates] >= $updates + 1} else {
            fail "no access update after TOUCH"
        }
        assert_equal $writes [rock_field writes]
        assert_range [r object idletime foo] 0 2
        # RDB files carry it too (the fork stream, and in-process SAVE).
        r rock evict foo
        r bgsave
        waitForBgsave r
        assert_equal OK [r debug reload nosave]
        assert_range [r object idletime foo] 0 3

        # LFU: every read counts one (log factor 0), no decay; five reads,
        # each followed by a clean drop, and the counter on disk is 5 more
        # (the old behaviour: back to 10 after every drop).
        r config set maxmemory-policy allkeys-lfu
        r config set lfu-log-factor 0
        r config set lfu-decay-time 0
        r restore baz 0 $dump freq 10
        r rock evict baz
        set writes [rock_field writes]
        set updates [rock_field access_updates]
        for {set i 0} {$i < 5} {incr i} {
            assert_equal bar [r get baz]
            r rock evict baz
            assert_equal cold [r rock status baz]
        }
        assert_equal 15 [r object freq baz]
        wait_for_condition 50 20 {[rock_field access_updates] == $updates + 5} else {
            fail "expected 5 access updates, got [expr {[rock_field access_updates] - $updates}]"
        }
        assert_equal $writes [rock_field writes]
        # A drop after no access (OBJECT FREQ does not touch) queues
        # nothing: the next read's update is the only one the writer
        # commits (in queue order) after the five.
        r rock evict baz
        assert_equal 15 [r object freq baz]
        r rock evict baz
        assert_equal bar [r get baz]
        r rock evict baz
        wait_for_condition 50 20 {[rock_field access_updates] >= $updates + 6} else {
            fail "no access update for the sixth read"
        }
        assert_equal [expr {$updates + 6}] [rock_field access_updates]
        assert_equal 16 [r object freq baz]
        assert_equal $writes [rock_field writes]
        # Updates held in the writer (not committed yet): the reads in
        # between and a BGSAVE's child see the newest counter all the same.
        # (ROCK EVICT waits for its writes; eviction under maxmemory drops
        # a value after its command without waiting. The limit leaves room
        # for all but the value: once it is out, no key is deleted.)
        # 2 MB, built in the server (no 2 MB query buffer held on to), read
        # by STRLEN (no 2 MB reply held): used memory is steady to well
        # under the 1 MB the value takes the server over the limit by.
        r setrange big 1999999 x
        assert_equal 5 [r object freq big]
        r rock evict foo big
        # The writer holds each batch 10 s (a slow host must not see them
        # commit before the checks); DEBUG RELOAD below wakes it.
        r config set rock-debug-write-delay 10000
        set updates [rock_field access_updates]
        r config set maxmemory [expr {[s used_memory] + 1000000}]
        for {set i 0} {$i < 3} {incr i} {
            assert_equal 2000000 [r strlen big]
            wait_for_condition 100 10 {[r rock status big] eq "cold"} else {
                fail "big was not moved out under maxmemory"
            }
        }
        assert_equal 8 [r object freq big]
        wait_for_condition 100 10 {[r rock status big] eq "cold"} else {
            fail "big was not moved out under maxmemory"
        }
        assert_equal $updates [rock_field access_updates] ;# all still held
        r bgsave
        waitForBgsave r
        r config set maxmemory 0
        r config set rock-debug-write-delay 0
        assert_equal OK [r debug reload nosave]
        assert_equal 8 [r object freq big]
        r config set lfu-log-factor 10
        r config set lfu-decay-time 1
        r config set maxmemory-policy noeviction
    } {OK} {needs:debug needs:save}

    test {Overwriting a cold value under an LFU policy gives the new value a fresh counter} {
        # Upstream's dbOverwrite() passes the old value's LFU field on to
        # the new one; a cold key's old value is the shared cold marker,
        # whose field belongs to no key (this server started under an LRU
        # policy: it holds an LRU clock, read as LFU it is noise).
        r flushall
        r config set maxmemory-policy allkeys-lfu
        for {set i 0} {$i < 20} {incr i} {
            r set k$i [string repeat x 300]
            r rock evict k$i
            r exists k$i ;# metadata access: the marker is looked up, not read
            r set k$i [string repeat y 300]
            assert_equal hot [r rock status k$i]
            # A new value's counter: LFU_INIT_VAL, no time elapsed.
            assert_equal 5 [r object freq k$i]
        }
        r config set maxmemory-policy noeviction
    }

    test {Delete, overwrite, expire and flush reclaim disk records} {
        r flushall
        for {set i 0} {$i < 100} {incr i} { r set k$i [string repeat x 200] }
        r rock evict {*}[r keys k*]
        assert_equal 100 [r rock diskkeys]
        r del k0 k1
        r set k2 overwritten
        r getdel k3
        r pexpire k4 1
        r rename k5 k5b
        assert_equal 1 [r rock evict k5b]
        wait_for_condition 50 20 { [r exists k4] == 0 } else { fail "k4 did not expire" }
        # k2's old record is outdated but not deleted yet (stale): the put
        # of its next eviction supersedes it, or its delete removes it.
        assert_equal 96 [r rock diskkeys]
        assert_equal 1 [rock_field stale_records]
        r del k2
        assert_equal 95 [r rock diskkeys]
        assert_equal 0 [rock_field stale_records]
        assert_equal 95 [rock_field cold_keys]
        r get k10
        assert_equal hot-clean [r rock status k10]
        r del k10
        assert_equal 94 [r rock diskkeys]
        r flushall
        assert_equal 0 [r rock diskkeys]
        assert_equal 0 [rock_field cold_keys]
    }

    test {Cold keys expiring on their own reclaim their records} {
        r flushall
        for {set i 0} {$i < 50} {incr i} { r set e$i [string repeat y 100] px 1000 }
        # (On a busy machine a few may expire before they move.)
        set moved [r rock evict {*}[r keys e*]]
        assert_morethan $moved 0
        assert_equal $moved [r rock diskkeys]
        wait_for_condition 200 50 { [r dbsize] == 0 } else { fail "keys did not expire" }
        assert_equal 0 [r rock diskkeys]
        assert_equal 0 [rock_field cold_keys]
    }

    test {FLUSHDB and FLUSHDB ASYNC drop one db's records only; SWAPDB carries cold values} {
        r flushall
        r select 1
        r set a [string repeat 1 100]
        r set b [string repeat 1 100]
        r rock evict a b
        r select 2
        r set a [string repeat 2 100]
        r rock evict a
        r select 3
        r set c [string repeat 3 100]
        r rock evict c
        r select 1
        r swapdb 1 2
        assert_equal [string repeat 2 100] [r get a]
        assert_equal 0 [r exists b]
        r select 2
        assert_equal [string repeat 1 100] [r get b]
        r flushdb
        # Left: db1's a (hot-clean, copy kept) and db3's c.
        assert_equal 2 [r rock diskkeys]
        r select 3
        r flushdb async
        r select 1
        assert_equal [string repeat 2 100] [r get a]
        assert_equal 1 [r rock diskkeys]
        r select 9
    }

    test {SAVE and DEBUG RELOAD keep cold values} {
        r flushall
        rock_build list l
        rock_build hash h
        rock_build stream s
        r set str [string repeat abc 100] ex 1000
        set digest [r debug digest]
        r rock evict l h s str
        assert_equal 4 [rock_field cold_keys]
        # DEBUG DIGEST reads every value, and leaves the cold ones cold (a
        # digest of a dataset ten times maxmemory must not page it all in).
        set loads [rock_field loads]
        assert_equal $digest [r debug digest]
        assert_equal 4 [rock_field cold_keys]
        assert_equal $loads [rock_field loads]
        foreach k {l h s str} { assert_equal cold [r rock status $k] }
        assert_equal OK [r save]
        r rock evict l h s str
        assert_equal OK [r debug reload]
        assert_equal $digest [r debug digest]
        assert_range [r ttl str] 900 1000
    } {} {needs:debug}

    test {DEBUG OBJECT, DEBUG DIGEST-VALUE and MEMORY USAGE page in} {
        r flushall
        r rpush l a b c
        set want [r debug digest-value l]
        r rock evict l
        assert_match "*encoding:*" [r debug object l]
        r rock evict l
        assert_equal $want [r debug digest-value l]
        r rock evict l
        assert {[r memory usage l] > 0}
        assert_equal hot-clean [r rock status l]
    } {} {needs:debug}

    test {MULTI/EXEC and EVAL page in the keys they declare} {
        r flushall
        r set a [string repeat a 100]
        r rpush l x y z
        r rock evict a l
        r multi
        r get a
        r lrange l 0 -1
        r lpush l w
        set res [r exec]
        assert_equal [list [string repeat a 100] {x y z} 4] $res
        r rock evict a l
        r config resetstat
        assert_equal {w x y z} [r eval {return redis.call('lrange', KEYS[1], 0, -1)} 1 l]
        assert_equal 0 [rock_field sync_loads]
        # An undeclared key still works, through the synchronous safety net.
        r rock evict a
        assert_equal [string repeat a 100] [r eval {return redis.call('get', 'a')} 0]
        assert_equal 1 [rock_field sync_loads]
    }

    test {Paging in or out is not a modification for WATCH} {
        r flushall
        r set w [string repeat w 100]
        r watch w
        r rock evict w
        set rd [redis_client]
        $rd get w
        $rd rock evict w
        $rd close
        r multi
        r get w
        assert_equal [list [string repeat w 100]] [r exec]
        # A real modification still aborts.
        r watch w
        set rd [redis_client]
        $rd append w x
        $rd close
        r multi
        r get w
        assert_equal {} [r exec]
    }

    test {ROCK EVICT skips small values, missing keys; ROCK STATUS of a missing key is an error} {
        r flushall
        r config set rock-min-value-size 100
        r set small x
        # Random bytes: RDB's LZF compression can't shrink them under the limit.
        r set big [randstring 200 200 binary]
        assert_equal 1 [r rock evict small big nosuchkey]
        assert_equal hot [r rock status small]
        assert_equal cold [r rock status big]
        assert_error "*no such key*" {r rock status nosuchkey}
        assert_equal 2 [r rock load small big nosuchkey]
        assert_equal hot-clean [r rock status big]
        r config set rock-min-value-size 0
    }

    test {CONFIG RESETSTAT resets the rock counters} {
        r set k [string repeat k 100]
        r rock evict k
        r get k
        assert {[rock_field reads] > 0}
        r config resetstat
        assert_equal 0 [rock_field reads]
        assert_equal 0 [rock_field writes]
        assert_equal 0 [rock_field evictions]
    }

    test {Read latency percentiles are reported} {
        r config resetstat
        r set k [string repeat k 100]
        for {set i 0} {$i < 20} {incr i} { r rock evict k ; r get k }
        assert {[rock_field read_latency_p50_us] > 0}
        assert {[rock_field read_latency_p99_us] >= [rock_field read_latency_p50_us]}
        assert {[rock_field read_latency_p999_us] >= [rock_field read_latency_p99_us]}
    }
}

# Active defrag scans a big collection over many cron ticks (its key waits
# in the db's defrag_later list, with a cursor); the value can go to disk
# between two ticks, and defrag must then leave the key alone.
start_server {tags {"rock"} overrides {rock-enabled yes rock-min-value-size 0}} {
    if {[string match {*jemalloc*} [s mem_allocator]]} {
    test {Active defrag leaves a big value alone once it went to disk mid-scan} {
        set n 400000
        r eval {
            for i = 0, tonumber(ARGV[1]) - 1, 1000 do
                local args = {}
                for j = i, i + 999 do
                    args[#args + 1] = 'f-' .. j
                    args[#args + 1] = 'v-' .. j
                end
                redis.call('hset', KEYS[1], unpack(args))
            end
        } 1 h $n
        assert_encoding hashtable h
        set digest [r debug digest-value h]
        # Defrag at any fragmentation, 1% of the CPU: 400,000 fields take
        # many cron ticks.
        r config set active-defrag-threshold-lower 0
        r config set active-defrag-ignore-bytes 1
        r config set active-defrag-cycle-min 1
        r config set active-defrag-cycle-max 1
        set scanned [expr {[s active_defrag_hits] + [s active_defrag_misses]}]
        r config set activedefrag yes
        # The main dict holds one key: past 1,000 reallocation attempts,
        # defrag is inside the hash.
        wait_for_condition 500 10 {
            [s active_defrag_hits] + [s active_defrag_misses] > $scanned + 1000
        } else {
            fail "active defrag did not start"
        }
        assert_equal 1 [r rock evict h]
        # Defrag counts a key when it is done with it: the next is h, its
        # cursor given up at the next tick (the only key, so a new run would
        # count it again only after this one ended).
        set keys_done [expr {[s active_defrag_key_hits] + [s active_defrag_key_misses]}]
        wait_for_condition 500 10 {
            [s active_defrag_key_hits] + [s active_defrag_key_misses] > $keys_done
        } else {
            fail "active defrag did not finish the key"
        }
        r config set activedefrag no
        assert_equal cold [r rock status h]
        assert_equal $n [r hlen h]
        assert_equal v-123456 [r hget h f-123456]
        assert_equal $digest [r debug digest-value h]
    }
    }
}

start_server {tags {"rock"}} {
    test {ROCK EVICT, LOAD and DISKKEYS need rock enabled} {
        r set k v
        assert_error "*rock is disabled*" {r rock evict k}
        assert_error "*rock is disabled*" {r rock load k}
        assert_error "*rock is disabled*" {r rock diskkeys}
        assert_equal hot [r rock status k]
    }
}
