#!/usr/bin/env bash
# bench/8-coldwrite.sh -- what a write over a mostly-cold dataset costs:
# SETs of random keys whose values are mostly on disk,
# against stock; CPU per SET by thread group and context switches per SET
# (as bench 7), and what RocksDB wrote for them: write amplification (bytes
# RocksDB's threads wrote to disk over the record bytes handed to it) and
# space amplification (disk bytes over the live records' bytes), from
# ROCK REPORT's write_amp and space_amp.
#
# Data: B8_KEYS keys key:%012d (redis-benchmark -r names), values of
# B8_VALUE random bytes, loaded with redis-cli --pipe. Stock holds all of it
# in RAM. For each case redis-rock gets a fresh server: load with no
# maxmemory (used_hot), every value pushed to disk (maxmemory 1mb; writer and
# compactions idle: used_cold), then maxmemory = used_cold + (1 - cold
# share) x (used_hot - used_cold) (at least used_cold + rocksdb_memory +
# 4 MB); a warm-up of B8_WARMUP SETs (overwrites bring keys back to RAM
# and evict others, so the cold share settles), then CONFIG RESETSTAT and
# the timed redis-benchmark -t set -d B8_VALUE -r B8_KEYS -n B8_REQUESTS
# -c C --threads 1. CPU is counted until the writer and RocksDB's
# compactions are idle again after the run. redis-benchmark's values are a repeated byte: they
# compress to almost nothing, so write_amp (over record bytes, before
# compression) reads low for them and space_amp is under 1.
#
#   B8_KEYS=500000 B8_VALUE=1000 B8_REQUESTS=1000000 B8_WARMUP=300000
#   B8_CASES="88:50"   (cold percent : clients)
#   B8_ROCK_ARGS=""    extra redis-server arguments for redis-rock
#   QUICK=1: 20,000 keys, 5,000 SETs, 2,000 warm-up, one case
set -euo pipefail
. "$(dirname "$0")/lib.sh"

keys=${B8_KEYS:-$([ "$QUICK" = 1 ] && echo 20000 || echo 500000)}
vsize=${B8_VALUE:-1000}
requests=${B8_REQUESTS:-$([ "$QUICK" = 1 ] && echo 5000 || echo 1000000)}
warmup=${B8_WARMUP:-$([ "$QUICK" = 1 ] && echo 2000 || echo 300000)}
cases=${B8_CASES:-$([ "$QUICK" = 1 ] && echo "88:8" || echo "88:50")}
read -r -a rock_args <<< "${B8_ROCK_ARGS:-}"
port=${PORT_BASE:-31280}

bench_init 8-coldwrite "cold overwrites: throughput, CPU per SET by thread group, write and space amplification"
files=$BENCH_DIR/8-files
trap 'rm -rf "$files"; bench_cleanup' EXIT
rm -rf "$files" && mkdir -p "$files"
python3 "$BENCH_TOP/bench/gen.py" set "$keys" --bench-keys --data random --value-size "$vsize" --seed 8 > "$files/load"

csv_header server cold_target cold_percent clients rps ratio_rps p50_ms p99_ms errors eventloop_us readers_us writer_us rocksdb_us other_us total_us cs_per_set deletes_per_set write_amp space_amp rocksdb_written_mb disk_mb write_stopped

declare -A stock_rps
# measure KIND TARGET CLIENTS: the timed run, one CSV row
measure() {
    local kind=$1 target=$2 clients=$3 pid rps p50 p99 before after err
    pid=$(info_fig "$port" server process_id)
    cli "$port" config resetstat >/dev/null
    before=$files/before after=$files/after
    thread_snapshot "$pid" > "$before"
    read -r rps p50 p99 < <(run_benchmark "$port" set -d "$vsize" -r "$keys" -n "$requests" -c "$clients" --threads 1)
    # The CPU of the flushes and compactions these SETs cause counts: the
    # snapshot is taken once the writer and RocksDB are idle again.
    local stopped=NA
    if [ "$kind" = rock ]; then
        stopped=$(rock_fig "$port" rocksdb_write_stopped)
        rock_wait_idle "$port" 300
    fi
    thread_snapshot "$pid" > "$after"
    err=$(error_replies "$port")
    local rerr; rerr=$(rock_fig "$port" errors); [ "$rerr" = NA ] || [ "$rerr" = 0 ] || err="$err+rock_errors=$rerr"
    local g us=() total=0 v
    for g in eventloop readers writer rocksdb other; do
        v=$(group_delta "$before" "$after" "$g")
        total=$((total + v))
        us+=("$(calc "$v / $requests" %.1f)")
    done
    # What RocksDB wrote for this run's writes: wait for the writer and the
    # compactions they caused, then read the figures.
    local dels=NA wamp=NA samp=NA written=NA disk=NA
    if [ "$kind" = rock ]; then
        dels=$(calc "$(rock_fig "$port" deletes) / $requests" %.3f)
        wamp=$(rock_fig "$port" write_amp)
        samp=$(rock_fig "$port" space_amp)
        written=$(calc "$(rock_fig "$port" rocksdb_bytes_written) / 1048576" %.1f)
        disk=$(calc "$(rock_fig "$port" rocksdb_disk_bytes) / 1048576" %.1f)
    fi
    [ "$kind" = stock ] && stock_rps[$clients]=$rps
    csv_row "$kind" "$target" "$(rock_fig "$port" cold_percent)" "$clients" "$rps" \
        "$(ratio "$rps" "${stock_rps[$clients]:-NA}")" "$p50" "$p99" "$err" "${us[@]}" \
        "$(calc "$total / $requests" %.1f)" "$(calc "$(cs_delta "$before" "$after") / $requests" %.2f)" \
        "$dels" "$wamp" "$samp" "$written" "$disk" "$stopped"
}

