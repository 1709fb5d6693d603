# tests/integration/rock/crash.tcl -- crash safety with most values on disk.
#
# appendonly yes, appendfsync always, a maxmemory that keeps most values in
# RocksDB. Twenty rounds of: restart (the AOF is replayed into an empty
# RocksDB), check the whole dataset against a shadow model kept here, send a
# pipelined batch of mixed writes and reads, read a random number of the
# replies, `kill -9`. Some rounds start a BGREWRITEAOF or a BGSAVE first, so
# the kill can land while a child streams cold values.
#
# After the restart every acknowledged write must be there and nothing else
# may have changed. The commands sent but not acknowledged are in flight:
# they come from one connection, in order, so the dataset must equal the
# model after some prefix of them (checked key by key for the keys they
# touch; every other key must equal the acknowledged model).
source tests/helpers/rock/util.tcl

# The keyspace: strings, hashes, lists and counters, each family under its
# own prefix so that no command meets the wrong type.
set ::crash_nstr 1000
set ::crash_nhash 40
set ::crash_nlist 40
set ::crash_nctr 20

proc crash_rand {n} { expr {int(rand() * $n)} }

proc crash_value {} {
    # 1000..4000 bytes, printable, distinct enough to catch a stale value.
    set len [expr {1000 + [crash_rand 3000]}]
    set seed [format %08x [crash_rand 0x7fffffff]]
    return [string range [string repeat "$seed-" [expr {$len / 9 + 1}]] 0 [expr {$len - 1}]]
}

# One random command: {cmd key} where cmd is the argument list.
proc crash_gen {} {
    set r [crash_rand 100]
    set s s:[crash_rand $::crash_nstr]
    set h h:[crash_rand $::crash_nhash]
    set l l:[crash_rand $::crash_nlist]
    set c c:[crash_rand $::crash_nctr]
    if {$r < 30} { return [list [list set $s [crash_value]] $s] }
    if {$r < 38} { return [list [list append $s "+[crash_rand 1000]"] $s] }
    if {$r < 43} { return [list [list del $s] $s] }
    if {$r < 48} { return [list [list expire $s 100000] $s] }
    if {$r < 58} { return [list [list get $s] $s] }
    if {$r < 68} { return [list [list hset $h f[crash_rand 8] [crash_value]] $h] }
    if {$r < 71} { return [list [list hdel $h f[crash_rand 8]] $h] }
    if {$r < 75} { return [list [list hgetall $h] $h] }
    if {$r < 83} { return [list [list rpush $l [crash_value]] $l] }
    if {$r < 87} { return [list [list lpop $l] $l] }
    if {$r < 90} { return [list [list lrange $l 0 -1] $l] }
    return [list [list incrby $c [expr {[crash_rand 1000] - 500}]] $c]
}

# The model: key -> {type value hasttl}; type is string|hash|list.
# Applies the command and returns the reply the server must give.
proc crash_apply {cmd} {
    set op [lindex $cmd 0]
    set key [lindex $cmd 1]
    set cur [expr {[dict exists $::model $key] ? [dict get $::model $key] : {}}]
    switch $op {
        set {
            dict set ::model $key [list string [lindex $cmd 2] 0]
            return OK
        }
        append {
            if {$cur eq {}} { set cur [list string "" 0] }
            set v [lindex $cur 1][lindex $cmd 2]
            dict set ::model $key [list string $v [lindex $cur 2]]
            return [string length $v]
        }
        del {
            if {$cur eq {}} { return 0 }
            dict unset ::model $key
            return 1
        }
        expire {
            if {$cur eq {}} { return 0 }
            dict set ::model $key [lreplace $cur 2 2 1]
            return 1
        }
        get {
            return [lindex $cur 1]
        }
        hset {
            set fields [expr {$cur eq {} ? {} : [lindex $cur 1]}]
            set new [expr {![dict exists $fields [lindex $cmd 2]]}]
            dict set fields [lindex $cmd 2] [lindex $cmd 3]
            dict set ::model $key [list hash $fields 0]
            return $new
        }
        hdel {
            if {$cur eq {}} { return 0 }
            set fields [lindex $cur 1]
            if {![dict exists $fields [lindex $cmd 2]]} { return 0 }
            dict unset fields [lindex $cmd 2]
            if {[dict size $fields] == 0} {
                dict unset ::model $key
            } else {
                dict set ::model $key [list hash $fields 0]
            }
            return 1
        }
        hgetall {
            return [expr {$cur eq {} ? {} : [lindex $cur 1]}]
        }
        rpush {
            set items [expr {$cur eq {} ? {} : [lindex $cur 1]}]
            lappend items [lindex $cmd 2]
            dict set ::model $key [list list $items 0]
            return [llength $items]
        }
        lpop {
            if {$cur eq {}} { return {} }
            set items [lindex $cur 1]
            set first [lindex $items 0]
            set items [lrange $items 1 end]
            if {[llength $items] == 0} {
                dict unset ::model $key
            } else {
                dict set ::model $key [list list $items 0]
            }
            return $first
        }
        lrange {
            return [expr {$cur eq {} ? {} : [lindex $cur 1]}]
        }
        incrby {
            set v [expr {$cur eq {} ? 0 : [lindex $cur 1]}]
            incr v [lindex $cmd 2]
            dict set ::model $key [list string $v [expr {$cur eq {} ? 0 : [lindex $cur 2]}]]
            return $v
        }
    }
    error "crash_apply: unknown op $op"
}

