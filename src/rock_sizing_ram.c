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
 * from maxmemory). It owns the estimate of the values in RAM now (their
 * number exact, their weight sampled every cron tick), and offers
 * rockSizingCron(), rockSizingReady(), rockSizingPredict() and
 * rockSizingFor() to the rest of the server; it uses the model's curve and
 * its per-value sizes (rock_sizing.h), eviction's memory figures and the
 * hot-clean sets' tables. */

#include "server.h"
#include "rock_sizing.h"

#include <math.h>

#define ROCK_SIZING_HOT_SAMPLES 100     /* random keys per cron tick (100 ms) ... */
#define ROCK_SIZING_HOT_TICKS 100       /* ...averaged over the last 10 s */

/* One cron tick's look at the values in RAM (rockSizingCron()), in two
 * parts: the hot-clean sets' members (values paged in and not modified
 * since), whose number is known exactly, and the other values in RAM.
 * For each, estimates from random keys of how many values that part holds
 * (`in_ram`), the RAM of its movable values with a hot-clean entry each
 * (`bytes`), and, of the other part, the entries its movable values lack
 * (`entries`); and how full the memtables were. */
typedef struct rockSizingTick {
    double clean, clean_bytes;           /* hot-clean members, their movable values' RAM */
    double in_ram, bytes, entries, fill; /* the other values in RAM */
} rockSizingTick;

static struct {
    rockSizingTick tick[ROCK_SIZING_HOT_TICKS]; /* a ring */
    int next, count;
    unsigned long long maxmemory; /* the maxmemory they were taken at */
    int volatile_only;            /* ...and the policy's kind (what can move) */
} hot;

/* ---------------------------------------------------------------------------
 * The values in RAM now
 * ------------------------------------------------------------------------ */

/* The RAM of value `val` of `key` in db `d` with a hot-clean entry, if
 * eviction could move it, else 0 (and *movable 0). */
static double rockSizingHotValue(int d, sds key, robj *val, int *movable) {
    size_t size = rockSizingValueSize(d, key, val, movable);
    return *movable ? (double)(size + rockSizingCleanEntry(key)) : 0;
}

/* How many values are in RAM now is known exactly (keys less cold ones),
 * as is how many have a hot-clean entry; what they weigh is sampled in the
 * background: every cron tick (100 ms) looks at ROCK_SIZING_HOT_SAMPLES
 * random members of each db's hot-clean set and as many random keys of
 * the db, and the last ROCK_SIZING_HOT_TICKS ticks (10 s; started again
 * when maxmemory or what can move changes) give the RAM per value of each
 * part. Their ratio, not their mean: a tick after a change of maxmemory
 * sees more or fewer values in RAM than now, each about as heavy.
 *
 * The two parts are sampled apart because the movable values in RAM can
 * be a small share of the keys: under volatile-lru near its floor, 5,600
 * of 106,000 values in RAM (bench 10's 500 B rows at 1 x; the rest have
 * no TTL). Random keys found 3 of them a tick, 300 a window: their RAM
 * known to 6%, 0.2 MB, a tenth of the room 0.95 x leaves them. They are
 * nearly all hot-clean members, sampled as such. */
