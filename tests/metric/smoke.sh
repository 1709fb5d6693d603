#!/usr/bin/env bash
# tests/metric/smoke.sh -- smoke test of the Java load harness (metric/).
#
# Starts a stock Redis and a redis-rock (small maxmemory, so most values are
# cold) on free ports in 31150-31199, runs a tiny mode1 and a tiny mode2
# against each, checks the SUMMARY lines, then corrupts some keys and checks
# that validation catches them (errors>0, exit status 1). Servers are always
# stopped. Last line: "metric: N passed, N failed". About a minute.
#
# Environment: REDIS_BIN_DIR (redis-server and redis-cli of redis-rock,
# default bin/), STOCK_BIN_DIR (stock ones, default bin/stock/).
set -euo pipefail

TOP=$(cd "$(dirname "$0")/../.." && pwd)
REDIS_BIN_DIR=${REDIS_BIN_DIR:-$TOP/bin}
STOCK_BIN_DIR=${STOCK_BIN_DIR:-$TOP/bin/stock}
JAR=$TOP/metric/target/redis-rock-metric.jar
CLI=$REDIS_BIN_DIR/redis-cli

for b in "$REDIS_BIN_DIR/redis-server" "$CLI" "$STOCK_BIN_DIR/redis-server"; do
    [ -x "$b" ] || { echo "smoke: missing $b (make && make stock, or set REDIS_BIN_DIR/STOCK_BIN_DIR)" >&2; exit 2; }
done
[ -f "$JAR" ] || make -s -C "$TOP" metric

WORK=$(mktemp -d /tmp/metric-smoke.XXXXXX)
PORTS=()
passed=0
failed=0

