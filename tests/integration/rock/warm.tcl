# tests/integration/rock/warm.tcl -- warm restart: a clean stop writes a
# keyspace snapshot paired with a RocksDB checkpoint, and the next start
# loads the keys and hot values only, reusing every value on disk; the
# newest saved state always wins, and a pair that does not hold together
# stops the start with a message instead of serving a stale value.
source tests/helpers/rock/util.tcl

proc rock_field {f {client r}} { return [dict get [$client rock report] $f] }

proc warm_dir {} { return [lindex [r config get dir] 1] }
proc warm_snapshot {} { return [file join [warm_dir] [lindex [r config get dbfilename] 1].rock-snapshot] }
proc warm_names {prefix n} {
    set out {}
    for {set i 0} {$i < $n} {incr i} { lappend out $prefix$i }
    return $out
}
# An option of the running RocksDB, from the newest OPTIONS file.
proc warm_rocksdb_option {name} {
    set files [glob -directory [file join [rock_info_field rock_dir] rocksdb] OPTIONS-*]
    set fd [open [lindex [lsort -dictionary $files] end]]
    set text [read $fd]
    close $fd
    if {![regexp -line "^\\s*$name=(\\S*)" $text -> value]} { error "no $name in RocksDB's OPTIONS" }
    return $value
}
proc warm_checkpoints {} { return [glob -nocomplain -directory [rock_info_field rock_dir] checkpoint-*] }

# Every value to disk (evict-all sweeps the whole keyspace when switched
# on), then a few paged back in: hot-clean keys beside the cold ones.
proc warm_fill {} {
    r function load {#!lua name=warmlib
        redis.register_function('warmf', function(keys, args) return 'warm' end)}
    foreach db {9 5} {
        r select $db
        for {set i 0} {$i < 300} {incr i} { r set s:$i [string repeat "v$i-" 40] }
        for {set i 0} {$i < 20} {incr i} { r pexpire s:$i 50000000 }
        rock_big_hash h 3000 [rock_random_pool 7 50]
        for {set i 0} {$i < 1500} {incr i} { r zadd z $i m$i; r sadd st e$i }
        for {set i 0} {$i < 100} {incr i} { r rpush l [string repeat x 100]$i }
        r xadd x 1-1 f v
        r set small 1
    }
    r config set rock-debug-evict-all yes
    r ping
    r config set rock-debug-evict-all no
    foreach db {9 5} {
        r select $db
        r get s:7
        r hgetall h
        r lrange l 0 -1
    }
    r select 9
}

