#!/usr/bin/env bash
# bench/3-mode2.sh -- the Java harness's mode2 (paced GET/SETEX cache
# workload, a thread added every --step seconds while the server keeps up)
# at write shares of 1/10 and 5/10, stock 7.0.15 (all in RAM) and redis-rock
# with maxmemory = stock's used_memory / B3_FRACTION (most values cold),
# rock-direct-io yes. Reports the sustained rate, the thread count reached
# and latency percentiles (from the intended send time: coordinated omission
# accounted for by the harness).
#
#   B3_MKEYS=1 (millions of keys)  B3_WRITE_TENTHS="1 5"  B3_START_THREADS=1
#   B3_DURATION=600 B3_STEP=60 B3_RATE=1000 B3_PIPELINE=10 B3_MAX_THREADS=64
#   B3_P99_LIMIT_MS=50 B3_FRACTION=4 B3_MIN_MAXMEMORY=8388608 B3_SEED=1
#   QUICK=1: 10,000 keys, 4 s, a step per second, 200 req/s per thread, 3 threads at most
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if [ "$QUICK" = 1 ]; then
    mkeys=${B3_MKEYS:-0.01}; duration=${B3_DURATION:-4}; step=${B3_STEP:-1}
    rate=${B3_RATE:-200}; maxthreads=${B3_MAX_THREADS:-3}
else
    mkeys=${B3_MKEYS:-1}; duration=${B3_DURATION:-600}; step=${B3_STEP:-60}
    rate=${B3_RATE:-1000}; maxthreads=${B3_MAX_THREADS:-64}
fi
wts=${B3_WRITE_TENTHS:-1 5}
start_threads=${B3_START_THREADS:-1}
pipeline=${B3_PIPELINE:-10}
p99limit=${B3_P99_LIMIT_MS:-50}
fraction=${B3_FRACTION:-4}
min_maxmem=${B3_MIN_MAXMEMORY:-8388608}   # floor for tiny runs: keys and buffers must fit
seed=${B3_SEED:-1}
port=${PORT_BASE:-31230}

bench_init 3-mode2 "mode2 paced cache workload, ramp until the server stops keeping up"
metric_jar_ok || die "no $METRIC_JAR (make metric) or no java"
csv_header server write_tenths maxmemory_mb threads max_threads sustained_rps ratio_rps p50_us p95_us p99_us p999_us errors nils cold_percent read_p99_us worst_1s_p999_us worst_1s_at_s write_stopped

opts=(--seed "$seed" --duration "$duration" --step "$step" --rate "$rate" --pipeline "$pipeline"
      --max-threads "$maxthreads" --p99-limit-ms "$p99limit")
declare -A stock_rps stalls
stock_used=""
row() {   # label kind wt mm
    local label=$1 kind=$2 wt=$3 mm=$4 s rps
    cli "$port" config resetstat >/dev/null
    # A per-second trace (the harness's progress rows): the run's worst
    # one-second p99.9 and when it happened, to find what stalls.
    local trace=$RESULTS_DIR/3-mode2-$label-$wt-trace.csv worst sampler=""
    # redis-rock: what ran in the background, sampled 10 times a second,
    # for bench/stalls.py to line up with the trace's slow seconds.
    local samples=$RESULTS_DIR/3-mode2-$label-$wt-samples.csv
    if [ "$kind" = rock ]; then
        python3 "$BENCH_TOP/bench/stalls.py" sample "$port" "$samples" & sampler=$!
    fi
    s=$(metric_run --port "$port" "${opts[@]}" --progress 1 --csv "$trace" mode2 "$mkeys" "$start_threads" "$wt")
    if [ -n "$sampler" ]; then
        kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true
        python3 "$BENCH_TOP/bench/stalls.py" report "$trace" "$samples" > "$RESULTS_DIR/3-mode2-$label-$wt-stalls.txt" || true
        stalls[$wt]=$(grep '^stalls_summary' "$RESULTS_DIR/3-mode2-$label-$wt-stalls.txt" | cut -d' ' -f2- || true)
    fi
    worst=$(awk -F, 'NR==1{for(i=1;i<=NF;i++) c[$i]=i; next} $c["p999_us"]+0 > m {m=$c["p999_us"]+0; at=$c["elapsed_s"]} END{printf "%s %s", (m==""?"NA":m), (at==""?"NA":at)}' "$trace" 2>/dev/null || echo "NA NA")
    rps=$(summary_get "$s" sustained_rps)
    [ "$kind" = stock ] && stock_rps[$wt]=$rps
    [ "$kind" = stock ] && [ -z "$stock_used" ] && stock_used=$(info_fig "$port" memory used_memory)
    csv_row "$label" "$wt" "$mm" "$(summary_get "$s" threads)" "$(summary_get "$s" max_threads)" "$rps" \
        "$(ratio "$rps" "${stock_rps[$wt]:-}")" "$(summary_get "$s" p50_us)" "$(summary_get "$s" p95_us)" \
        "$(summary_get "$s" p99_us)" "$(summary_get "$s" p999_us)" "$(summary_get "$s" errors)" \
        "$(summary_get "$s" nils)" "$(rock_fig "$port" cold_percent)" "$(rock_fig "$port" read_latency_p99_us)" \
        $worst "$(rock_fig "$port" rocksdb_write_stopped)"
}

