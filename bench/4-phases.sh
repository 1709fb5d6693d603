#!/usr/bin/env bash
# bench/4-phases.sh -- N keys (default 10,000,000) through four phases, each
# key touched exactly once per phase, in key order: set, overwrite (new
# values), get, delete. Wall time per phase -> QPS.
#   small: 10-byte keys, 8-byte values, no maxmemory (all in RAM)
#   large: 10-byte keys, 1,024-byte values; redis-rock with maxmemory = 1/8 of
#          the dataset (stock's used_memory after its set phase / 8),
#          rock-direct-io yes
# Driver: set/overwrite/delete: redis-cli --pipe reading a RESP file written
# beforehand by bench/gen.py (generation is not timed; the files are reused
# for both servers and deleted at the end); get: bench/pipeget.py (pipelined
# GETs, 4,000 in flight, every reply checked: redis-cli --pipe is
# quadratic with 1 KB replies). B4_CONNS>1 splits each phase into that many
# contiguous key ranges sent by parallel redis-cli --pipe processes.
#
#   B4_KEYS=10000000 B4_LARGE_KEYS=$B4_KEYS B4_VALUE=1024 B4_CONNS=1
#   B4_FRACTION=8 (maxmemory = stock used_memory / B4_FRACTION)   B4_SETS="small large"
#   B4_MIN_MAXMEMORY=4194304 (floor of the large set's maxmemory, for tiny runs)
#   QUICK=1: 5,000 keys (large set: 10,000)
# Disk: the large set and overwrite files are ~1.05 KB per key each
# (~21 GB at 10M keys), plus RocksDB's files.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

keys=${B4_KEYS:-$([ "$QUICK" = 1 ] && echo 5000 || echo 10000000)}
large_keys=${B4_LARGE_KEYS:-$([ "$QUICK" = 1 ] && echo 10000 || echo "$keys")}
min_maxmem=${B4_MIN_MAXMEMORY:-4194304}    # floor for tiny runs (server and RocksDB baseline)
vlarge=${B4_VALUE:-1024}
conns=${B4_CONNS:-1}
fraction=${B4_FRACTION:-8}
sets=${B4_SETS:-small large}
port=${PORT_BASE:-31240}
gen=$BENCH_TOP/bench/gen.py

bench_init 4-phases "set / overwrite / get / delete phases, QPS per phase"
files=$BENCH_DIR/4-files
trap 'rm -rf "$files"; bench_cleanup' EXIT
csv_header server set keys value_bytes phase seconds qps ratio_qps errors cold_percent used_memory_mb

# make_files N VALUE: RESP files per phase and connection
make_files() {
    local n=$1 v=$2 c start per
    rm -rf "$files" && mkdir -p "$files"
    per=$(( (n + conns - 1) / conns ))
    log "4-phases: writing RESP files for $n keys, $v-byte values, $conns connection(s)"
    for c in $(seq 0 $((conns - 1))); do
        start=$((c * per)); [ $start -ge "$n" ] && break
        local cnt=$(( n - start < per ? n - start : per ))
        python3 "$gen" set "$cnt" --start $start --key-len 10 --value-size "$v" --seed $((1 + c)) > "$files/set.$c"
        python3 "$gen" set "$cnt" --start $start --key-len 10 --value-size "$v" --seed $((1001 + c)) > "$files/overwrite.$c"
        echo "$start $cnt $v" > "$files/get.$c"     # pipeget.py arguments
        python3 "$gen" del "$cnt" --start $start --key-len 10 > "$files/delete.$c"
    done
    log "4-phases: files: $(du -sh "$files" | cut -f1)"
}