static void rockSizingHotTick(void) {
    if (server.maxmemory != hot.maxmemory || rockVolatileOnly() != hot.volatile_only) {
        /* What is in RAM, or what of it can move, changed: start again. */
        hot.next = hot.count = 0;
        hot.maxmemory = server.maxmemory;
        hot.volatile_only = rockVolatileOnly();
    }
    rockSizingTick t = {0, 0, 0, 0, 0, rockMemtablesFill()};
    for (int d = 0; d < server.dbnum; d++) {
        dict *dict = server.db[d].dict, *clean = rock_ks.dbs[d].clean;
        unsigned long keys = dictSize(dict), members = dictSize(clean);
        if (keys == 0) continue;
        double sum = 0, over = 0, seen = 0, csum = 0, cseen = 0;
        int looked, movable;
        /* One walk from a random bucket (dictGetSomeKeys()), not a fair
         * pick per member: a fair pick walks for 15 members to keep one,
         * so 100 picks walk 15 times as far, on the event loop. Over a
         * window's ticks the walks start anywhere. */
        dictEntry *picks[ROCK_SIZING_HOT_SAMPLES];
        int got = members ? (int)dictGetSomeKeys(clean, picks, ROCK_SIZING_HOT_SAMPLES) : 0;
        for (int j = 0; j < got; j++) {
            sds key = dictGetKey(picks[j]);
            dictEntry *de = dictFind(dict, key);
            if (de == NULL || rockIsColdOrPoint(dictGetVal(de))) continue;
            cseen++;
            csum += rockSizingHotValue(d, key, dictGetVal(de), &movable);
        }
        if (cseen) {
            t.clean += members;
            t.clean_bytes += csum / cseen * members;
        }
        for (looked = 0; looked < ROCK_SIZING_HOT_SAMPLES; looked++) {
            dictEntry *de = dictGetFairRandomKey(dict);
            robj *val = dictGetVal(de);
            if (rockIsColdOrPoint(val) || (members && dictFind(clean, dictGetKey(de)))) continue;
            seen++;
            sum += rockSizingHotValue(d, dictGetKey(de), val, &movable);
            if (movable) over += rockSizingCleanEntry(dictGetKey(de));
        }
        t.in_ram += seen / looked * keys;
        t.bytes += sum / looked * keys;
        t.entries += over / looked * keys;
    }
    hot.tick[hot.next] = t;
    hot.next = (hot.next + 1) % ROCK_SIZING_HOT_TICKS;
    if (hot.count < ROCK_SIZING_HOT_TICKS) hot.count++;
}

/* Every cron tick (100 ms): the model's own work, then, while values are
 * on disk, a look at the values in RAM. */
void rockSizingCron(void) {
    rockSizingModelCron();
    if (rockSizingMemory() && rockColdKeys() > 0) {
        rockSizingHotTick();
    } else {
        /* Every value in RAM (FLUSHALL, a sync, the model off): the window
         * starts again when values are on disk again. */
        hot.next = hot.count = 0;
    }
}

/* Cron ticks in the values-in-RAM estimate's window (0 .. 100). */
int rockSizingEstimateTicks(void) {
    return hot.count;
}

/* Whether predictions can be made, and if not why: the model has counted
 * enough, and with values on disk, the values in RAM have been weighed. */
int rockSizingReady(const char **why) {
    if (!rockSizingModelReady(why)) return 0;
    if (rockColdKeys() > 0 && hot.count == 0) {
        *why = "the estimate of the values in RAM has no sample yet (it takes one every 100 ms)";
        return 0;
    }
    return 1;
}

/* How full the memtables are on average at another maxmemory than
 * today's: their mean over the window if it saw one flushed (the writes
 * cycle them from empty to full, and the window holds a cycle), else what
 * a cycle averages (rockMemtablesSteadyFill()). Without a flush the fill
 * is where the last writes left it, and stays there while nothing is
 * written: a state, not a mean. In one run of bench 10 (volatile-lru,
 * 500 B) they were 55% full at 1 x and 12% at 0.95 x: from 1 x, the model
 * gave RocksDB 2.3 MB at 0.95 x, and 0.95 x left the values 2.1 MB (0.41
 * predicted, 0.80 measured). */
#define ROCK_SIZING_FLUSH_DROP 0.1 /* a fall in the fill from one tick to the next that is a flush */
static double rockSizingOtherFill(double mean) {
    for (int i = 1; i < hot.count; i++) {
        int at = (hot.next - hot.count + i + ROCK_SIZING_HOT_TICKS) % ROCK_SIZING_HOT_TICKS;
        int before = (at + ROCK_SIZING_HOT_TICKS - 1) % ROCK_SIZING_HOT_TICKS;
        if (hot.tick[before].fill - hot.tick[at].fill > ROCK_SIZING_FLUSH_DROP) return mean;
    }
    return rockMemtablesSteadyFill();
}

/* The RAM of the movable values in RAM now with their hot-clean entries,
 * as if every one had an entry, and what of that is not in RAM now: the
 * entries of the values written and never moved out (`missing`); and how
 * full the memtables are, at today's maxmemory (`fill`: their mean over
 * the window) and at another (`other_fill`). With no value on disk, every
 * value is in RAM: the model's own total. */
