# tests/integration/rock/cluster.tcl -- redis-rock in Redis Cluster:
# three redis-rock masters with one replica each on loopback, built with
# `redis-cli --cluster create --cluster-replicas 1`. Some 6,000 keys of every
# type (strings of 1-2000 bytes, integers, hashes, lists, sets, zsets,
# streams, some with a TTL, a few hash-tagged groups) are written, with a
# shadow model of every value kept here, and every value is moved to disk on
# all three masters. Then:
#   - `redis-cli --cluster reshard` moves 3000 slots holding cold keys
#     (MIGRATE pages them in on the source, RESTORE-ASKING on the target);
#     every key lands on its slot's new owner, the source keeps no stale
#     record, every value reads back equal;
#   - with every value cold again, `redis-cli --cluster rebalance` moves
#     slots back; the same checks;
#   - every replica gets its values moved to disk with ROCK EVICT (READONLY
#     connection), and has the same DEBUG DIGEST as its master;
#   - a manual failover (CLUSTER FAILOVER on a replica) and an automatic one
#     (master stopped with SIGSTOP until its replica is promoted) leave every
#     value readable from the new masters, paged in from their own disk;
#     writes to cold keys afterwards reach the old master, now a replica.
# Each check reads every key from the node CLUSTER SLOTS names for its slot
# (a pipeline per node; a -MOVED reply is a mismatch) and compares it with
# the model.
source tests/helpers/rock/util.tcl
source tests/support/cluster.tcl

# Cluster mode has only db 0: the harness must not SELECT 9.
set old_singledb $::singledb
set ::singledb 1

# ---------------------------------------------------------------------------
# Nodes are named by index 0..5: node i is [srv -i].
# ---------------------------------------------------------------------------

proc rc_client {i} { return [srv -$i client] }
proc rc_port {i} { return [srv -$i port] }
proc rc_field {i f} { return [dict get [[rc_client $i] rock report] $f] }
proc rc_cinfo {i f} { return [getInfoProperty [[rc_client $i] cluster info] $f] }

proc rc_idx_of_port {port} {
    for {set i 0} {$i < 6} {incr i} {
        if {[rc_port $i] == $port} { return $i }
    }
    error "no node on port $port"
}

# -1 for a master, else the index of the node's master (from ROLE).
proc rc_master_of {i} {
    set role [[rc_client $i] role]
    if {[lindex $role 0] eq "master"} { return -1 }
    return [rc_idx_of_port [lindex $role 2]]
}

# {master replica} pairs of the nodes in `live`, masters in index order.
proc rc_pairs {live} {
    set pairs {}
    foreach i $live {
        if {[rc_master_of $i] != -1} continue
        foreach j $live {
            if {[rc_master_of $j] == $i} { lappend pairs [list $i $j] }
        }
    }
    return $pairs
}

# The 16384 slots' serving node (index), from CLUSTER SLOTS of node `via`.
proc rc_slot_owners {via} {
    set owners [lrepeat 16384 -1]
    foreach range [[rc_client $via] cluster slots] {
        lassign $range start end master
        set idx [rc_idx_of_port [lindex $master 1]]
        for {set s $start} {$s <= $end} {incr s} { lset owners $s $idx }
    }
    return $owners
}

proc rc_slot_count {owners i} {
    return [llength [lsearch -all -exact $owners $i]]
}

# CLUSTER SLOTS without the replicas (their order may differ between nodes).
proc rc_slots_masters {i} {
    set out {}
    foreach range [[rc_client $i] cluster slots] {
        lappend out [lrange $range 0 2]
    }
    return [lsort $out]
}

