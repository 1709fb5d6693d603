#!/usr/bin/env bash
# bench/plots.sh -- gnuplot PNGs from bench 2's results (make bench-plots):
#   2-mode1-throughput.png  GET rps against the ACTUAL cold share, one line
#                           per thread count; stock (all in RAM) as dashed lines
#   2-mode1-latency.png     p50 / p95 / p99 / p99.9 per row of bench 2 (log scale)
# Reads $RESULTS_DIR/2-mode1.csv (default build/bench/results).
# Needs gnuplot: deps/install-deps.sh bench (gnuplot-nox).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

csv=$RESULTS_DIR/2-mode1.csv
[ -f "$csv" ] || die "no $csv: run bench 2 first (make bench-2)"
command -v gnuplot >/dev/null || die "gnuplot is not installed: deps/install-deps.sh bench (as root)"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# columns: server,target_cold,maxmemory_mb,threads,rps,ratio_rps,p50_us,p95_us,p99_us,p999_us,errors,cold_percent,read_p99_us
threads=$(awk -F, 'NR>1{print $4}' "$csv" | sort -un | tr '\n' ' ')
plot=() ; i=1
for t in $threads; do
    awk -F, -v t="$t" 'NR>1 && $1=="rock" && $4==t && $12!="NA" {print $12, $5}' "$csv" | sort -n > "$tmp/rock-$t.dat"
    s=$(awk -F, -v t="$t" 'NR>1 && $1=="stock" && $4==t {print $5; exit}' "$csv")
    plot+=("'$tmp/rock-$t.dat' using 1:2 with linespoints lw 2 pt 7 lc $i title 'redis-rock, $t threads'")
    [ -n "$s" ] && plot+=("$s with lines dt 2 lw 2 lc $i title 'stock 7.0.15 all in RAM, $t threads'")
    i=$((i + 1))
done
gnuplot <<EOF
set terminal pngcairo size 900,560 font ",10"
set output "$RESULTS_DIR/2-mode1-throughput.png"
set title "mode1: uniform random GETs, rock-direct-io yes"
set xlabel "values on disk (actual cold share, %)"
set ylabel "GET requests/s"
set xrange [0:100]
set yrange [0:*]
set grid
set key outside bottom center horizontal
plot $(IFS=,; echo "${plot[*]}")
EOF

awk -F, 'NR>1 { lbl = ($1=="stock") ? "stock" : sprintf("rock %s%%", ($12=="NA" ? $2 : sprintf("%.0f", $12)));
                printf "\"%s, %st\" %s %s %s %s\n", lbl, $4, $7, $8, $9, $10 }' "$csv" > "$tmp/lat.dat"
gnuplot <<EOF
set terminal pngcairo size 1000,560 font ",10"
set output "$RESULTS_DIR/2-mode1-latency.png"
set title "mode1: GET latency percentiles per run (cold share: actual)"
set ylabel "latency (µs, log scale)"
set logscale y
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics rotate by -35
set grid ytics
set key top left
plot "$tmp/lat.dat" using 2:xtic(1) title "p50", '' using 3 title "p95", '' using 4 title "p99", '' using 5 title "p99.9"
EOF
log "plots: $RESULTS_DIR/2-mode1-throughput.png $RESULTS_DIR/2-mode1-latency.png"
