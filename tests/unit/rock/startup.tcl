# tests/unit/rock/startup.tcl -- opening the SSD tier: where rock-dir lives,
# the wipe at start-up, and every way a bad rock-dir refuses to start.
source tests/helpers/rock/util.tcl

start_server {tags {"rock external:skip"} overrides {rock-enabled yes}} {
    test {default rock-dir is rock-<port> inside the server's dir} {
        set dir [lindex [r config get dir] 1]
        set rockdir $dir/rock-[srv 0 port]
        assert_equal $rockdir [rock_info_field rock_dir]
        assert {[file isdirectory $rockdir/rocksdb]}
        assert {[file exists $rockdir/rocksdb/CURRENT]}
        assert_equal [srv 0 pid] [string trim [exec cat $rockdir/redis-rock.lock]]
    }

    test {two servers sharing a dir get their own default rock-dirs} {
        set dir [lindex [r config get dir] 1]
        start_server [list overrides [list dir $dir rock-enabled yes]] {
            assert_equal $dir/rock-[srv 0 port] [rock_info_field rock_dir]
            r set k v
            assert_equal v [r get k]
        }
        assert_equal 1 [rock_info_field rock_enabled]
    }

    test {a second server on the same rock-dir refuses to start} {
        set rockdir [rock_info_field rock_dir]
        set other [file normalize [tmpdir rockother]]
        lassign [rock_exec_server --dir $other --rock-enabled yes --rock-dir $rockdir] rc out
        assert_equal 1 $rc
        assert_match "*rock-dir '$rockdir' is in use by another running server*" $out
        # The running server's RocksDB is untouched.
        assert {[file exists $rockdir/rocksdb/CURRENT]}
        assert_equal 1 [rock_info_field rock_enabled]
        r set foo bar
        assert_equal bar [r get foo]
    }

    test {RocksDB data from a previous run is wiped at start-up} {
        set rockdir [rock_info_field rock_dir]
        set fd [open $rockdir/rocksdb/leftover.sst w]
        puts $fd "stale"
        close $fd
        restart_server 0 true false
        assert_equal 0 [file exists $rockdir/rocksdb/leftover.sst]
        assert {[file exists $rockdir/rocksdb/CURRENT]}
        assert_equal 1 [rock_info_field rock_enabled]
    }

    test {shutdown closes RocksDB cleanly} {
        set lines [count_log_lines 0]
        catch {r shutdown nosave}
        wait_for_condition 50 100 {
            [count_message_lines [srv 0 stdout] "rock: RocksDB closed."] >= 1
        } else {
            fail "RocksDB was not closed at shutdown"
        }
    }
}

start_server {tags {"rock external:skip"}} {
    set base [file normalize [tmpdir rockstart]]

    test {a missing rock-dir is created, parents included} {
        set rockdir $base/a/b/c
        set srvdir [file normalize [tmpdir rockstart-a]]
        # The server starts: stop it once it is up.
        set pid [exec src/redis-server --port 0 --unixsocket [rock_socket_path] --save "" --dir $srvdir --logfile $srvdir/log \
                     --rock-enabled yes --rock-dir $rockdir &]
        wait_for_condition 100 100 {
            [file exists $rockdir/rocksdb/CURRENT]
        } else {
            catch {exec kill $pid}
            fail "rock-dir was not created"
        }
        exec kill $pid
        wait_for_condition 100 100 {
            [catch {exec kill -0 $pid}]
        } else {
            fail "server did not exit"
        }
        assert_match "*RocksDB closed*" [exec cat $srvdir/log]
    }

    test {rock-dir that is a regular file refuses to start} {
        set f $base/plainfile
        close [open $f w]
        lassign [rock_exec_server --dir $base --rock-enabled yes --rock-dir $f] rc out
        assert_equal 1 $rc
        assert_match "*rock-dir '$f' exists but is not a directory*" $out
    }

    test {rock-dir that can't be created refuses to start} {
        lassign [rock_exec_server --dir $base --rock-enabled yes --rock-dir $base/plainfile/sub] rc out
        assert_equal 1 $rc
        assert_match "*rock-dir '$base/plainfile/sub' does not exist and can't be created*" $out
    }

    test {an unwritable rock-dir refuses to start} {
        # Under /tmp: the unprivileged user must reach it whatever the
        # permissions of the checkout's parents are.
        set work /tmp/redis-rock-perm-[pid]
        file delete -force $work
        file mkdir $work/ro
        file attributes $work/ro -permissions 0555
        lassign [rock_exec_server_unprivileged $work --rock-enabled yes --rock-dir $work/ro] rc out
        assert_equal 1 $rc
        assert_match "*rock-dir '$work/ro' is not writable*" $out
        # One clear line, and nothing else went wrong before it.
        assert_equal 1 [llength [lsearch -all [split $out "\n"] "*Fatal: rock:*"]]
        file delete -force $work
    }

    test {a rocksdb folder redis-rock did not create is never wiped} {
        set rockdir $base/foreign
        file mkdir $rockdir/rocksdb
        set fd [open $rockdir/rocksdb/precious w]
        puts $fd "someone else's data"
        close $fd
        lassign [rock_exec_server --dir $base --rock-enabled yes --rock-dir $rockdir] rc out
        assert_equal 1 $rc
        assert_match "*holds a 'rocksdb' entry that redis-rock did not create*" $out
        assert {[file exists $rockdir/rocksdb/precious]}
    }
}

start_server {tags {"rock external:skip"} overrides {rock-enabled yes rock-direct-io yes}} {
    test {rock-direct-io yes opens RocksDB with direct reads and writes} {
        set opts [rock_latest_options [rock_info_field rock_dir]]
        assert_match "*use_direct_reads=true*" $opts
        assert_match "*use_direct_io_for_flush_and_compaction=true*" $opts
        assert_equal 1 [count_message_lines [srv 0 stdout] "direct io yes"]
    }
}
