# tests/unit/rock/reads.tcl -- the asynchronous read path: a client waiting
# for its value never stalls the others, one read serves every waiter, and
# whatever happens to the key while its read is in flight (overwrite, delete,
# flush, swap, re-evict, client gone) the answer is the current value.
# rock-debug-read-delay holds every read in the reader thread for a while so
# that the races can be staged deterministically.
source tests/helpers/rock/util.tcl

proc rock_field {f} { return [dict get [r rock report] $f] }

# Sends commands (a list of lists) as one write, so that the server finds
# them all in the query buffer at once (the client flushes each command).
proc rock_send_pipeline {rd cmds} {
    set buf ""
    foreach c $cmds {
        append buf "*[llength $c]\r\n"
        foreach a $c { append buf "\$[string length $a]\r\n$a\r\n" }
    }
    $rd write $buf
    $rd flush
}

proc rock_wait_committed {} {
    wait_for_condition 500 10 { [rock_field pending_writes] == 0 } else { fail "writes never committed" }
}

start_server {tags {"rock"} overrides {rock-enabled yes rock-min-value-size 0}} {
    set val [string repeat "cold-value-" 20]

    test {A client waiting for a disk read does not stall other clients} {
        r flushall
        r set k $val
        r rock evict k
        r config set rock-debug-read-delay 1000
        set rd [redis_deferring_client]
        $rd get k
        rock_wait_blocked 1
        set start [clock milliseconds]
        assert_equal PONG [r ping]
        r set other 1
        assert_equal 1 [r get other]
        assert {[clock milliseconds] - $start < 500}
        assert_equal $val [$rd read]
        $rd close
        r config set rock-debug-read-delay 0
    }

    test {The rest of a pipeline waits in the socket, not in the query buffer, while a read is in flight} {
        # Stock Redis never pauses a pipeline for I/O, so its query buffer
        # holds one read's worth; a client paused for a disk read must not
        # pile a pipeline of queued commands into memory that counts against
        # maxmemory (they would get -OOM, or push values out). 1.2 MB: it
        # must fit the kernel's socket buffers while the server reads
        # nothing, or the flush below blocks until the read is back (4 MB
        # did not, with tcp_wmem's 4 MB maximum).
        r flushall
        r set k $val
        r rock evict k
        r config set rock-debug-read-delay 1000
        set rd [redis_deferring_client]
        $rd client setname piper
        $rd read
        $rd get k
        set big [string repeat x 4000]
        for {set i 0} {$i < 300} {incr i} { $rd set p:$i $big }
        $rd flush
        rock_wait_blocked 1
        # Give the event loop a chance to read more (it would, if it still
        # watched the socket): a round trip on another connection.
        for {set i 0} {$i < 20} {incr i} { r ping }
        set line [lsearch -inline [split [r client list] "\n"] *name=piper*]
        regexp {qbuf=([0-9]+)} $line -> qbuf
        assert_lessthan $qbuf 200000
        assert_equal $val [$rd read]
        for {set i 0} {$i < 300} {incr i} { assert_equal OK [$rd read] }
        assert_equal 300 [llength [r keys p:*]]
        assert_equal $big [r get p:299]
        $rd close
        r config set rock-debug-read-delay 0
    }

    test {Clients waiting for the same key share one read} {
        r flushall
        r set k $val
        r rock evict k
        r config resetstat
        r config set rock-debug-read-delay 300
        set clients {}
        for {set i 0} {$i < 5} {incr i} {
            set rd [redis_deferring_client]
            $rd get k
            lappend clients $rd
        }
        rock_wait_blocked 5
        foreach rd $clients {
            assert_equal $val [$rd read]
            $rd close
        }
        assert_equal 1 [rock_field reads]
        assert_equal 1 [rock_field loads]
        r config set rock-debug-read-delay 0
    }

    test {Overwrite while a read is in flight waits its turn: each command sees the key as it arrived} {
        r flushall
        r set k $val
        r rock evict k
        r config set rock-debug-read-delay 300
        set rd [redis_deferring_client]
        set rd2 [redis_deferring_client]
        $rd get k
        rock_wait_blocked 1
        # The SET needs no value but names the key a waiting GET names:
        # it waits behind it, as it would run after it on a stock server.
        $rd2 set k fresh
        rock_wait_blocked 2
        assert_equal $val [$rd read]
        assert_equal OK [$rd2 read]
        assert_equal fresh [r get k]
        assert_equal hot [r rock status k]
        $rd close
        $rd2 close
        r config set rock-debug-read-delay 0
    }

    test {DEL and UNLINK while a read is in flight wait their turn} {
        foreach del {del unlink} {
            r flushall
            r set k $val
            r rock evict k
            r config set rock-debug-read-delay 300
            set rd [redis_deferring_client]
            set rd2 [redis_deferring_client]
            $rd get k
            rock_wait_blocked 1
            $rd2 $del k
            rock_wait_blocked 2
            # Other keys are not held up meanwhile.
            assert_equal PONG [r ping]
            r set other 1
            assert_equal $val [$rd read]
            assert_equal 1 [$rd2 read]
            assert_equal 0 [r exists k]
            $rd close
            $rd2 close
            r config set rock-debug-read-delay 0
        }
    }

    test {Arrival order on a key: BRPOPLPUSH clients waiting for a cold destination are served first} {
        # Upstream's "BRPOPLPUSH with multiple blocked clients", with the
        # first client's destination on disk: the push must not overtake it.
        r flushall
        r set target1{t} nolist
        r rock evict target1{t}
        r config set rock-debug-read-delay 300
        set rd1 [redis_deferring_client]
        set rd2 [redis_deferring_client]
        $rd1 brpoplpush blist{t} target1{t} 0
        rock_wait_blocked 1
        $rd2 brpoplpush blist{t} target2{t} 0
        r lpush blist{t} foo
        assert_error "WRONGTYPE*" {$rd1 read}
        assert_equal {foo} [$rd2 read]
        assert_equal {foo} [r lrange target2{t} 0 -1]
        $rd1 close
        $rd2 close
        r config set rock-debug-read-delay 0
    }

    test {Arrival order on a key: a blocked XREADGROUP on a cold stream sees the later DEL} {
        r flushall
        r xadd mystream 666 f v
        r xgroup create mystream mygroup $
        r rock evict mystream
        r config set rock-debug-read-delay 300
        set rd [redis_deferring_client]
        $rd xreadgroup group mygroup Alice block 0 streams mystream ">"
        rock_wait_blocked 1
        r del mystream
        assert_error "*no longer exists*" {$rd read}
        $rd close
        r config set rock-debug-read-delay 0
    }

    test {Arrival order on a key: a later write to a WATCHed key does not abort an EXEC waiting for a read} {
        r flushall
        r set k $val
        r set w 1
        r rock evict k
        r config set rock-debug-read-delay 300
        set rd [redis_deferring_client]
        $rd watch w
        $rd read
        $rd multi
        $rd read
        $rd get k
        $rd read
        $rd exec
        rock_wait_blocked 1
        set rd2 [redis_deferring_client]
        $rd2 set w 2
        rock_wait_blocked 2
        assert_equal [list $val] [$rd read]
        assert_equal OK [$rd2 read]
        assert_equal 2 [r get w]
        $rd close
        $rd2 close
        r config set rock-debug-read-delay 0
    }

    test {A command rejected when it re-runs gives up its place on the key} {
        r flushall
        r set k $val
        r rock evict k
        r config set rock-debug-read-delay 300
        set rd [redis_deferring_client]
        set rd2 [redis_deferring_client]
        $rd append k more
        rock_wait_blocked 1
        $rd2 get k
        rock_wait_blocked 2
        # By the time APPEND re-runs, writes are refused (-MISCONF-like
        # rejection before the command runs): the GET behind it must still
        # be served.
        r config set min-replicas-to-write 1
        assert_error "*NOREPLICAS*" {$rd read}
        assert_equal $val [$rd2 read]
        r config set min-replicas-to-write 0
        $rd close
        $rd2 close
        r config set rock-debug-read-delay 0
    }

    test {A command rejected when it re-runs leaves its values evictable (no pin left behind)} {
        # The value paged in for a waiting command is pinned until that
        # command runs; a re-run rejected before it runs (-NOPERM here, -OOM
        # or a redirect alike) never runs, and must unpin too, or a client
        # whose commands keep getting -OOM holds its values in RAM for good.
        r flushall
        r set k $val
        r rock evict k
        r acl setuser pinner on nopass ~* +@all
        r config set rock-debug-read-delay 300
        set rd [redis_deferring_client]
        $rd auth pinner x
        assert_equal OK [$rd read]
        $rd append k more
        rock_wait_blocked 1
        r acl setuser pinner -append
        assert_error "*NOPERM*" {$rd read}
        assert_equal hot-clean [r rock status k]
        # Not pinned: it moves to disk at once.
        assert_equal 1 [r rock evict k]
        assert_equal cold [r rock status k]
        assert_equal $val [r get k]
        $rd close
        r acl deluser pinner
        r config set rock-debug-read-delay 0
    }

    test {FLUSHALL, FLUSHDB and their ASYNC forms wait behind the reads in flight} {
        foreach flush {{flushall} {flushall async} {flushdb} {flushdb async}} {
            r flushall
            r set k $val
            r rpush l a b c
            r rock evict k l
            r config set rock-debug-read-delay 300
            set rd1 [redis_deferring_client]
            set rd2 [redis_deferring_client]
            $rd1 get k
            $rd2 lrange l 0 -1
            rock_wait_blocked 2
            # As on a stock server, the commands that arrived first see the
            # keys; the flush runs after them.
            r {*}$flush
            assert_equal $val [$rd1 read]
            assert_equal {a b c} [$rd2 read]
            assert_equal 0 [r dbsize]
            $rd1 close
            $rd2 close
            r config set rock-debug-read-delay 0
            assert_equal 0 [r rock diskkeys]
        }
    }

    test {A data command arriving after a waiting FLUSHALL waits behind it; PING does not} {
        r flushall
        r set k $val
        r set other v
        r rock evict k
        r config set rock-debug-read-delay 500
        set rd1 [redis_deferring_client]
        set rd2 [redis_deferring_client]
        set rd3 [redis_deferring_client]
        $rd1 get k
        rock_wait_blocked 1
        $rd2 flushall
        rock_wait_blocked 2
        # A key nobody waits for, named after the FLUSHALL: it must not be
        # read before the flush.
        $rd3 get other
        rock_wait_blocked 3
        # Not a data command: answered at once, the read still in flight.
        assert_equal PONG [r ping]
        assert_equal 3 [rock_field waiting_clients]
        assert_equal $val [$rd1 read]
        assert_equal OK [$rd2 read]
        assert_equal {} [$rd3 read]
        assert_equal 0 [rock_field waiting_clients]
        foreach c [list $rd1 $rd2 $rd3] { $c close }
        r config set rock-debug-read-delay 0
    }

    test {SWAPDB waits behind a read in flight: the GET sees the db as it was} {
        r flushall
        r select 9
        r set k $val
        r rock evict k
        r select 8
        r set k other-db-value
        r rock evict k
        r select 9
        r config set rock-debug-read-delay 300
        set rd [redis_deferring_client]
        $rd get k
        rock_wait_blocked 1
        # The GET arrived first: it reads db 9 as it was before the swap.
        r swapdb 8 9
        assert_equal $val [$rd read]
        assert_equal other-db-value [r get k]
        r select 8
        assert_equal $val [r get k]
        r select 9
        $rd close
        r config set rock-debug-read-delay 0
    }

    test {A change that does not wait its turn voids the read in flight; the value stays right} {
        # Keys a script does not declare are not ordered (they are found as
        # it runs): the script pages k in synchronously and changes it, then
        # eviction pushes the new value out, all while the GET's read of the
        # old value is in flight. That read must be thrown away.
        r flushall
        r set k $val
        r rock evict k
        r config resetstat
        r config set rock-debug-read-delay 300
        set rd [redis_deferring_client]
        $rd get k
        rock_wait_blocked 1
        r eval {return redis.call('append', 'k', '+changed')} 0
        assert_equal 1 [rock_field sync_loads]
        r config set maxmemory 1
        r config set maxmemory 0
        assert_equal "$val+changed" [$rd read]
        $rd close
        r config set rock-debug-read-delay 0
        assert_equal "$val+changed" [r get k]
    }

    test {A client disconnecting while it waits leaves the server consistent} {
        r flushall
        r set k $val
        r rock evict k
        r config set rock-debug-read-delay 300
        set rd [redis_deferring_client]
        $rd get k
        rock_wait_blocked 1
        $rd close
        rock_wait_blocked 0
        r config set rock-debug-read-delay 0
        # The orphaned read completed: the value is in RAM and not pinned.
        wait_for_condition 250 20 { [r rock status k] eq "hot-clean" } else { fail "read never completed" }
        assert_equal 1 [r rock evict k]
        assert_equal $val [r get k]
    }

    test {CLIENT KILL of a waiting client} {
        r flushall
        r set k $val
        r rock evict k
        r config set rock-debug-read-delay 300
        set rd [redis_deferring_client]
        $rd client setname waiter
        $rd read
        $rd get k
        rock_wait_blocked 1
        assert_equal 1 [r client kill type normal skipme yes]
        rock_wait_blocked 0
        catch {$rd read} e
        $rd close
        r config set rock-debug-read-delay 0
        assert_equal $val [r get k]
    }

    test {MULTI/EXEC waits for every key of the transaction, then runs at once} {
        r flushall
        r set a $val
        r rpush l x y
        r hset h f v
        r rock evict a l h
        r config set rock-debug-read-delay 300
        set rd [redis_deferring_client]
        $rd multi
        $rd get a
        $rd rpush l z
        $rd hget h f
        $rd exec
        foreach want {OK QUEUED QUEUED QUEUED} { assert_equal $want [$rd read] }
        rock_wait_blocked 1
        assert_equal PONG [r ping]
        assert_equal [list $val 3 v] [$rd read]
        $rd close
        r config set rock-debug-read-delay 0
        assert_equal {x y z} [r lrange l 0 -1]
    }

    test {Blocking pops on a cold list page it in first} {
        r flushall
        r rpush l a b
        r rock evict l
        r config set rock-debug-read-delay 100
        set rd [redis_deferring_client]
        $rd blpop l 5
        assert_equal {l a} [$rd read]
        $rd close
        r config set rock-debug-read-delay 0
        assert_equal {b} [r lrange l 0 -1]
    }

    test {Pipelined commands on cold keys keep their order} {
        r flushall
        for {set i 0} {$i < 50} {incr i} { r set p$i "value-$i-[string repeat x 50]" }
        r rock evict {*}[r keys p*]
        set rd [redis_deferring_client]
        for {set i 0} {$i < 50} {incr i} {
            $rd get p$i
            $rd append p$i "!"
        }
        for {set i 0} {$i < 50} {incr i} {
            assert_equal "value-$i-[string repeat x 50]" [$rd read]
            assert_equal [expr {[string length "value-$i-"] + 51}] [$rd read]
        }
        $rd close
    }

    test {Read-ahead: a waiting pipeline's cold values are read at once; replies stay current} {
        r flushall
        r config set rock-read-ahead 64
        for {set i 0} {$i < 20} {incr i} { r set ra:$i "ra-$i-[string repeat x 100]" }
        r rock evict {*}[r keys ra:*]
        # All on disk (a value still in the pending buffer is restored from
        # there when its command runs: no read, ahead or not).
        rock_wait_committed
        set before [rock_field read_ahead]
        r config set rock-debug-read-delay 2000
        set rd [redis_deferring_client]
        set cmds {}
        for {set i 0} {$i < 10} {incr i} { lappend cmds [list get ra:$i] }
        lappend cmds {set ra:3 new} {del ra:4} {get ra:3} {get ra:4}
        for {set i 10} {$i < 20} {incr i} { lappend cmds [list get ra:$i] }
        rock_send_pipeline $rd $cmds
        # GET ra:0 waits; the other 19 values are read meanwhile, not after.
        wait_for_condition 200 10 {
            [rock_field reads_in_flight] == 20
        } else {
            fail "reads in flight: [rock_field reads_in_flight], read ahead: [expr {[rock_field read_ahead] - $before}]"
        }
        # Not yet parsed, those commands hold no place: another client's
        # writes run now, and the reads ahead of them must not bring the old
        # values back.
        r set ra:15 other
        r del ra:16
        r config set rock-debug-read-delay 0
        for {set i 0} {$i < 10} {incr i} { assert_equal "ra-$i-[string repeat x 100]" [$rd read] }
        assert_equal OK [$rd read]
        assert_equal 1 [$rd read]
        assert_equal new [$rd read]
        assert_equal {} [$rd read]
        for {set i 10} {$i < 20} {incr i} {
            set want [expr {$i == 15 ? "other" : ($i == 16 ? "" : "ra-$i-[string repeat x 100]")}]
            assert_equal $want [$rd read]
        }
        # ra:1..ra:19 once each: SET and DEL need no value, and the GETs
        # after them find their reads in flight already.
        assert_equal 19 [expr {[rock_field read_ahead] - $before}]
        assert_equal 0 [rock_field errors]
        $rd close
    }

    test {Read-ahead follows SELECT and is off with rock-read-ahead 0} {
        r flushall
        r set a:0 [string repeat a 100]
        r select 10
        r set b:0 [string repeat b 100]
        r set b:1 [string repeat c 100]
        r rock evict b:0 b:1
        r select 9
        r rock evict a:0
        foreach ahead {64 0} {
            r config set rock-read-ahead $ahead
            rock_wait_committed
            set before [rock_field read_ahead]
            set rd [redis_deferring_client]
            rock_send_pipeline $rd {{get a:0} {select 10} {get b:0} {get b:1}}
            assert_equal [string repeat a 100] [$rd read]
            assert_equal OK [$rd read]
            assert_equal [string repeat b 100] [$rd read]
            assert_equal [string repeat c 100] [$rd read]
            assert_equal [expr {$ahead ? 2 : 0}] [expr {[rock_field read_ahead] - $before}]
            $rd close
            r rock evict a:0
            r select 10
            r rock evict b:0 b:1
            r select 9
        }
        r config set rock-read-ahead 64
    }

    test {Read-ahead reads nothing for a command the client's ACL refuses} {
        r flushall
        r set pub:0 [string repeat p 100]
        r set pub:1 [string repeat q 100]
        r set secret:0 [string repeat s 100]
        r rock evict pub:0 pub:1 secret:0
        rock_wait_committed
        r acl setuser ahead on nopass ~pub:* +get
        set rd [redis_deferring_client]
        $rd auth ahead any
        assert_equal OK [$rd read]
        set before [rock_field read_ahead]
        rock_send_pipeline $rd {{get pub:0} {get secret:0} {get pub:1}}
        assert_equal [string repeat p 100] [$rd read]
        assert_error "*NOPERM*" {$rd read}
        assert_equal [string repeat q 100] [$rd read]
        # GET pub:0 waited; pub:1 was read ahead, secret:0 was not (it
        # used to be, and came into RAM for a client that may not read it).
        assert_equal 1 [expr {[rock_field read_ahead] - $before}]
        assert_equal cold [r rock status secret:0]
        $rd close
        r acl deluser ahead
    }
}

