# bench/lib.sh -- shared helpers for the bench/ scripts (sourced, not run).
#
# Environment (all optional):
#   REDIS_BIN_DIR   redis-rock binaries        (default: <checkout>/bin)
#   STOCK_BIN_DIR   stock 7.0.15 binaries      (default: <checkout>/bin/stock)
#   BENCH_DIR       work folder: server dirs, rock-dirs, fio file, results
#                   (default: <checkout>/build/bench; results in $BENCH_DIR/results)
#   QUICK=1 / SMOKE=1  tiny sizes, a few seconds per script
#   METRIC_JAR      the Java harness (default: <checkout>/metric/target/redis-rock-metric.jar)
#   JAVA            java binary (default: java)
#
# Ports: every script uses 31200..31299 only (PORT_BASE of each script).

BENCH_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REDIS_BIN_DIR=${REDIS_BIN_DIR:-$BENCH_TOP/bin}
STOCK_BIN_DIR=${STOCK_BIN_DIR:-$BENCH_TOP/bin/stock}
BENCH_DIR=${BENCH_DIR:-$BENCH_TOP/build/bench}
RESULTS_DIR=${RESULTS_DIR:-$BENCH_DIR/results}
METRIC_JAR=${METRIC_JAR:-$BENCH_TOP/metric/target/redis-rock-metric.jar}
JAVA=${JAVA:-java}
# One client binary for every server, so that only the server differs.
BENCH_CLI=${BENCH_CLI:-$STOCK_BIN_DIR/redis-cli}
BENCH_BENCHMARK=${BENCH_BENCHMARK:-$STOCK_BIN_DIR/redis-benchmark}
QUICK=${QUICK:-${SMOKE:-0}}
[ "$QUICK" = 0 ] || QUICK=1

BENCH_PORTS=()      # ports of the servers this script started (stopped by the trap)
declare -A BENCH_SERVER_DIR   # port -> server dir (its rock-dir is removed at stop, server.log kept)

die() { echo "bench: FAIL: $*" >&2; exit 1; }
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

# bench_init NAME "Title": sets BENCH_NAME, CSV, MD; checks binaries; installs
# the trap that stops every server this script started.
bench_init() {
    BENCH_NAME=$1; BENCH_TITLE=$2
    mkdir -p "$BENCH_DIR" "$RESULTS_DIR"
    CSV=$RESULTS_DIR/$BENCH_NAME.csv
    MD=$RESULTS_DIR/$BENCH_NAME.md
    rm -f "$CSV" "$MD"
    [ "${BENCH_NO_SERVERS:-0}" = 1 ] || for b in "$REDIS_BIN_DIR/redis-server" "$STOCK_BIN_DIR/redis-server" "$BENCH_CLI"; do
        [ -x "$b" ] || die "missing $b (make build stock, or set REDIS_BIN_DIR / STOCK_BIN_DIR)"
    done
    trap bench_cleanup EXIT
    trap 'exit 130' INT TERM
    BENCH_T0=$(date +%s)
    log "$BENCH_NAME: $BENCH_TITLE (QUICK=$QUICK, results in $RESULTS_DIR)"
}

bench_cleanup() {
    local p
    for p in "${BENCH_PORTS[@]}"; do server_stop "$p"; done
}