start_server {tags {"rock external:skip"} overrides {rock-enabled yes rock-min-value-size 0 maxmemory-policy allkeys-lru rock-split-min-elements 1000}} {
    test {a clean stop writes a keyspace snapshot and the next start reuses every value on disk} {
        warm_fill
        set digest [r debug digest]
        set cold [rock_field cold_keys]
        set keys [rock_info_field rock_keys]
        assert {$cold > 600}
        r config resetstat
        # SIGTERM with the test config's save points: the stop's save.
        restart_server 0 true false
        verify_log_message 0 "*rock: warm start done*" 0
        assert_equal 0 [file exists [file join [warm_dir] dump.rdb]]
        assert_equal 1 [file exists [warm_snapshot]]
        assert_equal 1 [llength [warm_checkpoints]]
        assert_equal $digest [r debug digest]
        assert_equal $cold [rock_field warm_values_reused]
        assert_equal $keys [rock_info_field rock_keys]
        # Nothing was written into RocksDB by the start.
        assert_equal 0 [rock_field writes]
        assert_equal 0 [rock_field element_writes]
        # RocksDB opened with its automatic compactions off (the load has
        # the cores to itself) and has them back once loaded (the writer
        # thread turns them on at the first check after the load): its
        # OPTIONS file, which it rewrites at every change, says so.
        wait_for_condition 50 100 {
            [warm_rocksdb_option disable_auto_compactions] eq "false"
        } else {
            fail "RocksDB's compactions still off after the load"
        }
        assert_equal warm [r fcall warmf 0]
        # The checkpoint it started from: its size, none of it held by the
        # checkpoint alone yet (the live RocksDB links every file).
        wait_for_condition 50 100 {
            [rock_field warm_checkpoint_bytes] > 100000
        } else {
            fail "no checkpoint size: [rock_field warm_checkpoint_bytes]"
        }
        assert_equal 0 [rock_field warm_checkpoint_own_bytes]
        assert_equal [string repeat "v7-" 40] [r get s:7]
        assert_equal 1500 [r zcard z]
        assert {[r ttl s:3] > 40000}
    }

    test {a warm start keeps each key's disk state: clean copies are dropped without a write, cold ones page in} {
        # s:7 was hot-clean at the stop: evicting it again writes nothing.
        r config resetstat
        r rock evict s:7
        assert_equal 1 [rock_field clean_drops]
        assert_equal 0 [rock_field writes]
        r select 5
        assert_equal [string repeat "v250-" 40] [r get s:250]
        assert_equal 3000 [r hlen h]
        assert_match "*6" [r hget h f6]
        r select 9
        # A modified split collection written again replaces its old
        # version: the digest stays right through a second restart.
        r hset h f1 new
        r rock evict h
        set digest [r debug digest]
        restart_server 0 true false
        assert_equal $digest [r debug digest]
        assert_equal new [r hget h f1]
    }

    test {SHUTDOWN NOSAVE after a warm start brings back the last saved state (the snapshot)} {
        set digest [r debug digest]
        r set s:1 changed
        r del s:2
        r hset h f2 changed
        restart_server 0 true false 1 nosave
        assert_equal $digest [r debug digest]
        assert_equal [string repeat "v2-" 40] [r get s:2]
    }

    test {an RDB saved after the snapshot is the newest state: the snapshot and its checkpoint go} {
        assert_equal 1 [file exists [warm_snapshot]]
        r set s:1 changed-and-saved
        r save
        set digest [r debug digest]
        wait_for_condition 100 50 {
            ![file exists [warm_snapshot]] && [llength [warm_checkpoints]] == 0
        } else {
            fail "the superseded snapshot and checkpoint were not removed"
        }
        verify_log_message 0 "*was saved after the keyspace snapshot*" 0
        r set s:1 not-saved
        restart_server 0 true false 1 nosave
        assert_equal $digest [r debug digest]
        assert_equal changed-and-saved [r get s:1]
        assert_equal 0 [rock_field warm_values_reused]
    }

    test {an RDB put in place after a clean stop is the newest state: it loads, the snapshot goes} {
        set dir [warm_dir]
        file copy -force $dir/dump.rdb $dir/backup.rdb
        set digest [r debug digest]
        r set s:1 in-the-snapshot-only
        r rock evict s:1
        set rockdir [rock_info_field rock_dir]
        set snap [warm_snapshot]
        catch {r shutdown}
        wait_for_condition 100 50 {[file exists $snap]} else { fail "no snapshot written" }
        file delete $dir/dump.rdb
        file copy $dir/backup.rdb $dir/dump.rdb
        restart_server 0 true false
        verify_log_message 0 "*was written after the keyspace snapshot*" 0
        assert_equal $digest [r debug digest]
        assert_equal changed-and-saved [r get s:1]
        assert_equal 0 [file exists [warm_snapshot]]
        assert_equal 0 [llength [glob -nocomplain -directory $rockdir checkpoint-*]]
    }

    test {keys that expired while the server was down are dropped at a warm start, with their records} {
        r flushall
        r debug set-active-expire 0
        for {set i 0} {$i < 50} {incr i} { r set e:$i [string repeat e 300] }
        for {set i 0} {$i < 50} {incr i} { r set keep:$i [string repeat k 300] }
        r rock evict {*}[warm_names e: 50] {*}[warm_names keep: 50]
        assert_equal 100 [rock_field cold_keys]
        # A time still ahead when each PEXPIREAT runs: one already past
        # deletes its key at once (expireGenericCommand()), and PEXPIRE 1 is
        # past if the command takes a millisecond (CI: 49 of 50 kept).
        set at [expr {[clock milliseconds] + 300}]
        for {set i 0} {$i < 50} {incr i} { r pexpireat e:$i $at }
        assert_equal 100 [r dbsize]
        # The TTLs pass (active expiry is off, and nothing touches the keys).
        after [expr {max(0, $at + 20 - [clock milliseconds])}]
        restart_server 0 true false
        assert_equal 50 [r dbsize]
        assert_equal 50 [rock_field warm_values_reused]
        assert_equal 50 [rock_field warm_records_dropped]
        wait_for_condition 100 50 {
            [rock_field pending_writes] == 0
        } else {
            fail "the deletes were never committed"
        }
        assert_equal 50 [r rock diskkeys]
    }
}

