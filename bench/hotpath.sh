#!/usr/bin/env bash
# bench/hotpath.sh -- instructions per request on the all-in-RAM hot path,
# one or more redis-server builds side by side (callgrind: exact counts,
# so two builds compare on a noisy 2-core machine where throughput cannot).
#
# For each LABEL=DIR given (DIR holding redis-server and redis-benchmark),
# and each mode (-P 32, -c 50): a server with rock-enabled yes and no
# maxmemory under valgrind --tool=callgrind, instrumentation off; 400,000
# SETs of 100 bytes over 100,000 random keys (so the measured part adds
# almost no key and no main-dict rehash falls in it); then instrumentation
# on for redis-benchmark -t set,get,hset -n 100000 -r 100000 -d 100 (300,000
# requests). Prints one line per run: label, mode, instructions summed over
# every server thread, per request. The callgrind files stay in WORK_DIR
# for callgrind_annotate.
#
#   RUNS=2 bash bench/hotpath.sh old=/tmp/old new=bin
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
W=${WORK_DIR:-$top/build/bench/hotpath}
PORT=${PORT:-31295}
RUNS=${RUNS:-1}
[ $# -gt 0 ] || { echo "usage: $0 LABEL=BINDIR ..." >&2; exit 2; }
command -v valgrind > /dev/null || { echo "hotpath: needs valgrind (apt-get install valgrind)" >&2; exit 2; }

one() {   # label bindir mode run
    local label=$1 bin=$2 mode=$3 d="$W/$1-$3-$4"
    rm -rf "$d" && mkdir -p "$d/rock"
    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$d/cg.out" \
        "$bin/redis-server" --port "$PORT" --save "" --appendonly no --dir "$d" \
        --rock-enabled yes --rock-dir "$d/rock" > "$d/server.log" 2>&1 &
    local vpid=$!
    for _ in $(seq 1 200); do "$bin/redis-cli" -p "$PORT" ping 2>/dev/null | grep -q PONG && break; sleep 0.5; done
    "$bin/redis-benchmark" -p "$PORT" -t set -n 400000 -r 100000 -d 100 -q > /dev/null
    callgrind_control -i on "$vpid" > /dev/null 2>&1
    local how="-P 32"; [ "$mode" = c50 ] && how="-c 50"
    # shellcheck disable=SC2086
    "$bin/redis-benchmark" -p "$PORT" -t set,get,hset -n 100000 -r 100000 -d 100 $how -q > "$d/bench.txt"
    callgrind_control -i off "$vpid" > /dev/null 2>&1
    callgrind_control -d "$vpid" > /dev/null 2>&1
    "$bin/redis-cli" -p "$PORT" shutdown nosave > /dev/null 2>&1 || true
    wait "$vpid" || true
    local ir
    ir=$(cat "$d"/cg.out* | awk '/^totals:/ {s += $2} END {printf "%.0f\n", s}')
    [ "$ir" -gt 0 ] || { echo "hotpath: no instructions counted for $label $mode" >&2; exit 1; }
    echo "$label $mode instructions $ir per_request $((ir / 300000))"
}

for r in $(seq 1 "$RUNS"); do
    for mode in p32 c50; do
        for arg in "$@"; do one "${arg%%=*}" "${arg#*=}" "$mode" "$r"; done
    done
done