# Every node of `live` says cluster_state:ok and the same slot map, every
# replica's link is up, and (when `check` is set) `redis-cli --cluster check`
# finds nothing wrong (no open slot, every slot covered, all nodes agree).
# Whether the live nodes agree and are settled; when not, ::rc_unstable
# says what was not (for the failure message).
proc rc_cluster_stable {live {check 1}} {
    set base {}
    foreach i $live {
        if {[rc_cinfo $i cluster_state] ne "ok"} {
            set ::rc_unstable "node $i: cluster_state [rc_cinfo $i cluster_state]"
            return 0
        }
        set s [rc_slots_masters $i]
        if {$base eq {}} { set base $s } elseif {$s ne $base} {
            set ::rc_unstable "node $i sees other slot owners"
            return 0
        }
        if {[rc_master_of $i] != -1 &&
            [status [rc_client $i] master_link_status] ne "up"} {
            set ::rc_unstable "node $i: master_link_status [status [rc_client $i] master_link_status]"
            return 0
        }
    }
    if {$check && [catch {exec src/redis-cli --cluster check 127.0.0.1:[rc_port [lindex $live 0]]} out]} {
        set ::rc_unstable "--cluster check: [lrange [split $out \n] end-5 end]"
        return 0
    }
    return 1
}

proc rc_wait_stable {live {check 1}} {
    set ::rc_unstable {}
    wait_for_condition 600 100 {
        [rc_cluster_stable $live $check]
    } else {
        fail "cluster did not stabilize ($::rc_unstable): [[rc_client [lindex $live 0]] cluster nodes]"
    }
}

# ---------------------------------------------------------------------------
# Pipelines: commands sent in one write, replies read back in order; an
# error reply becomes "ERR-REPLY: <message>".
# ---------------------------------------------------------------------------

proc rc_resp {cmd} {
    set buf "*[llength $cmd]\r\n"
    foreach a $cmd { append buf "\$[string length $a]\r\n$a\r\n" }
    return $buf
}

proc rc_pipeline {i cmds} {
    set rd [redis_deferring_client -$i]
    set replies {}
    for {set off 0} {$off < [llength $cmds]} {incr off 500} {
        set chunk [lrange $cmds $off [expr {$off + 499}]]
        set buf ""
        foreach c $chunk { append buf [rc_resp $c] }
        $rd write $buf
        $rd flush
        foreach c $chunk {
            if {[catch {$rd read} rep]} { set rep "ERR-REPLY: $rep" }
            lappend replies $rep
        }
    }
    $rd close
    return $replies
}

# ---------------------------------------------------------------------------
# The shadow model: ::rc_model key -> {type value}, value as the read
# command of rc_read_cmd returns it (hash pairs and set members sorted);
# ::rc_slot key -> slot; ::rc_ttl key -> 1 for keys with a TTL.
# ---------------------------------------------------------------------------

proc rc_model_set {key type value} {
    dict set ::rc_model $key [list $type $value]
    dict set ::rc_slot $key [::redis_cluster::hash $key]
}

