# tests/unit/rock/fork-children.tcl -- forked children other than RDB and
# AOF ones (here a SCRIPT DEBUG session, forked by `redis-cli --ldb`): the
# tier is inert in a child (RocksDB and the tier's threads belong to the
# parent), a cold value the child needs and has not got fails with a clear
# error, and the parent goes on serving disk reads and writes afterwards.
source tests/helpers/rock/util.tcl

proc rock_ldb {script args} {
    set f [tmpfile rock-ldb].lua
    set fd [open $f w]
    puts $fd $script
    close $fd
    # "c": run the script to its end. db 9: the test client's.
    return [exec src/redis-cli -p [srv 0 port] -n 9 --ldb --eval $f {*}$args << "c\n"]
}

start_server {tags {"rock external:skip"} overrides {rock-enabled yes rock-min-value-size 0}} {
    test {A forked debugging session reads declared cold keys, fails clearly on undeclared ones} {
        r set k [string repeat v 300]
        r set u [string repeat u 300]
        r rock evict k u
        # Declared: paged in by the parent before the session forks.
        assert_match "*[string repeat v 300]*" [rock_ldb {return redis.call('get', KEYS[1])} k]
        # Undeclared: the child can't read RocksDB; an error, not a hang.
        set out [rock_ldb {return redis.call('get', ARGV[1])} , u]
        assert_match "*can't read the value of 'u' from disk*" $out
        verify_log_message 0 "*a forked child can't read a cold value from RocksDB*" 0
        assert_equal cold [r rock status u]
        # The parent's reads and writes still complete (the child left the
        # shared event loop's registrations alone).
        assert_equal [string repeat u 300] [r get u]
        r set w [string repeat w 300]
        assert_equal 1 [r rock evict w]
        assert_equal [string repeat w 300] [r get w]
    }
}
