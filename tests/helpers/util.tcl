# tests/helpers/util.tcl -- helpers shared by redis-rock's own Tcl tests.
# Copied to build/redis/tests/helpers/rock/ by tests/run.sh; source it with
#   source tests/helpers/rock/util.tcl

# ROCK REPORT as a Tcl dict (the reply is a map; RESP2 gives a flat list).
proc rock_report {{client r}} {
    return [$client rock report]
}

# One field of INFO rock.
proc rock_info_field {field {client r}} {
    return [getInfoProperty [$client info rock] $field]
}

# `n` random printable strings of `len` bytes: values LZF (records, RDB)
# cannot shrink, so they take their size on disk, in the pipe and in RAM.
proc rock_random_pool {n len} {
    set pool {}
    for {set p 0} {$p < $n} {incr p} {
        set v ""
        for {set c 0} {$c < $len} {incr c} { append v [format %c [expr {33 + int(rand() * 90)}]] }
        lappend pool $v
    }
    return $pool
}

# A hash of `n` fields f0.. under `key`, each value a string of `pool`
# (round robin) followed by its index, written 1,000 fields per HSET.
proc rock_big_hash {key n pool} {
    for {set b 0} {$b < $n} {incr b 1000} {
        set args {}
        for {set i $b} {$i < min($b + 1000, $n)} {incr i} {
            lappend args f$i "[lindex $pool [expr {$i % [llength $pool]}]]$i"
        }
        r hset $key {*}$args
    }
}

# Run redis-server in the foreground expecting it to refuse to start.
# Returns {exit-code output}. A server that does start is killed after
# `timeout` seconds and reported with exit code "started".
# The server listens only on a unix socket of its own (no TCP port to collide).
proc rock_socket_path {} {
    incr ::rock_socket_seq
    return /tmp/redis-rock-test-[pid]-$::rock_socket_seq.sock
}

proc rock_exec_server {args} {
    set cmd [list timeout 20 src/redis-server --port 0 --unixsocket [rock_socket_path] --save "" --logfile ""]
    set rc 0
    if {[catch {exec {*}$cmd {*}$args 2>@1} out opts]} {
        set status [lindex [dict get $opts -errorcode] 2]
        if {$status eq ""} { set status 1 }
        set rc $status
    }
    if {$rc == 124} { set rc started }
    return [list $rc $out]
}

# Same, as an unprivileged user when we are root (so file permissions apply).
# The binary is copied into `workdir`, which the user can read.
proc rock_exec_server_unprivileged {workdir args} {
    file copy -force src/redis-server $workdir/redis-server
    file attributes $workdir -permissions 0777
    set cmd [list timeout 20 $workdir/redis-server --port 0 --unixsocket [rock_socket_path] --save "" --logfile "" --dir $workdir]
    if {[exec id -u] == 0} {
        set cmd [list setpriv --reuid=65534 --regid=65534 --clear-groups {*}$cmd]
    }
    set rc 0
    if {[catch {exec {*}$cmd {*}$args 2>@1} out opts]} {
        set rc [lindex [dict get $opts -errorcode] 2]
    }
    if {$rc == 124} { set rc started }
    return [list $rc $out]
}

# The newest RocksDB OPTIONS file of a rock-dir, as text.
proc rock_latest_options {rockdir} {
    # The writer thread may be rewriting it (rockTuneL0()): RocksDB writes
    # OPTIONS-N.dbtmp, renames it, then deletes the older file. Retry a file
    # that went between the glob and the open.
    for {set try 0} {$try < 50} {incr try} {
        set files {}
        foreach f [glob -nocomplain $rockdir/rocksdb/OPTIONS-*] {
            if {![string match *.dbtmp $f]} { lappend files $f }
        }
        set files [lsort -dictionary $files]
        if {![catch {open [lindex $files end]} fd]} {
            set txt [read $fd]
            close $fd
            return $txt
        }
        after 20
    }
    error "no readable OPTIONS file in $rockdir/rocksdb"
}

# Wait until n clients are blocked in any way: INFO's blocked_clients
# (blocked commands, postponed clients) plus rock_waiting_clients (clients
# waiting for disk reads, which blocked_clients leaves out, as a stock
# server has no such wait).
proc rock_blocked_count {} {
    return [expr {[s blocked_clients] + [rock_info_field rock_waiting_clients]}]
}
proc rock_wait_blocked {n} {
    wait_for_condition 100 20 {
        [rock_blocked_count] == $n
    } else {
        fail "expected $n blocked clients, got [rock_blocked_count]"
    }
}

# Overwrite the first half of every SST file of a rock-dir (after its first
# 4 KB) with junk: reads that hit it fail RocksDB's checksum. Returns how many
# files were damaged.
proc rock_damage_ssts {rockdir {pattern *.sst}} {
    set n 0
    foreach f [glob -nocomplain $rockdir/rocksdb/$pattern] {
        set size [file size $f]
        set fd [open $f r+]
        fconfigure $fd -translation binary
        seek $fd 4096
        puts -nonewline $fd [string repeat "\x5a" [expr {$size / 2}]]
        close $fd
        incr n
    }
    return $n
}

# A field of /proc/<pid>/status in kB (VmRSS, VmHWM: Linux).
proc rock_proc_status_kb {pid field} {
    set fd [open /proc/$pid/status r]
    set text [read $fd]
    close $fd
    if {![regexp "$field:\\s+(\\d+) kB" $text -> kb]} { error "no $field in /proc/$pid/status" }
    return $kb
}

# jemalloc's active less allocated bytes: pages held for freed slots.
proc rock_frag_bytes {{client r}} {
    $client debug mallctl epoch 1
    return [expr {[$client debug mallctl stats.active] - [$client debug mallctl stats.allocated]}]
}

# restart_server that fails at once, with the server's message, when the
# start is refused (restart_server would wait for a server that is gone).
# A start replays what its AOF holds: warm-aof.tcl's incr files took 1.5 to
# 9.4 s to load with a busy loop on the other core, and over 10 s once in a
# full `make test`; it is given a minute.
proc rock_restart_checked {} {
    set stdout [srv 0 stdout]
    set ready [count_message_lines $stdout "Ready to accept"]
    set fatal [count_message_lines $stdout "Fatal: rock"]
    restart_server 0 false false 0
    wait_for_condition 3000 20 {
        [count_message_lines $stdout "Ready to accept"] > $ready ||
        [count_message_lines $stdout "Fatal: rock"] > $fatal
    } else {
        fail "the server neither started nor refused to"
    }
    if {[count_message_lines $stdout "Fatal: rock"] > $fatal} {
        fail "the start was refused: [exec grep "Fatal: rock" $stdout | tail -1]"
    }
    reconnect
}
