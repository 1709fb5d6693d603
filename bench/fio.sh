#!/usr/bin/env bash
# bench/fio.sh -- what the disk under rock-dir can do: fio 4k random reads,
# O_DIRECT (--direct=1), queue depth 1 and 32 (libaio), on a test file in
# FIO_DIR (default $BENCH_DIR, i.e. build/bench: where the benches put
# rock-dir). Reports IOPS, MB/s and completion latency p50/p99/p99.9.
#
#   FIO_SIZE=4g  FIO_RUNTIME=30  FIO_DIR=...   (QUICK=1: 64m, 2 s)
# Needs fio: deps/install-deps.sh bench (as root).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if [ "$QUICK" = 1 ]; then size=${FIO_SIZE:-64m}; runtime=${FIO_RUNTIME:-2}
else size=${FIO_SIZE:-4g}; runtime=${FIO_RUNTIME:-30}; fi
fio_dir=${FIO_DIR:-$BENCH_DIR}

BENCH_NO_SERVERS=1     # no redis binaries needed
command -v fio >/dev/null || die "fio is not installed: run deps/install-deps.sh bench (as root)"
bench_init fio "4k random reads, O_DIRECT, QD1 and QD32 (the disk under rock-dir)"
mkdir -p "$fio_dir"
file=$fio_dir/fio-testfile
trap 'rm -f "$file" "$BENCH_DIR"/fio-*.json; bench_cleanup' EXIT

csv_header server job iodepth ioengine iops mb_s lat_p50_us lat_p99_us lat_p999_us errors

# Lay the file out once (fio writes it on first use); not timed.
log "fio: laying out a $size test file in $fio_dir"
fio --name=layout --filename="$file" --size="$size" --rw=write --bs=1m --direct=1 \
    --ioengine=psync --output=/dev/null >/dev/null

for qd in 1 32; do
    json=$BENCH_DIR/fio-qd$qd.json
    log "fio: randread 4k QD$qd, ${runtime}s"
    fio --name=randread-qd$qd --filename="$file" --size="$size" --rw=randread --bs=4k \
        --direct=1 --ioengine=libaio --iodepth=$qd --runtime="$runtime" --time_based \
        --randrepeat=0 --norandommap --group_reporting --output-format=json --output="$json" >/dev/null
    read -r iops bw p50 p99 p999 err < <(python3 - "$json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
r = j["read"]
pct = r["clat_ns"].get("percentile", {})
def us(k):
    v = pct.get(k)
    return "NA" if v is None else "%.0f" % (v / 1000.0)
print("%.0f %.1f %s %s %s %d" % (r["iops"], r["bw_bytes"] / 1e6, us("50.000000"), us("99.000000"), us("99.900000"), j["error"]))
EOF
)
    csv_row disk randread-4k "$qd" libaio "$iops" "$bw" "$p50" "$p99" "$p999" "$err"
done

md_write "fio $(fio --version) on a $size file in \`$fio_dir\`, \`--rw=randread --bs=4k --direct=1 --ioengine=libaio --runtime=$runtime --time_based\`, \`--iodepth\` 1 and 32, one job. Latency is fio's completion latency (clat). This is the ceiling for redis-rock's cold reads with \`rock-direct-io yes\` (each cold GET is at least one such read, more when index or filter blocks miss RocksDB's block cache)."
