/* rock_sizing_ram.c -- redis-rock: what a maxmemory leaves the values
 * (ROCK SIZING's predictions).
 *
 * Layer 3 (keyspace; docs/architecture.md, "Layers").
 *
 * rock_sizing.c replays the workload on miniature caches and gives a curve:
 * for shares of all the values' bytes, the share of value accesses RAM
 * would serve. This file owns the step from that curve to a maxmemory, the
 * memory model of docs/memory.md: a maxmemory M leaves M - O - E(M) for
 * values, O being Redis's own memory that stays whatever M is (the memory
 * eviction counts without RocksDB's, less the values in RAM now and the
 * hot-clean sets' tables, which move with them) and E(M) RocksDB's memory
 * at M (rockExternalMemoryAt(): its block cache and memtables are sized
 * from maxmemory). It offers rockSizingPredict() and rockSizingFor() to
 * ROCK SIZING and ROCK REPORT; it uses the model's curve, its estimate of
 * the values in RAM (rock_sizing.h), eviction's memory figures and the
 * hot-clean sets' tables. */

#include "server.h"
#include "rock_sizing.h"

#include <math.h>

/* Values in RAM now (the model's measure), what of that is not in RAM, and
 * how full the memtables are. */
static double rockSizingHotBytes(double values, double *missing, double *fill) {
    long long clean = 0, keys = 0;
    for (int d = 0; d < server.dbnum; d++) {
        clean += dictSize(rock_ks.dbs[d].clean);
        keys += dictSize(server.db[d].dict);
    }
    *missing = 0;
    *fill = rockMemtablesFill();
    const rockSizingTick *tick;
    int ticks = rockSizingTicks(&tick);
    if (rockColdKeys() == 0 || ticks == 0) {
        /* Every value in RAM, with a hot-clean entry if it was paged in. */
        double n = rockSizingValueCount();
        double entry = n > 0 ? (double)(sizeof(dictEntry) + 24 + ROCK_SIZING_BUCKET_SHARE) : 0;
        return values + (clean < n ? clean : n) * entry;
    }
    rockSizingTick sum = {0, 0, 0, 0, 0};
    for (int i = 0; i < ticks; i++) {
        sum.in_ram += tick[i].in_ram;
        sum.movable += tick[i].movable;
        sum.bytes += tick[i].bytes;
        sum.entries += tick[i].entries;
        sum.fill += tick[i].fill;
    }
    *fill = sum.fill / ticks;
    double in_ram = (double)(keys - rockColdKeys());
    if (sum.in_ram == 0) {
        /* No value in RAM sampled in the window: they weigh as the average. */
        double n = rockSizingValueCount();
        return n > 0 ? in_ram * values / n : 0;
    }
    double movable = in_ram * sum.movable / sum.in_ram;
    /* The movable values in RAM without an entry. */
    if (sum.movable > 0 && movable > clean) *missing = (movable - clean) * sum.entries / sum.movable;
    return in_ram * sum.bytes / sum.in_ram;
}

/* What the predictions rest on: Redis's memory that stays whatever
 * maxmemory is (keys, dicts, values that never move, the fixed part), all
 * the values' RAM, and how full the memtables are on average. */
typedef struct rockSizingView {
    double fixed, values, fill;
} rockSizingView;

/* The hot-clean sets' tables are not part of the fixed part: they grow
 * and shrink with the values paged in (rockKeysCron()), which are charged
 * their share of them (rockSizingCleanEntry()). Counted as they are now,
 * a table sized for 27,000 entries at today's maxmemory (256-512 KB) was
 * charged again at half of it, where 1,600 values fit: 500-byte values at
 * 0.5 x read 7 points low. */
static double rockSizingCleanTables(void) {
    double tables = 0, entries = 0;
    for (int d = 0; d < server.dbnum; d++) {
        tables += (double)dictSlots(rock_ks.dbs[d].clean) * sizeof(dictEntry *);
        entries += (double)dictSize(rock_ks.dbs[d].clean);
    }
    return tables - entries * ROCK_SIZING_BUCKET_SHARE;
}

