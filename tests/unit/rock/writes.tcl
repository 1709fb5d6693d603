# tests/unit/rock/writes.tcl -- the write path: values moved out of RAM are
# committed by the writer thread; until then they are served from the
# pending buffer, and whatever happens to their keys meanwhile (delete,
# overwrite, flush) RocksDB ends up holding exactly the cold values.
# rock-debug-write-delay holds every batch in the writer thread for a while
# so that "still pending" can be observed. Also: rock-debug-evict-all.
source tests/helpers/rock/util.tcl

proc rock_field {f} { return [dict get [r rock report] $f] }

# Fill `n` keys of `size` bytes (all hot: no maxmemory yet).
proc rock_fill {prefix n size} {
    for {set i 0} {$i < $n} {incr i} {
        r set $prefix$i [string repeat [format %06d $i] [expr {$size / 6}]]
    }
}

proc rock_expected {i size} {
    return [string repeat [format %06d $i] [expr {$size / 6}]]
}

# Keys of `prefix0..n-1` whose value is cold.
proc rock_cold_of {prefix n} {
    set cold {}
    for {set i 0} {$i < $n} {incr i} {
        if {[r rock status $prefix$i] eq "cold"} { lappend cold $i }
    }
    return $cold
}

# Make maxmemory eviction move roughly `bytes` of values on the next command.
proc rock_squeeze {bytes} {
    r config set maxmemory [expr {[s used_memory] - $bytes}]
    r ping
}