# Hash replies compare as dicts, whatever the field order.
proc crash_same_reply {op got want} {
    if {$op eq "hgetall"} {
        if {[llength $got] != [llength $want]} { return 0 }
        foreach {f v} $want {
            if {![dict exists $got $f] || [dict get $got $f] ne $v} { return 0 }
        }
        return 1
    }
    return [expr {$got eq $want}]
}

# The server's state of one key in the model's form ({} when missing).
proc crash_read_key {key} {
    set type [r type $key]
    if {$type eq "none"} { return {} }
    set hasttl [expr {[r ttl $key] > 0}]
    switch $type {
        string { set v [r get $key] }
        hash {
            set v {}
            foreach {f x} [r hgetall $key] { dict set v $f $x }
        }
        list { set v [r lrange $key 0 -1] }
        default { return [list $type ?] }
    }
    return [list $type $v $hasttl]
}

proc crash_same_state {got want} {
    if {$got eq {} || $want eq {}} { return [expr {$got eq $want}] }
    lassign $got gt gv gttl
    lassign $want wt wv wttl
    if {$gt ne $wt || $gttl != $wttl} { return 0 }
    if {$gt eq "hash"} { return [crash_same_reply hgetall $gv $wv] }
    return [expr {$gv eq $wv}]
}

proc crash_all_keys {} {
    set keys {}
    for {set i 0} {$i < $::crash_nstr} {incr i} { lappend keys s:$i }
    for {set i 0} {$i < $::crash_nhash} {incr i} { lappend keys h:$i }
    for {set i 0} {$i < $::crash_nlist} {incr i} { lappend keys l:$i }
    for {set i 0} {$i < $::crash_nctr} {incr i} { lappend keys c:$i }
    return $keys
}