# phase PORT NAME -> "seconds errors replies" (parallel pipes, wall time of all)
phase() {
    local port=$1 name=$2 t0 t1 f errs=0 reps=0 e r gs gn gv
    t0=$(now)
    for f in "$files/$name".*; do
        if [ "$name" = get ]; then
            read -r gs gn gv < "$f"
            ( python3 "$BENCH_TOP/bench/pipeget.py" "$port" "$gs" "$gn" 10 "$gv" > "$f.out" ) &
        else
            ( pipe_run "$port" < "$f" > "$f.out" ) &
        fi
    done
    wait
    t1=$(now)
    for f in "$files/$name".*.out; do
        read -r _ e r < "$f"; rm -f "$f"
        [ "$e" = NA ] && errs=NA
        [ "$errs" != NA ] && errs=$((errs + e)) && reps=$((reps + r))
    done
    echo "$(calc "$t1 - $t0" %.3f) $errs $reps"
}

declare -A stock_qps
run_phases() {    # label kind set n value extra...
    local label=$1 kind=$2 set=$3 n=$4 v=$5; shift 5
    server_start "4-$label" "$kind" "$port" "$@"
    local p secs err reps qps cold used
    for p in set overwrite get delete; do
        read -r secs err reps < <(phase "$port" $p)
        [ "$err" = NA ] || [ "$reps" = "$n" ] || { log "$p: $reps replies for $n keys"; err="$err+missing"; }
        qps=$(calc "$n / $secs" %.0f)
        cold=$(rock_fig "$port" cold_percent)
        used=$(calc "$(info_fig "$port" memory used_memory) / 1048576" %.1f)
        [ "$kind" = stock ] && stock_qps[$set.$p]=$qps
        [ "$p" = set ] && [ "$kind" = stock ] && stock_used=$(info_fig "$port" memory used_memory)
        csv_row "$kind" "$set" "$n" "$v" "$p" "$secs" "$qps" "$(ratio "$qps" "${stock_qps[$set.$p]:-}")" "$err" "$cold" "$used"
        # wait for redis-rock's writer between phases so one phase's backlog
        # is not billed to the next (stock: no-op)
        [ "$kind" = rock ] && [ "$p" != delete ] && rock_wait_idle "$port" 120
    done
    server_stop "$port"
}

for s in $sets; do
    case "$s" in
    small)
        make_files "$keys" 8
        run_phases small-stock stock small "$keys" 8
        run_phases small-rock rock small "$keys" 8 --rock-direct-io yes
        ;;
    large)
        make_files "$large_keys" "$vlarge"
        run_phases large-stock stock large "$large_keys" "$vlarge"
        maxmem=$(( stock_used / fraction ))
        [ "$maxmem" -ge "$min_maxmem" ] || maxmem=$min_maxmem
        run_phases large-rock rock large "$large_keys" "$vlarge" --maxmemory "$maxmem" \
            --maxmemory-policy noeviction --rock-direct-io yes
        ;;
    esac
done
rm -rf "$files"

md_write "Each phase touches every key exactly once, in key order (keys \`k:00000000\`.., 10 bytes): \`SET\` (values: seeded random letters and digits), \`SET\` again with other values (overwrite), \`GET\`, \`DEL\`. The commands are written beforehand as RESP files by \`bench/gen.py\` (not timed) and sent with \`redis-cli --pipe\` ($conns connection(s), each a contiguous key range), the same files for both servers; GETs are sent by \`bench/pipeget.py\` (the same key ranges, pipelined with 4,000 commands in flight per connection, every reply parsed: anything but a value of the expected size counts as an error), because \`redis-cli --pipe\` slows down quadratically on 1 KB replies; a phase's time is the wall time from the first byte sent to the last reply received, QPS = keys / seconds. redis-benchmark was not used: its \`__rand_int__\` keys are random, so it cannot touch every key exactly once. Between phases the script waits until redis-rock's writer and compactions are idle (not counted), for at most 120 s: past that the next phase starts anyway (the log says so), with RocksDB still compacting. The large set runs redis-rock with \`maxmemory\` = stock's used_memory after its set phase / $fraction, at least $min_maxmem (${maxmem:-NA} bytes), \`maxmemory-policy noeviction\`, \`rock-direct-io yes\`; the small set runs redis-rock with no maxmemory (\`rock-direct-io yes\` too, unused). cold_percent and used_memory are read at the end of each phase. errors = error replies counted by redis-cli --pipe, or replies other than the expected value counted by pipeget.py (plus a mark when the reply count is not the key count)." 
