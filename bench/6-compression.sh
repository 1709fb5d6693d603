#!/usr/bin/env bash
# bench/6-compression.sh -- cold reads with rock-compression none, lz4, zstd
# (and the default lz4-zstd), on the same compressible data: values of random
# words (a seeded 5,000-word vocabulary, Zipf-like frequencies, length
# uniform 200..2000 bytes), keys key:%012d as redis-benchmark -r names them.
# Per server: load with redis-cli --pipe, wait until redis-rock's writer and
# compactions are idle, read the SST size, then redis-benchmark GETs of
# uniformly random keys. Stock 7.0.15 all in RAM is the reference row.
# redis-rock: maxmemory = stock's used_memory / B6_FRACTION, rock-direct-io yes.
#
#   B6_KEYS=1000000 B6_REQUESTS=300000 B6_CLIENTS=8 B6_FRACTION=10 B6_MIN_MAXMEMORY=4194304
#   B6_COMPRESSIONS="none lz4 zstd lz4-zstd"     (QUICK=1: 20,000 keys, 5,000 GETs)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

keys=${B6_KEYS:-$([ "$QUICK" = 1 ] && echo 20000 || echo 1000000)}
requests=${B6_REQUESTS:-$([ "$QUICK" = 1 ] && echo 5000 || echo 300000)}
clients=${B6_CLIENTS:-8}
fraction=${B6_FRACTION:-10}
min_maxmem=${B6_MIN_MAXMEMORY:-4194304}   # floor for tiny runs
comps=${B6_COMPRESSIONS:-none lz4 zstd lz4-zstd}
port=${PORT_BASE:-31260}

bench_init 6-compression "cold reads by rock-compression"
files=$BENCH_DIR/6-files
trap 'rm -rf "$files"; bench_cleanup' EXIT
rm -rf "$files" && mkdir -p "$files"
python3 "$BENCH_TOP/bench/gen.py" set "$keys" --bench-keys --data words --value-min 200 --value-max 2000 --seed 6 --stats "$files/stats" > "$files/load"
raw=$(( $(stat -c %s "$files/load") ))
value_avg=$(awk '{split($1,a,"="); split($2,b,"="); printf "%.0f", b[2]/a[2]}' "$files/stats")
log "6-compression: load file $(bytes_human "$raw")"

csv_header server compression keys load_keys_per_s get_rps ratio_rps p50_ms p99_ms errors cold_percent disk_mb value_bytes_avg record_bytes_per_value bytes_per_cold_value disk_vs_value memtable_mb read_p99_us

stock_rps=""
run_server() {   # kind compression extra...
    local kind=$1 comp=$2; shift 2
    server_start "6-$comp" "$kind" "$port" "$@"
    local secs err reps loadrate rps p50 p99 cold disk cold_keys bpv rawpv memt rp99 used dvv
    read -r secs err reps < <(pipe_run "$port" < "$files/load")
    [ "$reps" = "$keys" ] || err="$err+missing"
    loadrate=$(calc "$keys / $secs" %.0f)
    used=$(info_fig "$port" memory used_memory)
    [ "$kind" = stock ] && stock_used=$used
    disk=NA bpv=NA rawpv=NA memt=NA dvv=NA
    if [ "$kind" = rock ]; then
        rock_wait_idle "$port" 600
        cold_keys=$(rock_fig "$port" cold_keys)
        disk=$(rock_fig "$port" rocksdb_disk_bytes)
        memt=$(calc "$(rock_fig "$port" rocksdb_memtables) / 1048576" %.1f)
        bpv=$(awk -v d="$disk" -v c="$cold_keys" 'BEGIN{ if (c>0) printf "%.0f", d/c; else print "NA" }')
        rawpv=$(awk -v b="$(rock_fig "$port" write_bytes)" -v w="$(rock_fig "$port" writes)" 'BEGIN{ if (w>0) printf "%.0f", b/w; else print "NA" }')
        disk=$(calc "$disk / 1048576" %.1f)
        dvv=$(ratio "$bpv" "$value_avg")
        cli "$port" config resetstat >/dev/null
    fi
    cli "$port" config resetstat >/dev/null
    read -r rps p50 p99 < <(run_benchmark "$port" get -r "$keys" -n "$requests" -c "$clients" --threads 1)
    local gerr; gerr=$(error_replies "$port")
    if [ "$err" = 0 ]; then err=$gerr; else err="load:$err+get:$gerr"; fi
    cold=$(rock_fig "$port" cold_percent)
    rp99=$(rock_fig "$port" read_latency_p99_us)
    local rerr; rerr=$(rock_fig "$port" errors); [ "$rerr" = NA ] || [ "$rerr" = 0 ] || err="$err+rock_errors=$rerr"
    [ "$kind" = stock ] && stock_rps=$rps
    csv_row "$kind" "$comp" "$keys" "$loadrate" "$rps" "$(ratio "$rps" "$stock_rps")" "$p50" "$p99" "$err" "$cold" "$disk" "$value_avg" "$rawpv" "$bpv" "$dvv" "$memt" "$rp99"
    server_stop "$port"
}

run_server stock none
maxmem=$(( stock_used / fraction ))
[ "$maxmem" -ge "$min_maxmem" ] || maxmem=$min_maxmem
for c in $comps; do
    run_server rock "$c" --maxmemory "$maxmem" --maxmemory-policy noeviction --rock-direct-io yes --rock-compression "$c"
done
rm -rf "$files"

md_write "Data: $keys keys \`key:%012d\` (the names redis-benchmark's \`-r\` uses), values of random words from a seeded 5,000-word vocabulary of 2–10 letters with Zipf-like frequencies, separated by spaces, length uniform 200..2000 bytes ($(bytes_human "$raw") of RESP in all; written by \`bench/gen.py --data words\`, compressible like text). Each row: fresh server, load with \`redis-cli --pipe\` (load_keys_per_s), then \`redis-benchmark -t get -r $keys -n $requests -c $clients --threads 1\` (uniformly random keys; rps, p50, p99 from its --csv). redis-rock: \`maxmemory\` = stock's used_memory / $fraction, at least $min_maxmem (${maxmem:-NA} bytes), \`maxmemory-policy noeviction\`, \`rock-direct-io yes\`, \`rock-compression\` as shown. Bytes on disk: after the load, the script waits until \`pending_writes\`, running and pending compactions are all 0, then bytes_per_cold_value = \`rocksdb_disk_bytes\` (total SST file size) / \`cold_keys\`. No explicit flush or full compaction is done (ROCK has no such command): values still in the memtable (memtable_mb, at most two of \`maxmemory\`/16 capped at 16 MB) are counted as cold but are not in SST files yet, so the figure is slightly low (by about memtable_mb / the raw size of the cold data). value_bytes_avg is the mean value length generated; record_bytes_per_value = \`write_bytes\` / \`writes\` (what the writer handed RocksDB per value, before RocksDB's compression: the value in RDB encoding, which already LZF-compresses strings, as \`rdbcompression\` does); disk_vs_value = bytes_per_cold_value / value_bytes_avg. read_p99_us is redis-rock's own disk-read latency (\`read_latency_p99_us\`, queue to value in RAM) during the GETs. ratio_rps = rock rps / stock rps."
