#!/usr/bin/env bash
# bench/dirty-evict.sh -- what evicting a big split collection costs the event
# loop once it was paged in whole and changed by a few point writes.
#
# One hash of DE_FIELDS fields (100-byte values, bench/bigcoll.py load) is
# pushed to disk (ROCK EVICT), paged in whole by HRANDFIELD (a whole-value
# command with a one-field reply), evicted clean once (the baseline: a clean
# drop), paged in again, changed by DE_WRITES HSETs of existing fields, and
# evicted again. Per binary (DE_BINS: folders holding a redis-server,
# default $REDIS_BIN_DIR), one CSV row: the server-side time of each ROCK
# EVICT (INFO commandstats, usec of cmdstat_rock|evict: it runs the eviction
# on the event loop), and what the writer then wrote: whole values
# (`writes`), element records (`element_writes`) and bytes (`write_bytes`).
#
#   DE_FIELDS=1000000 DE_WRITES=100 DE_BINS="$REDIS_BIN_DIR"
#   QUICK=1: 100,000 fields
set -euo pipefail
. "$(dirname "$0")/lib.sh"

fields=${DE_FIELDS:-$([ "$QUICK" = 1 ] && echo 100000 || echo 1000000)}
writes=${DE_WRITES:-100}
bins=${DE_BINS:-$REDIS_BIN_DIR}
port=${PORT_BASE:-31296}
key=hash:0000

bench_init dirty-evict "evicting a paged-in big split hash after point writes: event-loop time and records written"
files=$BENCH_DIR/dirty-evict-files
trap 'rm -rf "$files"; bench_cleanup' EXIT
rm -rf "$files" && mkdir -p "$files"
python3 "$BENCH_TOP/bench/bigcoll.py" load 1 "$fields" 100 --batch 1000 --seed 9 > "$files/load"
for ((i = 0; i < writes; i++)); do
    printf 'HSET %s field:%06d changed%d\n' "$key" $(( (i * 7919) % fields )) "$i"
done > "$files/writes"

csv_header binary fields writes clean_evict_ms dirty_evict_ms whole_writes element_writes write_mb dirty_flushes

# evict_usec PORT -> server-side usec of one ROCK EVICT of the key
evict_usec() {
    local u0 u1
    u0=$(cli "$1" info commandstats | tr -d '\r' | awk -F'[=,]' '/^cmdstat_rock\|evict:/{print $4}')
    [ "$(cli "$1" rock evict "$key")" = 1 ] || die "ROCK EVICT did not move $key"
    u1=$(cli "$1" info commandstats | tr -d '\r' | awk -F'[=,]' '/^cmdstat_rock\|evict:/{print $4}')
    echo $(( u1 - ${u0:-0} ))
}

page_in() {
    cli "$1" hrandfield "$key" 1 > /dev/null
    [ "$(cli "$1" rock status "$key")" = hot-clean ] || die "$key not paged in clean"
}

for b in $bins; do
    REDIS_BIN_DIR=$b server_start dirty-evict rock "$port" --maxmemory-policy noeviction
    read -r secs err reps < <(pipe_run "$port" < "$files/load")
    [ "$err" = 0 ] || die "load: errors=$err"
    cli "$port" rock evict "$key" > /dev/null
    rock_wait_idle "$port" 600
    page_in "$port"
    clean=$(evict_usec "$port")
    rock_wait_idle "$port" 600
    page_in "$port"
    "$BENCH_CLI" -p "$port" < "$files/writes" > /dev/null
    w0=$(rock_fig "$port" writes); e0=$(rock_fig "$port" element_writes); b0=$(rock_fig "$port" write_bytes)
    f0=$(rock_fig "$port" dirty_flushes)
    dirty=$(evict_usec "$port")
    rock_wait_idle "$port" 600
    w1=$(rock_fig "$port" writes); e1=$(rock_fig "$port" element_writes); b1=$(rock_fig "$port" write_bytes)
    f1=$(rock_fig "$port" dirty_flushes)
    [ "$f0" = NA ] && f0=0 && f1=0
    csv_row "$b" "$fields" "$writes" "$(calc "$clean / 1000" %.2f)" "$(calc "$dirty / 1000" %.2f)" \
        $(( w1 - w0 )) $(( e1 - e0 )) "$(calc "($b1 - $b0) / 1048576" %.1f)" $(( f1 - f0 ))
    server_stop "$port"
done

md_write "One hash \`$key\` of $fields fields (\`bench/bigcoll.py load 1 $fields 100\`, 100-byte values), rock enabled, no maxmemory: \`ROCK EVICT\` (stored element by element), \`HRANDFIELD $key 1\` (paged in whole: hot-clean), \`ROCK EVICT\` again (clean_evict_ms: a clean drop), paged in again, $writes \`HSET\`s of existing fields, \`ROCK EVICT\` (dirty_evict_ms). Times are the server's own (\`INFO commandstats\`, usec of \`rock|evict\`): the eviction runs on the event loop, so this is how long every other client waited. whole_writes, element_writes, write_mb: what the writer committed for that last eviction (\`INFO rock\` writes, element_writes, write_bytes), dirty_flushes: evictions that wrote only the changed elements."