static double rockSizingHotBytes(double values, double *missing, double *fill, double *other_fill) {
    long long clean = 0, keys = 0;
    for (int d = 0; d < server.dbnum; d++) {
        clean += dictSize(rock_ks.dbs[d].clean);
        keys += dictSize(server.db[d].dict);
    }
    *missing = 0;
    *fill = rockMemtablesFill();
    *other_fill = rockMemtablesSteadyFill();
    if (rockColdKeys() == 0 || hot.count == 0) {
        /* Every value in RAM, with a hot-clean entry if it was paged in. */
        double n = rockSizingValueCount();
        double entry = n > 0 ? (double)(sizeof(dictEntry) + 24 + ROCK_SIZING_BUCKET_SHARE) : 0;
        return values + (clean < n ? clean : n) * entry;
    }
    rockSizingTick sum = {0, 0, 0, 0, 0, 0};
    for (int i = 0; i < hot.count; i++) {
        sum.clean += hot.tick[i].clean;
        sum.clean_bytes += hot.tick[i].clean_bytes;
        sum.in_ram += hot.tick[i].in_ram;
        sum.bytes += hot.tick[i].bytes;
        sum.entries += hot.tick[i].entries;
        sum.fill += hot.tick[i].fill;
    }
    *fill = sum.fill / hot.count;
    *other_fill = rockSizingOtherFill(*fill);
    double in_ram = (double)(keys - rockColdKeys()), rest = in_ram - (double)clean;
    if (rest < 0) rest = 0;
    double bytes = 0;
    if (clean) {
        /* No member sampled in the window: they weigh as the average. */
        double n = rockSizingValueCount();
        if (sum.clean > 0) bytes += (double)clean * sum.clean_bytes / sum.clean;
        else if (n > 0) bytes += (double)clean * values / n;
    }
    if (sum.in_ram > 0) {
        bytes += rest * sum.bytes / sum.in_ram;
        *missing = rest * sum.entries / sum.in_ram;
    } else if (rest > 0) {
        double n = rockSizingValueCount();
        if (n > 0) bytes += rest * values / n;
    }
    return bytes;
}

/* ---------------------------------------------------------------------------
 * From the curve to a maxmemory
 * ------------------------------------------------------------------------ */

/* What the predictions rest on: Redis's memory that stays whatever
 * maxmemory is (keys, dicts, values that never move, the fixed part), all
 * the values' RAM, and how full the memtables are on average at today's
 * maxmemory and at another. */
typedef struct rockSizingView {
    double fixed, values, fill, other_fill;
} rockSizingView;

/* The hot-clean sets' tables are not part of the fixed part: they grow
 * and shrink with the values paged in (rockKeysCron()), which are charged
 * their share of them (rockSizingCleanEntry()). Counted as they are now,
 * a table sized for 27,000 entries at today's maxmemory (256-512 KB) was
 * charged again at half of it, where 1,600 values fit: 500-byte values at
 * 0.5 x read 7 points low. */
static double rockSizingCleanTables(void) {
    long long tables, entries = rockCleanKeys(&tables);
    return (double)tables - (double)entries * ROCK_SIZING_BUCKET_SHARE;
}

static void rockSizingBase(rockSizingView *v) {
    v->values = rockSizingValueBytes();
    double missing, hot = rockSizingHotBytes(v->values, &missing, &v->fill, &v->other_fill);
    double used = (double)rockEvictOwnMemory() + missing - rockSizingCleanTables();
    v->fixed = used > hot ? used - hot : 0;
}

/* What eviction leaves the values at `maxmemory`: it moves values until
 * Redis's own memory and RocksDB's (its block cache and memtables sized
 * from maxmemory) are under it. */
static double rockSizingRoom(const rockSizingView *v, double maxmemory) {
    if (maxmemory <= 0) return 0;
    double fill = maxmemory == (double)server.maxmemory ? v->fill : v->other_fill;
    return maxmemory - v->fixed - (double)rockExternalMemoryAt((unsigned long long)maxmemory, fill);
}

/* The maxmemory that leaves `room` for values: RocksDB's memory grows by
 * at most a fifth of maxmemory's growth, so a few rounds settle it. */
static double rockSizingSizeFor(const rockSizingView *v, double room) {
    double m = v->fixed + room;
    for (int i = 0; i < 8; i++) m = v->fixed + room + (double)rockExternalMemoryAt((unsigned long long)m, v->other_fill);
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
