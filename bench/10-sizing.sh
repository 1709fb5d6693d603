#!/usr/bin/env bash
# bench/10-sizing.sh -- how close ROCK SIZING's predictions come to the
# share of value accesses served from RAM, measured at each size.
# redis-rock alone (stock has no tier to size): for allkeys-lru and
# allkeys-lfu and three workload shapes (Zipf s=0.99 over all keys, uniform
# over half of them, Zipf with a working set that moves halfway), a fresh
# server per pair, the dataset written with every value in RAM, then
# maxmemory at 4, 2, 1, 0.5 and 0.25 x a base size, largest first; at each a
# warm-up, CONFIG RESETSTAT and a measured run read value_hits_ram and
# value_hits_disk; at 1 x base ROCK SIZING is asked for all five sizes. One
# row per size: predicted, measured, their difference in percentage points.
# The method in bench/sizing.py's docstring and docs/performance.md.
#
#   B10_KEYS=1000000 B10_VALUE=2000-6000 B10_WARMUP=1000000 B10_REQUESTS=400000
#   B10_POLICIES=allkeys-lru,allkeys-lfu B10_WORKLOADS=zipf,uniform,shift
#   B10_VALUE: MIN-MAX, or mix, or several, comma-separated (one server each)
#   B10_FACTORS=4,2,1,0.5,0.25 B10_BASE_SHARE=0 (F: base = F x used_memory
#   with every value in RAM) B10_SEED=29
#   The small-value matrix: B10_KEYS=200000 B10_VALUE=100-100,500-500,2000-2000,8000-8000,mix
#   B10_BASE_SHARE=0.25 B10_WARMUP=150000 B10_REQUESTS=200000 B10_WORKLOADS=zipf
#   B10_ROCK_ARGS=""    extra redis-server arguments (--name value ...)
#   QUICK=1: 20,000 keys, 20,000 warm-up and 30,000 measured GETs, LRU only, zipf and uniform
set -euo pipefail
. "$(dirname "$0")/lib.sh"

keys=${B10_KEYS:-$([ "$QUICK" = 1 ] && echo 20000 || echo 1000000)}
warmup=${B10_WARMUP:-$([ "$QUICK" = 1 ] && echo 20000 || echo 1000000)}
requests=${B10_REQUESTS:-$([ "$QUICK" = 1 ] && echo 30000 || echo 400000)}
policies=${B10_POLICIES:-$([ "$QUICK" = 1 ] && echo allkeys-lru || echo allkeys-lru,allkeys-lfu)}
workloads=${B10_WORKLOADS:-$([ "$QUICK" = 1 ] && echo zipf,uniform || echo zipf,uniform,shift)}
extra=${B10_ROCK_ARGS:-}
# A small dataset needs a bigger share of its keys sampled to be measured.
[ "$QUICK" = 1 ] && extra="--rock-sizing-sample-every 1 $extra" || true
port=${PORT_BASE:-31296}
vrange=${B10_VALUE:-$([ "$QUICK" = 1 ] && echo 500-1500 || echo 2000-6000)}
factors=${B10_FACTORS:-4,2,1,0.5,0.25}
base_share=${B10_BASE_SHARE:-0}
seed=${B10_SEED:-29}

bench_init 10-sizing "ROCK SIZING: predicted against measured share of value accesses from RAM"
python3 "$BENCH_TOP/bench/sizing.py" --bin "$REDIS_BIN_DIR/redis-server" --port "$port" \
    --out "$RESULTS_DIR" --dir "$BENCH_DIR/10-sizing" --keys "$keys" --value "$vrange" \
    --warmup "$warmup" --requests "$requests" --policies "$policies" --workloads "$workloads" \
    --factors "$factors" --base-share "$base_share" --seed "$seed" --extra="$extra"
md_write "Keys key:%012d with values of $vrange random bytes (mix: 100, 500, 2000 or 8000); $keys keys; base $([ "$base_share" = 0 ] && echo "max(fixed + 0.3 x values, 4.4 x fixed)" || echo "$base_share x used_memory with every value in RAM"); under volatile-* every other key has a TTL; warm-up $warmup GETs (a tenth at 4 x base), measured $requests GETs per size (pipelined 100 deep, one connection). predicted: ROCK SIZING at 1 x base after its measured run; measured: value_hits_ram / (value_hits_ram + value_hits_disk) over the measured run at that size. diff_pp: predicted - measured in percentage points (the goal: |diff_pp| <= 5 where in_range: above the floor, below the whole dataset, no key deleted)."
