#!/usr/bin/env bash
# tests/bulk/run.sh -- issue 3's two bulk runs against a real redis-rock with
# maxmemory 256mb (make test-bulk):
#   1. verify.py writes 2,000,000 keys with distinct deterministic values of
#      200..2000 bytes, reads every one back in random order and checks it
#      (and that most values were cold);
#   2. redis-benchmark -t set,get -d 1000 -r 2000000 -n 4000000 must finish
#      with zero error replies (INFO errorstats is checked, not the output).
# KEYS=..., REQUESTS=... and MAXMEMORY=... shrink the runs; PORT=... picks the port.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
port=${PORT:-21900}
keys=${KEYS:-2000000}
requests=${REQUESTS:-4000000}
maxmemory=${MAXMEMORY:-256mb}
work="$top/build/bulk"
cli=("$top/bin/redis-cli" -p "$port")

rm -rf "$work" && mkdir -p "$work"
"$top/bin/redis-server" --port "$port" --dir "$work" --save "" --appendonly no \
    --rock-enabled yes --maxmemory "$maxmemory" --maxmemory-policy noeviction \
    --daemonize yes --logfile "$work/server.log" --pidfile "$work/server.pid"
stop() { "${cli[@]}" shutdown nosave >/dev/null 2>&1 || true; }
trap stop EXIT
for _ in $(seq 100); do "${cli[@]}" ping >/dev/null 2>&1 && break; sleep 0.1; done

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