load() {
    local secs err reps
    read -r secs err reps < <(pipe_run "$port" < "$files/load")
    [ "$err" = 0 ] && [ "$reps" = "$keys" ] || die "load: errors=$err replies=$reps"
    log "loaded $keys keys in ${secs}s"
}

server_start 8-stock stock "$port"
load
for c in $(for x in $cases; do echo "$x" | cut -d: -f2; done | sort -un); do
    run_benchmark "$port" set -d "$vsize" -r "$keys" -n "$warmup" -c "$c" --threads 1 >/dev/null
    measure stock NA "$c"
done
server_stop "$port"

for x in $cases; do
    IFS=: read -r target clients <<< "$x"
    server_start "8-rock-$target" rock "$port" --maxmemory-policy noeviction --rock-direct-io yes "${rock_args[@]}"
    load
    read -r used_hot used_cold maxmem < <(rock_cold_maxmemory "$port" "$keys" "$target")
    cli "$port" config set maxmemory "$maxmem" >/dev/null
    run_benchmark "$port" set -d "$vsize" -r "$keys" -n "$warmup" -c "$clients" --threads 1 >/dev/null
    rock_wait_idle "$port" 300
    log "case $x: used_hot=$used_hot used_cold=$used_cold maxmemory=$maxmem cold_percent=$(rock_fig "$port" cold_percent) after the warm-up"
    measure rock "$target" "$clients"
    server_stop "$port"
done
rm -rf "$files"

md_write "Data: $keys keys \`key:%012d\`, values of $vsize random bytes, loaded with \`redis-cli --pipe\`. Each row: \`redis-benchmark -t set -d $vsize -r $keys -n $requests -c <clients> --threads 1\` (uniformly random keys, each SET overwrites a key that exists; rps, p50, p99 from its --csv), after a warm-up of $warmup SETs. Stock 7.0.15 holds everything in RAM. redis-rock: a fresh server per row, \`maxmemory-policy noeviction\`, \`rock-direct-io yes\`${B8_ROCK_ARGS:+, \`$B8_ROCK_ARGS\`}; every value pushed to disk first (\`maxmemory 1mb\`), then \`maxmemory\` = used_cold + (1 - cold_target/100) x (used_hot - used_cold), at least used_cold + RocksDB's memory + 4 MB; cold_percent is the share cold after the run. CPU per SET: utime + stime of every server thread from \`/proc/PID/task/*/stat\` before and after the timed run, grouped by thread name (as bench 7), divided by the SETs of the run, the second snapshot taken once the writer and RocksDB's compactions are idle again (so the flushes and compactions the run caused count); $hz ticks a second (resolution $(calc "1000000 / $hz / $requests" %.2f) µs). cs_per_set: voluntary + involuntary context switches of all server threads, per SET. deletes_per_set: RocksDB deletes of single keys (\`ROCK REPORT deletes\`) per SET. After the run the script waits for the writer and RocksDB's compactions to finish, then reads \`write_amp\` (bytes RocksDB's threads wrote to disk since the CONFIG RESETSTAT before the run, flushes + compactions + blob files, from their \`/proc/self/task/*/io\`, over the record bytes handed to RocksDB in that time), \`space_amp\` (SST + blob file bytes over (cold + hot-clean keys) x the mean record size written), \`rocksdb_bytes_written\` and \`rocksdb_disk_bytes\`. write_stopped: \`rocksdb_write_stopped\` when the run ended. redis-benchmark's values are one repeated byte: they compress to almost nothing on disk. The client (redis-benchmark) shares the two cores."