# Markdown lines with the machine facts (top of every report).
machine_facts() {
    local dir=${1:-$BENCH_DIR} src fs rota model commit dirty=""
    src=$(findmnt -no SOURCE -T "$dir" 2>/dev/null | head -1)
    fs=$(findmnt -no FSTYPE -T "$dir" 2>/dev/null | head -1)
    rota=$(lsblk -dno ROTA "$src" 2>/dev/null | head -1 | tr -d ' ')
    model=$(lsblk -dno MODEL "$src" 2>/dev/null | head -1 | sed 's/ *$//')
    commit=$(git -C "$BENCH_TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)
    [ -n "$(git -C "$BENCH_TOP" status --porcelain --untracked-files=no 2>/dev/null)" ] && dirty=" (with uncommitted changes)"
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "- machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), $(awk '/MemTotal/{printf "%.1f GiB", $2/1048576}' /proc/meminfo) RAM, $(. /etc/os-release; echo "$PRETTY_NAME"), kernel $(uname -r)"
    echo "- disk of $dir: $src ($fs${model:+, $model}${rota:+, rotational=$rota})"
    echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- git commit: $commit$dirty"
    [ "${BENCH_NO_SERVERS:-0}" = 1 ] || echo "- redis-rock: $("$REDIS_BIN_DIR/redis-server" --version | cut -d' ' -f3,6) ($REDIS_BIN_DIR); stock: $("$STOCK_BIN_DIR/redis-server" --version | cut -d' ' -f3,6) ($STOCK_BIN_DIR)"
    [ "$QUICK" = 1 ] && echo "- **QUICK/SMOKE mode: tiny sizes, figures meaningless**"
    return 0
}

# ---------------------------------------------------------------------------
# Servers

# server_start NAME KIND PORT [extra redis-server args...]
# KIND: stock | rock (rock adds --rock-enabled yes, then $ROCK_SERVER_ARGS,
# e.g. "--rock-defrag no" to compare a setting). Fresh dir $BENCH_DIR/NAME.
server_start() {
    local name=$1 kind=$2 port=$3; shift 3
    local dir=$BENCH_DIR/$name bin
    case "$kind" in
    stock) bin=$STOCK_BIN_DIR/redis-server; set -- "$@" ;;
    rock)  bin=$REDIS_BIN_DIR/redis-server; set -- --rock-enabled yes "$@" ${ROCK_SERVER_ARGS:-} ;;
    *) die "server_start: kind $kind" ;;
    esac
    [ "$port" -ge 31200 ] && [ "$port" -le 31299 ] || die "port $port outside 31200..31299"
    server_stop "$port"
    rm -rf "$dir" && mkdir -p "$dir"
    "$bin" --port "$port" --bind 127.0.0.1 --dir "$dir" --save '' --appendonly no \
        --daemonize yes --logfile "$dir/server.log" --pidfile "$dir/server.pid" "$@" \
        || { tail -20 "$dir/server.log" >&2; die "$name: $bin did not start"; }
    BENCH_PORTS+=("$port")
    BENCH_SERVER_DIR[$port]=$dir
    local i
    for i in $(seq 300); do
        [ "$(cli "$port" ping 2>/dev/null)" = PONG ] && { log "$name: $kind server up on port $port ($*)"; return 0; }
        sleep 0.1
    done
    tail -20 "$dir/server.log" >&2
    die "$name: no PING reply on port $port"
}

server_stop() {
    local port=$1 pid="" i
    pid=$(cli "$port" info server 2>/dev/null | tr -d '\r' | awk -F: '$1=="process_id"{print $2}' || true)
    if [ -n "$pid" ]; then
        cli "$port" shutdown nosave >/dev/null 2>&1 || true
        for i in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && kill "$pid" 2>/dev/null
    fi
    # free the disk (RocksDB files can be GBs); keep server.log
    local d=${BENCH_SERVER_DIR[$port]:-}
    [ -n "$d" ] && [ -d "$d" ] && rm -rf "$d"/rock-* 2>/dev/null
    return 0
}

cli() { local port=$1; shift; "$BENCH_CLI" -p "$port" "$@"; }

# info_fig PORT SECTION FIELD -> value from INFO (e.g. info_fig 31200 memory used_memory)
info_fig() { { cli "$1" info "$2" || true; } | tr -d '\r' | awk -F: -v f="$3" '$1==f{print $2}'; }
# rock_fig PORT NAME -> a ROCK REPORT figure (via INFO rock's rock_<name>), NA on stock
rock_fig() {
    local v
    v=$({ cli "$1" info rock || true; } | tr -d '\r' | awk -F: -v f="rock_$2" '$1==f{print $2}')
    echo "${v:-NA}"
}
# error replies since the last CONFIG RESETSTAT
error_replies() { info_fig "$1" stats total_error_replies; }

