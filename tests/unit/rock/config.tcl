# tests/unit/rock/config.tcl -- the rock-* options: defaults, validation,
# immutability, live changes reaching RocksDB, CONFIG REWRITE.
source tests/helpers/rock/util.tcl

start_server {tags {"rock"} overrides {rock-enabled yes}} {
    test {rock options have their documented defaults} {
        assert_equal {rock-enabled yes} [r config get rock-enabled]
        assert_equal {rock-dir {}} [r config get rock-dir]
        assert_equal {rock-min-value-size 64} [r config get rock-min-value-size]
        assert_equal {rock-io-threads 16} [r config get rock-io-threads]
        assert_equal {rock-block-cache-size 33554432} [r config get rock-block-cache-size]
        assert_equal {rock-direct-io no} [r config get rock-direct-io]
        assert_equal {rock-compression lz4-zstd} [r config get rock-compression]
    }

    test {start-up-only rock options refuse any change at run time} {
        foreach {opt val} {rock-enabled no rock-dir /tmp/elsewhere rock-io-threads 2 rock-direct-io yes} {
            assert_error "*can't change this rock option at run time*" {r config set $opt $val}
        }
        assert_equal {rock-enabled yes} [r config get rock-enabled]
        assert_equal {rock-dir {}} [r config get rock-dir]
        assert_equal {rock-io-threads 16} [r config get rock-io-threads]
        assert_equal {rock-direct-io no} [r config get rock-direct-io]
        # Re-applying the value in force is accepted (tools re-apply whole configs).
        assert_equal OK [r config set rock-enabled yes rock-dir "" rock-io-threads 16 rock-direct-io no]
        assert_equal 1 [rock_info_field rock_enabled]
    }

    test {rock-min-value-size accepts sizes and rejects bad values} {
        r config set rock-min-value-size 1kb
        assert_equal {rock-min-value-size 1024} [r config get rock-min-value-size]
        assert_error "*must be a memory value*" {r config set rock-min-value-size -1}
        assert_error "*must be a memory value*" {r config set rock-min-value-size lots}
        assert_error "*must be between*" {r config set rock-min-value-size 1gb}
        assert_equal {rock-min-value-size 1024} [r config get rock-min-value-size]
        r config set rock-min-value-size 64
    }

    test {rock-block-cache-size changes the live RocksDB block cache} {
        assert_equal 33554432 [rock_info_field rock_rocksdb_block_cache_capacity]
        r config set rock-block-cache-size 64mb
        assert_equal 67108864 [rock_info_field rock_rocksdb_block_cache_capacity]
        assert_equal 67108864 [dict get [rock_report] rocksdb_block_cache_capacity]
        assert_error "*must be between*" {r config set rock-block-cache-size 1000}
        assert_equal 67108864 [rock_info_field rock_rocksdb_block_cache_capacity]
        r config set rock-block-cache-size 32mb
        assert_equal 33554432 [rock_info_field rock_rocksdb_block_cache_capacity]
    }

    test {rock-compression changes what RocksDB writes} {
        set rockdir [rock_info_field rock_dir]
        set opts [rock_latest_options $rockdir]
        assert_match "*compression=kLZ4Compression*" $opts
        assert_match "*bottommost_compression=kZSTD*" $opts
        r config set rock-compression zstd
        set opts [rock_latest_options $rockdir]
        assert_match "*\n  compression=kZSTD*" $opts
        assert_match "*\n  blob_compression_type=kZSTD*" $opts
        r config set rock-compression none
        set opts [rock_latest_options $rockdir]
        assert_match "*\n  compression=kNoCompression*" $opts
        assert_match "*bottommost_compression=kNoCompression*" $opts
        assert_equal none [rock_info_field rock_compression]
        assert_error "*argument(s) must be one of the following*" {r config set rock-compression snappy}
        assert_equal {rock-compression none} [r config get rock-compression]
        r config set rock-compression lz4-zstd
        assert_match "*bottommost_compression=kZSTD*" [rock_latest_options $rockdir]
    }

    test {A rock-compression changed live holds for the RocksDB a FLUSHALL opens afresh} {
        set rockdir [rock_info_field rock_dir]
        r config set rock-compression zstd
        # Something written, or FLUSHALL keeps the empty RocksDB it has.
        r set k [string repeat x 1000]
        assert_equal 1 [r rock evict k]
        wait_for_condition 100 10 { [rock_info_field rock_pending_writes] == 0 } else { fail "write still pending" }
        set resets [rock_info_field rock_store_resets]
        r flushall
        assert_equal [expr {$resets + 1}] [rock_info_field rock_store_resets]
        set opts [rock_latest_options $rockdir]
        assert_match "*\n  compression=kZSTD*" $opts
        assert_match "*\n  blob_compression_type=kZSTD*" $opts
        r config set rock-compression lz4-zstd
    }

    test {CONFIG REWRITE keeps changed rock options} {
        r config set rock-min-value-size 200
        r config set rock-compression lz4
        r config rewrite
        restart_server 0 true false
        assert_equal {rock-min-value-size 200} [r config get rock-min-value-size]
        assert_equal {rock-compression lz4} [r config get rock-compression]
        assert_equal {rock-enabled yes} [r config get rock-enabled]
        assert_match "*compression=kLZ4Compression*" [rock_latest_options [rock_info_field rock_dir]]
    } {} {external:skip}
}

start_server {tags {"rock"}} {
    set dir [file normalize [tmpdir rockcfg]]

    test {bad rock option values refuse to start with a config error} {
        foreach {opt val pattern} {
            rock-enabled maybe "*argument must be 'yes' or 'no'*"
            rock-io-threads 0 "*argument must be between 1 and 64*"
            rock-io-threads 65 "*argument must be between 1 and 64*"
            rock-block-cache-size 10 "*argument must be between*"
            rock-compression brotli "*argument(s) must be one of the following*"
            rock-min-value-size -5 "*argument must be a memory value*"
        } {
            lassign [rock_exec_server --dir $dir --$opt $val] rc out
            assert_equal 1 $rc
            assert_match "*FATAL CONFIG FILE ERROR*" $out
            assert_match $pattern $out
        }
    }

    test {rock disabled: no rock-dir is created and INFO rock says so} {
        assert_equal {rock-enabled no} [r config get rock-enabled]
        assert_equal 0 [rock_info_field rock_enabled]
        assert_equal 0 [dict get [rock_report] enabled]
        assert_equal {} [glob -nocomplain [lindex [r config get dir] 1]/rock*]
    }
}
