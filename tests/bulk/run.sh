#!/usr/bin/env bash
# tests/bulk/run.sh -- the bulk runs against a real redis-rock
# (make test-bulk):
#   0. maxmemory 64mb, 1 GB of 200..2000-byte values: used_memory checked
#      every 100,000 keys written, then every value read back and compared;
# then with maxmemory 256mb:
#   1. verify.py writes 2,000,000 keys with distinct deterministic values of
#      200..2000 bytes, reads every one back in random order and checks it
#      (and that most values were cold);
#   2. redis-benchmark -t set,get -d 1000 -r 2000000 -n 4000000 must finish
#      with zero error replies (INFO errorstats is checked, not the output).
# KEYS=..., REQUESTS=... and MAXMEMORY=... shrink the runs; PORT=... picks the port.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
port=${PORT:-30900}
keys=${KEYS:-2000000}
keys_64mb=${KEYS_64MB:-900000}
requests=${REQUESTS:-4000000}
maxmemory=${MAXMEMORY:-256mb}
work="$top/build/bulk"
cli=("$top/bin/redis-cli" -p "$port")

start() {
    rm -rf "$work" && mkdir -p "$work"
    "$top/bin/redis-server" --port "$port" --dir "$work" --save "" --appendonly no \
        --rock-enabled yes --maxmemory "$1" --maxmemory-policy noeviction \
        --daemonize yes --logfile "$work/server.log" --pidfile "$work/server.pid"
    for _ in $(seq 100); do "${cli[@]}" ping >/dev/null 2>&1 && return 0; sleep 0.1; done
    echo "FAIL: server did not start"; exit 1
}
stop() { "${cli[@]}" shutdown nosave >/dev/null 2>&1 || true; }
trap stop EXIT

echo "=== bulk 0: maxmemory 64mb, $keys_64mb keys (~1 GB of 200..2000-byte values), memory bound checked"
start 64mb
python3 "$top/tests/bulk/verify.py" --port "$port" --keys "$keys_64mb" --min-cold-percent 50 \
    --max-used $((64 * 1024 * 1024)) --seed 64
stop

start "$maxmemory"

echo "=== bulk 1: $keys keys, 200..2000-byte values, every one read back in random order"
python3 "$top/tests/bulk/verify.py" --port "$port" --keys "$keys" --min-cold-percent 50

echo "=== bulk 2: redis-benchmark -t set,get -d 1000 -r 2000000 -n $requests"
"${cli[@]}" flushall >/dev/null
"${cli[@]}" config resetstat >/dev/null
"$top/bin/redis-benchmark" -p "$port" -t set,get -d 1000 -r 2000000 -n "$requests" -q \
    | tr '\r' '\n' | grep 'requests per second'
errors=$("${cli[@]}" info stats | tr -d '\r' | awk -F: '$1=="total_error_replies"{print $2}')
"${cli[@]}" info rock | tr -d '\r' | grep -E '^rock_(cold_percent|cold_keys|keys|reads|writes|errors|read_latency_p(50|99)_us|used_memory):'
"${cli[@]}" info errorstats | tr -d '\r' | grep errorstat_ || true
if [ "$errors" != "0" ]; then
    echo "FAIL: redis-benchmark got $errors error replies"
    exit 1
fi
echo "bulk: OK (0 error replies)"
