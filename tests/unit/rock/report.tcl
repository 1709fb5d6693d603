# tests/unit/rock/report.tcl -- ROCK REPORT and INFO rock: shape, figures
# that follow the dataset, agreement between the two; ROCK's ACL category
# and argument errors.
source tests/helpers/rock/util.tcl

start_server {tags {"rock"} overrides {rock-enabled yes}} {
    test {ROCK REPORT lists the documented fields} {
        set rep [rock_report]
        foreach f {dir compression enabled keys expires cold_keys cold_percent hot_clean_keys
                   evictions clean_drops loads sync_loads reads read_bytes writes write_bytes lzf_skipped
                   deletes errors read_latency_p50_us read_latency_p99_us read_latency_p999_us
                   used_memory rocksdb_memory
                   rocksdb_memtables rocksdb_block_cache_usage rocksdb_block_cache_capacity
                   rocksdb_table_readers rocksdb_disk_bytes rocksdb_estimated_keys
                   rocksdb_write_stopped rocksdb_delayed_write_rate rocksdb_l0_files rocksdb_l0_compaction_trigger
                   rocksdb_pending_compaction_bytes rocksdb_running_compactions rocksdb_running_flushes
                   flushed_ranges_compacted flushed_ranges_waiting dbs} {
            assert {[dict exists $rep $f]}
        }
        assert_equal 1 [dict get $rep enabled]
        assert_equal lz4-zstd [dict get $rep compression]
        assert_equal [lindex [r config get dir] 1]/rock-[srv 0 port] [dict get $rep dir]
        # RocksDB is open and has allocated its memtable.
        assert {[dict get $rep rocksdb_memtables] > 0}
        assert {[dict get $rep rocksdb_memory] >= [dict get $rep rocksdb_memtables]}
    }

    test {ROCK REPORT shows glibc's heap (RocksDB's) once the writer has trimmed it} {
        # The writer trims glibc's heap and reads its figures about once a
        # second; RocksDB has allocated its memtable and table cache there.
        wait_for_condition 50 100 {
            [dict get [rock_report] malloc_trims] > 0 && [dict get [rock_report] glibc_heap_in_use] > 0
        } else {
            fail "no glibc heap figures: [rock_report]"
        }
        set rep [rock_report]
        assert_morethan_equal [dict get $rep glibc_heap_system] [dict get $rep glibc_heap_in_use]
        # At least RocksDB's memtables live there.
        assert_morethan_equal [dict get $rep glibc_heap_in_use] [dict get $rep rocksdb_memtables]
    }

    test {ROCK REPORT's glibc heap figures are taken every 100 ms, the writer idle too} {
        # rockCron() asks the writer for them on 9 ticks in 10 and trims on
        # the tenth: about 10 a second. An idle writer used to sleep through
        # the request and take them only with its trim, once a second.
        wait_for_condition 50 100 {
            [dict get [rock_report] pending_writes] == 0
        } else {
            fail "writes still pending: [rock_report]"
        }
        set before [dict get [rock_report] glibc_heap_measures]
        wait_for_condition 30 100 {
            [dict get [rock_report] glibc_heap_measures] >= $before + 8
        } else {
            fail "[expr {[dict get [rock_report] glibc_heap_measures] - $before}] measurements in 3 s"
        }
    }

    test {ROCK REPORT per-db counts follow the dataset} {
        r flushall
        assert_equal {} [dict get [rock_report] dbs]
        r select 9
        for {set i 0} {$i < 100} {incr i} { r set k$i v$i }
        r expire k1 100
        r select 3
        r hset h f v
        set rep [rock_report]
        assert_equal 101 [dict get $rep keys]
        assert_equal 1 [dict get $rep expires]
        assert_equal {keys 100 expires 1 cold_keys 0} [dict get $rep dbs db9]
        assert_equal {keys 1 expires 0 cold_keys 0} [dict get $rep dbs db3]
        assert_equal 2 [dict size [dict get $rep dbs]]
        r select 9
    }

    test {INFO rock carries the same figures as ROCK REPORT} {
        # Between two reports: the writer thread counts its trims, purges
        # and measurements (once a second, every 100 ms) while the commands
        # run, so a figure may move in between, never outside.
        set rep [rock_report]
        set info [r info rock]
        set rep2 [rock_report]
        assert_match "*# Rock*" $info
        dict for {k v} $rep {
            if {$k in {dbs used_memory rocksdb_memory rocksdb_memtables rocksdb_block_cache_usage}} continue
            set got [getInfoProperty $info rock_$k]
            set v2 [dict get $rep2 $k]
            if {$v eq $got || $v2 eq $got} continue
            if {![string is double -strict $got] || ![string is double -strict $v] || ![string is double -strict $v2] ||
                $got < min($v, $v2) || $got > max($v, $v2)} {
                fail "INFO rock_$k is $got, ROCK REPORT's $k $v before it and $v2 after it"
            }
        }
        assert_equal {keys=100,expires=1,cold_keys=0} [getInfoProperty $info rock_db9]
        assert_equal {keys=1,expires=0,cold_keys=0} [getInfoProperty $info rock_db3]
    }

    test {INFO rock is in the default INFO and in INFO all, not in other sections} {
        assert_match "*rock_enabled:1*" [r info]
        assert_match "*rock_enabled:1*" [r info all]
        assert_match "*rock_enabled:1*" [r info everything]
        assert_no_match "*rock_enabled*" [r info memory]
    }

    test {ROCK REPORT works under RESP3 as a map} {
        r hello 3
        set rep [r rock report]
        r hello 2
        assert_equal 1 [dict get $rep enabled]
        assert_equal {keys 100 expires 1 cold_keys 0} [dict get $rep dbs db9]
    }

    test {ROCK bad arguments get clear errors} {
        assert_error "*wrong number of arguments for 'rock' command*" {r rock}
        assert_error "*unknown subcommand 'nosuch'*ROCK HELP*" {r rock nosuch}
        assert_error "*wrong number of arguments for 'rock|report' command*" {r rock report extra}
        assert_match "*REPORT*" [r rock help]
    }

    test {ROCK subcommands are in the @admin ACL category} {
        set cmds [r acl cat admin]
        assert {[lsearch $cmds rock|report] >= 0}
        foreach sub {help evict load status diskkeys} { assert {[lsearch $cmds rock|$sub] >= 0} }
        r acl setuser rockdev on nopass ~* &* +@all -@admin
        r acl setuser rockop on nopass -@all +@admin
        set rd [redis_client]
        $rd auth rockdev x
        assert_error "*NOPERM*rock|report*" {$rd rock report}
        assert_equal OK [$rd set a b]
        $rd auth rockop x
        assert_equal 1 [dict get [$rd rock report] enabled]
        $rd close
        r acl deluser rockdev rockop
    }

    test {ROCK is not allowed from scripts} {
        assert_error "*not allowed from script*" {r eval {return redis.call('rock','report')} 0}
    }

    test {COMMAND INFO and COMMAND DOCS describe ROCK} {
        set info [lindex [r command info rock] 0]
        assert_equal rock [lindex $info 0]
        set subs [lindex $info 9]
        assert_equal 8 [llength $subs] ;# report evict load status diskkeys diskelements sizing help
        foreach s $subs { assert {[lsearch [lindex $s 2] admin] >= 0} }
        assert_match "*redis-rock*" [r command docs rock]
    }
}