# Wait until the writer has committed everything and no compaction runs or is
# pending (at most $2 seconds, default 600).
rock_wait_idle() {
    local port=$1 limit=${2:-600} t0 pw rc pc
    t0=$(date +%s)
    while :; do
        pw=$(rock_fig "$port" pending_writes); rc=$(rock_fig "$port" rocksdb_running_compactions)
        pc=$(rock_fig "$port" rocksdb_pending_compaction_bytes)
        [ "$pw" = 0 ] && [ "$rc" = 0 ] && [ "$pc" = 0 ] && return 0
        [ $(( $(date +%s) - t0 )) -ge "$limit" ] && { log "rock not idle after ${limit}s (pending_writes=$pw compactions=$rc pending_compaction_bytes=$pc)"; return 0; }
        sleep 0.5
    done
}

# ---------------------------------------------------------------------------
# Numbers, CSV, Markdown

now() { date +%s.%N; }
# calc EXPR -> awk arithmetic, printed with %.2f unless a format is given
calc() { awk "BEGIN{printf \"${2:-%.2f}\", $1}"; }
# ratio A B -> A/B with 2 decimals, NA when either is missing or B is 0
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a=="" || a=="NA" || b=="" || b=="NA" || b+0==0) print "NA"; else printf "%.2f", a/b }'; }
bytes_human() { awk -v b="$1" 'BEGIN{ if (b>=1073741824) printf "%.2f GiB", b/1073741824; else printf "%.1f MiB", b/1048576 }'; }

# csv_header col1 col2 ... ; csv_row v1 v2 ... (values must not contain commas)
csv_header() { (IFS=,; echo "$*") > "$CSV"; }
csv_row() {
    (IFS=,; echo "$*") >> "$CSV"
    (IFS=' '; log "row: $*")
}

# md_table CSV -> Markdown table on stdout
md_table() {
    awk -F, 'NR==1{ h="|"; s="|"; for(i=1;i<=NF;i++){h=h" "$i" |"; s=s"---|"} print h; print s; next }
             { r="|"; for(i=1;i<=NF;i++) r=r" "$i" |"; print r }' "$1"
}

# md_write "method text" ["notes text"]: the whole report: title, machine
# facts, method, table, notes; then print the table to the terminal.
md_write() {
    local secs=$(( $(date +%s) - BENCH_T0 ))
    {
        echo "## $BENCH_NAME: $BENCH_TITLE"
        echo
        machine_facts
        echo "- wall time of this script: ${secs}s"
        echo
        echo "$1"
        echo
        md_table "$CSV"
        if [ -n "${2:-}" ]; then echo; echo "$2"; fi
        echo
    } > "$MD"
    echo
    md_table "$CSV"
    echo
    log "$BENCH_NAME: done in ${secs}s: $CSV, $MD"
}

# ---------------------------------------------------------------------------
# Clients

# run_benchmark PORT TEST ARGS... -> "rps p50_ms p99_ms" from redis-benchmark --csv
run_benchmark() {
    local port=$1 test=$2; shift 2
    "$BENCH_BENCHMARK" -p "$port" -t "$test" --csv "$@" 2>/dev/null \
        | tr -d '"' | awk -F, -v t="$(echo "$test" | tr a-z A-Z)" '$1==t{print $2, $5, $7; found=1} END{if(!found) print "NA NA NA"}'
}

# pipe_run PORT < RESP -> "seconds errors replies": redis-cli --pipe, wall time
pipe_run() {
    local port=$1 t0 t1 out
    t0=$(now)
    out=$("$BENCH_CLI" -p "$port" --pipe --pipe-timeout 0 2>&1) || true
    t1=$(now)
    echo "$out" | awk -v s="$(calc "$t1 - $t0" %.3f)" '/^errors:/{gsub(",","",$2); e=$2; r=$4} END{ if (e=="") {e="NA"; r="NA"} print s, e, r }'
}

metric_jar_ok() { [ -f "$METRIC_JAR" ] && command -v "$JAVA" >/dev/null; }

