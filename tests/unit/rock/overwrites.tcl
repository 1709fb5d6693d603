# tests/unit/rock/overwrites.tcl -- writes over cold values cost no RocksDB
# delete when a put will follow: an overwritten or modified value's disk
# record is kept as "stale" (ROCK REPORT stale_records) until the next
# eviction's put supersedes it or the key goes (DEL, expiry, FLUSHDB), and is
# deleted at once when the new value is too small ever to be evicted. Also:
# the write/space amplification figures, and the L0 compaction trigger that
# follows the write rate.
source tests/helpers/rock/util.tcl

proc rock_field {f} { return [dict get [r rock report] $f] }

# A 1,200-byte value that tells its key and version apart.
proc rock_val {i v} { return [string repeat [format %04d-%01d $i $v] 200] }

# n keys k0..k(n-1), every value on disk.
proc rock_cold_keys {n} {
    r flushall
    r config set maxmemory 0
    for {set i 0} {$i < $n} {incr i} { r set k$i [rock_val $i 0] }
    set keys {}
    for {set i 0} {$i < $n} {incr i} { lappend keys k$i }
    assert_equal $n [r rock evict {*}$keys]
}

# n keys w0..w(n-1) holding one 20 KB value of random letters (LZF can't
# shrink it), moved to disk 50 at a time. (Copied on the server: a 20 KB SET
# from the Tcl client meets the 40 ms delayed-ACK wait.)
proc rock_evicted_copies {n} {
    r set rnd [randstring 20000 20000 alpha]
    set keys {}
    for {set i 0} {$i < $n} {incr i} {
        r copy rnd w$i
        lappend keys w$i
        if {[llength $keys] == 50} { r rock evict {*}$keys; set keys {} }
    }
}