for wt in $wts; do
    server_start "3-stock-$wt" stock "$port"
    row stock stock "$wt" -
    server_stop "$port"
    mm=$(( stock_used / fraction ))
    [ "$mm" -ge "$min_maxmem" ] || mm=$min_maxmem
    server_start "3-rock-$wt" rock "$port" --maxmemory "$mm" --maxmemory-policy noeviction --rock-direct-io yes
    row rock rock "$wt" "$(calc "$mm / 1048576" %.1f)"
    server_stop "$port"
done

# What ran in the slow seconds (bench/stalls.py; full report per row next to this one).
stall_notes="Slow seconds (p99 over 5 ms in a second of the trace) against what redis-rock ran in the background, from \`INFO rock\` sampled every 100 ms (\`bench/stalls.py\`; per row \`3-mode2-rock-<write-tenths>-stalls.txt\`): shares in % of all seconds and of the slow ones with a flush, a compaction, or the event loop waiting for the writer running in them; the worst second and what ran in it."
for wt in $wts; do
    if [ -n "${stalls[$wt]:-}" ]; then
        stall_notes="$stall_notes
- rock, write tenths $wt: ${stalls[$wt]}"
    fi
done

md_write "\`java -jar metric/target/redis-rock-metric.jar ${opts[*]} mode2 $mkeys $start_threads <write-tenths>\`: $mkeys million keys (20–200 bytes, values 200–2000 bytes of random bytes) written with SETEX (TTL 60..60000 s) by the harness, then paced threads of $rate requests/s each in pipelines of $pipeline (GET of a uniformly random key, or with probability write-tenths/10 a SETEX of it), starting with $start_threads thread(s), one more every $step s while the last step achieved ≥ 95% of its target rate with p99 ≤ $p99limit ms (at most $maxthreads), for $duration s in all. sustained_rps = the achieved rate of the last full step at the final thread count; threads = at the end, max_threads = the highest reached; latency percentiles in µs over the whole measured phase, measured from each pipeline's intended start (open loop, so a stall counts for every request behind it). nils = GETs of keys that had expired. redis-rock: \`maxmemory\` = stock's used_memory after its first run / $fraction, at least $min_maxmem bytes (stock: ${stock_used:-NA} bytes; below what the keys alone need, writes would get -OOM under noeviction), \`maxmemory-policy noeviction\`, \`rock-direct-io yes\`; cold_percent is read from INFO rock at the end. ratio_rps = rock / stock sustained rate at the same write share. worst_1s_p999_us / worst_1s_at_s: the highest p99.9 of any one-second interval of the harness's progress trace (\`--progress 1 --csv\`, kept as \`3-mode2-<server>-<write-tenths>-trace.csv\` next to this report) and its second from the start; write_stopped: \`rocksdb_write_stopped\` at the end." "$stall_notes"