start_server {tags {"rock crash external:skip"} overrides {rock-enabled yes rock-min-value-size 0 appendonly yes appendfsync always}} {
    test {kill -9 at random moments under a mixed write load with most values cold loses no acknowledged write (20 rounds)} {
        set ::model {}
        # About 3 MB of values in all; maxmemory leaves room for a third
        # part of them, so most live in RocksDB throughout.
        set base [s used_memory]
        r config set maxmemory [expr {$base + 1000000}]
        r config rewrite
        set pid [srv 0 pid]
        # Fill the keyspace first (acknowledged, so in the model).
        foreach k [crash_all_keys] {
            switch [string index $k 0] {
                s { set cmds [list [list set $k [crash_value]]] }
                h { set cmds [lmap f {f0 f1 f2 f3} {list hset $k $f [crash_value]}] }
                l { set cmds [lmap i {0 1 2} {list rpush $k [crash_value]}] }
                c { set cmds [list [list incrby $k [crash_rand 1000]]] }
            }
            foreach c $cmds { assert_equal [crash_apply $c] [r {*}$c] }
        }
        set acked 0
        set inflight_applied 0
        set cold_shares {}
        set rewrites 0
        for {set round 0} {$round < 20} {incr round} {
            # 1. Write a batch: pipelined, the replies of a random prefix read.
            set batch [expr {200 + [crash_rand 300]}]
            set cmds {}
            for {set i 0} {$i < $batch} {incr i} { lappend cmds [crash_gen] }
            if {$round > 0} {
                lappend cold_shares [expr {double([dict get [r rock report] cold_keys]) / max(1, [r dbsize])}]
            }
            set bg [crash_rand 3]
            if {$::verbose} { puts "round $round: used_memory [s used_memory] cold [dict get [r rock report] cold_keys]/[r dbsize]" }
            if {$round > 0 && $bg == 1} { r bgrewriteaof; incr rewrites }
            if {$round > 0 && $bg == 2} { r bgsave }
            set rd [redis_deferring_client]
            foreach c $cmds { $rd {*}[lindex $c 0] }
            $rd flush
            set nread [crash_rand [expr {$batch + 1}]]
            # The first round reads everything, so the dataset is never empty.
            if {$round == 0} { set nread $batch }
            for {set i 0} {$i < $nread} {incr i} {
                set c [lindex $cmds $i 0]
                set got [$rd read]
                set want [crash_apply $c]
                if {![crash_same_reply [lindex $c 0] $got $want]} {
                    fail "round $round: reply $i to [string range $c 0 60] was [string range $got 0 60], expected [string range $want 0 60]"
                }
            }
            incr acked $nread
            exec kill -9 $pid
            $rd close

            # 2. The states the in-flight commands may have left: the model
            # after each prefix of them, for the keys they touch.
            set touched [lsort -unique [lmap c [lrange $cmds $nread end] {lindex $c 1}]]
            set saved $::model
            set candidates {}
            set snap {}
            foreach k $touched { lappend snap [expr {[dict exists $::model $k] ? [dict get $::model $k] : {}}] }
            lappend candidates $snap
            foreach c [lrange $cmds $nread end] {
                crash_apply [lindex $c 0]
                set snap {}
                foreach k $touched { lappend snap [expr {[dict exists $::model $k] ? [dict get $::model $k] : {}}] }
                lappend candidates $snap
            }
            set ::model $saved

            # 3. Restart from the AOF and compare.
            restart_server 0 true false true
            set pid [srv 0 pid]
            assert_equal 1 [rock_info_field rock_enabled]
            set actual {}
            foreach k $touched { lappend actual [crash_read_key $k] }
            set match -1
            for {set j 0} {$j < [llength $candidates]} {incr j} {
                set ok 1
                foreach got $actual want [lindex $candidates $j] {
                    if {![crash_same_state $got $want]} { set ok 0; break }
                }
                if {$ok} { set match $j; break }
            }
            if {$match < 0} {
                fail "round $round: keys touched by in-flight commands match no prefix of them ([llength $touched] keys, [expr {[llength $candidates] - 1}] in flight)"
            }
            # Bring the model to the prefix the server kept.
            foreach c [lrange $cmds $nread [expr {$nread + $match - 1}]] { crash_apply [lindex $c 0] }
            incr inflight_applied $match
            foreach k [crash_all_keys] {
                set want [expr {[dict exists $::model $k] ? [dict get $::model $k] : {}}]
                set got [crash_read_key $k]
                if {![crash_same_state $got $want]} {
                    fail "round $round: $k is [string range $got 0 80], expected [string range $want 0 80]"
                }
            }
            assert_equal [dict size $::model] [r dbsize]
            # Reading everything paged values in; let eviction move them out
            # again so the next round starts mostly cold.
            wait_for_condition 200 50 {
                [dict get [r rock report] cold_keys] >= [r dbsize] / 2
            } else {
                fail "round $round: values did not go back to disk after the restart"
            }
        }
        # Most values were cold when the batches ran.
        set avg [expr {[tcl::mathop::+ {*}$cold_shares] / [llength $cold_shares]}]
        assert_morethan $avg 0.5
        assert_morethan $acked 1000
        assert_morethan $rewrites 0
        puts "crash: 20 rounds, $acked writes acknowledged, $inflight_applied in-flight commands kept, [format %.0f [expr {$avg * 100}]]% cold on average, $rewrites kills during/after BGREWRITEAOF"
    }
}