start_server {tags {"rock external:skip"} overrides {rock-enabled yes rock-min-value-size 0 maxmemory-policy allkeys-lru rock-split-min-elements 100}} {
    test {a warm start carries each value's LRU field, and reads it as LFU data once the policy is LFU} {
        r set v [string repeat x 100]
        set dump [r dump v]
        r del v
        foreach {k idle} {cold:old 100000 cold:new 0 hot:old 50000} { r restore $k 0 $dump idletime $idle }
        rock_big_hash h 700 [rock_random_pool 5 20]
        r rock evict cold:old cold:new h
        assert_equal 1 [rock_field split_keys]
        restart_server 0 true false
        verify_log_message 0 "*rock: warm start done*" 0
        assert_equal cold [r rock status cold:old]
        assert_range [r object idletime cold:old] 100000 100030
        assert_range [r object idletime cold:new] 0 30
        assert_range [r object idletime hot:old] 50000 50030
        assert_range [r object idletime h] 0 30
        # OBJECT paged them in without touching them: dropped clean again.
        r rock evict cold:old cold:new h
        r config set maxmemory-policy allkeys-lfu
        r config rewrite
        restart_server 0 true false
        verify_log_message 0 "*rock: warm start done*" 0
        assert_equal cold [r rock status cold:new]
        assert_range [r object freq cold:new] 4 5
        assert_equal 0 [r object freq cold:old]
        assert_range [r object freq h] 4 5
    } {} {needs:debug needs:config-rewrite}
}

start_server {tags {"rock external:skip"} overrides {rock-enabled yes rock-min-value-size 0 maxmemory-policy allkeys-lru}} {
    test {a server started on another port in the same dir links the snapshot's checkpoint from the old rock-dir} {
        for {set i 0} {$i < 100} {incr i} { r set p:$i [string repeat "p$i" 50] }
        r rock evict {*}[warm_names p: 100]
        set digest [r debug digest]
        set dir [warm_dir]
        set old_rockdir [rock_info_field rock_dir]
        set snap [warm_snapshot]
        catch {r shutdown}
        wait_for_condition 100 50 {[file exists $snap]} else { fail "no snapshot written" }
        # The default rock-dir is rock-<port>: another port, another rock-dir.
        start_server [list overrides [list dir $dir rock-enabled yes rock-min-value-size 0]] {
            assert {[rock_info_field rock_dir] ne $old_rockdir}
            assert_equal $digest [r debug digest]
            assert_equal 100 [rock_field warm_values_reused]
            verify_log_message 0 "*checkpoint is '$old_rockdir/checkpoint-*', in another rock-dir*" 0
            assert_equal [string repeat "p7" 50] [r get p:7]
            # Its next stop pairs its own checkpoint; the old one goes.
            set newdir [rock_info_field rock_dir]
            restart_server 0 true false
            assert_equal $digest [r debug digest]
            assert_equal 1 [llength [glob -nocomplain -directory $newdir checkpoint-*]]
            assert_equal 0 [llength [glob -nocomplain -directory $old_rockdir checkpoint-*]]
        }
    }
}

start_server {tags {"rock external:skip"} overrides {rock-enabled yes rock-min-value-size 0 maxmemory-policy allkeys-lru}} {
    test {a warm-restarted master and its replica continue with a partial resync} {
        start_server {overrides {rock-enabled yes rock-min-value-size 0}} {
            set replica [srv 0 client]
            $replica replicaof [srv -1 host] [srv -1 port]
            wait_for_condition 100 100 {
                [s 0 master_link_status] eq {up}
            } else {
                fail "the replica never synced"
            }
            for {set i 0} {$i < 200} {incr i} { r -1 set k:$i [string repeat "m$i" 100] }
            r -1 rock evict {*}[warm_names k: 200]
            wait_for_ofs_sync [srv -1 client] $replica
            restart_server -1 true false
            verify_log_message -1 "*rock: warm start done*" 0
            wait_for_condition 100 100 {
                [s 0 master_link_status] eq {up}
            } else {
                fail "the replica never reconnected"
            }
            assert_equal 1 [s -1 sync_partial_ok]
            assert_equal 0 [s -1 sync_full]
            r -1 set after restart
            wait_for_ofs_sync [srv -1 client] $replica
            assert_equal [r -1 debug digest] [$replica debug digest]
        }
    }
}

