#!/usr/bin/env bash
# bench/11-restart.sh -- what a restart costs: stock's SAVE and load of an
# RDB against redis-rock's start from the same RDB (most values going to
# disk: a full load), its clean stop (SHUTDOWN SAVE: a keyspace snapshot and
# a RocksDB checkpoint) and its next start (warm: the values on disk are
# reused), and with rock-warm-saves a save point's pair, an AOF rewrite's
# pair and the starts after kill -9 from each, in one run.
#
#   B11_CASES="1000000:1000:100mb 4000000:1000:400mb 1000000:4000:100mb"
#       (keys:value bytes:redis-rock's maxmemory; QUICK=1: 20000:1000:4mb)
#
# Per case: stock loads N random incompressible values (gen.py, redis-cli
# --pipe, not timed) and SAVEs (timed: the SAVE command); then a fresh stock
# process loads that dump.rdb (timed: process start to INFO loading:0).
# redis-rock (maxmemory-policy noeviction) starts on a copy of the same file
# (full load, timed the same way, RSS sampled every 100 ms), then stops with
# SHUTDOWN SAVE (timed: the command to the process's exit; bytes written by
# the stop: the process's write_bytes at exit less its /proc/PID/io
# write_bytes before the command) and starts again on what the stop left.
# DEBUG DIGEST after every load must equal stock's. Processes run in the
# foreground under bench/procwatch.py (RSS peak, write_bytes at exit).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

cases=${B11_CASES:-$([ "$QUICK" = 1 ] && echo "20000:1000:4mb" || echo "1000000:1000:100mb 4000000:1000:400mb 1000000:4000:100mb")}
port=${PORT_BASE:-31210}
gen=$BENCH_TOP/bench/gen.py
watch=$BENCH_TOP/bench/procwatch.py

bench_init 11-restart "a restart: stock SAVE and load against redis-rock's load, clean stop and next start"
files=$BENCH_DIR/11-files
trap 'rm -rf "$files"; bench_cleanup' EXIT
csv_header server step keys value_bytes maxmemory seconds ratio written_mb rss_max_mb cold_pct digest errors

# watched_start KIND DIR ARGS...: the server in the foreground under
# procwatch.py (in the background of this script); returns once it answers
# (possibly -LOADING). Sets START_T0.
watched_start() {
    local kind=$1 dir=$2; shift 2
    local bin=$STOCK_BIN_DIR/redis-server
    [ "$kind" = rock ] && { bin=$REDIS_BIN_DIR/redis-server; set -- --rock-enabled yes "$@" ${ROCK_SERVER_ARGS:-}; }
    server_stop "$port"
    rm -f "$dir/watch" "$dir/watch.rss"
    START_T0=$(now)
    python3 "$watch" "$dir/watch" -- "$bin" --port "$port" --bind 127.0.0.1 --dir "$dir" --save '' \
        --appendonly no --daemonize no --enable-debug-command yes --logfile "$dir/server.log" "$@" &
    BENCH_PORTS+=("$port")
    BENCH_SERVER_DIR[$port]=$dir
    local i
    for i in $(seq 3000); do
        cli "$port" ping >/dev/null 2>&1 && return 0
        [ -f "$dir/watch" ] && { tail -20 "$dir/server.log" >&2; die "$kind server exited at start"; }
        sleep 0.02
    done
    die "$kind server did not answer on port $port"
}

# Seconds from START_T0 until INFO persistence says loading:0.
wait_loaded() {
    local i
    for i in $(seq 360000); do
        [ "$(info_fig "$port" persistence loading)" = 0 ] && { calc "$(now) - $START_T0" %.2f; return 0; }
        sleep 0.01
    done
    die "still loading after an hour"
}

rss_peak_mb() { calc "$(cat "$1/watch.rss" 2>/dev/null || echo 0) / 1024" %.0f; }
proc_write_bytes() { awk '/^write_bytes:/{print $2}' "/proc/$1/io"; }
server_pid() { info_fig "$port" server process_id; }

# SHUTDOWN SAVE: "seconds bytes" (bytes written from the command to the exit).
timed_stop() {
    local dir=$1 pid before t0 i
    pid=$(server_pid)
    before=$(proc_write_bytes "$pid")
    t0=$(now)
    cli "$port" shutdown save >/dev/null 2>&1 || true
    for i in $(seq 720000); do [ -f "$dir/watch" ] && break; sleep 0.005; done
    local secs; secs=$(calc "$(now) - $t0" %.2f)
    read -r status total < "$dir/watch"
    [ "$status" = 0 ] || log "the server exited with status $status"
    echo "$secs $((total - before))"
}

cold_pct() { local c; c=$(rock_fig "$port" cold_percent); echo "${c:-NA}"; }

