#!/usr/bin/env bash
# bench/7-coldget.sh -- what a GET of a value on disk costs: throughput
# against stock, and CPU per GET by thread group and context switches per
# GET, read from /proc/PID/task/*/{stat,status} before and after the timed
# run. On two shared cores these per-GET figures are
# stable where throughput is noisy.
#
# Data: B7_KEYS keys key:%012d (redis-benchmark -r names), values of
# B7_VALUE random bytes (incompressible; bench/gen.py --data random), loaded
# with redis-cli --pipe. Stock 7.0.15 holds everything in RAM. For each case
# redis-rock gets a fresh server: load with no maxmemory (used_hot), push
# every value to disk (maxmemory 1mb; wait for the writer and compactions:
# used_cold), then maxmemory = used_cold + (1 - cold share) x (used_hot -
# used_cold) (at least used_cold + rocksdb_memory + 4 MB), every key read
# once in order (the values read last stay in RAM, clean, as after a long
# read-only run), a warm-up of B7_WARMUP random GETs (not timed: page-ins
# and clean drops reach their steady state), then the timed
# redis-benchmark -t get -r B7_KEYS -n B7_REQUESTS -c C --threads 1.
#
# Thread groups (by the name each thread sets):
#   eventloop  redis-server's main thread
#   readers    rock_reader*        writer  rock_writer
#   rocksdb    rocksdb:* (flush, compaction)
#   other      bio_*, jemalloc, the fork stream...
#
#   B7_KEYS=500000 B7_VALUE=1000 B7_REQUESTS=200000 B7_WARMUP=50000
#   B7_CASES="100:8:yes:4 95:50:yes:4 95:50:no:4 25:50:yes:4"
#            (cold percent : clients : rock-direct-io : rock-io-threads)
#   B7_POLICY=noeviction (maxmemory-policy of redis-rock from the read of
#            every key on; allkeys-lfu: the LFU field of values read is
#            updated on disk, see performance.md)
#   QUICK=1: 20,000 keys, 5,000 GETs, 2,000 warm-up, two cases
set -euo pipefail
. "$(dirname "$0")/lib.sh"

keys=${B7_KEYS:-$([ "$QUICK" = 1 ] && echo 20000 || echo 500000)}
vsize=${B7_VALUE:-1000}
requests=${B7_REQUESTS:-$([ "$QUICK" = 1 ] && echo 5000 || echo 200000)}
warmup=${B7_WARMUP:-$([ "$QUICK" = 1 ] && echo 2000 || echo 50000)}
cases=${B7_CASES:-$([ "$QUICK" = 1 ] && echo "95:8:yes:4 25:8:no:2" || echo "100:8:yes:4 95:50:yes:4 95:50:no:4 25:50:yes:4")}
port=${PORT_BASE:-31270}
policy=${B7_POLICY:-noeviction}

bench_init 7-coldget "cold GETs: throughput, CPU per GET by thread group, context switches"
files=$BENCH_DIR/7-files
trap 'rm -rf "$files"; bench_cleanup' EXIT
rm -rf "$files" && mkdir -p "$files"
python3 "$BENCH_TOP/bench/gen.py" set "$keys" --bench-keys --data random --value-size "$vsize" --seed 7 > "$files/load"
python3 "$BENCH_TOP/bench/gen.py" get "$keys" --bench-keys > "$files/getall"


csv_header server cold_target cold_percent clients direct_io io_threads rps ratio_rps p50_ms p99_ms errors reads_per_get disk_blocks_per_read eventloop_us readers_us writer_us rocksdb_us other_us total_us cs_per_get

declare -A stock_rps
# measure KIND CASE-FIELDS...: the timed run, one CSV row
measure() {
    local kind=$1 target=$2 clients=$3 dio=$4 iot=$5 pid rps p50 p99 before after reads0 reads1 reads err
    pid=$(info_fig "$port" server process_id)
    cli "$port" config resetstat >/dev/null
    reads0=$(rock_fig "$port" reads)
    before=$files/before after=$files/after
    thread_snapshot "$pid" > "$before"
    read -r rps p50 p99 < <(run_benchmark "$port" get -r "$keys" -n "$requests" -c "$clients" --threads 1)
    thread_snapshot "$pid" > "$after"
    reads1=$(rock_fig "$port" reads)
    err=$(error_replies "$port")
    local rerr; rerr=$(rock_fig "$port" errors); [ "$rerr" = NA ] || [ "$rerr" = 0 ] || err="$err+rock_errors=$rerr"
    reads=NA; [ "$reads0" = NA ] || reads=$(calc "($reads1 - $reads0) / $requests" %.3f)
    # Blocks the readers read from disk (index, filter, data) per value read;
    # the readers hand in their counts within 100 ms of going idle.
    local blocks=NA f b
    if [ "$reads0" != NA ] && [ "$reads1" -gt "$reads0" ]; then
        sleep 0.3
        b=0
        for f in index filter data; do
            f=$(rock_fig "$port" rocksdb_${f}_block_reads)
            [ "$f" = NA ] && { b=NA; break; }  # a build without the counters
            b=$((b + f))
        done
        [ "$b" = NA ] || blocks=$(calc "$b / ($reads1 - $reads0)" %.3f)
    fi
    local g us=() total=0 v
    for g in eventloop readers writer rocksdb other; do
        v=$(group_delta "$before" "$after" "$g")
        total=$((total + v))
        us+=("$(calc "$v / $requests" %.1f)")
    done
    [ "$kind" = stock ] && stock_rps[$clients]=$rps
    csv_row "$kind" "$target" "$(rock_fig "$port" cold_percent)" "$clients" "$dio" "$iot" "$rps" \
        "$(ratio "$rps" "${stock_rps[$clients]:-NA}")" "$p50" "$p99" "$err" "$reads" "$blocks" "${us[@]}" \
        "$(calc "$total / $requests" %.1f)" "$(calc "$(cs_delta "$before" "$after") / $requests" %.2f)"
}