start_server {tags {"rock external:skip"} overrides {rock-enabled yes rock-min-value-size 0 maxmemory-policy allkeys-lru}} {
    test {a snapshot whose checkpoint is gone stops the start, and removing it starts from the older RDB} {
        r set old 1
        r save
        r set new 1
        r rock evict new old
        set dir [warm_dir]
        set rockdir [rock_info_field rock_dir]
        set snap [warm_snapshot]
        catch {r shutdown}
        wait_for_condition 100 50 {[file exists $snap]} else { fail "no snapshot written" }
        foreach cp [glob -directory $rockdir checkpoint-*] { file delete -force $cp }
        lassign [rock_exec_server --dir $dir --rock-enabled yes --rock-dir $rockdir] rc out
        assert_equal 1 $rc
        assert_match "*keyspace snapshot '$snap' is the newest saved state*checkpoint*missing*remove the snapshot*" $out
        # The RDB is untouched by the refusal.
        assert {[file exists $dir/dump.rdb]}
        file delete $snap
        restart_server 0 true false
        assert_equal 1 [r get old]
        assert_equal 0 [r exists new]
    }

    test {rock-enabled no meets a snapshot: the start stops instead of loading the older RDB} {
        r set k v
        set dir [warm_dir]
        set rockdir [rock_info_field rock_dir]
        set snap [warm_snapshot]
        catch {r shutdown}
        wait_for_condition 100 50 {[file exists $snap]} else { fail "no snapshot written" }
        lassign [rock_exec_server --dir $dir --rock-enabled no] rc out
        assert_equal 1 $rc
        assert_match "*'$snap' is a redis-rock keyspace snapshot*rock-enabled yes*" $out
    }

    test {a checkpoint paired with a snapshot this server does not use is never wiped} {
        set cps [glob -directory $rockdir checkpoint-*]
        assert_equal 1 [llength $cps]
        # Another dbfilename: another snapshot path, same rock-dir.
        lassign [rock_exec_server --dir $dir --rock-enabled yes --rock-dir $rockdir --dbfilename other.rdb] rc out
        assert_equal 1 $rc
        assert_match "*holds the checkpoint of the keyspace snapshot '$snap'*" $out
        assert_equal $cps [glob -directory $rockdir checkpoint-*]
    }

    test {redis-check-rdb says what a snapshot is} {
        catch {exec src/redis-check-rdb $snap} out
        assert_match "*redis-rock keyspace snapshot, not a stock RDB*" $out
    }

    test {the pair still starts warm after those refusals} {
        restart_server 0 true false
        assert_equal v [r get k]
        assert_equal 1 [r get old]
        verify_log_message 0 "*rock: warm start done*" 0
    }
}

proc warm_restart {} { rock_restart_checked }

# kill -9 while a clean stop writes its pair, and while a warm start loads
# one: the snapshot's rename is the commit point, so the next start comes up
# with the state of the last completed stop (the new one or the one before),
# never a mix, never refusing; a warm start killed half way starts warm
# again from the same pair (the checkpoint is never written to).
start_server {tags {"rock external:skip"} overrides {rock-enabled yes rock-min-value-size 0 maxmemory-policy allkeys-lru}} {
    test {kill -9 during a clean stop or a warm start leaves the last completed pair (12 rounds)} {
        set pool [rock_random_pool 20 1000]
        for {set i 0} {$i < 20000} {incr i} { r set k:$i [lindex $pool [expr {$i % 20}]]$i }
        rock_big_hash h 3000 $pool
        # A third of the memory used: about two thirds of the values (some
        # 14,000) move to disk.
        r config set maxmemory [expr {[s used_memory] / 3}]
        r config rewrite
        wait_for_condition 100 100 {
            [rock_field cold_keys] > 10000
        } else {
            fail "values never went to disk"
        }
        # The first pair, completed.
        warm_restart
        verify_log_message 0 "*rock: warm start done*" 0
        set prev [r debug digest]
        set outcomes {old 0 new 0}
        set window 0
        for {set round 0} {$round < 12} {incr round} {
            for {set i 0} {$i < 300} {incr i} {
                set n [expr {int(rand() * 22000)}]
                switch [expr {int(rand() * 4)}] {
                    0 { r del k:$n }
                    1 { r hset h f[expr {$n % 3500}] r$round }
                    default { r set k:$n [lindex $pool [expr {$n % 20}]]r$round }
                }
            }
            set new [r debug digest]
            set pid [srv 0 pid]
            set t0 [clock milliseconds]
            set exits [count_message_lines [srv 0 stdout] "ready to exit"]
            exec kill -TERM $pid
            if {$round == 0} {
                # The first stop completes: how long a stop takes sets the
                # window the later kills land in.
                wait_for_condition 200 20 {
                    [count_message_lines [srv 0 stdout] "ready to exit"] > $exits
                } else {
                    fail "the clean stop never ended"
                }
                set window [expr {max(20, [clock milliseconds] - $t0)}]
            } else {
                after [expr {int(rand() * $window)}]
                catch {exec kill -9 $pid}
            }
            set t0 [clock milliseconds]
            warm_restart
            if {$round == 0} { set start_window [expr {max(20, [clock milliseconds] - $t0)}] }
            set got [r debug digest]
            if {$got eq $new} {
                dict incr outcomes new
            } elseif {$got eq $prev} {
                dict incr outcomes old
            } else {
                fail "round $round: the start after a stop killed at some point has neither the new state nor the last saved one"
            }
            set prev $got
            if {$round % 2 == 1} {
                # Kill the warm start itself, then start again.
                restart_server 0 false false 0
                after [expr {int(rand() * $start_window)}]
                catch {exec kill -9 [srv 0 pid]}
                warm_restart
                assert_equal $prev [r debug digest]
            }
        }
        if {$::verbose} { puts "stop window $window ms, start window $start_window ms, outcomes $outcomes" }
        assert {[rock_field warm_values_reused] > 10000}
        assert_equal 1 [llength [warm_checkpoints]]
    }
}

