# tests/integration/rock/persistence.tcl -- fork-based persistence with
# values on disk: BGSAVE, AOF rewrite (with and without the RDB preamble)
# and replication full sync (disk-based and diskless) write every cold value,
# as of the fork, while the parent keeps changing the dataset; the child
# never calls RocksDB (its parent streams a snapshot to it).
source tests/helpers/rock/util.tcl

proc rock_field {f {client r}} { return [dict get [$client rock report] $f] }

# A dataset of every type, in two databases, some keys with a TTL.
proc rock_fill_types {client} {
    foreach db {9 3} {
        $client select $db
        for {set i 0} {$i < 200} {incr i} {
            $client set str:$i [string repeat "s$i-" 30]
            $client set int:$i $i
        }
        for {set i 0} {$i < 20} {incr i} {
            for {set j 0} {$j < 50} {incr j} {
                $client rpush list:$i "item-$j"
                $client sadd set:$i "member-$j"
                $client zadd zset:$i $j "z-$j"
                $client hset hash:$i "f-$j" "v-$j"
            }
            $client sadd intset:$i 1 2 3 $i
            $client hset smallhash:$i a 1 b 2
            for {set j 1} {$j <= 20} {incr j} { $client xadd stream:$i $j-0 f $j }
            $client xgroup create stream:$i g 0
            $client xreadgroup group g c count 3 streams stream:$i >
            $client pexpire str:$i 5000000
            $client pexpire hash:$i 5000000
        }
    }
    # Some 3 MB of incompressible values in db 3: more than the pipe holds,
    # so the stream is still running while the test flushes db 3.
    $client select 3
    for {set i 0} {$i < 30} {incr i} { $client set big:$i [randstring 100000 100000 alpha] }
    $client select 9
}

# Every value to disk: evict-all sweeps the whole keyspace when switched on.
proc rock_all_cold {client} {
    $client config set rock-debug-evict-all yes
    $client ping
    $client config set rock-debug-evict-all no
    assert_equal [rock_total_keys $client] [rock_field cold_keys $client]
}

proc rock_total_keys {client} {
    set n 0
    foreach db {0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15} {
        set line [getInfoProperty [$client info keyspace] db$db]
        if {$line ne ""} { regexp {keys=(\d+)} $line -> k; incr n $k }
    }
    return $n
}

# n keys k:0.. of ~1 KB random bytes (DEBUG POPULATE's values compress to
# a few bytes, and a whole stream would fit in the pipe), every one moved to
# disk and committed (so that a child's stream, not the pending buffer it
# inherits, carries them). Returns the pool the values were made from.
proc rock_cold_random_keys {n} {
    set pool [rock_random_pool 16 1000]
    set rd [redis_deferring_client]
    for {set i 0} {$i < $n} {incr i} { $rd set k:$i "$i:[lindex $pool [expr {$i % 16}]]" }
    for {set i 0} {$i < $n} {incr i} { $rd read }
    $rd close
    rock_all_cold r
    wait_for_condition 500 10 { [rock_field pending_writes] == 0 } else { fail "writes still pending" }
    return $pool
}

# A BGSAVE slowed by rdb-key-save-delay is still running: let it finish,
# and it must have succeeded.
proc rock_end_slow_bgsave {} {
    assert_equal 1 [s rdb_bgsave_in_progress]
    r config set rdb-key-save-delay 0
    waitForBgsave r
    assert_equal ok [s rdb_last_bgsave_status]
}

proc rock_wait_aofrw {client} {
    wait_for_condition 1000 20 {
        [getInfoProperty [$client info persistence] aof_rewrite_in_progress] == 0 &&
        [getInfoProperty [$client info persistence] aof_rewrite_scheduled] == 0
    } else {
        fail "AOF rewrite did not finish"
    }
}