start_server {tags {"rock"} overrides {rock-enabled yes maxmemory-policy allkeys-lru}} {
    test {Values waiting for the writer are read back from the pending buffer, not from disk} {
        r flushall
        r config set maxmemory 0
        rock_fill k 300 1200
        r config resetstat
        # Long enough for a loaded machine (16 test clients on 2 cores) to
        # do the squeeze and the ten reads before the batch commits.
        r config set rock-debug-write-delay 4000
        rock_squeeze 150000
        set cold [rock_cold_of k 300]
        assert {[llength $cold] > 20}
        assert {[rock_field pending_writes] > 0}
        # The reads happen while the first batch still sits in the writer.
        foreach i [lrange $cold 0 9] {
            assert_equal [rock_expected $i 1200] [r get k$i]
        }
        assert_equal 0 [rock_field reads]
        assert_equal 10 [rock_field pending_hits]
        r config set rock-debug-write-delay 0
        # (Eviction may go on meanwhile, so both figures at once.)
        wait_for_condition 200 50 {
            [rock_field pending_writes] == 0 && [rock_field pending_bytes] == 0
        } else {
            fail "pending writes never committed: [rock_field pending_writes] / [rock_field pending_bytes] bytes"
        }
        # Committed now: the next cold read goes to RocksDB.
        set i [lindex $cold end]
        assert_equal [rock_expected $i 1200] [r get k$i]
        assert_equal 1 [rock_field reads]
        r config set maxmemory 0
    }

    test {Delete and overwrite while a write is pending: RocksDB keeps exactly the cold values} {
        r flushall
        r config set maxmemory 0
        rock_fill k 300 1200
        r config set rock-debug-write-delay 500
        rock_squeeze 150000
        set cold [rock_cold_of k 300]
        assert {[llength $cold] > 20}
        assert {[rock_field pending_writes] > 0}
        set a [lindex $cold 0]
        set b [lindex $cold 1]
        set c [lindex $cold 2]
        r del k$a
        r set k$b "new-value"
        # Evicted again while its first write may still be pending.
        r get k$c
        r config set maxmemory 0
        r rock evict k$b k$c
        r config set rock-debug-write-delay 0
        assert_equal 0 [r exists k$a]
        assert_equal "new-value" [r get k$b]
        assert_equal [rock_expected $c 1200] [r get k$c]
        # Every cold key has its record and nothing else is left behind
        # (DISKKEYS waits for the writer). k$b and k$c are hot-clean now.
        set records [expr {[rock_field cold_keys] + [rock_field hot_clean_keys]}]
        assert_equal $records [r rock diskkeys]
    }

    test {FLUSHALL with writes pending drops them, replaces RocksDB and frees their memory} {
        r flushall
        r config set maxmemory 0
        rock_fill k 300 1200
        r config resetstat
        r config set rock-debug-write-delay 500
        rock_squeeze 150000
        assert {[rock_field pending_writes] > 0}
        r flushall
        assert_equal 0 [rock_field pending_writes]
        assert_equal 0 [rock_field pending_bytes]
        assert_equal 1 [rock_field store_resets]
        r config set rock-debug-write-delay 0
        assert_equal 0 [r rock diskkeys]
        # The new store works: values move and come back.
        r set x [string repeat x 500]
        assert_equal 1 [r rock evict x]
        assert_equal 1 [r rock diskkeys]
        assert_equal [string repeat x 500] [r get x]
        assert_equal 0 [rock_field cold_keys]
    }

    test {FLUSHALL on a store nothing was written to keeps it (no reset)} {
        r flushall
        r config resetstat
        r set a 1
        r flushall
        assert_equal 0 [rock_field store_resets]
    }

    test {ROCK EVICT commits before it replies} {
        r flushall
        r config set maxmemory 0
        r set k [string repeat v 300]
        r config resetstat
        assert_equal 1 [r rock evict k]
        assert_equal 0 [rock_field pending_writes]
        assert_equal 1 [rock_field writes]
        assert_equal 1 [r rock diskkeys]
    }

    # rdbcompression's LZF is skipped for string values while it keeps
    # failing (random bytes), tried again now and then, and used for every
    # value again as soon as a try pays; values round-trip either way.
    test {LZF is skipped for values that do not compress, and resumes for values that do} {
        r flushall
        r config set maxmemory 0
        r config resetstat
        set rnd {}
        for {set i 0} {$i < 100} {incr i} {
            set v [randstring 1000 1000 binary]
            lappend rnd $v
            r set rnd$i $v
            assert_equal 1 [r rock evict rnd$i]
        }
        # 8 misses, then one try in 32.
        set skipped [rock_field lzf_skipped]
        assert_range $skipped 80 92
        set bytes [rock_field write_bytes]
        assert_morethan $bytes [expr {100 * 1000}]

        # Compressible values: at most one probe period stored plain.
        for {set i 0} {$i < 100} {incr i} {
            r set txt$i [string repeat "compressible text $i " 50]
            assert_equal 1 [r rock evict txt$i]
        }
        assert_range [expr {[rock_field lzf_skipped] - $skipped}] 0 31
        # The last 50 were compressed: far under their 1,000+ bytes each.
        set bytes [rock_field write_bytes]
        for {set i 100} {$i < 150} {incr i} {
            r set txt$i [string repeat "compressible text $i " 50]
            assert_equal 1 [r rock evict txt$i]
        }
        assert_lessthan [expr {[rock_field write_bytes] - $bytes}] [expr {50 * 300}]

        # Both forms read back, and survive an RDB round trip.
        for {set i 0} {$i < 100} {incr i} {
            assert_equal [lindex $rnd $i] [r get rnd$i]
            assert_equal [string repeat "compressible text $i " 50] [r get txt$i]
        }
        foreach k {rnd7 rnd50 txt3 txt120} { r rock evict $k }
        r debug reload
        assert_equal [lindex $rnd 7] [r get rnd7]
        assert_equal [lindex $rnd 50] [r get rnd50]
        assert_equal [string repeat "compressible text 120 " 50] [r get txt120]

        # rdbcompression no: nothing to skip, values stored plain.
        r config set rdbcompression no
        set skipped [rock_field lzf_skipped]
        set bytes [rock_field write_bytes]
        for {set i 0} {$i < 20} {incr i} {
            r set plain$i [string repeat "compressible text $i " 50]
            assert_equal 1 [r rock evict plain$i]
        }
        assert_equal $skipped [rock_field lzf_skipped]
        assert_morethan [expr {[rock_field write_bytes] - $bytes}] [expr {20 * 1000}]
        assert_equal [string repeat "compressible text 19 " 50] [r get plain19]
        r config set rdbcompression yes
    }
}

