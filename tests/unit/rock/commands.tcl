# tests/unit/rock/commands.tcl -- commands with special paths over cold
# values: blocking commands (the blocked key cold when the command arrives,
# or a cold destination when a blocked client is served), key-moving
# commands (MIGRATE, COPY, MOVE, RENAME, DUMP/RESTORE), OBJECT and DEBUG
# OBJECT, CLIENT PAUSE while reads are in flight, and the promise that paging
# in or out is invisible: no client-tracking invalidation, no keyspace event.
source tests/helpers/rock/util.tcl

proc rock_field {f} { return [dict get [r rock report] $f] }

start_server {tags {"rock"} overrides {rock-enabled yes rock-min-value-size 0}} {
    set big [string repeat "payload-" 30]

    test {BLMOVE and BLMPOP from a cold list page it in and pop at once} {
        r flushall
        r rpush src a b c
        r rpush dst x
        r rock evict src dst
        r config resetstat
        set rd [redis_deferring_client]
        $rd blmove src dst left right 5
        assert_equal a [$rd read]
        $rd blmpop 5 1 src right
        assert_equal {src c} [$rd read]
        $rd close
        assert_equal {b} [r lrange src 0 -1]
        assert_equal {x a} [r lrange dst 0 -1]
        assert_equal 0 [rock_field sync_loads]
        assert_equal 2 [rock_field loads]
    }

    test {A blocked BLMOVE served after a push writes into a cold destination} {
        r flushall
        r rpush dst [string repeat d 100] y
        r rock evict dst
        set rd [redis_deferring_client]
        $rd blmove empty dst left left 5
        # BLMOVE pages dst in (the client waits for the disk), then blocks
        # on the empty source.
        wait_for_condition 200 20 {
            [r rock status dst] ne "cold" && [s blocked_clients] == 1
        } else {
            fail "BLMOVE did not block on its source"
        }
        # Send dst back to disk while the client is blocked.
        assert_equal 1 [r rock evict dst]
        assert_equal cold [r rock status dst]
        r config resetstat
        r rpush empty moved
        assert_equal moved [$rd read]
        $rd close
        assert_equal [list moved [string repeat d 100] y] [r lrange dst 0 -1]
        assert_equal 0 [r exists empty]
        # The destination was paged in on the event loop, by the safety net:
        # its key was not known when the client blocked.
        assert_equal 1 [rock_field sync_loads]
    }

    test {BZPOPMIN, BZMPOP and ZRANGESTORE on cold sorted sets} {
        r flushall
        r zadd z 1 a 2 b 3 c
        r zadd big 1 $big 2 other
        r rock evict z big
        set rd [redis_deferring_client]
        $rd bzpopmin z 5
        assert_equal {z a 1} [$rd read]
        $rd bzmpop 5 1 z max
        assert_equal {z {{c 3}}} [$rd read]
        $rd close
        r rock evict z
        assert_equal 1 [r zrangestore out z 0 -1]
        assert_equal {b} [r zrange out 0 -1]
        assert_equal 2 [r zcard big]
    }

    test {XREAD BLOCK on a cold stream: data already there, and data added while blocked} {
        r flushall
        r xadd s 1-0 f $big
        r rock evict s
        set rd [redis_deferring_client]
        $rd xread block 5000 streams s 0
        assert_equal [list [list s [list [list 1-0 [list f $big]]]]] [$rd read]
        # Block for new entries, then make the stream cold before one arrives.
        $rd xread block 5000 streams s $
        rock_wait_blocked 1
        r rock evict s
        assert_equal cold [r rock status s]
        r xadd s 2-0 f new
        assert_equal {{s {{2-0 {f new}}}}} [$rd read]
        $rd close
        assert_equal 2 [r xlen s]
    }

    test {XREADGROUP BLOCK on a cold stream with a consumer group} {
        r flushall
        r xadd s 1-0 f v
        r xgroup create s g 0
        r rock evict s
        set rd [redis_deferring_client]
        $rd xreadgroup group g c block 5000 streams s >
        assert_equal {{s {{1-0 {f v}}}}} [$rd read]
        $rd close
        r rock evict s
        assert_equal 1 [lindex [r xpending s g] 0]
    }

    test {COPY of a cold value, within a db and to another db} {
        r flushall
        r hset h f1 $big f2 v2
        r rock evict h
        assert_equal 1 [r copy h h2]
        assert_equal 1 [r copy h h3 db 5]
        r rock evict h h2
        assert_equal [r debug digest-value h] [r debug digest-value h2]
        r select 5
        assert_equal [list $big v2] [r hmget h3 f1 f2]
        r select 9
        # The copies are independent: changing one leaves the other.
        r hset h2 f1 changed
        r rock evict h h2
        assert_equal $big [r hget h f1]
        assert_equal changed [r hget h2 f1]
    }

    test {MOVE of a cold key keeps its value and its TTL and frees the old record} {
        r flushall
        r set m $big ex 1000
        r rock evict m
        assert_equal 1 [r rock diskkeys]
        assert_equal 1 [r move m 4]
        assert_equal 0 [r exists m]
        r select 4
        assert_range [r ttl m] 900 1000
        r rock evict m
        assert_equal $big [r get m]
        r del m
        r select 9
        assert_equal 0 [r rock diskkeys]
    }

    test {RENAME and RENAMENX of cold keys} {
        r flushall
        r set a $big
        r set b other-value-[string repeat z 50]
        r sadd c x y z
        r rock evict a b c
        r rename a a2
        assert_equal 0 [r renamenx a2 b]
        assert_equal 1 [r renamenx c c2]
        r rock evict a2 b c2
        assert_equal $big [r get a2]
        assert_equal {x y z} [lsort [r smembers c2]]
        # Overwriting a cold destination drops its record.
        r rename a2 b
        r rock evict b
        assert_equal $big [r get b]
        r rock evict b
        assert_equal 2 [r rock diskkeys]
    }

    test {DUMP and RESTORE REPLACE over a cold key} {
        r flushall
        r rpush l 1 2 3 $big
        r set t $big
        set payload [r dump l]
        r rock evict l t
        assert_equal $payload [r dump l]
        assert_equal 2 [r rock diskkeys]
        # RESTORE REPLACE over cold t: t's record goes, nothing is read.
        r config resetstat
        r restore t 0 $payload replace
        assert_equal 0 [rock_field reads]
        assert_equal 1 [r rock diskkeys]
        r rock evict t
        assert_equal [r lrange l 0 -1] [r lrange t 0 -1]
        assert_equal 2 [r rock diskkeys]
    }

    test {OBJECT ENCODING, OBJECT REFCOUNT and DEBUG OBJECT of a cold key describe the real value} {
        r flushall
        r hset small a 1
        r rock evict small
        assert_equal listpack [r object encoding small]
        r rock evict small
        assert_equal 1 [r object refcount small]
        r rock evict small
        assert_match {*encoding:listpack*} [r debug object small]
    }
}