proc rc_build_model {} {
    set ::rc_model {}
    set ::rc_slot {}
    set ::rc_ttl {}
    # Incompressible material, cut at different offsets.
    set base [randstring 4000 4000 alpha]
    for {set i 0} {$i < 5000} {incr i} {
        set size [expr {($i * 37) % 2000 + 1}]
        if {$i % 3 == 0} {
            set v [string repeat "s$i." [expr {$size / 6 + 1}]]
        } else {
            set off [expr {($i * 13) % 2000}]
            set v "$i:[string range $base $off [expr {$off + $size - 1}]]"
        }
        rc_model_set str:$i string $v
        if {$i % 10 == 0} { dict set ::rc_ttl str:$i 1 }
    }
    for {set i 0} {$i < 200} {incr i} { rc_model_set int:$i string [expr {$i * 7 - 300}] }
    # Hash-tagged groups: many keys in one slot, moved by one MIGRATE batch.
    for {set t 0} {$t < 10} {incr t} {
        for {set j 0} {$j < 50} {incr j} {
            rc_model_set "\{grp$t\}:$j" string [string repeat "g$t.$j-" [expr {$j + 1}]]
        }
    }
    for {set i 0} {$i < 100} {incr i} {
        set pairs {}
        set long [expr {$i % 5 == 0}]
        for {set j 0} {$j < $i % 40 + 2} {incr j} {
            lappend pairs f$j [expr {$long ? [string repeat "v$i.$j-" 20] : "v$i.$j"}]
        }
        rc_model_set hash:$i hash [lsort -stride 2 -index 0 $pairs]
        if {$i % 10 == 3} { dict set ::rc_ttl hash:$i 1 }

        set items {}
        set n [expr {$i % 7 == 0 ? 300 : $i % 50 + 1}]
        for {set j 0} {$j < $n} {incr j} { lappend items "item-$i-$j" }
        rc_model_set list:$i list $items

        set members {}
        for {set j 0} {$j < $i % 30 + 1} {incr j} {
            lappend members [expr {$i % 2 ? "m-$i-$j" : $j * 11 + $i}]
        }
        rc_model_set set:$i set [lsort $members]

        set zs {}
        set n [expr {$i % 9 == 0 ? 150 : $i % 20 + 1}]
        for {set j 0} {$j < $n} {incr j} { lappend zs "z-$i-$j" [expr {$j * 3}] }
        rc_model_set zset:$i zset $zs
    }
    for {set i 0} {$i < 20} {incr i} {
        set entries {}
        for {set j 1} {$j <= 10} {incr j} { lappend entries [list $j-1 [list f $j g $i]] }
        rc_model_set stream:$i stream $entries
    }
}

# The commands that create `key` as the model has it.
proc rc_write_cmds {key} {
    lassign [dict get $::rc_model $key] type value
    switch $type {
        string { set cmds [list [list set $key $value]] }
        hash   { set cmds [list [list hset $key {*}$value]] }
        list   { set cmds [list [list rpush $key {*}$value]] }
        set    { set cmds [list [list sadd $key {*}$value]] }
        zset   {
            set args {}
            foreach {m s} $value { lappend args $s $m }
            set cmds [list [list zadd $key {*}$args]]
        }
        stream {
            set cmds {}
            foreach e $value { lappend cmds [list xadd $key [lindex $e 0] {*}[lindex $e 1]] }
        }
    }
    if {[dict exists $::rc_ttl $key]} { lappend cmds [list pexpire $key 100000000] }
    return $cmds
}

proc rc_read_cmd {key} {
    switch [lindex [dict get $::rc_model $key] 0] {
        string { return [list get $key] }
        hash   { return [list hgetall $key] }
        list   { return [list lrange $key 0 -1] }
        set    { return [list smembers $key] }
        zset   { return [list zrange $key 0 -1 withscores] }
        stream { return [list xrange $key - +] }
    }
}

proc rc_normalize {type reply} {
    switch $type {
        hash { return [lsort -stride 2 -index 0 $reply] }
        set  { return [lsort $reply] }
        default { return $reply }
    }
}

# Model keys grouped by the node serving their slot: dict index -> keys.
proc rc_keys_by_node {owners} {
    set by {}
    dict for {key slot} $::rc_slot {
        dict lappend by [lindex $owners $slot] $key
    }
    return $by
}

# Write the model through the slot owners.
proc rc_load {via} {
    dict for {i keys} [rc_keys_by_node [rc_slot_owners $via]] {
        set cmds {}
        foreach k $keys { lappend cmds {*}[rc_write_cmds $k] }
        foreach rep [rc_pipeline $i $cmds] {
            if {[string match "ERR-REPLY*" $rep]} { fail "load on node $i: $rep" }
        }
    }
}

