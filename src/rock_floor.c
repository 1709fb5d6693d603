/* rock_floor.c -- redis-rock: the maxmemory floor, and telling the operator
 * when maxmemory is under it.
 *
 * Keyspace layer (it reads rock_evict.c's view of what can move). Keys stay
 * in RAM whatever moves, so there is a smallest maxmemory at which
 * eviction can always make room by moving values: the floor. It is the
 * memory eviction has to bring under maxmemory (Redis's own, less replica
 * and AOF buffers and the writes the writer will commit, plus RocksDB's
 * memory over its working floor, or its table readers when that is less:
 * rockFloor()) with every movable value on disk, so it
 * holds the keys and their dict tables, expiry entries, values that cannot
 * move (under rock-min-value-size, or without a TTL under volatile-*),
 * clients, scripts and the fixed part. Under it, once every movable value
 * is on disk, upstream's policy acts: allkeys-* and volatile-* delete keys,
 * noeviction refuses writes.
 *
 * The floor is measured, not modelled (ROCK SIZING's model need not be on):
 * a walk of every database's keyspace with its own dictScan cursor, at most
 * ROCK_FLOOR_WALK_KEYS keys every 100 ms from rockCron() (about 12 s per
 * 500,000 keys), counts the values in RAM that could not move and the
 * average RAM of those that could (their robj and payload, sampled for
 * collections as MEMORY USAGE does). A walk's sum would be stale by its end
 * (values move in and out all the while it runs), so the figure is taken
 * when asked: the policy's memory now, less the values in RAM now (keys
 * less cold values, exact) that the last complete walk says can move, at
 * its average size. -1 before a walk completes.
 *
 * The operator is told when the policy starts acting for want of movable
 * values (a warning at most once a minute, with the floor) and when
 * maxmemory is set under the floor (rockFloorCron(), once a second). */

#include "server.h"

#define ROCK_FLOOR_WALK_KEYS 4000 /* keys looked at per 100 ms tick */
#define ROCK_FLOOR_WARN_EVERY_MS 60000
#define ROCK_FLOOR_SAMPLES 5 /* elements sampled per collection, as MEMORY USAGE */

size_t objectComputeSize(robj *key, robj *o, size_t sample_size, int dbid); /* object.c */

static struct {
    int dbid;              /* database being walked */
    unsigned long cursor;  /* its dictScan cursor */
    size_t movable_bytes;  /* this walk: RAM of the movable values seen, */
    size_t entry_bytes;    /* the hot-clean entries they would have, */
    long long movable;     /* their number, */
    long long fixed;       /* and values in RAM that can't move */
    double avg_movable;    /* the last complete walk's average movable value */
    double avg_entry;      /* ...and hot-clean entry */
    long long fixed_done;  /* ...and values that can't move, -1: no walk yet */
    long long walks;       /* walks completed */
    mstime_t warned_ms;    /* the last warning that the policy acts */
    mstime_t seen_nothing_movable;
    unsigned long long maxmemory; /* as last checked */
    int seen_first;
    long long before;      /* the floor at the last tick with that maxmemory */
} rock_floor = {0, 0, 0, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, -1};

/* A value in RAM: one eviction could move (counted with its RAM, as
 * MEMORY USAGE counts it without the key), or one that stays. */
static void rockFloorVisit(void *privdata, const dictEntry *de) {
    int *dbid = privdata;
    robj *o = dictGetVal(de);
    if (rockIsCold(o)) return;
    if (!rockEvictCandidate(server.db + *dbid, (dictEntry *)de)) {
        rock_floor.fixed++;
        return;
    }
    robj keyobj;
    initStaticStringObject(keyobj, dictGetKey(de));
    rock_floor.movable++;
    rock_floor.movable_bytes += objectComputeSize(&keyobj, o, ROCK_FLOOR_SAMPLES, *dbid);
    /* A hot-clean entry is a dict entry and a copy of the key, as the
     * keyspace's own entry is: what it weighs, without a lookup. */
    rock_floor.entry_bytes += zmalloc_size((void *)de) + zmalloc_size(sdsAllocPtr(dictGetKey(de)));
}

/* One step of the walk. */
static void rockFloorWalk(void) {
    long long budget = ROCK_FLOOR_WALK_KEYS;
    while (budget > 0) {
        if (rock_floor.dbid >= server.dbnum) {
            /* Complete. A walk that met no movable value keeps the last
             * average size (values moving in later are like those). */
            if (rock_floor.movable) {
                rock_floor.avg_movable = (double)rock_floor.movable_bytes / rock_floor.movable;
                rock_floor.avg_entry = (double)rock_floor.entry_bytes / rock_floor.movable;
            }
            rock_floor.fixed_done = rock_floor.fixed;
            rock_floor.walks++;
            rock_floor.dbid = 0;
            rock_floor.cursor = 0;
            rock_floor.movable_bytes = rock_floor.entry_bytes = 0;
            rock_floor.movable = rock_floor.fixed = 0;
            return;
        }
        dict *d = server.db[rock_floor.dbid].dict;
        if (dictSize(d) == 0) {
            rock_floor.dbid++;
            continue;
        }
        /* A bucket holds about one key at a load factor near 1. */
        long long buckets = dictSlots(d) > (unsigned long)budget ? budget : (long long)dictSlots(d);
        for (long long j = 0; j < buckets; j++) {
            rock_floor.cursor = dictScan(d, rock_floor.cursor, rockFloorVisit, NULL, &rock_floor.dbid);
            if (rock_floor.cursor == 0) break;
        }
        budget -= buckets;
        if (rock_floor.cursor == 0) rock_floor.dbid++;
    }
}

