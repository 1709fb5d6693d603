# tests/integration/rock/full-disk.tcl -- rock-dir on a small tmpfs, filled up.
# Eviction must stop and say why (log, ROCK REPORT), writes that need memory
# get -OOM, every value (hot, cold, or still waiting for the writer) reads
# back intact, nothing crashes, and once FLUSHALL frees the space eviction
# resumes by itself. Twice: with the free-space guard (rock-min-free-disk),
# and with the guard off so that RocksDB itself hits ENOSPC.
# Mounting a tmpfs needs root; the test fails (it does not skip) without it.
source tests/helpers/rock/util.tcl

proc rock_field {f} { return [dict get [r rock report] $f] }

# Values RDB's LZF can't shrink, so that the disk really fills: a pool of
# random strings, each value tagged with its index.
set ::rock_pool [rock_random_pool 64 1000]
proc rock_value {i} { return "[format %06d $i]:[lindex $::rock_pool [expr {$i % 64}]]" }

proc rock_mount_tmpfs {dir size} {
    if {[exec id -u] != 0} { fail "full-disk tests mount a tmpfs and must run as root" }
    file mkdir $dir
    catch {exec umount $dir}
    exec mount -t tmpfs -o size=$size tmpfs $dir
}

proc rock_umount {dir} {
    catch {exec umount $dir}
    catch {file delete -force $dir}
}

# SET key$i for i from `from` on, pipelined, until a reply is an error or
# `max` keys were written. Returns {next-index first-error}.
proc rock_fill_until_error {from max} {
    set rd [redis_deferring_client]
    set i $from
    set err ""
    while {$err eq "" && $i < $max} {
        set n 0
        for {set j 0} {$j < 500 && $i + $j < $max} {incr j} {
            $rd set key[expr {$i + $j}] [rock_value [expr {$i + $j}]]
            incr n
        }
        for {set j 0} {$j < $n} {incr j} {
            if {[catch {$rd read} e]} {
                if {$err eq ""} { set err $e; set stop [expr {$i + $j}] }
            }
        }
        incr i $n
    }
    $rd close
    if {$err ne ""} { set i $stop }
    return [list $i $err]
}

# The same, until the error comes from a full disk: an -OOM met while
# eviction is still "running" (the writer thread behind on a loaded
# machine) is retried once what was pending is committed.
proc rock_fill_until_disk_full {from max} {
    for {set tries 0} {$tries < 20} {incr tries} {
        lassign [rock_fill_until_error $from $max] n err
        if {![string match "*OOM*" $err] || [rock_field eviction] ne "running"} break
        wait_for_condition 100 50 {
            [rock_field pending_writes] == 0
        } else {
            fail "pending writes were never committed"
        }
        set from $n
    }
    return [list $n $err]
}

# Every `step`-th key below `n` (and the last) reads back intact.
proc rock_check_values {n step} {
    for {set i 0} {$i < $n} {incr i $step} {
        assert_equal [rock_value $i] [r get key$i]
    }
    assert_equal [rock_value [expr {$n - 1}]] [r get key[expr {$n - 1}]]
}

proc rock_wait_eviction_running {} {
    wait_for_condition 100 100 {
        [rock_field eviction] eq "running"
    } else {
        fail "eviction did not resume: [rock_field eviction]"
    }
}

# Mounts left behind by an earlier run that was interrupted.
foreach old [glob -nocomplain /tmp/redis-rock-fulldisk-*] { rock_umount $old }
set mnt /tmp/redis-rock-fulldisk-[pid]