# A writer far behind (a RocksDB write stall; here rock-debug-write-delay)
# must not stop the event loop: writes wait for it, other clients go on.
start_server {tags {"rock"} overrides {rock-enabled yes maxmemory-policy noeviction}} {
    test {Writes wait for a stalled writer; the event loop goes on serving everyone else} {
        r flushall
        r config set maxmemory 0
        rock_fill k 100 1200
        r config resetstat
        # 2 MB of room: the pending limit is its 1 MB floor.
        r config set maxmemory [expr {[s used_memory] + 2 * 1024 * 1024}]
        r config set rock-debug-write-delay 3000
        # 8 MB of new values in one pipeline: far more than the writer can
        # take while it holds each batch for 3 s. Random bytes, so that the
        # records stay 4 KB (RDB's LZF would shrink repeated text).
        set blob [randstring 8000 8000 binary]
        set rd [redis_deferring_client]
        set n 2000
        for {set i 0} {$i < $n} {incr i} { $rd set w$i [string range $blob $i [expr {$i + 4000}]] }
        $rd flush
        wait_for_condition 200 20 {
            [rock_field write_postponed] > 0
        } else {
            fail "writes never waited for the writer"
        }
        # Writes waited as soon as the backlog was full and memory over:
        # what is not pending stays within maxmemory, give or take a
        # value (the old code let writes run on until half the 1 MB
        # backlog cap over). Client buffers left out: the rest of the
        # pipeline keeps arriving in the waiting client's query buffer, more
        # of it on a loaded machine.
        # Heap, pending bytes and client buffers read in one MULTI: read by
        # separate commands, a batch the writer hands back in between (and
        # the waiting client running on) skews the difference.
        r multi
        r rock report
        r info memory
        lassign [r exec] rep info
        if {![regexp {mem_clients_normal:(\d+)} $info -> clients]} { fail "no mem_clients_normal in INFO" }
        set unpending [expr {[dict get $rep used_memory] - [dict get $rep pending_bytes] - $clients}]
        set limit [expr {[lindex [r config get maxmemory] 1] + 256 * 1024}]
        if {$unpending >= $limit} {
            fail "writes ran on past maxmemory: $unpending bytes neither pending nor client buffers, limit $limit\
                  (used [dict get $rep used_memory], pending [dict get $rep pending_bytes], clients $clients,\
                  postponed [dict get $rep write_postponed], writes [dict get $rep writes])"
        }
        # Other clients are served meanwhile, reads of cold values included
        # (the old code held the whole event loop for each 3 s batch).
        set start [clock milliseconds]
        for {set j 0} {$j < 5} {incr j} {
            assert_equal PONG [r ping]
            assert_equal [rock_expected $j 1200] [r get k$j]
        }
        set took [expr {[clock milliseconds] - $start}]
        assert_lessthan $took 2000
        assert_equal 0 [rock_field write_waits]
        assert {[rock_field waiting_clients] >= 1}
        r config set rock-debug-write-delay 0
        # Every write went through in the end: no -OOM, nothing lost.
        for {set i 0} {$i < $n} {incr i} { assert_equal OK [$rd read] }
        $rd close
        for {set i 0} {$i < $n} {incr i 97} { assert_equal [string range $blob $i [expr {$i + 4000}]] [r get w$i] }
        assert_equal [expr {$n + 100}] [r dbsize]
        r config set maxmemory 0
    }

    test {Queued deletes of cold keys are counted, with the RAM they hold} {
        r flushall
        r config set maxmemory 0
        rock_fill d 200 1200
        assert_equal 200 [r rock evict {*}[r keys d*]]
        # ROCK EVICT committed them: nothing waits for the writer yet.
        assert_equal 0 [rock_field queued_delete_bytes]
        # The first delete's batch is held 4 s; the rest queue behind it.
        r config set rock-debug-write-delay 4000
        for {set i 0} {$i < 200} {incr i} { r del d$i }
        assert_equal 200 [rock_field queued_deletes]
        assert_lessthan [expr {200 * 64}] [rock_field queued_delete_bytes]
        r config set rock-debug-write-delay 0
        wait_for_condition 200 50 {
            [rock_field queued_deletes] == 0 && [rock_field queued_delete_bytes] == 0
        } else {
            fail "queued deletes never committed"
        }
        assert_equal 200 [rock_field deletes]
        assert_equal 0 [r rock diskkeys]
    }
}