start_server {tags {"rock external:skip needs:debug"} overrides {rock-enabled yes rock-min-value-size 0}} {
    test {BGSAVE with every value cold writes them all; the file checks OK and loads back equal} {
        rock_fill_types r
        set digest [r debug digest]
        rock_all_cold r
        r config resetstat
        r bgsave
        waitForBgsave r
        assert_equal ok [s rdb_last_bgsave_status]
        # The parent read nothing for the child: no read on its behalf.
        assert_equal 0 [rock_field reads]
        set file [file join [lindex [r config get dir] 1] [lindex [r config get dbfilename] 1]]
        set out [exec src/redis-check-rdb $file]
        assert_match "*RDB looks OK*" $out
        assert_match "*[rock_total_keys r] keys read*" $out
        # The snapshot is let go once the child has its values.
        wait_for_condition 250 20 {
            [rock_field rocksdb_snapshots] == 0
        } else { fail "the RocksDB snapshot of the fork is still held" }
        r debug reload nosave
        assert_equal $digest [r debug digest]
        assert_equal 0 [rock_field cold_keys]
    }

    test {BGSAVE writes the dataset as of the fork while clients change it, flush and evict included} {
        r flushall
        rock_fill_types r
        for {set i 0} {$i < 20} {incr i} { r set pending:$i [string repeat "p$i" 1000] }
        set digest [r debug digest]
        # Every value to disk, by maxmemory eviction this time, with the
        # writer held back: the pending:* values (never written before) are
        # still waiting for it at the fork, and the child takes them from
        # the pending buffer it inherits.
        set total [rock_total_keys r]
        r config set rock-debug-write-delay 3000
        r config set maxmemory 1
        # Held 3 s a batch: eviction goes on as each batch comes back (the
        # event loop no longer waits for the writer), a few batches in all.
        wait_for_condition 2000 10 {
            [rock_field cold_keys] == $total
        } else { fail "not every value moved: [rock_field cold_keys] of $total" }
        assert {[rock_field pending_writes] > 0}
        r config set rdb-key-save-delay 3000
        r bgsave
        r config set maxmemory 0
        wait_for_condition 500 10 { [s rdb_bgsave_in_progress] == 1 } else { fail "no bgsave" }
        r config set rock-debug-write-delay 0
        # Change cold values, delete some, flush a whole database (range
        # delete and file deletion under the child's snapshot), re-evict.
        for {set i 0} {$i < 50} {incr i} { r append str:$i "-after" }
        r del list:1 list:2 set:3 pending:4
        r set newkey [string repeat n 300]
        r select 3
        r flushdb
        r select 9
        rock_all_cold r
        rock_end_slow_bgsave
        r debug reload nosave
        assert_equal $digest [r debug digest]
    }

    test {A long BGSAVE stream swaps its iterator while writes and flushes go on; the file is the fork's dataset} {
        # The stream thread takes a fresh iterator on its snapshot every
        # 200 ms (so it no longer holds the memtables and files RocksDB had
        # at the fork). 20 MB of cold values, a child slowed to 100 us a
        # key: the stream fills the pipe and waits, seconds in all, while
        # cold values are overwritten and moved out again (memtable flushes
        # under the snapshot) and one database is flushed (a range delete).
        r flushall
        r select 3
        r debug populate 2000 other 500
        r select 9
        rock_cold_random_keys 20000
        set digest [r debug digest]
        set before [rock_field fork_stream_refreshes]
        r config set rdb-key-save-delay 100
        r bgsave
        wait_for_condition 500 10 { [s rdb_bgsave_in_progress] == 1 } else { fail "no bgsave" }
        for {set round 0} {$round < 4} {incr round} {
            for {set i 0} {$i < 20000} {incr i 97} { r set k:$i "after-$round-$i" }
            r select 3
            if {$round == 1} { r flushdb }
            r select 9
            rock_all_cold r
        }
        rock_end_slow_bgsave
        assert_morethan [rock_field fork_stream_refreshes] $before
        r debug reload nosave
        assert_equal $digest [r debug digest]
        assert_equal 0 [rock_field errors]
    }

    test {A BGSAVE's child holds none of RocksDB's files open: what compaction deletes under it is freed at once} {
        # A forked child inherits every file descriptor of the parent,
        # RocksDB's open tables and blob files among them. It never reads
        # them (the stream brings cold values), but a file the parent
        # deletes keeps its disk space while any process holds it open:
        # a child alive through a compaction or a FLUSHDB held hundreds of
        # MB of deleted files in the soak, enough to fill rock-dir. The
        # child now closes them right after the fork.
        r flushall
        r select 9
        set pool [rock_cold_random_keys 20000]
        set digest [r debug digest]
        # 500 us a key: the child lives 10 s, past the rounds below even on
        # a loaded machine (at 100 us, 2 s, it once ended before them).
        r config set rdb-key-save-delay 500
        r bgsave
        wait_for_condition 500 10 { [s rdb_bgsave_in_progress] == 1 } else { fail "no bgsave" }
        set child [get_child_pid 0]
        # Overwrite and move out again: memtable flushes and compactions
        # replace (delete) the files the parent had open at the fork.
        for {set round 0} {$round < 3} {incr round} {
            for {set i 0} {$i < 20000} {incr i 7} { r set k:$i "after-$round-$i:[lindex $pool [expr {$i % 16}]]" }
            rock_all_cold r
        }
        wait_for_condition 500 10 { [rock_field pending_writes] == 0 } else { fail "writes still pending" }
        set held {}
        foreach fd [glob -nocomplain /proc/$child/fd/*] {
            if {![catch {file readlink $fd} target] && [string match */rocksdb/* $target]} { lappend held $target }
        }
        set parent 0
        foreach fd [glob -nocomplain /proc/[srv 0 pid]/fd/*] {
            if {![catch {file readlink $fd} target] && [string match */rocksdb/*.sst* $target]} { incr parent }
        }
        # Still the same child, and the parent does have tables open.
        assert_equal 1 [s rdb_bgsave_in_progress]
        assert_equal $child [get_child_pid 0]
        assert_morethan $parent 0
        assert_equal {} $held
        rock_end_slow_bgsave
        r debug reload nosave
        assert_equal $digest [r debug digest]
        assert_equal 0 [rock_field errors]
    }

    test {A BGSAVE stream waiting on a large record holds none of its blocks; the file is the fork's dataset} {
        # The child writes its hot keys first (1 ms each here: 3 s), and
        # the stream waits on the pipe with the first cold record, a 3 MB
        # value. Its iterator, standing on it, held the record's block
        # (charged to the block cache as pinned) and a read-ahead buffer
        # grown to its size for as long as the write waited: a few MB for
        # each version of the key still in a file (20 MB in the soak).
        # Records of 256 KB or more are now copied and the iterator let
        # go before the write; the next one seeks past the key. 18 MB of
        # big values: more than a memtable, so the first ones are in a
        # file (an iterator on a memtable holds no block).
        r flushall
        r select 9
        r debug populate 3000 hot 100
        set chunks [rock_random_pool 8 4096]
        set cold {}
        for {set j 0} {$j < 6} {incr j} {
            set v ""
            for {set c 0} {$c < 768} {incr c} { append v [lindex $chunks [expr {($c * 5 + $j) % 8}]] }
            r set aaa:big:$j $v
            lappend cold aaa:big:$j
        }
        set rd [redis_deferring_client]
        for {set i 0} {$i < 500} {incr i} {
            $rd set k:$i "$i:[lindex $chunks [expr {$i % 8}]]"
            lappend cold k:$i
        }
        for {set i 0} {$i < 500} {incr i} { $rd read }
        $rd close
        assert_equal [llength $cold] [r rock evict {*}$cold]
        wait_for_condition 500 10 {
            [rock_field pending_writes] == 0 && [rock_field rocksdb_disk_bytes] > 0 &&
            [rock_field rocksdb_running_flushes] == 0
        } else { fail "writes still pending" }
        set digest [r debug digest]
        r config set rdb-key-save-delay 1000
        r bgsave
        wait_for_condition 500 10 { [s rdb_bgsave_in_progress] == 1 } else { fail "no bgsave" }
        # Reading a large record pins its block for a moment (longer on a
        # loaded machine); waiting on the pipe with it held pinned it for
        # the whole wait. So: most samples, not every one.
        set held 0
        for {set round 0} {$round < 10} {incr round} {
            if {[rock_field rocksdb_block_cache_pinned] >= 1024 * 1024} { incr held }
            after 100
        }
        # Still in the child's hot keys: the stream was waiting all along.
        assert_equal 1 [s rdb_bgsave_in_progress]
        assert_lessthan $held 4
        rock_end_slow_bgsave
        r debug reload nosave
        assert_equal $digest [r debug digest]
        assert_equal 0 [rock_field errors]
    }

    test {A BGSAVE stream sends a big collection stored element by element in pieces, never whole; the file is the fork's dataset} {
        # As above, the child writes its hot keys first and the stream waits
        # on the pipe with the first cold record: here a hash of 40,000
        # fields (9 MB as one record) stored element by element. It was
        # assembled whole in the parent before the write, that much more
        # of the heap (counted in used_memory) for the whole wait; now it
        # goes in pieces of about 64 KB as they are read. A set and a sorted
        # set of many pieces follow; BGSAVE and an AOF rewrite both load
        # back to the fork's digest.
        r flushall
        r select 9
        r debug populate 3000 hot 100
        set pool [rock_random_pool 8 200]
        rock_big_hash aaa:hash 40000 $pool
        for {set b 0} {$b < 40} {incr b} {
            set args {}
            for {set i [expr {$b * 1000}]} {$i < ($b + 1) * 1000} {incr i} { lappend args member:$i }
            r sadd aaa:set {*}$args
            set args {}
            for {set i [expr {$b * 1000}]} {$i < ($b + 1) * 1000} {incr i} { lappend args [expr {$i * 0.5}] m:$i }
            r zadd aaa:zset {*}$args
        }
        assert_equal 3 [r rock evict aaa:hash aaa:set aaa:zset]
        wait_for_condition 500 10 {
            [rock_field pending_writes] == 0 && [rock_field rocksdb_running_flushes] == 0
        } else { fail "writes still pending" }
        assert_morethan_equal [r rock diskelements] 120000
        set digest [r debug digest]
        set before [s used_memory]
        r config set rdb-key-save-delay 1000
        r bgsave
        wait_for_condition 500 10 { [s rdb_bgsave_in_progress] == 1 } else { fail "no bgsave" }
        # The stream reaches the hash at once and waits on it for ~3 s.
        set grown 0
        for {set round 0} {$round < 10} {incr round} {
            set grown [expr {max($grown, [s used_memory] - $before)}]
            after 100
        }
        assert_equal 1 [s rdb_bgsave_in_progress]
        assert_lessthan $grown [expr {2 * 1024 * 1024}]
        rock_end_slow_bgsave
        r debug reload nosave
        assert_equal $digest [r debug digest]
        assert_equal 3 [r rock evict aaa:hash aaa:set aaa:zset]
        wait_for_condition 500 10 { [rock_field pending_writes] == 0 } else { fail "writes still pending" }
        r config set appendonly yes
        rock_wait_aofrw r
        r debug loadaof
        assert_equal $digest [r debug digest]
        r config set appendonly no
        assert_equal 0 [rock_field errors]
    }

    test {A BGSAVE stream passes a big value holding about one copy of it, not its blocks and read-ahead too} {
        # A record of 256 KB or more (here a 3 MB list, whole) was read by
        # the stream's iterator into a data block of its size, copied to the
        # heap, into a read-ahead buffer grown to its size, and copied once
        # more to be sent: the parent's peak RSS rose 12 MB while the stream
        # passed it, 27 MB with four versions of it still in files (the
        # iterator holds a block of each). Such records now live in blob
        # files, read once for the version returned: 2.5 MB. The peak is the
        # kernel's (VmHWM, reset before the BGSAVE), not a sample.
        r flushall
        r select 9
        # Three versions written, each past a 2 MB memtable (maxmemory / 16).
        r config set maxmemory 32mb
        # Random elements (generated by the server), so that compression
        # does not shrink the record.
        set fill {
            math.randomseed(tonumber(ARGV[1]))
            local t = {}
            for i = 1, 1000 do
                local s = {}
                for j = 1, 150 do s[j] = string.char(math.random(33, 122)) end
                t[i] = table.concat(s)
            end
            return redis.call('rpush', KEYS[1], unpack(t))
        }
        for {set v 0} {$v < 3} {incr v} {
            r del aaa:list
            for {set b 0} {$b < 20} {incr b} { r eval $fill 1 aaa:list [expr {$v * 100 + $b + 1}] }
            assert_equal 1 [r rock evict aaa:list]
            wait_for_condition 500 10 { [rock_field pending_writes] == 0 } else { fail "writes still pending" }
        }
        wait_for_condition 500 10 { [rock_field rocksdb_running_flushes] == 0 } else { fail "flush still running" }
        assert_equal cold [r rock status aaa:list]
        set digest [r debug digest]
        set pid [srv 0 pid]
        set base [rock_proc_status_kb $pid VmRSS]
        set fd [open /proc/$pid/clear_refs w]
        puts -nonewline $fd 5
        close $fd
        r bgsave
        waitForBgsave r
        assert_equal ok [s rdb_last_bgsave_status]
        set grown [expr {[rock_proc_status_kb $pid VmHWM] - $base}]
        assert_lessthan $grown [expr {8 * 1024}]
        r debug reload nosave
        assert_equal $digest [r debug digest]
        assert_equal 20000 [r llen aaa:list]
        assert_equal 0 [rock_field errors]
        r config set maxmemory 0
    }

    test {While a load writes the dataset through RocksDB, the writer still gives glibc's freed memory back} {
        # No timer runs while loading, so the once-a-second malloc_trim of
        # rockCron() would not either: 20-45 s of AOF load in the soak, and
        # RSS over the bound just after it. The loading path runs rockCron()
        # every 100 ms instead. DEBUG RELOAD serves no other client while it loads, so
        # the count is taken around it: a load of 6 s or more must add at
        # least 4 (before, at most the 1 or 2 rockCron() asks for around it).
        r flushall
        r config set maxmemory 0
        r debug populate 30000 t 1000
        r config set maxmemory 10mb
        r config set key-load-delay 200
        set t0 [getInfoProperty [r info rock] rock_malloc_trims]
        set start [clock milliseconds]
        r debug reload
        set took [expr {[clock milliseconds] - $start}]
        set t1 [getInfoProperty [r info rock] rock_malloc_trims]
        r config set key-load-delay 0
        assert_morethan $took 6000
        assert_morethan_equal [expr {$t1 - $t0}] 4
        assert_equal 30000 [r dbsize]
        r config set maxmemory 0
    }

    test {A load keeps room for the keys its RDB announces: the value of each key past its hot share moves, nothing is sampled} {
        # The RDB's RESIZEDB opcode says how many keys come. Counted only
        # as they arrive, the keys still to come would push the values kept
        # early out one at a time, each found by sampling a keyspace mostly
        # cold already (2.4 keys looked at per value moved here, 20 for
        # 1M keys of 1 KB in 100mb); with their room set aside from the
        # start, the load moves the value of the key it just read, and
        # ends about at maxmemory, RocksDB's memory over its working floor
        # counted.
        r flushall
        r config set maxmemory 0
        r debug populate 300000 t 1000
        # Cold before the reload, so that no eviction runs before it loads.
        rock_all_cold r
        wait_for_condition 500 10 { [rock_field pending_writes] == 0 } else { fail "writes still pending" }
        r config set maxmemory 64mb
        set e0 [getInfoProperty [r info rock] rock_evictions]
        set s0 [getInfoProperty [r info rock] rock_eviction_samples]
        r debug reload
        set info [r info everything]
        set moved [expr {[getInfoProperty $info rock_evictions] - $e0}]
        set samples [expr {[getInfoProperty $info rock_eviction_samples] - $s0}]
        set at_end [expr {[getInfoProperty $info used_memory] - [getInfoProperty $info rock_pending_bytes] +
                          [getInfoProperty $info rock_rocksdb_memory]}]
        set parts {}
        foreach f {used_memory rock_pending_bytes rock_rocksdb_memtables rock_rocksdb_memtables_pinned rock_rocksdb_table_readers rock_rocksdb_block_cache_usage} {
            lappend parts "$f [format %.1f [expr {[getInfoProperty $info $f] / 1048576.0}]]"
        }
        puts "load: $moved values moved, $samples keys sampled, [expr {$at_end / 1048576}] MB at its end ([join $parts {, }])"
        assert_equal 300000 [r dbsize]
        assert_morethan $moved 200000
        assert_lessthan $samples [expr {$moved / 100}]
        # Eviction leaves RocksDB its 4 MB working floor (ROCK_MEMORY_FLOOR)
        # outside maxmemory, and so does the load's projection: 64 MB + 4.
        # (63 MB here alone; 67 MB under the 16-client suite.)
        assert_lessthan $at_end [expr {68 * 1048576}]
        r config set maxmemory 0
    }

    test {A load that moves values to disk holds RocksDB's compactions until it ends, then drains L0 at the load trigger} {
        # Compacting while a load runs rewrites a base level as big as the
        # data loaded so far at every batch of L0 files, on the core the
        # load needs. Held, L0 passes the load trigger (24 files) and the
        # files are compacted once the load is over, with the trigger's
        # slowdown and stop above them meanwhile.
        r flushall
        r config set maxmemory 0
        # Values RDB and RocksDB can't compress: 30,000 of 4 KB, about 120
        # MB, of which some 90 MB fill about 45 memtables.
        set pool [rock_random_pool 64 1000]
        set rd [redis_deferring_client]
        for {set i 0} {$i < 30000} {incr i} {
            $rd set k:$i "$i:[lindex $pool [expr {$i % 64}]][lindex $pool [expr {($i / 64) % 64}]][lindex $pool [expr {($i / 7) % 64}]][lindex $pool [expr {($i / 13) % 64}]]"
        }
        for {set i 0} {$i < 30000} {incr i} { $rd read }
        $rd close
        r save
        set digest [r debug digest]
        # The held L0 files' compaction may take an eighth of maxmemory, at
        # 64 KB a file: 65 files at 32mb, memtables of 2 MB, room for a file
        # of 130 MB.
        r config set maxmemory 32mb
        r config set key-load-delay 100
        # Clients are served while loading every this many bytes of the
        # file.
        r config set loading-process-events-interval-bytes 65536
        r config rewrite
        # NOSAVE: the RDB just saved loads (a clean stop that saves would
        # start warm, writing nothing).
        restart_server 0 false false 0 nosave
        # INFO is served while loading.
        set c [redis_client]
        wait_for_condition 400 50 {
            [getInfoProperty [$c info persistence] loading] eq 1 &&
            [getInfoProperty [$c info rock] rock_rocksdb_l0_compaction_trigger] == 24 &&
            [getInfoProperty [$c info rock] rock_rocksdb_l0_files] >= 36
        } else {
            fail "L0 did not pass the load trigger while loading: [getInfoProperty [$c info rock] rock_rocksdb_l0_files] files, trigger [getInfoProperty [$c info rock] rock_rocksdb_l0_compaction_trigger], loading [getInfoProperty [$c info persistence] loading]"
        }
        assert_equal 0 [getInfoProperty [$c info rock] rock_rocksdb_write_stopped]
        wait_for_condition 1000 50 {
            [getInfoProperty [$c info persistence] loading] eq 0
        } else {
            fail "the load never ended"
        }
        # The load's L0 files are compacted at the load trigger, writes
        # neither slowed nor stopped for them (the trigger for writes, 12,
        # would stop them at 48 files); then the trigger goes back to the
        # one for writes, then for reads.
        set t0 [clock milliseconds]
        set samples 0
        while {[clock milliseconds] - $t0 < 20000} {
            set info [$c info rock]
            set files [getInfoProperty $info rock_rocksdb_l0_files]
            set trigger [getInfoProperty $info rock_rocksdb_l0_compaction_trigger]
            if {$files < 24 && $trigger < 24} break
            if {$files >= 24} {
                incr samples
                assert_equal 24 $trigger
                assert_equal 0 [getInfoProperty $info rock_rocksdb_write_stopped]
                assert_equal 0 [getInfoProperty $info rock_rocksdb_delayed_write_rate]
            }
            after 20
        }
        puts "L0 drained in [expr {[clock milliseconds] - $t0}] ms ($samples samples at 24 files or more)"
        assert_lessthan $files 24
        assert_lessthan $trigger 24
        $c close
        reconnect
        assert_equal 30000 [r dbsize]
        r config set key-load-delay 0
        r config set loading-process-events-interval-bytes 2097152
        assert_equal $digest [r debug digest]
        r config set maxmemory 0
        r config rewrite
    }

    foreach preamble {yes no} {
        test "BGREWRITEAOF (aof-use-rdb-preamble $preamble) writes cold values; DEBUG LOADAOF gives the same dataset" {
            r flushall
            r config set aof-use-rdb-preamble $preamble
            rock_fill_types r
            r config set appendonly yes
            rock_wait_aofrw r
            rock_all_cold r
            set digest [r debug digest]
            r bgrewriteaof
            rock_wait_aofrw r
            assert_equal ok [getInfoProperty [r info persistence] aof_last_bgrewrite_status]
            rock_all_cold r
            r debug loadaof
            assert_equal $digest [r debug digest]
            r config set appendonly no
        }
    }

    test {FLUSHALL while an AOF rewrite streams cold values: the rewrite completes, the data is gone} {
        r flushall
        r config set aof-use-rdb-preamble no
        rock_fill_types r
        r config set appendonly yes
        rock_wait_aofrw r
        rock_all_cold r
        r config set rdb-key-save-delay 500
        r bgrewriteaof
        wait_for_condition 500 10 {
            [getInfoProperty [r info persistence] aof_rewrite_in_progress] == 1
        } else { fail "no rewrite" }
        r flushall
        r set after-flush [string repeat a 200]
        r rock evict after-flush
        r config set rdb-key-save-delay 0
        rock_wait_aofrw r
        assert_equal ok [getInfoProperty [r info persistence] aof_last_bgrewrite_status]
        assert_equal 1 [r rock diskkeys]
        r debug loadaof
        assert_equal 1 [rock_total_keys r]
        assert_equal [string repeat a 200] [r get after-flush]
        r config set appendonly no
        r config set aof-use-rdb-preamble yes
    }
}

foreach diskless {no yes} {
    start_server {tags {"rock repl external:skip needs:debug"} overrides {rock-enabled yes rock-min-value-size 0}} {
        set master [srv 0 client]
        set master_host [srv 0 host]
        set master_port [srv 0 port]
        start_server {overrides {rock-enabled yes rock-min-value-size 0}} {
            set replica [srv 0 client]
            test "Full sync (repl-diskless-sync $diskless) from a master with every value cold, under writes" {
                $master config set repl-diskless-sync $diskless
                $master config set repl-diskless-sync-delay 0
                rock_fill_types $master
                rock_all_cold $master
                $master config set rdb-key-save-delay 1000
                $replica replicaof $master_host $master_port
                wait_for_condition 500 20 {
                    [s -1 rdb_bgsave_in_progress] == 1
                } else { fail "no full sync started" }
                for {set i 0} {$i < 100} {incr i} { $master append str:$i "-during-sync" }
                $master del list:0
                $master config set rdb-key-save-delay 0
                wait_for_ofs_sync $master $replica
                wait_for_condition 100 50 {
                    [$master debug digest] eq [$replica debug digest]
                } else { fail "replica differs from master" }
                # A partial resync after the link drops.
                $replica client kill type master
                for {set i 100} {$i < 150} {incr i} { $master append str:$i "-while-down" }
                wait_for_condition 100 50 {
                    [status $replica master_link_status] eq "up"
                } else { fail "replica did not reconnect" }
                wait_for_ofs_sync $master $replica
                assert_equal [$master debug digest] [$replica debug digest]
                assert_equal 1 [s -1 sync_partial_ok]
                assert_equal 1 [s -1 sync_full]
            }
        }
    }
}

start_server {tags {"rock external:skip needs:debug"} overrides {rock-enabled yes}} {
    foreach {kind aof} {RDB no AOF yes} {
        test "Restart from an $kind five times maxmemory evicts while loading and stays under the bound" {
            r flushall
            r config set maxmemory 0
            r config set appendonly no
            # About 110 MB of values against maxmemory 20mb.
            r debug populate 100000 big 1000
            set digest [r debug digest]
            if {$aof} {
                r config set aof-use-rdb-preamble no
                r config set appendonly yes
                rock_wait_aofrw r
            } else {
                r save
            }
            r config set maxmemory 20mb
            r config rewrite
            restart_server 0 true false
            assert_equal 100000 [r dbsize]
            set peak [s used_memory_peak]
            assert {[rock_field cold_keys] > 70000}
            assert {$peak < 20*1024*1024*1.15 + 4*1024*1024}
            assert {[s used_memory] < 20*1024*1024*1.15}
            # DEBUG DIGEST reads every value back (and goes over maxmemory
            # while it runs, as one command may).
            assert_equal $digest [r debug digest]
        }
    }
}

start_server {tags {"rock repl external:skip needs:debug"} overrides {rock-enabled yes}} {
    set master [srv 0 client]
    set master_host [srv 0 host]
    set master_port [srv 0 port]
    start_server {overrides {rock-enabled yes maxmemory 20mb}} {
        set replica [srv 0 client]
        test {A replica five times over its maxmemory loads the full sync by evicting, and keeps evicting} {
            $master debug populate 100000 big 1000
            $replica replicaof $master_host $master_port
            wait_for_condition 200 100 {
                [status $replica master_link_status] eq "up"
            } else { fail "replica did not sync" }
            assert_equal 100000 [$replica dbsize]
            assert {[s used_memory_peak] < 20*1024*1024*1.15 + 4*1024*1024}
            assert {[rock_field cold_keys $replica] > 70000}
            # Replicated writes: replica-ignore-maxmemory keeps it from
            # deleting keys, not from moving values to disk.
            assert_equal yes [lindex [$replica config get replica-ignore-maxmemory] 1]
            for {set i 0} {$i < 20000} {incr i} {
                $master set new:$i [string repeat [format %08d $i] 125]
            }
            wait_for_ofs_sync $master $replica
            assert_equal 120000 [$replica dbsize]
            assert {[s used_memory] < 20*1024*1024*1.15 + 4*1024*1024}
            assert_equal [$master debug digest] [$replica debug digest]
        }
    }
}