static void rockSizingBase(rockSizingView *v) {
    v->values = rockSizingValueBytes();
    double missing, hot = rockSizingHotBytes(v->values, &missing, &v->fill);
    double used = (double)rockEvictOwnMemory() + missing - rockSizingCleanTables();
    v->fixed = used > hot ? used - hot : 0;
}

/* What eviction leaves the values at `maxmemory`: it moves values until
 * Redis's own memory and RocksDB's (its block cache and memtables sized
 * from maxmemory) are under it. */
static double rockSizingRoom(const rockSizingView *v, double maxmemory) {
    if (maxmemory <= 0) return 0;
    return maxmemory - v->fixed - (double)rockExternalMemoryAt((unsigned long long)maxmemory, v->fill);
}

/* The maxmemory that leaves `room` for values: RocksDB's memory grows by
 * at most a fifth of maxmemory's growth, so a few rounds settle it. */
static double rockSizingSizeFor(const rockSizingView *v, double room) {
    double m = v->fixed + room;
    for (int i = 0; i < 8; i++) m = v->fixed + room + (double)rockExternalMemoryAt((unsigned long long)m, v->fill);
    return m;
}

/* The predicted share from RAM at `maxmemory` on curve (x, r) of n points. */
static double rockSizingAt(const double *x, const double *r, int n, const rockSizingView *v, double maxmemory) {
    double share = rockSizingRoom(v, maxmemory) / v->values;
    if (share <= 0) return r[0];
    if (share >= 1) return 1;
    int i = 0;
    while (i + 2 < n && x[i + 1] <= share) i++;
    if (x[i] == 0) return r[i] + (r[i + 1] - r[i]) * share / x[i + 1];
    double t = log(share / x[i]) / log(x[i + 1] / x[i]);
    return r[i] + (r[i + 1] - r[i]) * t;
}

/* Shares of value accesses predicted from RAM at each of m[0..n) (ready
 * only), into ratio[]. With `lo` > 0, m[] is filled first: n sizes from
 * lo to the size that holds every value, spaced geometrically (one point
 * if that is not above lo). Returns the sizes filled or given. One view of
 * the memory for all of them: replies allocate as they are written. */
int rockSizingPredict(long long lo, long long *m, double *ratio, int n) {
    double x[ROCK_SIZING_POINTS], r[ROCK_SIZING_POINTS];
    rockSizingView v;
    int points = rockSizingCurve(x, r);
    rockSizingBase(&v);
    if (lo > 0) {
        double hi = ceil(rockSizingSizeFor(&v, v.values));
        if (hi <= lo) n = 1;
        for (int i = 0; i < n; i++)
            m[i] = i == n - 1 && n > 1 ? (long long)hi : (long long)(lo * pow(hi / lo, (double)i / (n > 1 ? n - 1 : 1)));
    }
    for (int i = 0; i < n; i++) ratio[i] = rockSizingAt(x, r, points, &v, (double)m[i]);
    return n;
}

/* The smallest maxmemory predicted to serve `target` of the accesses from
 * RAM (ready only). */
long long rockSizingFor(double target) {
    double x[ROCK_SIZING_POINTS], r[ROCK_SIZING_POINTS];
    rockSizingView v;
    int n = rockSizingCurve(x, r);
    rockSizingBase(&v);
    if (r[0] >= target) return (long long)ceil(rockSizingSizeFor(&v, 0));
    for (int i = 0; i + 1 < n; i++) {
        if (r[i + 1] < target) continue;
        double t = r[i + 1] > r[i] ? (target - r[i]) / (r[i + 1] - r[i]) : 1;
        double share = x[i] == 0 ? t * x[i + 1] : x[i] * pow(x[i + 1] / x[i], t);
        return (long long)ceil(rockSizingSizeFor(&v, share * v.values));
    }
    return (long long)ceil(rockSizingSizeFor(&v, v.values));
}
