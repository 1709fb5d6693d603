#!/usr/bin/env bash
# bench/9-bigcoll.sh -- big hashes on disk: HGET and
# HSET of random fields of random hashes, most of them cold, against stock;
# per command what RocksDB read and wrote (records and bytes) and CPU per
# 1000 commands by thread group (as bench 7).
#
# Data: B9_HASHES hashes hash:%04d of B9_FIELDS fields field:%06d, values of
# B9_VALUE letters and digits (barely compressible), loaded with redis-cli
# --pipe as HSETs of B9_BATCH fields (bench/bigcoll.py load; hash tables, so
# redis-rock stores each hash element by element once it has
# rock-split-min-elements fields). Stock 7.0.15 holds everything in RAM (no
# maxmemory; one server for both client counts). redis-rock: a fresh server
# per client count, with maxmemory B9_MAXMEMORY, maxmemory-policy
# B9_POLICY and rock-direct-io yes from the start; after the load every hash
# is pushed to disk (ROCK EVICT of every key; writer and compactions idle),
# so the run starts with all of them cold.
#
# Each row: bench/bigcoll.py run: CLIENTS connections, one command in flight
# each, for B9_SECONDS; every command names a random hash and a random field
# (uniform): HSET of a new value with probability B9_WRITE_PCT %, else HGET;
# every reply checked (an HGET answers the value, an HSET ":0"). ops/s, p50
# and p99 latency per command. For redis-rock the second snapshot of CPU and
# INFO rock is taken once the writer and RocksDB's compactions are idle again
# after the run (so the write-backs and compactions the run caused count).
#
#   B9_HASHES=50 B9_FIELDS=10000 B9_VALUE=100 B9_BATCH=500
#   B9_SECONDS=20 B9_CLIENTS="1 50" B9_WRITE_PCT=10
#   B9_MAXMEMORY=16mb B9_POLICY=allkeys-lru
#   B9_ROCK_ARGS=""    extra redis-server arguments for redis-rock
#   B9_TYPE=hash       hash (HGET/HSET), set (SISMEMBER/SADD) or zset
#                      (ZSCORE/ZADD): bench/bigcoll.py --type
#   QUICK=1: 20 hashes of 2,000 fields, 2 s per row
set -euo pipefail
. "$(dirname "$0")/lib.sh"

hashes=${B9_HASHES:-$([ "$QUICK" = 1 ] && echo 20 || echo 50)}
fields=${B9_FIELDS:-$([ "$QUICK" = 1 ] && echo 2000 || echo 10000)}
vsize=${B9_VALUE:-100}
batch=${B9_BATCH:-500}
seconds=${B9_SECONDS:-$([ "$QUICK" = 1 ] && echo 2 || echo 20)}
clients_list=${B9_CLIENTS:-1 50}
write_pct=${B9_WRITE_PCT:-10}
maxmem=${B9_MAXMEMORY:-16mb}
policy=${B9_POLICY:-allkeys-lru}
read -r -a rock_args <<< "${B9_ROCK_ARGS:-}"
ctype=${B9_TYPE:-hash}
case $ctype in hash|set|zset) ;; *) echo "B9_TYPE must be hash, set or zset" >&2; exit 2 ;; esac
port=${PORT_BASE:-31290}
driver=$BENCH_TOP/bench/bigcoll.py

if [ "$ctype" = hash ]; then
    bench_init 9-bigcoll "big hashes on disk: random HGET/HSET, RocksDB records and bytes per command, CPU by thread group"
else
    bench_init "9-bigcoll-$ctype" "big ${ctype}s on disk: random $([ "$ctype" = set ] && echo SISMEMBER/SADD || echo ZSCORE/ZADD), RocksDB records and bytes per command, CPU by thread group"
fi
files=$BENCH_DIR/9-files
trap 'rm -rf "$files"; bench_cleanup' EXIT
rm -rf "$files" && mkdir -p "$files"
python3 "$driver" load "$hashes" "$fields" "$vsize" --batch "$batch" --seed 9 --type "$ctype" > "$files/load"
load_replies=$(( hashes * ((fields + batch - 1) / batch) ))
all_keys=(); for ((i = 0; i < hashes; i++)); do all_keys+=("$(printf '%s:%04d' "$ctype" "$i")"); done

csv_header server clients hashes fields value_bytes maxmemory cold_start cold_end seconds ops ops_s ratio_ops_s p50_ms p99_ms errors hset_share reads_per_op read_bytes_per_op point_reads_per_op hash_loads hash_writes write_records_per_op write_bytes_per_op write_records_per_hset evicted_keys used_mb eventloop_s_kop readers_s_kop writer_s_kop rocksdb_s_kop other_s_kop total_s_kop

