#!/usr/bin/env bash
# bench/2-mode1.sh -- the Java harness's mode1 (uniform random GETs over a
# loaded data set, every reply checked) against stock 7.0.15 all in RAM and
# redis-rock at several cold shares, 2 and 8 client threads.
#
# maxmemory per target cold share: measured, not guessed. redis-rock is first
# run with no maxmemory (that is also its all-in-RAM row): U_all = its
# used_memory with the data set loaded. Then CONFIG SET maxmemory U_all/3
# pushes part of the values to disk: used_memory U_1 at cold share c_1. Values
# take V = (U_all - U_1) / c_1, the rest (keys, server) U_cold = U_all - V.
# For a target cold share c:
#   maxmemory = U_cold + (1 - c) * V + R
# where R is RocksDB's memory counted against maxmemory (block cache
# min(32 MB, maxmemory/8) + one memtable clamp(maxmemory/16, 2 MB, 16 MB) -
# 4 MB floor), solved by iteration. The cold share actually reached (INFO
# rock after the run) is what the table shows.
#
#   B2_KEYS=1000 (thousands)  B2_THREADS="2 8"  B2_TARGETS="25 50 80 95"
#   B2_DURATION=60 (s per run)  B2_SEED=1      (QUICK=1: 5k keys, 80 %, 3 s)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kkeys=${B2_KEYS:-$([ "$QUICK" = 1 ] && echo 5 || echo 1000)}
threads=${B2_THREADS:-2 8}
targets=${B2_TARGETS:-$([ "$QUICK" = 1 ] && echo 80 || echo "25 50 80 95")}
duration=${B2_DURATION:-$([ "$QUICK" = 1 ] && echo 3 || echo 60)}
seed=${B2_SEED:-1}
port=${PORT_BASE:-31220}

bench_init 2-mode1 "mode1 random GETs by cold share"
metric_jar_ok || die "no $METRIC_JAR (make metric) or no java"
csv_header server target_cold maxmemory_mb threads rps ratio_rps p50_us p95_us p99_us p999_us errors cold_percent read_p99_us
declare -A stock_rps

# mode1_rows LABEL KIND TARGET MAXMEM_MB: one row per thread count; the first
# run loads the data set (FLUSHALL + SETs), the next ones reuse it.
mode1_rows() {
    local label=$1 kind=$2 target=$3 mm=$4 t first=1 s rps err cold rp99
    for t in $threads; do
        local extra=()
        [ $first = 1 ] || extra=(--no-load)
        cli "$port" config resetstat >/dev/null
        s=$(metric_run --port "$port" --seed "$seed" --duration "$duration" "${extra[@]}" mode1 "$t" "$kkeys")
        rps=$(summary_get "$s" rps)
        err=$(summary_get "$s" errors)
        cold=$(rock_fig "$port" cold_percent)
        rp99=$(rock_fig "$port" read_latency_p99_us)
        [ "$kind" = stock ] && stock_rps[$t]=$rps
        csv_row "$label" "$target" "$mm" "$t" "$rps" "$(ratio "$rps" "${stock_rps[$t]:-}")" \
            "$(summary_get "$s" p50_us)" "$(summary_get "$s" p95_us)" "$(summary_get "$s" p99_us)" \
            "$(summary_get "$s" p999_us)" "$err" "$cold" "$rp99"
        first=0
    done
}

rock_args=(--maxmemory-policy noeviction --rock-direct-io yes)

# stock, all in RAM
server_start 2-stock stock "$port"
mode1_rows stock stock - -
server_stop "$port"

