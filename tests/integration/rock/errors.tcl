# tests/integration/rock/errors.tcl -- RocksDB read errors. The SST files
# under rock-dir are damaged behind the server's back; reads that hit a
# damaged block fail RocksDB's checksum. The command gets a clear error,
# never a wrong value; the event is logged and counted; the key and
# everything else stay; the server keeps running.
source tests/helpers/rock/util.tcl

proc rock_field {f} { return [dict get [r rock report] $f] }

# Upstream's test module with RM_Call commands that declare no key
# (tests/modules/aclcheck.so, built by tests/run.sh).
set ::rock_aclcheck_module [file normalize tests/modules/aclcheck.so]

set ::rock_pool [rock_random_pool 64 1000]
proc rock_value {i} { return "[format %06d $i]:[lindex $::rock_pool [expr {$i % 64}]]" }

start_server {tags {"rock external:skip"} overrides {rock-enabled yes rock-block-cache-size 1mb
        rock-compression none rock-min-value-size 0}} {
    set rockdir [dict get [r rock report] dir]
    set nkeys 20000

    test {Setup: values on disk, in SST files} {
        set rd [redis_deferring_client]
        for {set i 0} {$i < $nkeys} {incr i} { $rd set k$i [rock_value $i] }
        for {set i 0} {$i < $nkeys} {incr i} { $rd read }
        for {set i 0} {$i < $nkeys} {incr i 100} {
            set keys {}
            for {set j $i} {$j < $i + 100} {incr j} { lappend keys k$j }
            $rd rock evict {*}$keys
        }
        for {set i 0} {$i < $nkeys} {incr i 100} { assert_equal 100 [$rd read] }
        $rd close
        # More than one memtable's worth: RocksDB flushes to SST files.
        wait_for_condition 100 100 {
            [rock_field rocksdb_disk_bytes] > 8000000
        } else {
            fail "no SST file was written"
        }
        assert_equal $nkeys [rock_field cold_keys]
    }

    test {A damaged record fails the command with an error, never a wrong value} {
        assert_morethan [rock_damage_ssts $rockdir] 0
        r config resetstat
        set failed {}
        for {set i 0} {$i < 3000} {incr i 7} {
            if {[catch {r get k$i} res]} {
                assert_match "*can't read the value of 'k$i' from disk*" $res
                lappend failed $i
            } else {
                assert_equal [rock_value $i] $res
            }
        }
        assert_morethan [llength $failed] 3
        assert_morethan [rock_field errors] 0
        verify_log_message 0 "*rock: RocksDB read failed*" 0
        # Logged about once a second, not once per failed read.
        assert_morethan [llength $failed] 10
        assert_lessthan [count_log_message 0 "rock: RocksDB read failed"] [expr {[llength $failed] / 4}]
        set ::rock_failed $failed
    }

    test {After a read error the key, its metadata and the rest of the dataset stay} {
        set i [lindex $::rock_failed 0]
        assert_equal 1 [r exists k$i]
        assert_equal string [r type k$i]
        assert_equal cold [r rock status k$i]
        assert_equal $nkeys [r dbsize]
        # The same key fails again the same way (no wrong value cached).
        assert_error "*can't read the value of 'k$i'*" {r get k$i}
        # Synchronous paths fail cleanly too.
        assert_error "*can't read the value of 'k$i'*" {r rock load k$i}
        # A write that replaces the value needs no read and works.
        r set k$i fresh
        assert_equal fresh [r get k$i]
        assert_equal PONG [r ping]
    }

    test {MULTI/EXEC with a damaged key is refused as a whole, nothing of it runs} {
        set i [lindex $::rock_failed 1]
        r set marker 0
        r multi
        r incr marker
        r append k$i x
        catch {r exec} res
        assert_match "*can't read the value of 'k$i'*" $res
        assert_equal 0 [r get marker]
    }

    test {A script's write to an undeclared damaged key fails the call, not the server} {
        # Undeclared: not paged in before the script; its command's read
        # happens right before it runs inside the script. Without a value a
        # write would take the key for missing and create it over the one
        # on disk (an assertion: the server used to crash here).
        set i [lindex $::rock_failed 2]
        set before [r get marker]
        assert_error "*can't read the value of 'k$i'*" {
            r eval {redis.call('incr', 'marker'); return redis.call('append', ARGV[1], 'x')} 0 k$i
        }
        assert_equal [expr {$before + 1}] [r get marker]
        # pcall sees the error as a reply and goes on.
        assert_match "*can't read the value of 'k$i'*" \
            [r eval {local ok = redis.pcall('lpush', ARGV[1], 'x'); return ok['err']} 0 k$i]
        assert_equal cold [r rock status k$i]
        assert_equal string [r type k$i]
        assert_equal PONG [r ping]
    }

    test {DEBUG DIGEST, DEBUG OBJECT, DIGEST-VALUE and MEMORY USAGE on a damaged key: an error, not a crash} {
        # They read values straight from the dict; a failed read used to
        # hand them the sentinel, whose payload is NULL: the server crashed.
        set i [lindex $::rock_failed 4]
        assert_error "*can't read the value of 'k$i'*" {r debug object k$i}
        assert_error "*can't read the value of 'k$i'*" {r debug sdslen k$i}
        assert_error "*can't read the value of 'k$i'*" {r memory usage k$i}
        # DIGEST-VALUE: an error in the damaged key's place of the array.
        assert_error "*can't read the value of 'k$i'*" {r debug digest-value k$i}
        # The whole-dataset digest reads every value: the damaged ones are
        # logged and mixed in as unreadable, and the server stays up.
        set errors [rock_field errors]
        set d [r debug digest]
        assert_equal 40 [string length $d]
        assert_morethan [rock_field errors] $errors
        assert_equal cold [r rock status k$i]
        assert_equal PONG [r ping]
    } {} {needs:debug}

    test {A module's RM_Call on an undeclared damaged key fails the call, not the server} {
        r module load $::rock_aclcheck_module
        set i [lindex $::rock_failed 3]
        assert_error "*can't read the value of 'k$i'*" {r aclcheck.rm_call_with_errors append k$i x}
        # Without the E flag RM_Call returns NULL with errno EIO (5).
        assert_error "*errno=5*" {r aclcheck.rm_call append k$i x}
        assert_equal cold [r rock status k$i]
        assert_equal PONG [r ping]
    }
}