start_server {tags {"rock"} overrides {rock-enabled yes maxmemory-policy noeviction}} {
    test {Overwriting a cold value writes no delete; the next eviction's put supersedes the record} {
        rock_cold_keys 20
        r config resetstat
        r set k0 [rock_val 0 1]
        assert_equal hot [r rock status k0]
        # DISKKEYS waits for the writer: nothing was deleted, the old record
        # is still there, counted as stale.
        assert_equal 20 [r rock diskkeys]
        assert_equal 0 [rock_field deletes]
        assert_equal 1 [rock_field stale_records]
        assert_equal 19 [rock_field cold_keys]
        # Evicted again: the put replaces the record, which is live again.
        assert_equal 1 [r rock evict k0]
        assert_equal 0 [rock_field stale_records]
        assert_equal 20 [r rock diskkeys]
        assert_equal 0 [rock_field deletes]
        # The value read back is the new one, not the superseded record.
        assert_equal [rock_val 0 1] [r get k0]
        # Overwritten twice while hot: still one stale record, still the
        # last value.
        r set k0 [rock_val 0 2]
        r set k0 [rock_val 0 3]
        assert_equal 1 [rock_field stale_records]
        assert_equal 1 [r rock evict k0]
        assert_equal [rock_val 0 3] [r get k0]
        assert_equal 0 [rock_field deletes]
    }

    test {A stale record goes with its key: DEL, expiry, FLUSHDB} {
        rock_cold_keys 20
        r config resetstat
        r set k1 [rock_val 1 1]
        r set k2 [rock_val 2 1]
        r set k3 [rock_val 3 1]
        assert_equal 3 [rock_field stale_records]
        r del k1
        r pexpire k2 1
        wait_for_condition 100 20 {
            [r exists k2] == 0
        } else {
            fail "k2 did not expire"
        }
        assert_equal 1 [rock_field stale_records]
        assert_equal 18 [r rock diskkeys]
        assert_equal 2 [rock_field deletes]
        r flushdb
        assert_equal 0 [rock_field stale_records]
        assert_equal 0 [r rock diskkeys]
    }

    test {An overwrite with a value too small to be evicted deletes the record at once} {
        rock_cold_keys 10
        r config resetstat
        r set k4 small
        r set k5 12345
        assert_equal 0 [rock_field stale_records]
        assert_equal 8 [r rock diskkeys]
        assert_equal 2 [rock_field deletes]
        assert_equal small [r get k4]
        assert_equal 12345 [r get k5]
    }

    test {A modified hot-clean value: its record becomes stale, no delete; shrunk too small, it goes} {
        rock_cold_keys 10
        r config resetstat
        # Paged in: hot-clean, the record still valid.
        assert_equal [rock_val 6 0] [r get k6]
        assert_equal 1 [rock_field hot_clean_keys]
        r append k6 "+more"
        assert_equal 0 [rock_field hot_clean_keys]
        assert_equal 1 [rock_field stale_records]
        assert_equal 10 [r rock diskkeys]
        assert_equal 0 [rock_field deletes]
        assert_equal 1 [r rock evict k6]
        assert_equal "[rock_val 6 0]+more" [r get k6]
        # A hash of 10 fields of 40 bytes (a listpack of about 460 bytes,
        # over rock-min-value-size), evicted, paged in, then shrunk field by
        # field.
        for {set f 0} {$f < 10} {incr f} { r hset h f$f [string repeat x 40] }
        assert_encoding listpack h
        assert_equal 1 [r rock evict h]
        assert_equal 11 [r rock diskkeys]
        r config resetstat
        assert_equal 10 [r hlen h]
        # Still large: stale, kept.
        r hdel h f0
        assert_equal 1 [rock_field stale_records]
        assert_equal 0 [rock_field deletes]
        # Shrunk under rock-min-value-size: it will never be evicted, so
        # the stale record is deleted by the background sweep.
        r hdel h f1 f2 f3 f4 f5 f6 f7 f8
        wait_for_condition 100 20 {
            [rock_field stale_records] == 0
        } else {
            fail "the stale record of a shrunk value was not deleted"
        }
        assert_equal 10 [r rock diskkeys]
        assert_equal 1 [rock_field deletes]
        assert_equal [list f9 [string repeat x 40]] [r hgetall h]
    }

    test {SWAPDB moves stale records with their database} {
        rock_cold_keys 5
        r set k0 [rock_val 0 1]
        assert_equal 1 [rock_field stale_records]
        r swapdb 9 0
        r select 0
        r del k0
        r select 9
        r swapdb 9 0
        assert_equal 0 [rock_field stale_records]
        assert_equal 4 [r rock diskkeys]
    }
}

start_server {tags {"rock"} overrides {rock-enabled yes maxmemory-policy noeviction}} {
    test {write_amp and space_amp: what RocksDB wrote and holds against the records given to it} {
        r flushall
        # Memtables of 4 MB (maxmemory / 16); the values stay in RAM until
        # moved by ROCK EVICT below.
        r config set maxmemory 64mb
        r config resetstat
        assert_equal 0 [rock_field rocksdb_bytes_written]
        # 20 MB of values LZF can't shrink (random letters) through the
        # writer: several memtables' worth, so flushes.
        rock_evicted_copies 1000
        wait_for_condition 100 100 {
            [rock_field rocksdb_disk_bytes] > 0 && [rock_field rocksdb_bytes_written] > 0
        } else {
            fail "nothing flushed: disk [rock_field rocksdb_disk_bytes], written [rock_field rocksdb_bytes_written]"
        }
        wait_for_condition 100 100 {
            [rock_field rocksdb_running_compactions] == 0 && [rock_field rocksdb_pending_compaction_bytes] == 0
        } else {
            fail "compactions did not settle"
        }
        # One report: a compaction may start at any time (the L0 trigger
        # follows the write rate), and the three figures must agree.
        set rep [r rock report]
        set written [dict get $rep rocksdb_bytes_written]
        set wbytes [dict get $rep write_bytes]
        assert_morethan $wbytes 20000000
        set wamp [dict get $rep write_amp]
        assert_morethan $wamp 0
        assert_lessthan [expr {abs($wamp - double($written) / $wbytes)}] 0.01
        assert_morethan [rock_field space_amp] 0
        # CONFIG RESETSTAT starts the count again.
        r config resetstat
        assert_lessthan [rock_field rocksdb_bytes_written] [expr {$written / 2 + 1}]
        assert_equal 0.00 [rock_field write_amp]
        r config set maxmemory 0
    }
}