# One reader thread: the reads a waiting client queues come back together,
# in the order they were queued, so what read-ahead keeps is exact.
start_server {tags {"rock"} overrides {rock-enabled yes rock-min-value-size 0 rock-io-threads 1 maxmemory 16mb}} {
    foreach kind {compressible random} {
        test "Read-ahead pages in at most its byte cap for a client, in RAM bytes ($kind values)" {
            r flushall
            r config set rock-read-ahead 64
            # 20 strings of 200,000 bytes: 229,376 of RAM each (jemalloc's
            # size class). The cap at 16 MB maxmemory is 1 MB: four of them.
            # Compressible ones take ~2 KB on disk (LZF): a cap on record
            # bytes would let all of them in.
            if {$kind eq "random"} {
                set chunk [randstring 200000 200000 binary]
            } else {
                set chunk [string repeat "compressible-" 15385]
                set chunk [string range $chunk 0 199999]
            }
            for {set i 0} {$i < 20} {incr i} { r set big:$i [string replace $chunk 0 5 [format %06d $i]] }
            r rock evict {*}[r keys big:*]
            rock_wait_committed
            set ahead [rock_field read_ahead]
            set dropped [rock_field read_ahead_dropped]
            set reads [rock_field reads]
            r config set rock-debug-read-delay 200
            set rd [redis_deferring_client]
            set cmds {}
            for {set i 0} {$i < 20} {incr i} { lappend cmds [list get big:$i] }
            rock_send_pipeline $rd $cmds
            for {set i 0} {$i < 20} {incr i} {
                assert_equal [string replace $chunk 0 5 [format %06d $i]] [$rd read]
            }
            r config set rock-debug-read-delay 0
            # GET big:0 waits and reads 1..19 ahead: 1..4 are kept, 5..19
            # dropped. GET big:5 waits, reads 6..19 ahead: 6..9 kept, 10..19
            # dropped. GET big:10: 11..14 kept, 15..19 dropped. GET big:15:
            # 16..19 kept. (The code before the cap kept all 19 of the first
            # wait, 4.4 MB.)
            assert_equal [expr {19 + 14 + 9 + 4}] [expr {[rock_field read_ahead] - $ahead}]
            assert_equal [expr {15 + 10 + 5}] [expr {[rock_field read_ahead_dropped] - $dropped}]
            # A dropped value was read twice: ahead, then for its command.
            assert_equal [expr {20 + 30}] [expr {[rock_field reads] - $reads}]
            assert_equal 0 [rock_field errors]
            $rd close
        }
    }
}