start_server {tags {"rock external:skip"} overrides {rock-enabled yes rock-block-cache-size 1mb
        rock-compression none rock-min-value-size 0 maxmemory 32mb}} {
    set rockdir [dict get [r rock report] dir]

    test {A BGSAVE whose stream hits a damaged record fails with the reason in the child's log, keeps the old file} {
        # A hash of 30,000 fields stored element by element (streamed to
        # the child in pieces) and plain values, all in SST files, then
        # damaged (maxmemory 32 MB: memtables of 2 MB, so most of it is in
        # files). The stream's error mark used to stay in its buffer: the
        # child only saw the stream end early.
        set pool [rock_random_pool 8 200]
        rock_big_hash big 30000 $pool
        set rd [redis_deferring_client]
        for {set i 0} {$i < 5000} {incr i} { $rd set k$i "$i:[lindex $pool [expr {$i % 8}]]" }
        for {set i 0} {$i < 5000} {incr i} { $rd read }
        $rd close
        r save
        set rdbfile [file join [lindex [r config get dir] 1] dump.rdb]
        set fd [open $rdbfile rb]
        set saved [read $fd]
        close $fd
        set keys big
        for {set i 0} {$i < 5000} {incr i} { lappend keys k$i }
        assert_equal 5001 [r rock evict {*}$keys]
        wait_for_condition 100 100 {
            [rock_field pending_writes] == 0 && [rock_field rocksdb_disk_bytes] > 4000000
        } else { fail "no SST file was written" }
        assert_morethan [r rock diskelements] 29999
        assert_morethan [rock_damage_ssts $rockdir] 0
        r bgsave
        wait_for_condition 500 20 { [s rdb_bgsave_in_progress] == 0 } else { fail "BGSAVE never ended" }
        assert_equal err [s rdb_last_bgsave_status]
        # The parent logs the stream's failure when it joins the stream
        # thread (rockCron(), every 100 ms), which can come after it reaped
        # the child.
        wait_for_log_messages 0 {"*rock: streaming cold values to the child failed*"} 0 50 100
        verify_log_message 0 "*rock: the parent could not read cold values from RocksDB*" 0
        set fd [open $rdbfile rb]
        assert {[read $fd] eq $saved}
        close $fd
        # Up, every key kept (PING is refused after a failed BGSAVE, as stock).
        assert_equal 5001 [r dbsize]
    }
}

start_server {tags {"rock external:skip"} overrides {rock-enabled yes rock-compression none rock-min-value-size 0}} {
    test {Values of 256 KB or more live in blob files; a damaged one fails its read with an error, never a wrong value} {
        set rockdir [dict get [r rock report] dir]
        # 2 MB memtables (maxmemory / 16): the values are flushed to files.
        r config set maxmemory 32mb
        # Random bytes (made by the server), which LZF does not shrink.
        set make {
            math.randomseed(tonumber(ARGV[1]))
            local t = {}
            for j = 1, 300000 do t[j] = string.char(math.random(0, 255)) end
            return redis.call('set', KEYS[1], table.concat(t))
        }
        set keys {}
        for {set i 0} {$i < 12} {incr i} {
            r eval $make 1 big$i [expr {$i + 1}]
            set value(big$i) [r get big$i]
            lappend keys big$i
        }
        # One write each: a memtable past its size is flushed at the next.
        foreach k $keys {
            assert_equal 1 [r rock evict $k]
            wait_for_condition 100 10 { [rock_field pending_writes] == 0 } else { fail "writes still pending" }
        }
        # (A blob file is there from the start of its flush: until the flush
        # is done, the values are read from the memtable.)
        wait_for_condition 100 100 {
            [rock_field pending_writes] == 0 && [llength [glob -nocomplain $rockdir/rocksdb/*.blob]] > 0 &&
            [rock_field rocksdb_running_flushes] == 0
        } else { fail "no blob file was written" }
        assert_equal 300000 [r strlen big0]
        # A read from a blob file is counted as one (RocksDB's perf context,
        # harvested by the reader within 100 ms).
        r config resetstat
        assert_equal $value(big1) [r get big1]
        wait_for_condition 50 100 {
            [rock_field rocksdb_blob_reads] >= 1
        } else { fail "no blob read counted" }
        assert_morethan_equal [rock_field rocksdb_blob_read_bytes] 300000
        assert_morethan [rock_damage_ssts $rockdir *.blob] 0
        set failed 0
        foreach k $keys {
            if {[catch {r get $k} res]} {
                assert_match "*can't read the value of '$k' from disk*" $res
                incr failed
            } else {
                assert {$res eq $value($k)}
            }
        }
        assert_morethan $failed 0
        assert_morethan [rock_field errors] 0
        # The keys stay; a write that replaces a value needs no read.
        assert_equal 12 [r dbsize]
        r set big0 fresh
        assert_equal fresh [r get big0]
        r config set maxmemory 0
    }
}