load() {
    local secs err reps
    read -r secs err reps < <(pipe_run "$port" < "$files/load")
    [ "$err" = 0 ] && [ "$reps" = "$load_replies" ] || die "load: errors=$err replies=$reps (expected $load_replies)"
    log "loaded $hashes hashes of $fields fields in ${secs}s"
}

# push_out: every hash to disk (ROCK EVICT), then wait for the writer and
# compactions and for every key to be cold
push_out() {
    local i moved
    moved=$(cli "$port" rock evict "${all_keys[@]}")
    rock_wait_idle "$port" 300
    for i in $(seq 120); do
        [ "$(rock_fig "$port" cold_keys)" -ge "$hashes" ] && break
        cli "$port" ping >/dev/null; sleep 0.5
    done
    log "pushed out: ROCK EVICT moved $moved, cold_percent=$(rock_fig "$port" cold_percent), used_memory=$(info_fig "$port" memory used_memory), evicted_keys=$(info_fig "$port" stats evicted_keys) (deleted by the policy during the load)"
}

# rock figures read before and after each run (deltas per command)
figs="reads read_bytes writes write_bytes element_writes point_reads split_loads"
declare -A stock_ops
# measure KIND CLIENTS: the timed run, one CSV row
measure() {
    local kind=$1 clients=$2 pid before after out f cold0 ek0
    local -A r0 r1
    pid=$(info_fig "$port" server process_id)
    cli "$port" config resetstat >/dev/null
    for f in $figs; do r0[$f]=$(rock_fig "$port" "$f"); done
    ek0=$(info_fig "$port" stats evicted_keys)
    cold0=$(rock_fig "$port" cold_percent)
    before=$files/before after=$files/after
    thread_snapshot "$pid" > "$before"
    out=$(python3 "$driver" run "$port" "$hashes" "$fields" "$vsize" "$seconds" "$clients" \
        --write-pct "$write_pct" --seed "$clients" --type "$ctype" 2> "$files/driver.err") || log "bigcoll.py exited with status $?"
    [ -s "$files/driver.err" ] && sed 's/^/  /' "$files/driver.err" >&2
    [ "$kind" = rock ] && rock_wait_idle "$port" 300
    thread_snapshot "$pid" > "$after"
    for f in $figs; do r1[$f]=$(rock_fig "$port" "$f"); done

    local ops ops_s p50 p99 hset err
    ops=$(summary_get "$out" ops); ops_s=$(summary_get "$out" ops_per_sec)
    p50=$(summary_get "$out" p50_ms); p99=$(summary_get "$out" p99_ms)
    hset=$(summary_get "$out" hset); err=$(summary_get "$out" errors)
    [ "$ops" = NA ] || [ "$ops" -gt 0 ] || ops=NA
    local rerr; rerr=$(rock_fig "$port" errors); [ "$rerr" = NA ] || [ "$rerr" = 0 ] || err="$err+rock_errors=$rerr"

    # d NAME: the figure's change over the run
    # (a figure the server does not report is 0)
    d() { local a=${r1[$1]} b=${r0[$1]}; [ "$a" = NA ] && a=0; [ "$b" = NA ] && b=0; echo $((a - b)); }
    # per NUMBER DIVISOR FORMAT: NA when either is NA or the divisor is 0
    per() { if [ "$1" = NA ] || [ "$2" = NA ] || [ "$2" = 0 ]; then echo NA; else calc "$1 / $2" "$3"; fi; }
    local reads=NA rbytes=NA points=NA loads=NA hwrites=NA wrec=NA wbytes=NA wrec_hset=NA
    if [ "$kind" = rock ] && [ "$ops" != NA ]; then
        reads=$(per "$(d reads)" "$ops" %.3f)
        rbytes=$(per "$(d read_bytes)" "$ops" %.0f)
        points=$(per "$(d point_reads)" "$ops" %.3f)
        loads=$(d split_loads)
        hwrites=$(d writes)
        wrec=$(per "$(( $(d writes) + $(d element_writes) ))" "$ops" %.3f)
        wbytes=$(per "$(d write_bytes)" "$ops" %.0f)
        wrec_hset=$(per "$(( $(d writes) + $(d element_writes) ))" "$hset" %.2f)
    fi
    local g cpu=() total=0 v kops=NA
    [ "$ops" = NA ] || kops=$((ops * 1000))
    for g in eventloop readers writer rocksdb other; do
        v=$(group_delta "$before" "$after" "$g")
        total=$((total + v))
        cpu+=("$(per "$v" "$kops" %.4f)")   # µs / (ops x 1000) = CPU s per 1000 ops
    done
    [ "$kind" = stock ] && stock_ops[$clients]=$ops_s
    # a row with errors failed: its ops/s (nil replies of deleted keys are
    # fast) is no speed to compare
    local rat=NA
    [ "$err" = 0 ] && rat=$(ratio "$ops_s" "${stock_ops[$clients]:-NA}")
    csv_row "$kind" "$clients" "$hashes" "$fields" "$vsize" "$([ "$kind" = rock ] && echo "$maxmem" || echo none)" \
        "$cold0" "$(rock_fig "$port" cold_percent)" "$seconds" "$ops" "$ops_s" \
        "$rat" "$p50" "$p99" "$err" "$(per "$hset" "$ops" %.3f)" \
        "$reads" "$rbytes" "$points" "$loads" "$hwrites" "$wrec" "$wbytes" "$wrec_hset" \
        "$(( $(info_fig "$port" stats evicted_keys) - ek0 ))" \
        "$(calc "$(info_fig "$port" memory used_memory) / 1048576" %.1f)" \
        "${cpu[@]}" "$(per "$total" "$kops" %.4f)"
}