# rock-warm-saves: a save point's BGSAVE writes the pair, its checkpoint
# taken by the writer thread at a barrier behind every write queued before
# the fork. The writer is slowed down so that writes queued before the fork
# are still uncommitted when it forks, and the writes after it (a FLUSHDB
# among them) land while the child waits for the checkpoint: the pair must
# hold the state of the fork, neither less nor more.
start_server {tags {"rock external:skip"} overrides {rock-enabled yes rock-min-value-size 0 maxmemory-policy allkeys-lru rock-split-min-elements 1000 rock-warm-saves yes save {}}} {
    test {a save point writes a pair at the fork's instant, and a start after kill -9 is warm with that state} {
        warm_fill
        r config set rock-debug-write-delay 700
        # Queued before the fork, not committed at it: values eviction
        # moves to disk to make room for these writes, and a point write
        # of a cold split hash.
        r config set rock-debug-evict-all yes
        r ping
        r config set rock-debug-evict-all no
        r config set maxmemory [expr {[s used_memory] + 300000}]
        for {set i 100} {$i < 1100} {incr i} { r set s:$i [string repeat "before-$i" 50] }
        r hset h f5 before
        assert {[rock_field pending_writes] > 0}
        # No eviction from here on: the commands below would each move one
        # more value before the fork, and the pair would hold it.
        r config set maxmemory 0
        set digest [r debug digest]
        set cold [rock_field cold_keys]
        r config set save {1 1}
        wait_for_condition 100 50 {
            [s rdb_bgsave_in_progress] == 1
        } else {
            fail "the save point never started"
        }
        r config set save {}
        # After the fork: none of this may reach the pair.
        r set s:101 after
        r rock evict s:101
        r del s:102
        r hset h f5 after
        r select 5
        r flushdb
        r select 9
        r set new-after-fork 1
        wait_for_condition 200 100 {
            [s rdb_bgsave_in_progress] == 0 && [rock_field warm_saves] == 1
        } else {
            fail "the save point's pair was not committed: [rock_field warm_save_failures] failures"
        }
        assert_equal ok [s rdb_last_bgsave_status]
        assert_equal 0 [s evicted_keys]
        assert_equal 0 [file exists [file join [warm_dir] dump.rdb]]
        assert_equal 1 [llength [warm_checkpoints]]
        r config set rock-debug-write-delay 0
        catch {exec kill -9 [srv 0 pid]}
        warm_restart
        verify_log_message 0 "*rock: warm start done*" 0
        assert_equal $digest [r debug digest]
        assert_equal $cold [rock_field warm_values_reused]
        assert_equal 0 [rock_field writes]
        assert_equal [string repeat before-101 50] [r get s:101]
        assert_equal before [r hget h f5]
        assert_equal 0 [r exists new-after-fork]
    }

    test {kill -9 while a save point waits for its checkpoint leaves the last committed pair} {
        set digest [r debug digest]
        r config set rock-debug-write-delay 3000
        r config set maxmemory [expr {[s used_memory] + 100000}]
        for {set i 0} {$i < 300} {incr i} { r set s:$i [string repeat "lost-$i" 50] }
        assert {[rock_field pending_writes] > 0}
        r config set save {1 1}
        wait_for_condition 100 50 {
            [s rdb_bgsave_in_progress] == 1
        } else {
            fail "the save point never started"
        }
        catch {exec kill -9 [srv 0 pid]}
        warm_restart
        verify_log_message 0 "*rock: warm start done*" 0
        assert_equal $digest [r debug digest]
        assert_equal 1 [llength [warm_checkpoints]]
    }
}