# Read every key from the node serving its slot (slot map as node `via`
# sees it) and compare with the model; keys with a TTL must still have one.
# Returns the number of keys read equal; fails listing the first mismatches.
proc rc_check_all {via} {
    set owners [rc_slot_owners $via]
    set bad {}
    set good 0
    dict for {i keys} [rc_keys_by_node $owners] {
        if {$i == -1} { fail "keys in unserved slots: [lrange $keys 0 5]" }
        set cmds {}
        foreach k $keys { lappend cmds [rc_read_cmd $k] }
        set ttlkeys {}
        foreach k $keys {
            if {[dict exists $::rc_ttl $k]} { lappend ttlkeys $k; lappend cmds [list pttl $k] }
        }
        set replies [rc_pipeline $i $cmds]
        foreach k $keys rep [lrange $replies 0 [expr {[llength $keys] - 1}]] {
            lassign [dict get $::rc_model $k] type value
            if {[rc_normalize $type $rep] eq $value} {
                incr good
            } else {
                lappend bad "node $i $k: [string range $rep 0 80]"
            }
        }
        foreach k $ttlkeys rep [lrange $replies [llength $keys] end] {
            if {![string is integer -strict $rep] || $rep <= 0 || $rep > 100000000} {
                lappend bad "node $i $k: pttl $rep"
            }
        }
    }
    assert_equal {} [lrange $bad 0 9]
    assert_equal [dict size $::rc_model] $good
    return $good
}

# Every value of master i to disk (evict-all sweeps the keyspace when
# switched on); all its keys cold, as many as the model puts on it.
proc rc_master_cold {i owners} {
    set c [rc_client $i]
    $c config set rock-debug-evict-all yes
    $c ping
    $c config set rock-debug-evict-all no
    set expected [llength [dict get [rc_keys_by_node $owners] $i]]
    assert_equal $expected [$c dbsize]
    assert_equal $expected [rc_field $i cold_keys]
}

# Every value of replica i to disk with ROCK EVICT, per slot (a key command
# in cluster mode takes one slot's keys), on a READONLY connection (else a
# replica redirects key commands to its master). Returns the count moved.
proc rc_replica_cold {i owners} {
    set m [rc_master_of $i]
    set byslot {}
    dict for {key slot} $::rc_slot {
        if {[lindex $owners $slot] == $m} { dict lappend byslot $slot $key }
    }
    set cmds [list readonly]
    dict for {slot keys} $byslot { lappend cmds [list rock evict {*}$keys] }
    set replies [rc_pipeline $i $cmds]
    assert_equal OK [lindex $replies 0]
    set moved 0
    foreach rep [lrange $replies 1 end] {
        if {![string is integer -strict $rep]} { fail "ROCK EVICT on replica $i: $rep" }
        incr moved $rep
    }
    return $moved
}

# RocksDB holds exactly one record per key that has a disk copy: none left
# behind by keys migrated away or deleted.
proc rc_wait_no_stale_records {i} {
    wait_for_condition 100 50 {
        [[rc_client $i] rock diskkeys] == [rc_field $i cold_keys] + [rc_field $i hot_clean_keys]
    } else {
        fail "node $i: [[rc_client $i] rock diskkeys] records for [rc_field $i cold_keys] cold + [rc_field $i hot_clean_keys] hot-clean keys"
    }
}