# FLUSHDB drops a database's records with one range delete; with blob files
# present RocksDB's files can't simply be deleted (rock_write.c says why),
# and before the range was compacted only when compaction happened to reach
# it: on an idle server, never. It is now compacted at once, or as soon as
# no snapshot (a fork's stream) still sees it.
# FLUSHDB while a BGSAVE streams the database's cold values: the child
# writes 3 ms a key (its own copy of the setting: 3 s for 1,000 keys), and
# the stream, with its snapshot, lasts about as long. The flushed ranges
# wait for the snapshot.
proc rock_flushdb_under_stream {} {
    r config set rdb-key-save-delay 3000
    r bgsave
    wait_for_condition 100 50 { [s rdb_bgsave_in_progress] == 1 } else { fail "no bgsave" }
    r flushdb
    wait_for_condition 100 50 {
        [rock_field flushed_ranges_waiting] > 0
    } else { fail "the flushed range did not wait: [rock_field flushed_ranges_waiting]" }
}

# After a FLUSHDB under a BGSAVE's stream (the child slowed down by
# rdb-key-save-delay): the save ends well, the flushed database's two ranges
# (records, split elements) are given back, and the saved file holds the
# fork's `nkeys` keys.
proc rock_stream_done_disk_back {before compacted nkeys} {
    r config set rdb-key-save-delay 0
    waitForBgsave r
    assert_equal ok [s rdb_last_bgsave_status]
    wait_for_condition 100 100 {
        [rock_field flushed_ranges_compacted] == $compacted + 2 && [rock_field rocksdb_disk_bytes] < $before / 20
    } else {
        fail "disk not given back after the stream: [rock_field rocksdb_disk_bytes] bytes of $before"
    }
    r debug reload nosave
    assert_equal $nkeys [r dbsize]
    assert_equal 0 [rock_field errors]
}

start_server {tags {"rock"} overrides {rock-enabled yes maxmemory-policy noeviction}} {
    proc rock_cold_with_blobs {} {
        # 4 values of 1 MB, which go to blob files (records of 256 KB or
        # more) once their memtable is flushed, then 20 MB of 20 KB values:
        # memtables of 4 MB (maxmemory / 16), flushed to SST files.
        for {set i 0} {$i < 4} {incr i} { r set big$i [randstring 1000000 1000000 alpha] }
        r rock evict big0 big1 big2 big3
        rock_evicted_copies 1000
        wait_for_condition 100 100 {
            [rock_field pending_writes] == 0 && [rock_field rocksdb_blob_files] > 0 &&
            [rock_field rocksdb_disk_bytes] > 15000000
        } else {
            fail "not on disk: disk [rock_field rocksdb_disk_bytes], blob files [rock_field rocksdb_blob_files]"
        }
    }

    test {FLUSHDB gives its records' disk back at once, blob files included} {
        r config set maxmemory 64mb
        rock_cold_with_blobs
        set before [rock_field rocksdb_disk_bytes]
        r flushdb
        # Two ranges: the database's records and its split collections'.
        wait_for_condition 100 100 {
            [rock_field rocksdb_disk_bytes] < $before / 20 && [rock_field rocksdb_blob_files] == 0 &&
            [rock_field flushed_ranges_compacted] == 2
        } else {
            fail "disk not given back: [rock_field rocksdb_disk_bytes] bytes of $before, [rock_field rocksdb_blob_files] blob files"
        }
        assert_equal 0 [rock_field flushed_ranges_waiting]
        assert_equal 0 [rock_field errors]
    }

    test {A FLUSHDB under a BGSAVE's stream is compacted once the stream lets go of its snapshot} {
        rock_cold_with_blobs
        set before [rock_field rocksdb_disk_bytes]
        set compacted [rock_field flushed_ranges_compacted]
        rock_flushdb_under_stream
        assert_morethan [rock_field rocksdb_snapshots] 0
        assert_equal $compacted [rock_field flushed_ranges_compacted]
        assert_morethan [rock_field rocksdb_disk_bytes] [expr {$before / 2}]
        rock_stream_done_disk_back $before $compacted 1005
    }
}