start_server {tags {"rock"} overrides {rock-enabled yes rock-min-value-size 0}} {
    foreach type {list set zset-listpack zset-skiplist} {
        test "SORT BY/GET over a cold $type pages the pattern keys in off the event loop" {
            r flushall
            set ids {}
            for {set i 0} {$i < 20} {incr i} { lappend ids $i }
            switch $type {
                list { r rpush src {*}$ids }
                set { r sadd src {*}$ids }
                zset-listpack { foreach i $ids { r zadd src $i $i } }
                zset-skiplist {
                    foreach i $ids { r zadd src $i $i }
                    r config set zset-max-listpack-entries 0
                    r zadd src 100 extra
                    r zrem src extra
                    r config set zset-max-listpack-entries 128
                }
            }
            set expect {}
            foreach i $ids {
                r set weight_$i [expr {100 - $i}]
                r hset obj_$i name "object-$i"
                lappend expect "object-$i"
            }
            set expect [lreverse $expect]
            r rock evict src
            foreach i $ids { r rock evict weight_$i obj_$i }
            r config resetstat
            assert_equal $expect [r sort src by weight_* get obj_*->name]
            # Every value came back through the reader threads, none on the
            # event loop.
            assert_equal 0 [rock_field sync_loads]
            assert_equal 41 [rock_field loads]
            assert_equal $expect [r sort_ro src by weight_* get obj_*->name]
        }
    }
}