tags {"rock cluster external:skip needs:debug tls:skip"} {

set base_conf [list cluster-enabled yes cluster-node-timeout 3000 rock-enabled yes rock-min-value-size 0]
start_multiple_servers 6 [list overrides $base_conf] {

    set all {0 1 2 3 4 5}

    test {redis-cli --cluster create: three redis-rock masters with one replica each} {
        set nodes {}
        foreach i $all { lappend nodes 127.0.0.1:[rc_port $i] }
        exec src/redis-cli --cluster-yes --cluster create {*}$nodes --cluster-replicas 1
        rc_wait_stable $all
        # No failover unless the test asks for one: a node starved of CPU
        # by parallel tests must not get its replica promoted.
        foreach i $all { [rc_client $i] config set cluster-replica-no-failover yes }
        set pairs [rc_pairs $all]
        assert_equal 3 [llength $pairs]
        set masters {}
        foreach p $pairs { lappend masters [lindex $p 0] }
        set owners [rc_slot_owners 0]
        foreach m $masters { assert {[rc_slot_count $owners $m] > 5000} }
        assert_equal 16384 [expr [join [lmap m $masters {rc_slot_count $owners $m}] +]]
        foreach i $all { assert_equal 1 [rc_field $i enabled] }
    }

    test {Several thousand keys of every type through the slot owners, every value cold on all three masters} {
        rc_build_model
        rc_load 0
        set owners [rc_slot_owners 0]
        set total 0
        foreach m $masters {
            rc_master_cold $m $owners
            incr total [[rc_client $m] dbsize]
        }
        assert_equal [dict size $::rc_model] $total
        assert {$total > 6000}
        # Reading through the cluster pages values back, equal.
        rc_check_all 0
        foreach m $masters { assert_equal 0 [rc_field $m cold_keys] }
    }

    test {redis-cli --cluster reshard moves 3000 slots of cold keys (MIGRATE), every value equal} {
        set owners [rc_slot_owners 0]
        foreach m $masters { rc_master_cold $m $owners }
        set src [lindex $masters 0]
        set dst [lindex $masters 1]
        set src_keys [[rc_client $src] dbsize]
        set src_slots [rc_slot_count $owners $src]
        set dst_slots [rc_slot_count $owners $dst]
        set src_loads [rc_field $src loads]
        set src_sync [rc_field $src sync_loads]
        exec src/redis-cli --cluster reshard 127.0.0.1:[rc_port $src] \
            --cluster-from [[rc_client $src] cluster myid] \
            --cluster-to [[rc_client $dst] cluster myid] \
            --cluster-slots 3000 --cluster-yes
        rc_wait_stable $all
        set new_owners [rc_slot_owners 0]
        # Exactly 3000 slots changed hands, from src to dst.
        set moved {}
        for {set s 0} {$s < 16384} {incr s} {
            if {[lindex $owners $s] != [lindex $new_owners $s]} {
                assert_equal $src [lindex $owners $s]
                assert_equal $dst [lindex $new_owners $s]
                lappend moved $s
            }
        }
        assert_equal 3000 [llength $moved]
        assert_equal [expr {$src_slots - 3000}] [rc_slot_count $new_owners $src]
        assert_equal [expr {$dst_slots + 3000}] [rc_slot_count $new_owners $dst]
        # Each moved slot's keys are on dst, none left on src.
        set expected_moved 0
        set per_slot {}
        dict for {key slot} $::rc_slot { dict incr per_slot $slot }
        set on_dst 0
        set on_src 0
        foreach s $moved {
            if {[dict exists $per_slot $s]} { incr expected_moved [dict get $per_slot $s] }
            incr on_dst [[rc_client $dst] cluster countkeysinslot $s]
            incr on_src [[rc_client $src] cluster countkeysinslot $s]
        }
        assert {$expected_moved > 500}
        assert_equal $expected_moved $on_dst
        assert_equal 0 $on_src
        # Each moved value was paged in from src's disk to be migrated, off
        # the event loop: routing a command on a migrating slot only checks
        # that its keys exist, it does not read them.
        assert {[rc_field $src loads] - $src_loads >= $expected_moved}
        assert_equal $src_sync [rc_field $src sync_loads]
        # Every master holds exactly the keys of its slots.
        set by [rc_keys_by_node $new_owners]
        foreach m $masters { assert_equal [llength [dict get $by $m]] [[rc_client $m] dbsize] }
        assert_equal [expr {$src_keys - $expected_moved}] [[rc_client $src] dbsize]
        # The keys left on src are still cold; the migrated ones left no record.
        assert_equal [[rc_client $src] dbsize] [rc_field $src cold_keys]
        rc_wait_no_stale_records $src
        assert_equal [[rc_client $src] dbsize] [[rc_client $src] rock diskkeys]
        rc_check_all 0
    }

    test {redis-cli --cluster rebalance moves cold keys again, every value equal} {
        set owners [rc_slot_owners 0]
        foreach m $masters { rc_master_cold $m $owners }
        set before {}
        set loads {}
        foreach m $masters {
            dict set before $m [[rc_client $m] dbsize]
            dict set loads $m [rc_field $m loads]
        }
        exec src/redis-cli --cluster rebalance 127.0.0.1:[rc_port 0] --cluster-yes
        rc_wait_stable $all
        set new_owners [rc_slot_owners 0]
        set changed 0
        for {set s 0} {$s < 16384} {incr s} {
            if {[lindex $owners $s] != [lindex $new_owners $s]} { incr changed }
        }
        assert {$changed >= 2900}
        # Each master paged in from its disk at least the keys it gave away.
        set gone {}
        dict for {key slot} $::rc_slot {
            set from [lindex $owners $slot]
            if {$from != [lindex $new_owners $slot]} { dict incr gone $from }
        }
        assert {[dict size $gone] > 0}
        dict for {m n} $gone {
            assert {[rc_field $m loads] - [dict get $loads $m] >= $n}
        }
        # Balanced again: each master within 2% of a third of the slots.
        foreach m $masters {
            set n [rc_slot_count $new_owners $m]
            assert {$n > 5350 && $n < 5570}
        }
        set by [rc_keys_by_node $new_owners]
        foreach m $masters {
            assert_equal [llength [dict get $by $m]] [[rc_client $m] dbsize]
            # Masters that gave slots away: their keys still cold, no stale record.
            if {[[rc_client $m] dbsize] < [dict get $before $m]} {
                assert_equal [[rc_client $m] dbsize] [rc_field $m cold_keys]
                rc_wait_no_stale_records $m
            }
        }
        rc_check_all 0
    }

    test {Replicas: values to disk with ROCK EVICT (READONLY), same DEBUG DIGEST as their master} {
        set owners [rc_slot_owners 0]
        foreach m $masters { rc_master_cold $m $owners }
        set pairs [rc_pairs $all]
        assert_equal 3 [llength $pairs]
        foreach p $pairs {
            lassign $p m r
            wait_for_ofs_sync [rc_client $m] [rc_client $r]
            assert_equal [[rc_client $m] dbsize] [[rc_client $r] dbsize]
            # Without READONLY a replica redirects a key command to its master.
            set k [lindex [dict get [rc_keys_by_node $owners] $m] 0]
            assert_error "MOVED*" {[rc_client $r] rock evict $k}
            # Everything on the replica came down the replication stream (hot).
            assert_equal 0 [rc_field $r cold_keys]
            assert_equal [[rc_client $r] dbsize] [rc_replica_cold $r $owners]
            assert_equal [[rc_client $r] dbsize] [rc_field $r cold_keys]
            assert_equal [[rc_client $m] debug digest] [[rc_client $r] debug digest]
            assert {[[rc_client $r] debug digest] ne "0000000000000000000000000000000000000000"}
            # Back to disk if the digest paged anything in.
            rc_replica_cold $r $owners
            assert_equal [[rc_client $r] dbsize] [rc_field $r cold_keys]
        }
    }

    test {Manual failover (CLUSTER FAILOVER): the promoted replica serves every value from its disk} {
        lassign [lindex $pairs 0] m r
        set keys [[rc_client $r] dbsize]
        assert_equal $keys [rc_field $r cold_keys]
        assert_equal OK [[rc_client $r] cluster failover]
        wait_for_condition 300 100 {
            [rc_master_of $r] == -1 && [rc_master_of $m] == $r
        } else {
            fail "manual failover of node $m to node $r did not happen"
        }
        rc_wait_stable $all
        assert_equal $keys [rc_field $r cold_keys]
        rc_check_all 0
        # Every one of its values came from its own RocksDB, kept as a clean copy.
        assert_equal 0 [rc_field $r cold_keys]
        assert_equal $keys [rc_field $r hot_clean_keys]
        # The old master follows the new one.
        wait_for_ofs_sync [rc_client $r] [rc_client $m]
        assert_equal [[rc_client $r] debug digest] [[rc_client $m] debug digest]
    }

    test {Automatic failover: a stopped master's cold replica is promoted and serves every value; writes reach the old master} {
        lassign [lindex $pairs 1] m r
        set keys [[rc_client $r] dbsize]
        assert_equal $keys [rc_field $r cold_keys]
        [rc_client $r] config set cluster-replica-no-failover no
        set pid [srv -$m pid]
        pause_process $pid
        # Whatever fails while it is stopped, the node is resumed (a stopped
        # server would hang the harness's shutdown).
        if {[catch {
            set live [lsearch -all -inline -not -exact $all $m]
            wait_for_condition 600 100 {
                [rc_master_of $r] == -1
            } else {
                fail "node $r was not promoted"
            }
            # No `--cluster check` while a node is stopped (it would wait on it).
            set ::rc_unstable {}
            wait_for_condition 600 100 {
                [rc_cluster_stable $live 0] &&
                [lsearch [rc_slot_owners $r] $m] == -1
            } else {
                fail "cluster did not recover without node $m ($::rc_unstable)"
            }
            assert_equal $keys [rc_field $r cold_keys]
            rc_check_all $r
            assert_equal 0 [rc_field $r cold_keys]
            assert_equal $keys [rc_field $r hot_clean_keys]

            # Change cold values on the new master, through the cluster client.
            rc_master_cold $r [rc_slot_owners $r]
            set cluster [redis_cluster 127.0.0.1:[rc_port $r]]
            set owners [rc_slot_owners $r]
            set changed 0
            dict for {key slot} $::rc_slot {
                if {[lindex $owners $slot] != $r || $changed >= 200} continue
                lassign [dict get $::rc_model $key] type value
                switch $type {
                    string {
                        if {[string is integer -strict $value]} {
                            set value [$cluster incrby $key 5]
                        } else {
                            $cluster append $key "-after"
                            append value "-after"
                        }
                    }
                    hash { $cluster hset $key f0 new; set value [lsort -stride 2 -index 0 [dict replace $value f0 new]] }
                    list { $cluster rpush $key tail; lappend value tail }
                    set { $cluster sadd $key added; set value [lsort [concat $value added]] }
                    zset { $cluster zadd $key 100000 top; lappend value top 100000 }
                    stream { continue }
                }
                dict set ::rc_model $key [list $type $value]
                incr changed
            }
            assert_equal 200 $changed
            $cluster close
        } err]} {
            resume_process $pid
            error $err $::errorInfo
        }

        resume_process $pid
        wait_for_condition 600 100 {
            [rc_master_of $m] == $r
        } else {
            fail "node $m did not become a replica of node $r"
        }
        rc_wait_stable $all
        [rc_client $r] config set cluster-replica-no-failover yes
        wait_for_ofs_sync [rc_client $r] [rc_client $m]
        assert_equal [[rc_client $r] dbsize] [[rc_client $m] dbsize]
        assert_equal [[rc_client $r] debug digest] [[rc_client $m] debug digest]
        rc_check_all 0
        # Every master still has its replica, and they agree.
        set pairs [rc_pairs $all]
        assert_equal 3 [llength $pairs]
        foreach p $pairs {
            lassign $p m r
            wait_for_ofs_sync [rc_client $m] [rc_client $r]
            assert_equal [[rc_client $m] debug digest] [[rc_client $r] debug digest]
        }
    }
}

} ;# tags

set ::singledb $old_singledb