# A maxmemory of 32 MB at start gives RocksDB 2 MB memtables (1/16), so a
# few MB of values reach table files (where block counts are made).
start_server {tags {"rock"} overrides {rock-enabled yes maxmemory 32mb}} {
    test {ROCK REPORT counts the blocks of the readers' reads; index and filter blocks are never read; only a pipeline's reads fill the block cache} {
        set n 6000
        # Incompressible values (the record format compresses as RDB does):
        # 1,000-byte slices of one random string.
        set base [randstring 65536 65536 alpha]
        proc evict_range {n} {
            for {set i 0} {$i < $n} {incr i 500} {
                set keys {}
                for {set j $i} {$j < $i + 500} {incr j} { lappend keys k$j }
                r rock evict {*}$keys
            }
        }
        proc blockval {base i} { set o [expr {($i * 97) % 64000}]; string range $base $o [expr {$o + 999}] }
        for {set i 0} {$i < $n} {incr i} { r set k$i [blockval $base $i] }
        evict_range $n
        assert_equal $n [dict get [rock_report] cold_keys]
        wait_for_condition 100 50 {
            [dict get [rock_report] rocksdb_disk_bytes] > 0
        } else { fail "no table file was written: [rock_report]" }
        r config resetstat
        set rep [rock_report]
        foreach f {index_block_hits index_block_reads filter_block_hits filter_block_reads
                   data_block_hits data_block_reads block_read_bytes filter_skips} {
            assert_equal 0 [dict get $rep rocksdb_$f]
        }
        for {set i 0} {$i < $n} {incr i} { assert_equal [blockval $base $i] [r get k$i] }
        assert_equal $n [dict get [rock_report] reads]
        # At most 2 MB of the 6 MB is still in a memtable: at least a
        # quarter of the reads went to a table file, each to a data block,
        # from the cache or the disk.
        wait_for_condition 100 50 {
            [dict get [rock_report] rocksdb_data_block_hits] + [dict get [rock_report] rocksdb_data_block_reads] >= $n / 4
        } else { fail "data blocks not counted: [rock_report]" }
        set rep [rock_report]
        assert {[dict get $rep rocksdb_data_block_reads] > 0}
        assert {[dict get $rep rocksdb_block_read_bytes] > 0}
        # Index and filter blocks are held by the table readers (loaded when
        # a file is written): a read never goes through the cache or the
        # disk for them.
        assert_equal 0 [expr {[dict get $rep rocksdb_index_block_hits] + [dict get $rep rocksdb_index_block_reads]}]
        assert_equal 0 [expr {[dict get $rep rocksdb_filter_block_hits] + [dict get $rep rocksdb_filter_block_reads]}]
        # One GET at a time: each read is alone, and leaves the block cache
        # alone (its value is in RAM now): no read finds a block there.
        assert_equal 0 [dict get $rep rocksdb_data_block_hits]

        # A pipeline: the reads of the commands behind the first (read
        # ahead) keep their blocks, and neighbouring keys find them.
        evict_range $n
        r config resetstat
        set rd [redis_deferring_client]
        for {set i 0} {$i < $n} {incr i} { $rd get k$i }
        for {set i 0} {$i < $n} {incr i} { assert_equal [blockval $base $i] [$rd read] }
        $rd close
        wait_for_condition 100 50 {
            [dict get [rock_report] rocksdb_data_block_hits] > 0
        } else { fail "a pipeline's reads found no block in the cache: [rock_report]" }
        assert {[rock_info_field rock_rocksdb_data_block_reads] > 0}
    }
}

start_server {tags {"rock"} overrides {rock-enabled yes rename-command {rock myrock}}} {
    test {ROCK renamed: STATUS and EVICT of a cold key still read nothing} {
        r set k [string repeat v 500]
        assert_equal 1 [r myrock evict k]
        set loads [rock_info_field rock_loads]
        assert_equal cold [r myrock status k]
        assert_equal 0 [r myrock evict k]
        assert_equal $loads [rock_info_field rock_loads]
        assert_equal [string repeat v 500] [r get k]
        assert_equal [expr {$loads + 1}] [rock_info_field rock_loads]
    }
}
