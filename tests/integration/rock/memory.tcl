# tests/integration/rock/memory.tcl -- the memory bound with values on disk:
# RocksDB's own memory counts against maxmemory, so the whole process (RSS),
# not just the Redis heap, stays near maxmemory while eleven times more data
# is written and then read and overwritten at random.
source tests/helpers/rock/util.tcl

proc rock_field {f} { return [dict get [r rock report] $f] }

proc rock_process_running {pid} {
    if {[catch {open /proc/$pid/stat} fd]} { return 0 }
    set stat [read $fd]
    close $fd
    # Field 3, after the parenthesised command name, is the state.
    set state [lindex [string range $stat [expr {[string last ")" $stat] + 2}] end] 0]
    return [expr {$state ne "Z" && $state ne "X"}]
}

# Run redis-benchmark against the server in the background and sample
# used_memory_rss every 100 ms until it ends; returns the largest sample.
proc rock_bench_peak_rss {args} {
    set cmd [list src/redis-benchmark -h [srv 0 host] -p [srv 0 port] --dbnum 9 -q {*}$args]
    set pid [exec {*}$cmd > /dev/null 2>@1 &]
    set peak 0
    # Until /proc says it is gone or a zombie (Tcl reaps it at its next exec).
    while {[rock_process_running $pid]} {
        set rss [s used_memory_rss]
        if {$rss > $peak} { set peak $rss }
        after 100
    }
    return $peak
}

start_server {tags {"rock external:skip"} overrides {rock-enabled yes maxmemory 64mb}} {
    set limit [expr {64 * 1024 * 1024}]
    set bound [expr {$limit * 1.15 + 64 * 1024 * 1024}]

    test {RocksDB's memory is sized from maxmemory and counted in ROCK REPORT} {
        # Block cache at most maxmemory/64 (and at most rock-block-cache-size).
        assert_equal [expr {$limit / 64}] [rock_field rocksdb_block_cache_capacity]
        r config set maxmemory 1gb
        wait_for_condition 250 20 {
            [rock_field rocksdb_block_cache_capacity] == 16*1024*1024
        } else { fail "block cache not resized with maxmemory" }
        r config set maxmemory 4gb
        wait_for_condition 250 20 {
            [rock_field rocksdb_block_cache_capacity] == 32*1024*1024
        } else { fail "block cache not capped by rock-block-cache-size" }
        r config set maxmemory 64mb
        wait_for_condition 250 20 {
            [rock_field rocksdb_block_cache_capacity] == $limit / 64
        } else { fail "block cache not resized back" }
    }

    test {Eleven times maxmemory written, then read and overwritten at random: RSS stays within maxmemory + 15% + 64 MB} {
        # About 175,000 distinct random keys of 4000-byte values (drawn from
        # 250,000): some 700 MB, eleven times maxmemory. (The keys alone
        # take ~16 MB of RAM: they never move.)
        r config resetstat
        set peak [rock_bench_peak_rss -t set -r 250000 -n 300000 -d 4000 -c 4 -P 16]
        set keys [r dbsize]
        assert {$keys > 160000}
        assert {[rock_field cold_percent] > 85}
        # No write was refused (-OOM) and no key deleted.
        assert_equal 0 [s total_error_replies]
        puts "    write phase: $keys keys, peak RSS [expr {$peak / 1048576}] MB (bound [expr {int($bound / 1048576)}] MB)"
        assert {$peak < $bound}
        set peak [rock_bench_peak_rss -t get,set -r 250000 -n 100000 -d 4000 -c 4 -P 4]
        puts "    read/overwrite phase: peak RSS [expr {$peak / 1048576}] MB, RocksDB [expr {[rock_field rocksdb_memory] / 1048576}] MB"
        assert {$peak < $bound}
        assert {[rock_field reads] > 50000}
        assert_equal 0 [s total_error_replies]
        assert_equal 0 [s evicted_keys]
    }
}