# The reserve must hold what RocksDB takes at once: a compaction keeps its
# inputs until its output is complete, and on a dataset this small the base
# level is all of it (24 MB on 64 MB ran out before the guard tripped in
# about one run in ten).
rock_mount_tmpfs $mnt 96m
start_server [list tags {"rock external:skip"} overrides [list rock-enabled yes rock-dir $mnt/r \
        rock-min-free-disk 48mb rock-compression none maxmemory 32mb]] {
    test {Full disk (guard): eviction stops before RocksDB runs out of space, writes get -OOM} {
        lassign [rock_fill_until_disk_full 0 200000] n err
        assert_match "*OOM*" $err
        assert_morethan $n 20000
        # One report: still stopped by the guard, or (compactions free
        # space, seen under make test's load: the report then says
        # `nothing-movable`, the -OOM above being the policy acting) lifted
        # already, which the log says after it said it stopped.
        set rep [r rock report]
        verify_log_message 0 "*eviction to disk stopped*under rock-min-free-disk*" 0
        if {![string match "*rock-min-free-disk*" [dict get $rep eviction]]} {
            verify_log_message 0 "*bytes free on rock-dir; eviction to disk resumes*" 0
        } else {
            assert_equal 1 [dict get $rep disk_full]
        }
        assert_equal 0 [dict get $rep write_errors]
        # Once what was pending is committed, more writes may fit: in RAM,
        # and on disk too when the guard tripped while space was only held
        # for a while (a compaction keeps its input files until its output is
        # complete; eviction resumes once they are deleted, so near the
        # limit it may stop and resume more than once). Far more than the
        # disk holds gets -OOM again, RocksDB still never failing a write.
        wait_for_condition 50 100 {
            [rock_field pending_writes] == 0
        } else {
            fail "pending writes never committed"
        }
        lassign [rock_fill_until_disk_full $n [expr {$n + 100000}]] n err
        assert_match "*OOM*" $err
        assert_equal 0 [rock_field write_errors]
        assert_morethan [rock_field cold_keys] 10000
        set ::rock_full_n $n
    }

    test {Full disk (guard): hot and cold values read back intact} {
        rock_check_values $::rock_full_n 37
        assert_equal 0 [rock_field errors]
    }

    test {Full disk (guard): reads of cold values don't take memory past maxmemory} {
        # Each read pages a value in. Nothing can be written, so eviction
        # drops hot-clean values (their disk copy is current) to make room;
        # it used to stop altogether, and memory grew with every read
        # (the soak: 315 MB used under a 48 MB maxmemory).
        set max [lindex [r config get maxmemory] 1]
        set drops [rock_field clean_drops]
        set rd [redis_deferring_client]
        set peak 0
        for {set i 0} {$i < $::rock_full_n} {incr i 500} {
            set n 0
            for {set j $i} {$j < $i + 500 && $j < $::rock_full_n} {incr j} { $rd get key$j; incr n }
            for {set j 0} {$j < $n} {incr j} {
                if {[$rd read] ne [rock_value [expr {$i + $j}]]} { fail "key[expr {$i + $j}] read back wrong" }
            }
            set used [s used_memory]
            if {$used > $peak} { set peak $used }
        }
        $rd close
        assert_equal 1 [rock_field disk_full]
        assert_lessthan $peak [expr {$max + 8 * 1024 * 1024}]
        assert_morethan [rock_field clean_drops] [expr {$drops + 10000}]
    }

    test {Full disk (guard): after FLUSHALL frees the space, eviction resumes by itself} {
        r flushall
        rock_wait_eviction_running
        lassign [rock_fill_until_error 0 40000] n err
        assert_equal "" $err
        assert_equal 40000 $n
        assert_morethan [rock_field cold_keys] 5000
        rock_check_values 40000 101
    }
}
rock_umount $mnt

rock_mount_tmpfs $mnt 40m
start_server [list tags {"rock external:skip"} overrides [list rock-enabled yes rock-dir $mnt/r \
        rock-min-free-disk 0 rock-compression none maxmemory 32mb]] {
    test {Full disk (no guard): RocksDB hits ENOSPC, eviction stops and says why, writes get -OOM} {
        lassign [rock_fill_until_disk_full 0 200000] n err
        assert_match "*OOM*" $err
        assert_match "*out of space*" [rock_field eviction]
        assert_match "*No space left*" [rock_field last_write_error]
        assert_morethan [rock_field write_errors] 0
        verify_log_message 0 "*RocksDB write of * failed*No space left*" 0
        lassign [rock_fill_until_error $n [expr {$n + 5000}]] n err
        assert_match "*OOM*" $err
        set ::rock_full_n $n
    }

    test {Full disk (no guard): no value is lost, including those whose write failed} {
        assert_morethan [rock_field pending_writes] 0
        rock_check_values $::rock_full_n 13
        assert_equal PONG [r ping]
    }

    test {Full disk (no guard): FLUSHALL replaces the failed store and eviction resumes} {
        r flushall
        rock_wait_eviction_running
        assert_equal "" [rock_field last_write_error]
        lassign [rock_fill_until_error 0 40000] n err
        assert_equal "" $err
        assert_morethan [rock_field cold_keys] 3000
        rock_check_values 40000 101
    }
}
rock_umount $mnt