/* What the policy does when nothing can move. */
static const char *rockFloorPolicyAction(void) {
    return server.maxmemory_policy == MAXMEMORY_NO_EVICTION ? "refuses writes (-OOM)" : "deletes keys";
}

static void rockFloorWarnPolicy(void) {
    mstime_t now = mstime(), since = rockEvictNothingMovableSince();
    long long floor = rockFloor();
    if (since != rock_floor.seen_nothing_movable) {
        rock_floor.seen_nothing_movable = since;
        if (since && now - rock_floor.warned_ms >= ROCK_FLOOR_WARN_EVERY_MS) {
            rock_floor.warned_ms = now;
            serverLog(LL_WARNING,
                      "rock: no value left in RAM can move to disk, so maxmemory-policy %s %s: maxmemory %llu "
                      "is under the floor the keys alone need (rock_maxmemory_floor, %lld bytes now; "
                      "docs/operations.md, \"The maxmemory floor\")",
                      evictPolicyToString(), rockFloorPolicyAction(), server.maxmemory, floor);
        }
    }
}

/* Every 100 ms: a change of maxmemory under the floor as it was before it
 * (CONFIG SET maxmemory evicts at once: under the floor the policy deletes
 * keys until the floor of the keys left is maxmemory), not at the first
 * look (a start-up's load makes the floor jump about while values move
 * out). */
static void rockFloorWarnMaxmemory(void) {
    long long floor = rock_floor.before;
    int changed = server.maxmemory != rock_floor.maxmemory, first = !rock_floor.seen_first;
    rock_floor.before = rockFloor();
    rock_floor.seen_first = 1;
    if (!changed) return;
    rock_floor.maxmemory = server.maxmemory;
    if (!first && server.maxmemory && floor > 0 && server.maxmemory < (unsigned long long)floor)
        serverLog(LL_WARNING,
                  "rock: maxmemory %llu is under the floor of about %lld bytes the keys alone need "
                  "(rock_maxmemory_floor): once every value that can move is on disk, maxmemory-policy %s %s",
                  server.maxmemory, floor, evictPolicyToString(), rockFloorPolicyAction());
}

/* Every 100 ms (rockCron(), which the loading path runs too): a step of
 * the walk; once a second, the deletes counted and the warnings. */
void rockFloorCron(void) {
    static int ticks;
    rockFloorWalk();
    rockFloorWarnMaxmemory();
    if (++ticks % 10 == 0) {
        rockEvictCountPolicyDeletes();
        rockFloorWarnPolicy();
    }
}

/* Walks completed: a figure reflects a change to the keyspace once a walk
 * that started after it has completed (the count has gone up by two). */
long long rockFloorWalks(void) {
    return rock_floor.walks;
}

/* The floor now, by the last complete walk; -1 before one completes. */
long long rockFloor(void) {
    if (rock_floor.fixed_done < 0 || !rock_store.db) return -1;
    long long keys = 0, clean_table, clean = rockCleanKeys(&clean_table);
    for (int j = 0; j < server.dbnum; j++) keys += dictSize(server.db[j].dict);
    long long hot = keys - rockColdKeys(), movable = hot - rock_floor.fixed_done;
    /* A value paged in and not modified since has a hot-clean entry, which
     * goes when the value moves out again: at 500-byte values under memory
     * pressure, a tenth of what a value in RAM costs. */
    long long clean_all = clean;
    if (clean > movable) clean = movable > 0 ? movable : 0;
    /* The hot-clean sets' tables shrink with them once sparse
     * (rockKeysCron()): 256 KB for 20,000 entries. */
    long long table_gone = clean_all ? clean_table * clean / clean_all : clean_table;
    /* Eviction stops once the total getMaxmemoryState() counts is under
     * maxmemory (RocksDB's memory over its working floor included), and
     * the policy acts only when, with nothing movable, the policy's memory
     * (RocksDB's table readers included) is over too: the lower of the two
     * is where the policy starts. */
    long long readers = (long long)rockTableReadersMemory(), external = (long long)rockExternalMemory();
    long long floor = (long long)rockEvictPolicyMemory() - readers + (external < readers ? external : readers) -
                      (long long)(movable > 0 ? movable * rock_floor.avg_movable : 0) -
                      (long long)(clean * rock_floor.avg_entry) - table_gone;
    return floor > 0 ? floor : 0;
}