start_server {tags {"rock"} overrides {rock-enabled yes}} {
    test {Pinning: a value paged in for a command still waiting for another key is not evicted} {
        r flushall
        r set k2 [string repeat b 500]
        assert_equal 1 [r rock evict k2]
        r set k1 [string repeat a 500]
        # k1 goes out through maxmemory and stays in the pending buffer.
        r config set rock-debug-write-delay 1500
        r config set maxmemory [expr {[s used_memory] - 100}]
        r ping
        r config set maxmemory 0
        assert_equal cold [r rock status k1]
        assert_equal 1 [rock_field pending_writes]
        # MGET gets k1 at once (from the buffer) and waits for k2's read.
        r config set rock-debug-read-delay 1000
        set rd [redis_deferring_client]
        $rd mget k1 k2
        rock_wait_blocked 1
        assert_equal hot-clean [r rock status k1]
        assert_equal 0 [r rock evict k1]
        # Eviction under maxmemory passes it over too.
        r config set maxmemory 1
        r config set maxmemory 0
        assert_equal hot-clean [r rock status k1]
        assert_equal [list [string repeat a 500] [string repeat b 500]] [$rd read]
        $rd close
        r config set rock-debug-read-delay 0
        r config set rock-debug-write-delay 0
        # The command ran: the pin is gone.
        assert_equal 1 [r rock evict k1]
    }

    test {rock-debug-evict-all: every value is on disk after every command, whatever its size} {
        r flushall
        r config set rock-debug-evict-all yes
        r config resetstat
        r set small 1
        assert_equal cold [r rock status small]
        assert_equal 1 [r get small]
        assert_equal cold [r rock status small]
        assert_equal 2 [r incr small]
        assert_equal cold [r rock status small]
        r rpush l a b c
        r hset h f v
        r sadd s m
        r zadd z 1 m
        r xadd st 1-1 f v
        foreach k {l h s z st} { assert_equal cold [r rock status $k] }
        assert_equal {a b c} [r lrange l 0 -1]
        assert_equal v [r hget h f]
        assert_equal 1 [r sismember s m]
        assert_equal 1 [r zscore z m]
        assert_equal 1 [llength [r xrange st - +]]
        foreach k {l h s z st} { assert_equal cold [r rock status $k] }
        # Each access of an existing key went through the read path:
        # GET, INCR, LRANGE, HGET, SISMEMBER, ZSCORE, XRANGE.
        assert_equal 7 [rock_field loads]
        assert_equal 0 [rock_field pending_writes]
        r config set rock-debug-evict-all no
    }

    test {rock-debug-evict-all: MULTI/EXEC, scripts and keys created without a signal} {
        r flushall
        r config set rock-debug-evict-all yes
        r set a 10
        r multi
        r incr a
        r get a
        r rpush q x
        assert_equal {11 11 1} [r exec]
        assert_equal cold [r rock status a]
        assert_equal cold [r rock status q]
        assert_equal 12 [r eval {return redis.call('incr', KEYS[1])} 1 a]
        assert_equal cold [r rock status a]
        # DEBUG POPULATE adds keys without signalling them: a full sweep.
        r debug populate 50 pop 10
        assert_equal cold [r rock status pop:0]
        assert_equal cold [r rock status pop:49]
        assert_equal 50 [llength [r keys pop:*]]
        # Switching the mode on sweeps keys made while it was off.
        r config set rock-debug-evict-all no
        r set later v
        assert_equal hot [r rock status later]
        r config set rock-debug-evict-all yes
        r ping
        assert_equal cold [r rock status later]
        r config set rock-debug-evict-all no
    }

    test {rock-debug-evict-all: a blocked BLPOP is served through the read path} {
        r flushall
        r config set rock-debug-evict-all yes
        set rd [redis_deferring_client]
        $rd blpop bl 0
        wait_for_blocked_clients_count 1
        r rpush bl v1 v2
        assert_equal {bl v1} [$rd read]
        assert_equal {v2} [r lrange bl 0 -1]
        assert_equal cold [r rock status bl]
        $rd close
        r config set rock-debug-evict-all no
    }
}
