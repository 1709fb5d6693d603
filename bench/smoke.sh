#!/usr/bin/env bash
# bench/smoke.sh -- every bench script in QUICK (smoke) mode: tiny sizes, a
# few seconds each. Checks that each wrote its CSV, with at least one stock
# row and one redis-rock row (fio: a QD1 and a QD32 row with IOPS > 0), and
# that every row's errors column is 0. No performance thresholds: pass or
# fail does not depend on how fast the machine is. Last line:
#   bench: N passed, N failed
# Results go to build/bench/smoke/results (SMOKE_DIR=... to move them), so a
# smoke run never overwrites the real results in build/bench/results.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
export QUICK=1
# always a folder of its own (it is wiped first): SMOKE_DIR, else <BENCH_DIR>/smoke
export BENCH_DIR=${SMOKE_DIR:-${BENCH_DIR:-$top/build/bench}/smoke}
export RESULTS_DIR=$BENCH_DIR/results
rm -rf "$BENCH_DIR"
pass=0 fail=0
t0=$(date +%s)

check_csv() {   # name
    local csv=$RESULTS_DIR/$1.csv
    [ -f "$csv" ] || { echo "no $csv"; return 1; }
    awk -F, -v name="$1" '
        NR==1 { for (i=1;i<=NF;i++) col[$i]=i; if (!col["server"] || !col["errors"]) { print "no server/errors column"; bad=1 } next }
        { rows++; s=$col["server"]
          if (s=="stock") st++; else if (s ~ /^rock/) rk++; else if (s=="disk") dk++
          if ($col["errors"] != "0") { print "row " NR-1 ": errors=" $col["errors"]; bad=1 }
          if (name=="fio") { if ($col["iops"]+0 <= 0) { print "row " NR-1 ": no IOPS"; bad=1 } qd[$col["iodepth"]]=1 }
          if (name=="10-sizing") { p=$col["predicted"]; m=$col["measured"]
            if (p !~ /^[0-9.]+$/ || m !~ /^[0-9.]+$/ || p+0 > 1 || m+0 > 1) { print "row " NR-1 ": predicted " p ", measured " m; bad=1 } } }
        END {
          if (name=="fio") { if (!qd[1] || !qd[32]) { print "missing QD1 or QD32 row"; bad=1 } }
          else if (name=="10-sizing") { if (!rk) { print "no rock row"; bad=1 } }
          else { if (!st) { print "no stock row"; bad=1 } if (!rk) { print "no rock row"; bad=1 } }
          if (!rows) { print "no rows"; bad=1 }
          exit bad }' "$csv"
}

for s in fio 1-benchmark 2-mode1 3-mode2 4-phases 5-bulk 6-compression 7-coldget 8-coldwrite 9-bigcoll 10-sizing 11-restart; do
    t1=$(date +%s)
    log=$BENCH_DIR/$s.smoke.log
    mkdir -p "$BENCH_DIR"
    if "$here/$s.sh" > "$log" 2>&1 && why=$(check_csv "$s"); then
        echo "ok   $s ($(( $(date +%s) - t1 ))s)"
        pass=$((pass + 1))
    else
        [ -n "${why:-}" ] || why=$(check_csv "$s" 2>&1)
        echo "FAIL $s ($(( $(date +%s) - t1 ))s): $(echo "$why" | head -3 | tr '\n' ' ')"
        tail -5 "$log" | sed 's/^/     | /'
        fail=$((fail + 1))
    fi
    why=""
done
echo "smoke: $(( $(date +%s) - t0 ))s, reports in $RESULTS_DIR"
echo "bench: $pass passed, $fail failed"
[ "$fail" = 0 ]