# warm_row STEP SECONDS: the row of a start that must be warm, its digest
# checked against stock's.
warm_row() {
    local step=$1 secs=$2 d ok reused
    d=$(cli "$port" debug digest 2>/dev/null)
    ok=$([ "$d" = "$digest" ] && echo equal || echo DIFFERS)
    reused=$(rock_fig "$port" warm_values_reused)
    [[ "$reused" =~ ^[1-9] ]] || { log "$step was not warm (warm_values_reused ${reused:-NA})"; ok="not warm"; }
    csv_row rock "$step" "$keys" "$vsize" "$mm" "$secs" "$(ratio "$secs" "$load_s")" - "$(rss_peak_mb "$rdir")" "$(cold_pct)" "$ok" "$([ "$ok" = equal ] && echo 0 || echo 1)"
}

for c in $cases; do
    IFS=: read -r keys vsize mm <<< "$c"
    rm -rf "$files" && mkdir -p "$files"
    python3 "$gen" set "$keys" --value-size "$vsize" --data random --seed 11 > "$files/load.resp"

    # stock: load, SAVE, then a fresh process loads the file
    sdir=$BENCH_DIR/11-stock
    rm -rf "$sdir" && mkdir -p "$sdir"
    watched_start stock "$sdir"
    read -r secs err reps < <(pipe_run "$port" < "$files/load.resp")
    [ "$reps" = "$keys" ] || die "stock: $reps replies to $keys SETs"
    t0=$(now); cli "$port" save >/dev/null; save_s=$(calc "$(now) - $t0" %.2f)
    digest=$(cli "$port" debug digest 2>/dev/null || echo NA)
    rdb_mb=$(calc "$(stat -c %s "$sdir/dump.rdb") / 1048576" %.0f)
    csv_row stock save "$keys" "$vsize" - "$save_s" 1.00 "$rdb_mb" "$(rss_peak_mb "$sdir")" - - 0
    cli "$port" shutdown nosave >/dev/null 2>&1 || true
    for i in $(seq 600); do [ -f "$sdir/watch" ] && break; sleep 0.05; done
    watched_start stock "$sdir"
    load_s=$(wait_loaded)
    d=$(cli "$port" debug digest 2>/dev/null)
    csv_row stock load "$keys" "$vsize" - "$load_s" 1.00 - "$(rss_peak_mb "$sdir")" - "$([ "$d" = "$digest" ] && echo equal || echo DIFFERS)" 0
    cp "$sdir/dump.rdb" "$files/stock.rdb"
    server_stop "$port"

    # redis-rock: the same file, then its own clean stop and next start
    rdir=$BENCH_DIR/11-rock
    rm -rf "$rdir" && mkdir -p "$rdir"
    cp "$files/stock.rdb" "$rdir/dump.rdb"
    rargs=(--maxmemory "$mm" --maxmemory-policy noeviction --rock-dir "$rdir/rock")
    watched_start rock "$rdir" "${rargs[@]}"
    rock_s=$(wait_loaded)
    d=$(cli "$port" debug digest 2>/dev/null)
    ok=$([ "$d" = "$digest" ] && echo equal || echo DIFFERS)
    csv_row rock load "$keys" "$vsize" "$mm" "$rock_s" "$(ratio "$rock_s" "$load_s")" - "$(rss_peak_mb "$rdir")" "$(cold_pct)" "$ok" "$([ "$ok" = equal ] && echo 0 || echo 1)"
    rock_wait_idle "$port" 600
    read -r stop_s stop_b < <(timed_stop "$rdir")
    csv_row rock "clean stop (snapshot)" "$keys" "$vsize" "$mm" "$stop_s" "$(ratio "$stop_s" "$save_s")" "$(calc "$stop_b / 1048576" %.0f)" - - - 0
    watched_start rock "$rdir" "${rargs[@]}"
    warm_row "warm start" "$(wait_loaded)"

    # rock-warm-saves: a save point writes a pair (one key set again to its
    # own value makes it due without changing the digest), then kill -9 and
    # the crash restart from that pair
    rock_wait_idle "$port" 600
    k1=$(sed -n '5{s/\r//;p;q}' "$files/load.resp")
    cli "$port" set "$k1" "$(cli "$port" get "$k1")" >/dev/null
    pid=$(server_pid); before=$(proc_write_bytes "$pid")
    cli "$port" config set rock-warm-saves yes >/dev/null
    cli "$port" config set save "1 1" >/dev/null
    for i in $(seq 30000); do [ "$(info_fig "$port" persistence rdb_bgsave_in_progress)" = 1 ] && break; sleep 0.005; done
    t0=$(now)
    cli "$port" config set save "" >/dev/null
    # The child ends once its snapshot is renamed, which waits for the
    # checkpoint: the save's whole time.
    for i in $(seq 360000); do [ "$(info_fig "$port" persistence rdb_bgsave_in_progress)" = 0 ] && break; sleep 0.005; done
    sp_s=$(calc "$(now) - $t0" %.2f)
    for i in $(seq 300); do [ "$(rock_fig "$port" warm_saves)" = 1 ] && break; sleep 0.01; done
    sp_b=$(( $(proc_write_bytes "$pid") - before + $(stat -c %s "$rdir/dump.rdb.rock-snapshot") ))
    csv_row rock "save point (pair)" "$keys" "$vsize" "$mm" "$sp_s" "$(ratio "$sp_s" "$save_s")" "$(calc "$sp_b / 1048576" %.0f)" - - - "$([ "$(rock_fig "$port" warm_saves)" = 1 ] && echo 0 || echo 1)"
    kill -9 "$pid"
    for i in $(seq 600); do [ -f "$rdir/watch" ] && break; sleep 0.05; done
    watched_start rock "$rdir" "${rargs[@]}"
    warm_row "start after kill -9" "$(wait_loaded)"

    # appendonly yes: the first rewrite's base is a pair, then kill -9 and
    # the AOF's warm load (base, then the incr file)
    cli "$port" config set rock-warm-saves yes >/dev/null
    pid=$(server_pid); before=$(proc_write_bytes "$pid")
    t0=$(now)
    cli "$port" config set appendonly yes >/dev/null
    for i in $(seq 360000); do
        [ "$(info_fig "$port" persistence aof_rewrite_in_progress)" = 0 ] &&
            [ "$(info_fig "$port" persistence aof_enabled)" = 1 ] && break
        sleep 0.005
    done
    rw_s=$(calc "$(now) - $t0" %.2f)
    for i in $(seq 300); do [ "$(rock_fig "$port" warm_saves)" = 1 ] && break; sleep 0.01; done
    base=$(ls "$rdir"/appendonlydir/*.base.rdb)
    rw_b=$(( $(proc_write_bytes "$pid") - before + $(stat -c %s "$base") ))
    csv_row rock "AOF rewrite (pair)" "$keys" "$vsize" "$mm" "$rw_s" "$(ratio "$rw_s" "$save_s")" "$(calc "$rw_b / 1048576" %.0f)" - - - "$([ "$(rock_fig "$port" warm_saves)" = 1 ] && echo 0 || echo 1)"
    cli "$port" set "$k1" "$(cli "$port" get "$k1")" >/dev/null # into the incr file
    kill -9 "$pid"
    for i in $(seq 600); do [ -f "$rdir/watch" ] && break; sleep 0.05; done
    watched_start rock "$rdir" "${rargs[@]}" --appendonly yes
    warm_row "AOF start after kill -9" "$(wait_loaded)"
    server_stop "$port"
    rm -rf "$rdir/appendonlydir"
    rm -rf "$rdir/rock" "$sdir/dump.rdb" "$rdir/dump.rdb"
done

md_write "Cases (keys x value bytes, redis-rock's \`maxmemory\`): ${cases}. Values: random letters and digits (\`bench/gen.py set --data random\`), keys \`k:\` + a zero-padded index, loaded into stock with \`redis-cli --pipe\` (not timed). Stock: \`SAVE\` (wall time of the command; written_mb = the RDB's size), then a fresh process on that \`dump.rdb\` (load: process start to \`INFO persistence\` \`loading:0\`). redis-rock (\`rock-enabled yes\`, \`maxmemory-policy noeviction\`, defaults otherwise) on a copy of the same file: load timed the same way; after the writer and compactions are idle, \`SHUTDOWN SAVE\`, which writes the keyspace snapshot and a RocksDB checkpoint (wall time from the command to the process's exit; written_mb = bytes the process caused to be written from the command to its exit: its \`wait4()\` ru_oublock x 512 at exit less \`/proc/PID/io\` write_bytes before the command, the checkpoint's memtable flush included); then the warm start on what the stop left (\`warm_values_reused\` must be non-zero). Then \`CONFIG SET rock-warm-saves yes\` and a save point (\`save 1 1\`, one key set again to its own value: the digest is unchanged): seconds from \`rdb_bgsave_in_progress:1\` to \`0\` (the child renames its snapshot only once the checkpoint is made), polled every 5 ms; written_mb = the snapshot's size plus the server's \`/proc/PID/io\` write_bytes over the save (the checkpoint's memtable flush); then \`kill -9\` and the start after it, on that pair. Then \`CONFIG SET appendonly yes\`, whose first rewrite writes the AOF's base as a pair (seconds from the command to \`aof_rewrite_in_progress:0\` with \`aof_enabled:1\`; written_mb as for the save point, with the base's size), one more SET into the incr file, \`kill -9\`, and the start with \`--appendonly yes\` (the base warm, then the incr file). ratio: to stock's load (loads and starts) or to stock's \`SAVE\` (the stop). rss_max_mb: the process's peak RSS sampled every 100 ms (\`bench/procwatch.py\`) from its start to the row's end. digest: \`DEBUG DIGEST\` against stock's after its \`SAVE\`. Servers run in the foreground under procwatch.py, \`--save ''\`, \`--appendonly no\`."