server_start 9-stock stock "$port"
load
for c in $clients_list; do
    measure stock "$c"
done
server_stop "$port"

for c in $clients_list; do
    server_start "9-rock-$c" rock "$port" --maxmemory "$maxmem" --maxmemory-policy "$policy" \
        --rock-direct-io yes "${rock_args[@]}"
    load
    push_out
    measure rock "$c"
    server_stop "$port"
done
rm -rf "$files"

# A row whose keys the policy deleted measured nil replies: say so under the table.
notes=$(awk -F, 'NR==1 { for (i=1;i<=NF;i++) col[$i]=i; next }
    $col["evicted_keys"]+0 > 0 { printf "%s**%s, %s clients: maxmemory-policy deleted %s keys during the run**; every HGET of a field of a deleted hash answered nil (counted in errors), so this row does not measure big hashes on disk.", (n++ ? " " : ""), $col["server"], $col["clients"], $col["evicted_keys"] }' "$CSV")

type_note=""
[ "$ctype" = hash ] || type_note="**This run: B9_TYPE=$ctype** (\`bench/bigcoll.py --type $ctype\`): the \"hashes\" are $([ "$ctype" = set ] && echo "sets set:%04d of members field:%06d, read with SISMEMBER (must answer 1) and written with SADD of a member new:%06d of a second range of 1,024 (0 or 1)" || echo "sorted sets zset:%04d of members field:%06d scored j, read with ZSCORE (any score) and written with ZADD of a new score for an existing member (:0)"); value_bytes is unused; hset/hget columns count writes/reads. "
md_write "${type_note}Data: $hashes hashes \`hash:%04d\` of $fields fields \`field:%06d\`, values of $vsize random letters and digits, loaded with \`redis-cli --pipe\` as HSETs of $batch fields (\`bench/bigcoll.py load\`; hash tables, stored element by element on disk by redis-rock). Each row: \`bench/bigcoll.py run\` for ${seconds} s with <clients> connections, one command in flight on each (Python, raw RESP, epoll; the same client for both servers): every command names a uniformly random hash and field, HSET of a new $vsize-byte value with probability $write_pct %, else HGET; every reply checked (an HGET must answer the value, an HSET \`:0\`: anything else is an error); ops_s = replies / seconds, p50/p99 per command from send to whole reply. Stock 7.0.15: no maxmemory, everything in RAM, one server for both rows. redis-rock: a fresh server per row, \`maxmemory $maxmem\`, \`maxmemory-policy $policy\`, \`rock-direct-io yes\`${B9_ROCK_ARGS:+, \`$B9_ROCK_ARGS\`} from the start; after the load every hash pushed to disk (\`ROCK EVICT\` of every key, writer and compactions idle): cold_start is \`cold_percent\` when the run starts, cold_end after it. Per command (op = HGET or HSET), from \`INFO rock\` before the run and after it (the second reading once the writer and compactions are idle again, so the write-backs the run caused count): reads_per_op = RocksDB records read (\`reads\`: a point read counts the hash's metadata record and the field's; a whole hash paged in counts its metadata and every element), read_bytes_per_op (\`read_bytes\`), point_reads_per_op (commands answered from the named field alone: \`point_reads\`), hash_loads (whole hashes paged in: \`split_loads\`), hash_writes (whole values written: \`writes\`), write_records_per_op and write_records_per_hset (\`writes\` + \`element_writes\`: metadata and element records), write_bytes_per_op (\`write_bytes\`: the serialized values handed to RocksDB). evicted_keys: keys the policy deleted during the run (\`INFO stats\`). used_mb: used_memory after the run. CPU: utime + stime of every server thread from \`/proc/PID/task/*/stat\` before and after the run, grouped by thread name (eventloop = the main thread; readers = \`rock_reader*\`; writer = \`rock_writer\`; rocksdb = \`rocksdb:*\` flush and compaction threads; other = bio and the rest), in CPU seconds per 1000 commands ($hz ticks a second). ratio_ops_s: rock ops_s / stock ops_s at the same client count (NA on a row with errors: a failed run). The client shares the two cores with the server." "$notes"