# redis-rock, no maxmemory: all-in-RAM row, then the calibration
server_start 2-rock-ram rock "$port" "${rock_args[@]}"
mode1_rows rock rock 0 -
u_all=$(info_fig "$port" memory used_memory)
# Push part of the values to disk (CONFIG SET maxmemory U_all/3, about 70-80 %
# cold) and wait until the cold share stops moving and the writer is idle, or
# is past 50 %, or 60 s. (Eviction goes on by itself between commands; the
# PINGs only speed it up: each command also gives it a time slice.)
# Two points of the line used_memory(cold share) give V and U_cold.
cli "$port" config set maxmemory $(( u_all / 3 )) >/dev/null
t0=$(date +%s); last=""; same=0
while :; do
    c=$(rock_fig "$port" cold_percent); pw=$(rock_fig "$port" pending_writes)
    if [ "$pw" = 0 ] && [ "$c" = "$last" ]; then same=$((same + 1)); else same=0; fi
    last=$c
    [ "$same" -ge 6 ] && break
    awk -v c="$c" 'BEGIN{exit !(c >= 50)}' && [ "$pw" = 0 ] && break
    [ $(( $(date +%s) - t0 )) -ge 60 ] && { log "calibration: cold share still moving after 60 s ($c%)"; break; }
    cli "$port" -r 2000 ping >/dev/null
done
u_1=$(info_fig "$port" memory used_memory)
c_1=$(rock_fig "$port" cold_percent)
server_stop "$port"
v=$(awk -v ua="$u_all" -v u1="$u_1" -v c="$c_1" 'BEGIN{ if (c > 1) printf "%.0f", (ua - u1) / (c / 100); else print 0 }')
u_cold=$(( u_all - v ))
log "calibration: used_memory all in RAM $u_all, at $c_1% cold $u_1: values take $v bytes, keys and the rest $u_cold"
[ "$v" -gt 0 ] || die "calibration failed (values take $v bytes)"

# maxmemory for a target cold share (percent)
maxmem_for() {
    awk -v uc="$u_cold" -v v="$v" -v c="$1" 'BEGIN{
        MB = 1048576; m = uc + (1 - c/100) * v
        for (i = 0; i < 50; i++) {
            cache = m/8; if (cache > 32*MB) cache = 32*MB; if (cache < MB) cache = MB
            wb = m/16; if (wb > 16*MB) wb = 16*MB; if (wb < 2*MB) wb = 2*MB
            r = cache + wb - 4*MB; if (r < 0) r = 0
            m = uc + (1 - c/100) * v + r
        }
        printf "%.0f", m }'
}

for target in $targets; do
    mm=$(maxmem_for "$target")
    server_start "2-rock-$target" rock "$port" --maxmemory "$mm" "${rock_args[@]}"
    mode1_rows rock rock "$target" "$(calc "$mm / 1048576" %.1f)"
    server_stop "$port"
done

md_write "\`java -jar metric/target/redis-rock-metric.jar --seed $seed --duration $duration mode1 <threads> $kkeys\`: $kkeys thousand keys (20–200 bytes) with values of 200–2000 bytes (random bytes, incompressible), loaded by the harness (FLUSHALL + pipelined SETs; the first thread count of each server loads, the next reuse the data with \`--no-load\`), then <threads> connections GET uniformly random keys for $duration s, every reply checked. Percentiles are per GET (send to reply), in µs, from the harness's SUMMARY line. redis-rock runs with \`rock-direct-io yes\` (reads bypass the page cache) and \`maxmemory-policy noeviction\`; target_cold 0 is redis-rock with no maxmemory. For the other targets, maxmemory comes from a calibration on that all-in-RAM server: used_memory with the data loaded (U_all = $u_all bytes) and after CONFIG SET maxmemory U_all/3 pushed part of the values to disk (U_1 = $u_1 bytes at c_1 = $c_1 % cold), so values take V = (U_all − U_1) / c_1 = $v bytes and the rest U_cold = U_all − V; maxmemory = U_cold + (1 − target) × V + RocksDB's counted memory (block cache ≤ min(32 MB, maxmemory/8), one memtable ≤ maxmemory/16, less the 4 MB floor). cold_percent is the ACTUAL share reached, read from INFO rock after each run; read_p99_us is redis-rock's own disk-read p99 (queue to value in RAM) over the run. ratio_rps = rock rps / stock rps at the same thread count."