# pipe_file NAME: send $files/NAME with redis-cli --pipe, one reply per key
# and no error expected; sets pipe_secs
pipe_file() {
    local err reps
    read -r pipe_secs err reps < <(pipe_run "$port" < "$files/$1")
    [ "$err" = 0 ] && [ "$reps" = "$keys" ] || die "$1: errors=$err replies=$reps"
}

load() {
    pipe_file load
    log "loaded $keys keys in ${pipe_secs}s"
}

# Stock: one row per client count the cases use.
server_start 7-stock stock "$port"
load
for c in $(for x in $cases; do echo "$x" | cut -d: -f2; done | sort -un); do
    cli "$port" config resetstat >/dev/null
    run_benchmark "$port" get -r "$keys" -n "$warmup" -c "$c" --threads 1 >/dev/null
    measure stock NA "$c" NA NA
done
server_stop "$port"

for x in $cases; do
    IFS=: read -r target clients dio iot <<< "$x"
    server_start "7-rock-$target" rock "$port" --maxmemory-policy noeviction \
        --rock-direct-io "$dio" --rock-io-threads "$iot"
    load
    read -r used_hot used_cold maxmem < <(rock_cold_maxmemory "$port" "$keys" "$target")
    # Values come back only when read: from all cold, uniform GETs would
    # need about N x ln(1/cold share) reads to reach the target (700,000
    # for 25% of 500,000). So every key is read once, in order: the values
    # read last stay in RAM, clean (their disk copy still valid), as after
    # a long read-only run; the cold share is the target.
    # The policy under test from here: pushing every value out (maxmemory
    # 1mb) under an allkeys-* policy would have deleted the keys instead.
    cli "$port" config set maxmemory-policy "$policy" >/dev/null
    cli "$port" config set maxmemory "$maxmem" >/dev/null
    pipe_file getall
    rock_wait_idle "$port" 300
    log "case $x: used_hot=$used_hot used_cold=$used_cold maxmemory=$maxmem cold_percent=$(rock_fig "$port" cold_percent) after reading every key (${pipe_secs}s)"
    run_benchmark "$port" get -r "$keys" -n "$warmup" -c "$clients" --threads 1 >/dev/null
    rock_wait_idle "$port" 300
    measure rock "$target" "$clients" "$dio" "$iot"
    server_stop "$port"
done
rm -rf "$files"

md_write "Data: $keys keys \`key:%012d\`, values of $vsize random bytes (incompressible), loaded with \`redis-cli --pipe\`. Each row: \`redis-benchmark -t get -r $keys -n $requests -c <clients> --threads 1\` (uniformly random keys; rps, p50, p99 from its --csv), after a warm-up of $warmup GETs. Stock 7.0.15 holds everything in RAM. redis-rock: a fresh server per row, \`maxmemory-policy $policy\` (noeviction while every value is pushed out), \`rock-direct-io\` and \`rock-io-threads\` as shown; every value pushed to disk first (\`maxmemory 1mb\`, writer and compactions idle), then \`maxmemory\` = used_cold + (1 - cold_target/100) x (used_hot - used_cold), at least used_cold + RocksDB's memory (\`rocksdb_memory\`, counted against maxmemory) + 4 MB, and every key read once in order (values come back only when read, so starting from all cold a uniform warm-up would need about N x ln(1/cold share) GETs to reach the target; the values read last stay in RAM, clean); cold_percent is the share actually cold after the run. CPU per GET: utime + stime of every server thread from \`/proc/PID/task/*/stat\`, before and after the timed run, grouped by thread name (eventloop = the main thread; readers = \`rock_reader*\`; writer = \`rock_writer\`; rocksdb = \`rocksdb:*\` flush and compaction threads; other = bio and the rest), divided by the GETs of the run; $hz ticks a second, so a figure has a resolution of $(calc "1000000 / $hz / $requests" %.2f) µs. cs_per_get: voluntary + involuntary context switches of all server threads over the run, per GET. reads_per_get: RocksDB reads (\`ROCK REPORT reads\`) per GET. disk_blocks_per_read: index, filter and data blocks the readers read from disk (\`rocksdb_*_block_reads\`) per RocksDB read. ratio_rps: rock rps / stock rps at the same client count. The client (redis-benchmark) shares the two cores."