# Without blob files a flushed range's whole files can simply be deleted
# (DeleteFilesInRange), but that ignores snapshots: a fork's stream, which
# takes a fresh iterator on its snapshot every 200 ms, would no longer find
# the flushed database's records and its child would refuse to write an
# incomplete file. The files go only once no snapshot is held.
start_server {tags {"rock"} overrides {rock-enabled yes maxmemory-policy noeviction}} {
    # True when RocksDB wrote nothing since the previous call and runs no
    # compaction.
    proc rock_idle_since_last_poll {} {
        set w [rock_field rocksdb_bytes_written]
        set idle [expr {$w == $::rock_written && [rock_field rocksdb_running_compactions] == 0}]
        set ::rock_written $w
        return $idle
    }

    test {A FLUSHDB under a BGSAVE's stream deletes no file the stream still reads} {
        # 20 MB of 20 KB values in memtables of 4 MB (maxmemory / 16): L0
        # files, compacted once the burst is over into files below L0
        # (zstd: about 10 MB), which lie wholly in the database's range.
        # Most often one file; two when the machine is loaded (seen with
        # other test files beside this one): either way DeleteFilesInRange
        # can take them all once no snapshot is held.
        r config set maxmemory 64mb
        # Pipelined, as fast as the writer takes them: the L0 trigger rises,
        # and the burst's files are compacted together once it falls back.
        r set rnd [randstring 20000 20000 alpha]
        set rd [redis_deferring_client]
        set keys {}
        set sent 0
        for {set i 0} {$i < 1000} {incr i} {
            $rd copy rnd w$i
            lappend keys w$i
            incr sent
            if {[llength $keys] == 50} { $rd rock evict {*}$keys; set keys {}; incr sent }
        }
        for {set i 0} {$i < $sent} {incr i} { $rd read }
        $rd close
        set ssts [file join [rock_info_field rock_dir] rocksdb *.sst]
        wait_for_condition 200 100 {
            [rock_field pending_writes] == 0 && [rock_field rocksdb_l0_files] == 0 &&
            [rock_field rocksdb_running_compactions] == 0 && [rock_field rocksdb_pending_compaction_bytes] == 0 &&
            [llength [glob -nocomplain $ssts]] >= 1 && [rock_field rocksdb_disk_bytes] > 8000000
        } else {
            fail "not in files below L0: [rock_field rocksdb_l0_files] L0 files, [glob -nocomplain $ssts]"
        }
        # ...and RocksDB idle for a second (no compaction started since:
        # one running when the files are deleted would keep its inputs).
        set ::rock_written -1
        wait_for_condition 100 500 {
            [rock_idle_since_last_poll]
        } else { fail "RocksDB kept compacting" }
        assert_equal 0 [rock_field rocksdb_blob_files]
        set before [rock_field rocksdb_disk_bytes]
        set compacted [rock_field flushed_ranges_compacted]
        rock_flushdb_under_stream
        set refreshes [rock_field fork_stream_refreshes]
        # Two of the stream's iterator refreshes after the FLUSHDB, the range
        # still waiting.
        wait_for_condition 100 50 {
            [rock_field fork_stream_refreshes] >= $refreshes + 2
        } else { fail "the stream took no fresh iterator" }
        assert_equal 1 [s rdb_bgsave_in_progress]
        assert_morethan [rock_field rocksdb_disk_bytes] [expr {$before / 2}]
        rock_stream_done_disk_back $before $compacted 1001
    }
}