start_server {tags {"rock"} overrides {rock-enabled yes rock-min-value-size 0}} {
    set big [string repeat "migrate-" 40]

    test {MIGRATE moves cold values to another server and frees their records} {
        r flushall
        set dst [srv 0 client]
        start_server {overrides {rock-enabled yes rock-min-value-size 0}} {
            set dhost [srv 0 host]
            set dport [srv 0 port]
            set src [srv -1 client]
            $src set s $big
            $src rpush l a b $big
            $src hset h f $big
            $src zadd z 1 $big
            $src sadd t $big other
            $src xadd x 1-0 f $big
            $src pexpire s 100000
            set digests {}
            foreach k {s l h z t x} { lappend digests [$src debug digest-value $k] }
            $src rock evict s l h z t x
            assert_equal 6 [$src rock diskkeys]
            assert_equal OK [$src migrate $dhost $dport "" 9 5000 keys s l h z t x]
            assert_equal 0 [$src dbsize]
            assert_equal 0 [$src rock diskkeys]
            set i 0
            foreach k {s l h z t x} {
                assert_equal [lindex $digests $i] [r debug digest-value $k]
                incr i
            }
            assert_range [r pttl s] 1 100000
            # MIGRATE COPY reads the source and keeps it. (MIGRATE is a write
            # command: every key a write command names counts as modified,
            # so the source's disk copy is outdated (stale), to be
            # superseded when it is written again.)
            $src set c $big
            $src rock evict c
            assert_equal OK [$src migrate $dhost $dport c 9 5000 copy]
            assert_equal $big [r get c]
            assert_equal hot [$src rock status c]
            assert_equal 1 [$src rock diskkeys]
            assert_equal 1 [dict get [$src rock report] stale_records]
            assert_equal $big [$src get c]
            assert_equal 1 [$src rock evict c]
            assert_equal $big [$src get c]
        }
    }
}

