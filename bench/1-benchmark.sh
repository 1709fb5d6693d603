#!/usr/bin/env bash
# bench/1-benchmark.sh -- redis-benchmark SET and GET, everything in RAM (no
# maxmemory): stock 7.0.15, redis-rock (rock-enabled yes) with its default
# compression, with rock-compression lz4 and with zstd. The cost of the hooks
# when nothing goes to disk. One redis-benchmark binary (stock's) for all.
#
#   B1_REQUESTS=1000000 B1_CLIENTS=2 B1_SIZE=200 B1_KEYSPACE=1000000   (QUICK=1: 10000 requests)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

requests=${B1_REQUESTS:-$([ "$QUICK" = 1 ] && echo 10000 || echo 1000000)}
clients=${B1_CLIENTS:-2}
size=${B1_SIZE:-200}
keyspace=${B1_KEYSPACE:-1000000}
port=${PORT_BASE:-31210}

bench_init 1-benchmark "redis-benchmark SET/GET, all in RAM"
csv_header server config test rps p50_ms p99_ms ratio_rps errors cold_percent

declare -A stock_rps
run_server() {    # label kind extra-args...
    local label=$1 kind=$2; shift 2
    server_start "1-$label" "$kind" "$port" "$@"
    local t rps p50 p99 err cold
    for t in set get; do
        cli "$port" config resetstat >/dev/null
        read -r rps p50 p99 < <(run_benchmark "$port" "$t" -c "$clients" -d "$size" -r "$keyspace" -n "$requests" --threads 1)
        err=$(error_replies "$port")
        cold=$(rock_fig "$port" cold_percent)
        [ "$kind" = stock ] && stock_rps[$t]=$rps
        csv_row "$kind" "$label" "${t^^}" "$rps" "$p50" "$p99" "$(ratio "$rps" "${stock_rps[$t]:-}")" "$err" "$cold"
    done
    server_stop "$port"
}

run_server stock stock
run_server rock-default rock
run_server rock-lz4 rock --rock-compression lz4
run_server rock-zstd rock --rock-compression zstd

md_write "\`redis-benchmark -t set,get -c $clients -d $size -r $keyspace -n $requests --threads 1 --csv\` (stock's redis-benchmark for every server), one fresh server per row, no \`maxmemory\` (everything stays in RAM), \`--save '' --appendonly no\`. redis-rock runs with \`rock-enabled yes\`; \`rock-compression\` does not matter while nothing goes to disk (the rows check that). ratio_rps = rock rps / stock rps for the same test. errors = the server's \`total_error_replies\`."
