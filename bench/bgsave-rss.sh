#!/usr/bin/env bash
# bench/bgsave-rss.sh -- how far a BGSAVE takes the parent's RSS up while
# most values are on disk (the fork stream reads them for the child).
#
# A redis-rock server (BIN_DIR/redis-server, default <checkout>/bin) with
# maxmemory 48mb gets 100,000 values of 1-7 KB random bytes (bench/gen.py,
# seed 3: about 400 MB, 90% cold), then, with WRITES=1, 4 clients writing
# 3 KB values (redis-benchmark -t set -r 100000) from 8 s before the first
# BGSAVE on. Three BGSAVEs, 2 s apart; during each, VmRSS of the server
# is sampled every 20 ms. Prints, per BGSAVE: RSS before, peak, rise, time.
# NOSAVE=1 samples 5 s without a BGSAVE instead (the writes' own effect).
#
#   BIN_DIR=bin WRITES=1 bash bench/bgsave-rss.sh
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN_DIR:-$top/bin}
D=${WORK_DIR:-$top/build/bench/bgsave-rss}
PORT=${PORT:-31290}
rm -rf "$D" && mkdir -p "$D"
"$BIN/redis-server" --port "$PORT" --dir "$D" --rock-enabled yes --rock-dir "$D/rock" \
    --maxmemory 48mb --maxmemory-policy noeviction --save "" --appendonly no \
    --logfile "$D/log" --daemonize yes
CLI="$BIN/redis-cli -p $PORT"
for _ in $(seq 1 50); do $CLI ping >/dev/null 2>&1 && break; sleep 0.1; done
python3 "$top/bench/gen.py" set 100000 --value-min 1000 --value-max 7000 --data random --seed 3 > "$D/load"
$CLI --pipe < "$D/load" > /dev/null
PID=$($CLI info server | grep process_id | cut -d: -f2 | tr -d '\r')
for _ in $(seq 1 100); do
    [ "$($CLI rock report | grep -A1 '^pending_writes$' | tail -1)" = 0 ] && break
    sleep 0.2
done
sleep 3
rss() { awk '/VmRSS/ {print $2}' "/proc/$PID/status"; }
bp=
if [ -n "${WRITES:-}" ]; then
    "$BIN/redis-benchmark" -p "$PORT" -t set -d 3000 -r 100000 -n 100000000 -c 4 -q > /dev/null 2>&1 &
    bp=$!
    sleep 8
fi
for round in 1 2 3; do
    base=$(rss); peak=$base
    t0=$(date +%s.%N)
    if [ -n "${NOSAVE:-}" ]; then
        for _ in $(seq 1 250); do r=$(rss); [ "$r" -gt "$peak" ] && peak=$r; sleep 0.02; done
    else
        $CLI bgsave > /dev/null
        sleep 0.05
        while $CLI info persistence | grep -q "rdb_bgsave_in_progress:1"; do
            r=$(rss); [ "$r" -gt "$peak" ] && peak=$r; sleep 0.02
        done
    fi
    t1=$(date +%s.%N)
    cold=$($CLI rock report | grep -A1 '^cold_percent$' | tail -1)
    echo "round $round: RSS before ${base} kB, peak ${peak} kB (+$(( (peak - base) / 1024 )) MB), $(echo "$t1 - $t0" | bc) s, cold $cold%"
    sleep 2
done
[ -n "$bp" ] && kill "$bp"
$CLI shutdown nosave > /dev/null 2>&1 || true