start_server {tags {"rock"} overrides {rock-enabled yes rock-min-value-size 0}} {
    set val [string repeat "paused-" 20]

    test {CLIENT PAUSE WRITE: a read of a cold key completes, a write waits for the unpause} {
        r flushall
        r set k $val
        r set w $val
        r rock evict k w
        r config set rock-debug-read-delay 200
        set rd [redis_deferring_client]
        set wr [redis_deferring_client]
        $rd get k
        rock_wait_blocked 1
        r client pause 100000 write
        assert_equal $val [$rd read]
        $wr append w !
        rock_wait_blocked 1
        assert_equal cold [r rock status w]
        r client unpause
        assert_equal [expr {[string length $val] + 1}] [$wr read]
        $rd close
        $wr close
        r config set rock-debug-read-delay 0
    }

    test {CLIENT PAUSE ALL while a read is in flight: the command runs after the pause} {
        r flushall
        r set k $val
        r rock evict k
        r config resetstat
        r config set rock-debug-read-delay 200
        set rd [redis_deferring_client]
        $rd get k
        rock_wait_blocked 1
        # PAUSE ALL holds every client, the one that paused included, so
        # the pause ends by its timeout. The read completes during it; the
        # GET must not be answered before the pause ends.
        set start [clock milliseconds]
        r client pause 1000 all
        assert_equal $val [$rd read]
        assert {[clock milliseconds] - $start >= 900}
        $rd close
        r config set rock-debug-read-delay 0
        assert_equal 1 [rock_field reads]
    }
}

start_server {tags {"rock"} overrides {rock-enabled yes rock-min-value-size 0}} {
    set val [string repeat "tracked-" 20]

    test {Paging in and out sends no client-tracking invalidation} {
        r flushall
        r set k $val
        r set marker 1
        set inv [redis_deferring_client]
        $inv client id
        set inv_id [$inv read]
        $inv subscribe __redis__:invalidate
        $inv read
        set tr [redis_client]
        $tr client tracking on redirect $inv_id
        $tr get k
        $tr get marker
        # Out, in (by another client and by the tracking client), out again.
        r rock evict k
        r get k
        r rock evict k
        $tr get k
        r rock load k
        r rock evict k
        # A real change to another tracked key: the first invalidation the
        # redirect client sees must be that one.
        r set marker 2
        assert_equal {message __redis__:invalidate marker} [$inv read]
        # And a real change of k still invalidates.
        r append k !
        assert_equal {message __redis__:invalidate k} [$inv read]
        $tr close
        $inv close
    }

    test {Paging in and out fires no keyspace event} {
        r flushall
        r config set notify-keyspace-events KEA
        r set k $val
        set sub [redis_deferring_client]
        $sub psubscribe __key*@9__:*
        $sub read
        r rock evict k
        r get k
        r rock evict k
        r rock load k
        r rock evict k
        r set marker 1
        assert_equal {pmessage __key*@9__:* __keyspace@9__:marker set} [$sub read]
        $sub close
        r config set notify-keyspace-events ""
    }
}