start_server {tags {"rock"} overrides {rock-enabled yes maxmemory-policy noeviction}} {
    test {RocksDB's L0 compaction trigger rises while writes come fast and falls back once they stop} {
        set rockdir [rock_info_field rock_dir]
        assert_equal 4 [rock_field rocksdb_l0_compaction_trigger]
        assert_match "*level0_file_num_compaction_trigger=4\n*" [rock_latest_options $rockdir]
        # 10 MB of records in a second or two: far more than a memtable
        # (2 MB at least) a minute.
        rock_evicted_copies 600
        wait_for_condition 50 100 {
            [rock_field rocksdb_l0_compaction_trigger] == 12
        } else {
            fail "trigger stayed at [rock_field rocksdb_l0_compaction_trigger]"
        }
        # The writer thread applies it: RocksDB writes a new OPTIONS file.
        wait_for_condition 50 100 {
            [string match "*level0_file_num_compaction_trigger=12\n*" [rock_latest_options $rockdir]]
        } else {
            fail "RocksDB's options file does not have the new trigger"
        }
        assert_match "*level0_slowdown_writes_trigger=30\n*" [rock_latest_options $rockdir]
        assert_match "*level0_stop_writes_trigger=48\n*" [rock_latest_options $rockdir]
        # FLUSHALL reopens RocksDB with its start-up options (trigger 4):
        # the report says so, and the next burst raises it again.
        set resets [rock_field store_resets]
        r flushall
        assert_equal [expr {$resets + 1}] [rock_field store_resets]
        assert_equal 4 [rock_field rocksdb_l0_compaction_trigger]
        assert_match "*level0_file_num_compaction_trigger=4\n*" [rock_latest_options $rockdir]
        rock_evicted_copies 600
        wait_for_condition 50 100 {
            [rock_field rocksdb_l0_compaction_trigger] == 12 &&
            [string match "*level0_file_num_compaction_trigger=12\n*" [rock_latest_options $rockdir]]
        } else {
            fail "trigger [rock_field rocksdb_l0_compaction_trigger] after FLUSHALL and a new burst"
        }
        # No writes now: back to 4 after a few quiet seconds.
        wait_for_condition 300 100 {
            [rock_field rocksdb_l0_compaction_trigger] == 4 &&
            [string match "*level0_file_num_compaction_trigger=4\n*" [rock_latest_options $rockdir]]
        } else {
            fail "trigger stayed at [rock_field rocksdb_l0_compaction_trigger]"
        }
        assert_match "*level0_slowdown_writes_trigger=20\n*" [rock_latest_options $rockdir]
        assert_equal 0 [rock_field errors]
    }

    test {The L0 files a burst leaves under RocksDB's trigger are compacted once writes stop} {
        # Memtables of 4 MB (maxmemory / 16); FLUSHALL: L0 empty, trigger 4.
        r config set maxmemory 64mb
        r flushall
        # 1 MB in a second is over a memtable a minute: trigger 12, with
        # nothing flushed yet.
        rock_evicted_copies 50
        wait_for_condition 50 100 {
            [rock_field rocksdb_l0_compaction_trigger] == 12
        } else {
            fail "trigger stayed at [rock_field rocksdb_l0_compaction_trigger]"
        }
        assert_equal 0 [rock_field rocksdb_l0_files]
        # 8 MB more: two or three memtables flushed to L0, fewer than
        # the trigger of 4 that follows, so RocksDB alone would leave them.
        rock_evicted_copies 450
        wait_for_condition 100 100 {
            [rock_field pending_writes] == 0 && [rock_field rocksdb_l0_files] >= 2
        } else {
            fail "[rock_field rocksdb_l0_files] L0 files after 9 MB"
        }
        assert_range [rock_field rocksdb_l0_files] 2 3
        wait_for_condition 300 100 {
            [rock_field rocksdb_l0_compaction_trigger] == 4 && [rock_field rocksdb_l0_files] == 0 &&
            [rock_field rocksdb_running_compactions] == 0
        } else {
            fail "trigger [rock_field rocksdb_l0_compaction_trigger], [rock_field rocksdb_l0_files] L0 files after the writes stopped"
        }
        assert_equal 0 [rock_field errors]
        r config set maxmemory 0
    }
}