cleanup() {
    local p
    for p in "${PORTS[@]}"; do "$CLI" -p "$p" shutdown nosave >/dev/null 2>&1 || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT

check() {   # check NAME COMMAND...: one test
    local name=$1; shift
    if "$@"; then
        passed=$((passed + 1)); echo "ok   $name"
    else
        failed=$((failed + 1)); echo "FAIL $name"
    fi
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

free_port() {
    local p
    for p in $(seq 31150 31199); do
        if port_free "$p" && [[ " ${PORTS[*]} " != *" $p "* ]]; then echo "$p"; return 0; fi
    done
    echo "smoke: no free port in 31150-31199" >&2
    return 1
}

start_server() {   # start_server NAME BIN_DIR PORT [extra args...]
    local name=$1 bindir=$2 port=$3; shift 3
    mkdir -p "$WORK/$name"
    PORTS+=("$port")
    "$bindir/redis-server" --port "$port" --bind 127.0.0.1 --dir "$WORK/$name" --save '' --appendonly no \
        --daemonize yes --logfile "$WORK/$name/server.log" "$@" >/dev/null
    local i
    for i in $(seq 1 100); do
        "$CLI" -p "$port" ping 2>/dev/null | grep -q PONG && return 0
        sleep 0.1
    done
    echo "smoke: $name did not start on port $port" >&2
    tail -5 "$WORK/$name/server.log" >&2 || true
    return 1
}

RC=0
run() {   # run NAME ARGS...: the harness's stdout in $WORK/NAME.out, exit status in RC
    local name=$1; shift
    echo "---- $name: java -jar metric/target/redis-rock-metric.jar $*"
    RC=0
    java -jar "$JAR" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || RC=$?
    tail -3 "$WORK/$name.out"
    [ -s "$WORK/$name.err" ] && sed 's/^/stderr: /' "$WORK/$name.err" | head -5
    return 0
}

field() {   # field NAME KEY: a key=value from the SUMMARY line
    grep '^SUMMARY ' "$WORK/$1.out" | tail -1 | tr ' ' '\n' | sed -n "s/^$2=//p"
}

summary_clean() {   # the last line is the SUMMARY, errors=0, exit status 0
    local name=$1 rc=$2
    tail -1 "$WORK/$name.out" | grep -q "^SUMMARY mode=" && [ "$(field "$name" errors)" = 0 ] && [ "$rc" = 0 ]
}

cold_above() { awk -v c="$1" -v m="$2" 'BEGIN { exit !(c != "" && c != "NA" && c + 0 > m) }'; }

STOCK_PORT=$(free_port)
start_server stock "$STOCK_BIN_DIR" "$STOCK_PORT"
ROCK_PORT=$(free_port)
start_server rock "$REDIS_BIN_DIR" "$ROCK_PORT" --rock-enabled yes --maxmemory 8mb --maxmemory-policy noeviction

M1=(--requests 20000 --progress 2 mode1 2 20)
M2=(--duration 6 --step 2 --progress 2 mode2 0.02 1 1)

run stock-mode1 --csv "$WORK/stock-mode1.csv" "${M1[@]}" "$STOCK_PORT"
rc=$RC
check "stock mode1: SUMMARY last, errors=0, exit 0" summary_clean stock-mode1 "$rc"
check "stock mode1: cold_percent=NA" test "$(field stock-mode1 cold_percent)" = NA
check "stock mode1: CSV header and rows" bash -c "head -1 '$WORK/stock-mode1.csv' | grep -qx 'elapsed_s,threads,rps,p50_us,p95_us,p99_us,p999_us,errors,nils,cold_percent,unix_ms' && [ \$(wc -l <'$WORK/stock-mode1.csv') -ge 2 ]"

run rock-mode1 "${M1[@]}" "$ROCK_PORT"
rc=$RC
check "rock mode1: SUMMARY last, errors=0, exit 0" summary_clean rock-mode1 "$rc"
check "rock mode1: cold_percent > 50 ($(field rock-mode1 cold_percent))" cold_above "$(field rock-mode1 cold_percent)" 50

# Validation must fail: overwrite 40 of the 20,000 keys with a wrong value and
# delete 10 more (nil), then read again without reloading.
for i in $(seq 0 49); do
    key=$("$CLI" -p "$ROCK_PORT" --scan --pattern "k:$i:*" | head -1)
    if [ "$i" -lt 40 ]; then "$CLI" -p "$ROCK_PORT" set "$key" wrong >/dev/null
    else "$CLI" -p "$ROCK_PORT" del "$key" >/dev/null; fi
done
run rock-wrong --no-load --requests 20000 mode1 2 20 "$ROCK_PORT"
rc=$RC
check "wrong values: errors>0 and exit 1 (errors=$(field rock-wrong errors), exit $rc)" \
    bash -c "[ '$rc' = 1 ] && [ '$(field rock-wrong errors)' -gt 0 ] 2>/dev/null"
check "wrong values: mismatch and nil both reported" \
    bash -c "grep -q 'value mismatch: key=k:.* got_len=5\$' '$WORK/rock-wrong.out' && grep -q 'got_len=nil' '$WORK/rock-wrong.out'"

run stock-mode2 "${M2[@]}" "$STOCK_PORT"
rc=$RC
check "stock mode2: SUMMARY last, errors=0, exit 0" summary_clean stock-mode2 "$rc"

run rock-mode2 --csv "$WORK/rock-mode2.csv" "${M2[@]}" "$ROCK_PORT"
rc=$RC
check "rock mode2: SUMMARY last, errors=0, exit 0" summary_clean rock-mode2 "$rc"
check "rock mode2: CSV has nils, cold_percent and unix_ms columns filled" \
    bash -c "tail -1 '$WORK/rock-mode2.csv' | grep -Eq ',[0-9]+,[0-9.]+,1[0-9]{12}\$'"

# Usage and connection errors: exit status 2, no stack trace.
run usage mode1 2
check "usage error: exit 2" test "$RC" = 2
DEAD=$(free_port)
run refused mode1 1 1 "$DEAD"
check "refused connection: exit 2, clear message, no stack trace" \
    bash -c "[ '$RC' = 2 ] && grep -q 'cannot reach redis' '$WORK/refused.err' && ! grep -q '^[[:space:]]*at ' '$WORK/refused.err'"

echo "metric: $passed passed, $failed failed"
[ "$failed" = 0 ]