# metric_run ARGS... -> the SUMMARY line of the Java harness (stdout), its
# whole output in $BENCH_DIR/<name>-metric.log
metric_run() {
    local logf=$BENCH_DIR/$BENCH_NAME-metric.log line
    echo "== $(date +%T) java -jar $METRIC_JAR $*" >> "$logf"
    "$JAVA" -jar "$METRIC_JAR" "$@" > "$BENCH_DIR/.metric.out" 2>> "$logf" || log "metric exited with status $? ($*)"
    cat "$BENCH_DIR/.metric.out" >> "$logf"
    line=$(tail -n 1 "$BENCH_DIR/.metric.out")
    case "$line" in SUMMARY\ *) echo "$line" ;; *) echo "SUMMARY errors=NA" ;; esac
}
# summary_get "SUMMARY ..." KEY -> value or NA
summary_get() { echo "$1" | tr ' ' '\n' | awk -F= -v k="$2" '$1==k{print $2; f=1; exit} END{if(!f) print "NA"}'; }

# ---------------------------------------------------------------------------
# CPU and context switches by server thread group (benches 7 and 8)
#
# Thread groups (by the name each thread sets):
#   eventloop  redis-server's main thread
#   readers    rock_reader*        writer  rock_writer
#   rocksdb    rocksdb:* (flush, compaction)
#   other      bio_*, jemalloc, the fork stream...
hz=$(getconf CLK_TCK)

# thread_snapshot PID -> lines "group ticks ctxt_switches", one per thread
thread_snapshot() {
    local pid=$1 t comm ticks cs
    for t in /proc/"$pid"/task/*; do
        comm=$(cat "$t/comm" 2>/dev/null) || continue
        # utime and stime: fields 14 and 15, after the parenthesised name
        ticks=$(sed 's/^.*) //' "$t/stat" 2>/dev/null | awk '{print $12 + $13}') || continue
        cs=$(awk '/ctxt_switches/{s+=$2} END{print s+0}' "$t/status" 2>/dev/null) || continue
        case "$comm" in
        redis-server) comm=eventloop ;;
        rock_reader*) comm=readers ;;
        rock_writer) comm=writer ;;
        rocksdb:*) comm=rocksdb ;;
        *) comm=other ;;
        esac
        echo "$comm $ticks $cs"
    done
}

# group_delta BEFORE AFTER GROUP -> CPU microseconds of GROUP between the two
# snapshots (threads that ended between them are not counted)
group_delta() {
    awk -v g="$3" -v hz="$hz" 'FNR==NR { if ($1==g) b+=$2; next } $1==g { a+=$2 } END { printf "%.0f", (a-b) * 1000000 / hz }' "$1" "$2"
}
cs_delta() { awk 'FNR==NR { b+=$3; next } { a+=$3 } END { print a-b }' "$1" "$2"; }

# rock_cold_maxmemory PORT KEYS TARGET: with every value of a freshly loaded
# redis-rock in RAM, push them all to disk (maxmemory 1mb; writer and
# compactions idle), then print "used_hot used_cold maxmemory": the
# maxmemory that leaves TARGET percent of the values cold, used_cold + (1 -
# TARGET/100) x (used_hot - used_cold), at least used_cold + RocksDB's own
# memory (it counts against maxmemory) + 4 MB (with less, nothing could stay
# in RAM). Does not set it.
rock_cold_maxmemory() {
    local port=$1 keys=$2 target=$3 used_hot used_cold rocks_mem i
    used_hot=$(info_fig "$port" memory used_memory)
    cli "$port" config set maxmemory 1mb >/dev/null
    cli "$port" ping >/dev/null
    rock_wait_idle "$port" 900
    for i in $(seq 600); do
        [ "$(rock_fig "$port" cold_keys)" -ge "$keys" ] && break
        cli "$port" ping >/dev/null; sleep 0.5
    done
    used_cold=$(info_fig "$port" memory used_memory)
    rocks_mem=$(rock_fig "$port" rocksdb_memory)
    awk -v h="$used_hot" -v c="$used_cold" -v r="$rocks_mem" -v t="$target" 'BEGIN{ m = c + (1 - t/100) * (h - c); if (m < c + r + 4194304) m = c + r + 4194304; printf "%s %s %.0f\n", h, c, m }'
}
