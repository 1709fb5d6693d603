/* rock_evict.c -- redis-rock: moving values to disk under maxmemory.
 *
 * Layer 3 (keyspace; docs/architecture.md, "Layers").
 *
 * This file owns rockPerformEvictions(), called by performEvictions() before
 * upstream's own eviction: while used memory is over maxmemory, it samples
 * keys, picks the coldest value still in RAM under the configured policy
 * (LRU idle time, or LFU counter; volatile-* policies sample keys with a
 * TTL), and moves it to RocksDB. Keys stay; only values move. Upstream's
 * policy (noeviction -> -OOM, allkeys-* -> delete keys) applies only when no
 * value can move at all.
 *
 * Sampling draws from the whole keyspace, cold keys included; each round
 * draws several samples. When the hot values are nearly all paged in and
 * not modified since, it draws from those instead (the hot-clean set), and
 * from the whole keyspace one time in eight (rockSampleDb()). When many rounds in a row find nothing movable
 * (nearly every value cold), eviction walks the keyspace with a persistent
 * cursor instead, so a hot value is found wherever it is, and "nothing can
 * move" means a whole walk found nothing. While a forked child lives (no
 * defrag runs then), the values paged in since go first, oldest first
 * (under LRU policies and noeviction; not under LFU).
 *
 * It also owns the debug mode rock-debug-evict-all: after every command,
 * every value that may have become hot (touched by a command, modified, or
 * paged in) moves to disk, whatever its size, and the writes are committed
 * before the next command; so each next access goes through the read path.
 * The whole keyspace is swept when the mode is switched on and after the
 * dataset is replaced (load, full sync, FLUSHALL, SWAPDB, DEBUG). */

#include "server.h"
#include "rock_read.h"

static void rockEvictNoteHot(redisDb *db, sds key);

static int rockEvictMovable(robj *o);

#define ROCK_EVICT_SAMPLE_ROUNDS 16   /* sampling rounds before giving up */
#define ROCK_EVICT_TIME_LIMIT_US 2000 /* per call; the rest waits for the next command */

/* How cold a value is: larger means a better victim. */
static unsigned long long rockColdness(robj *o) {
    if (server.maxmemory_policy & MAXMEMORY_FLAG_LFU)
        return 255 - LFUDecrAndReturn(o);
    return estimateObjectIdleTime(o);
}

/* volatile-* policies move only values of keys with a TTL. */
int rockVolatileOnly(void) {
    return (server.maxmemory_policy & MAXMEMORY_FLAG_ALLKEYS) == 0 &&
           server.maxmemory_policy != MAXMEMORY_NO_EVICTION;
}

/* Keep `de` in *best if it is colder than what *best holds and not
 * pinned (checked last: it costs a key copy and a lookup, and only a value
 * about to become the best is worth it). Returns 1 when it would have been
 * kept but is pinned. */
static int rockKeepColdest(redisDb *db, dictEntry *de, dictEntry **best, unsigned long long *best_score) {
    unsigned long long score = rockColdness(dictGetVal(de));
    if (*best != NULL && score <= *best_score) return 0;
    if (rockIsPinned(db, dictGetKey(de))) return 1;
    *best = de;
    *best_score = score;
    return 0;
}

/* Consider one entry of the dict being sampled or scanned (db->dict, or
 * db->expires under volatile-*): keep it in *best if it is movable and
 * colder than what *best holds. Returns the keyspace entry of a movable
 * value passed over because it is pinned, else NULL. */
static dictEntry *rockConsider(redisDb *db, dictEntry *de, int volatile_only,
                               dictEntry **best, unsigned long long *best_score) {
    rock_ks_stats.eviction_samples++;
    if (volatile_only) de = dictFind(db->dict, dictGetKey(de));
    if (de == NULL) return NULL;
    /* Whether the value can move at all reads its own memory (a string's
     * length: one more cache miss per sample in a big keyspace), so it is
     * asked only of a hot value colder than the best so far. */
    robj *o = dictGetVal(de);
    if (rockIsCold(o) || (*best && rockColdness(o) <= *best_score)) return NULL;
    if (rockEvictMovable(o) && rockKeepColdest(db, de, best, best_score)) return de;
    return NULL;
}

/* Idle time, in ms, of an LRU clock reading (estimateObjectIdleTime() for a
 * clock kept outside an object). */
static unsigned long long rockClockIdle(unsigned int clock) {
    unsigned long long now = LRU_CLOCK();
    if (now >= clock) return (now - clock) * LRU_CLOCK_RESOLUTION;
    return (now + (LRU_CLOCK_MAX - clock)) * LRU_CLOCK_RESOLUTION;
}

/* Sample the hot-clean set of a database whose hot values are nearly all
 * clean (rockSampleDb()): up to maxmemory-samples values paged in and not
 * modified since.
 *
 * What costs here is the lookup of each sample in the keyspace (a few cache
 * misses in a big dict), not the sampling. So under an LRU policy each
 * member carries a stamp, the LRU clock of its page-in (rockRestoreValue()),
 * and the samples are tried oldest stamp first: the value tried is looked
 * up, its real access time counted, and its stamp renewed from it; the next
 * sample is tried only if its stamp is older than the best value found so
 * far. A value not used since its page-in is taken at the first lookup; one
 * used since only costs the lookup that finds it out. Under LFU every
 * sample is looked up. */
#define ROCK_CLEAN_SAMPLE_TRIES 4
static void rockSampleClean(redisDb *db, int volatile_only, dictEntry **best, unsigned long long *best_score) {
    dict *clean = rock_ks.dbs[db->id].clean;
    dictEntry *samples[64], *got[64];
    unsigned long long idle[64];
    /* dictGetSomeKeys() walks 10 buckets per key asked for and may return
     * fewer. A table just over 10% full (too full to shrink, as after
     * maxmemory shrinks while eviction runs) answers 5 with 2 or fewer once
     * in eight, and with 1 or none once in 25; a lone sample is a pick at
     * random, under LFU now and then one of the most used values. So the
     * sample is topped up, a few walks at most. */
    int want = server.maxmemory_samples > 64 ? 64 : server.maxmemory_samples, count = 0;
    for (int tries = 0; count < want && tries < ROCK_CLEAN_SAMPLE_TRIES; tries++) {
        int n = dictGetSomeKeys(clean, got, want);
        if (n > want - count) n = want - count;
        memcpy(samples + count, got, sizeof(dictEntry *) * n);
        count += n;
    }
    rock_ks_stats.eviction_samples += count;
    int stamped = !(server.maxmemory_policy & MAXMEMORY_FLAG_LFU);
    if (stamped) {
        /* Insertion sort, oldest stamp first: a handful of samples. */
        for (int j = 0; j < count; j++) {
            dictEntry *e = samples[j];
            unsigned long long t = rockClockIdle(rockCleanStamp(e));
            int k = j;
            for (; k > 0 && idle[k - 1] < t; k--) {
                samples[k] = samples[k - 1];
                idle[k] = idle[k - 1];
            }
            samples[k] = e;
            idle[k] = t;
        }
    }
    for (int j = 0; j < count; j++) {
        if (stamped && *best && idle[j] <= *best_score) break;
        sds key = dictGetKey(samples[j]);
        if (volatile_only && dictFind(db->expires, key) == NULL) continue;
        /* Hot, and moved out once already: only its access time matters. */
        dictEntry *de = dictFind(db->dict, key);
        if (de == NULL || rockIsCold(dictGetVal(de))) continue;
        if (stamped) rockCleanSetStamp(samples[j], ((robj *)dictGetVal(de))->lru);
        rockKeepColdest(db, de, best, best_score);
    }
}

/* Sample one database and return the coldest movable entry, or NULL.
 *
 * Random keys of the keyspace cost a chain of cache misses each, and when
 * most values are cold they are mostly cold ones: at 95% cold, the 20 keys
 * of a sample hold one hot value on average, so each eviction touches some
 * 30 keys and its choice is as good as random. When the hot values are
 * nearly all hot-clean (paged in and not modified: the cheapest to evict,
 * with no write), as they are once a dataset bigger than maxmemory has been
 * read for a while, the hot-clean set is sampled instead, for one lookup in
 * the keyspace per eviction (rockSampleClean()). The whole keyspace is
 * sampled as well, so that the other hot values (written since, or never
 * moved) still move out when they are colder: at every call when they are
 * more than an eighth of the hot values, else at one call in
 * ROCK_EVICT_KEYSPACE_EVERY (they can't pile up past that share). */
#define ROCK_EVICT_KEYSPACE_EVERY 8
static dictEntry *rockSampleDb(redisDb *db, int clean_only, unsigned long long *best_score) {
    static unsigned int calls;
    int volatile_only = rockVolatileOnly();
    dict *d = volatile_only ? db->expires : db->dict;
    if (dictSize(d) == 0) return NULL;

    dictEntry *best = NULL;
    rockDb *rdb = &rock_ks.dbs[db->id];
    if (clean_only) {
        /* Nothing can be written: only hot-clean values can go. */
        if (dictSize(rdb->clean)) rockSampleClean(db, volatile_only, &best, best_score);
        return best;
    }
    /* Under volatile-* the hot values that could move are those with a
     * TTL (only those go cold): counting the others would send every call
     * to the keyspace, whose samples then rarely hold a hot value. */
    long long hot = (long long)dictSize(d) - rdb->cold, clean = (long long)dictSize(rdb->clean);
    if (hot < clean) hot = clean;
    if (clean && (hot - clean) * ROCK_EVICT_KEYSPACE_EVERY <= hot) {
        rockSampleClean(db, volatile_only, &best, best_score);
        if (best && ++calls % ROCK_EVICT_KEYSPACE_EVERY) return best;
    }
    dictEntry *samples[64];
    int count = dictGetSomeKeys(d, samples, server.maxmemory_samples * 4 > 64 ? 64 : server.maxmemory_samples * 4);
    for (int j = 0; j < count; j++)
        rockConsider(db, samples[j], volatile_only, &best, best_score);
    return best;
}

/* The coldest movable entry of all databases (and its db), or NULL; with
 * `clean_only`, of the hot-clean values only. */
static dictEntry *rockSampleDbs(int clean_only, redisDb **dbout) {
    static unsigned int next_db = 0;
    dictEntry *best = NULL;
    unsigned long long best_score = 0;
    for (int i = 0; i < server.dbnum; i++) {
        redisDb *db = server.db + (next_db++ % server.dbnum);
        unsigned long long score;
        dictEntry *de = rockSampleDb(db, clean_only, &score);
        if (de && (best == NULL || score > best_score)) {
            best = de;
            *dbout = db;
            best_score = score;
        }
    }
    return best;
}

/* When nearly every value is already cold, random samples keep missing the
 * few hot ones ("struggling"). Eviction then looks in two places:
 *
 *   - the hot ring: while struggling (or after a walk found nothing), every
 *     value that becomes hot and could move -- paged in, or written big
 *     enough -- is noted here; in a mostly-cold keyspace these are exactly
 *     the hot values, found in O(1);
 *   - the walk: the keyspace with a cursor that persists across calls
 *     (dictScan: every entry is visited once per cycle), taking the coldest
 *     movable value among a few buckets at a time. It finds what the ring
 *     never saw (values that were hot before the struggle began). A whole
 *     cycle over every database that finds nothing means nothing can move;
 *     the walk then rests ("idle") until the ring overflows or the options
 *     it depended on change, and only the ring is looked at. */
#define ROCK_SCAN_STEPS 16 /* dictScan steps per database per call of rockScanStep */
#define ROCK_HOT_RING 4096 /* hot values noted while struggling */
#define ROCK_CHILD_FIRST_TRIES 16 /* ring entries looked at per pick while a child lives */

static struct {
    unsigned long cursor;    /* dictScan cursor in db `dbid` */
    int dbid;                /* database being walked */
    int empty_dbs;           /* databases walked whole without a candidate */
    int found_in_cycle;      /* the current db's walk found a candidate */
    /* Set when a whole cycle found nothing, with what it depended on. */
    int idle;
    long long idle_min_size;
    int idle_policy;
} rock_scan;

static int rock_struggling; /* the last eviction call's sampling kept missing */

static struct {
    int dbid;
    sds key;
} rock_ring[ROCK_HOT_RING];
static int rock_ring_head, rock_ring_len; /* oldest entry, count */

/* Is the walk known to find nothing? Until the ring overflows (values it
 * did not keep may be hot), the options it depended on change, or the
 * dataset changes wholesale (rockEvictSweepAll(), a load). While it is,
 * eviction draws no samples either: every value that became movable since
 * is in the ring (rockEvictNoteHot(), rockEvictNoteModified(), pinned
 * values the walk passed over), so below the floor, where nothing in RAM
 * can move, a command costs a look at the ring, not 16 rounds of samples
 * of every database. */
static int rockScanIdle(void) {
    return rock_scan.idle && rock_scan.idle_min_size == rock.min_value_size &&
           rock_scan.idle_policy == server.maxmemory_policy;
}

/* Is this value one eviction could move? */
static int rockEvictMovable(robj *o) {
    return !rockIsCold(o) && rockSentinelOf(o) != NULL && !rockValueTooSmall(o, NULL);
}

/* Would eviction move value `val` of `key` in `db`, the policy as it is
 * (volatile-*: only keys with a TTL)? */
int rockEvictWouldMove(redisDb *db, sds key, robj *val) {
    if (!rockEvictMovable(val)) return 0;
    return !rockVolatileOnly() || dictFind(db->expires, key) != NULL;
}

int rockEvictCandidate(redisDb *db, dictEntry *de) {
    return rockEvictWouldMove(db, dictGetKey(de), dictGetVal(de));
}

static void rockRingPush(int dbid, sds key) {
    if (rock_ring_len == ROCK_HOT_RING) {
        /* Full: forget the oldest, and let the walk look again. */
        sdsfree(rock_ring[rock_ring_head].key);
        rock_ring_head = (rock_ring_head + 1) % ROCK_HOT_RING;
        rock_ring_len--;
        rock_scan.idle = 0;
    }
    int slot = (rock_ring_head + rock_ring_len) % ROCK_HOT_RING;
    rock_ring[slot].dbid = dbid;
    rock_ring[slot].key = sdsdup(key);
    rock_ring_len++;
}

/* Forget every noted value; the walk looks again for what it held. */
static void rockRingClear(void) {
    while (rock_ring_len) {
        sdsfree(rock_ring[rock_ring_head].key);
        rock_ring_head = (rock_ring_head + 1) % ROCK_HOT_RING;
        rock_ring_len--;
    }
    rock_ring_head = 0;
    rock_scan.idle = 0;
}

/* Does eviction take the values paged in since the fork first? While a
 * forked child lives, under an LRU (or no) policy: under LFU a value paged
 * in keeps its counter, and may be one used far more than those in RAM.
 * The first call after a fork empties the ring, so that it then holds only
 * values paged in since (not those of an earlier child, or of a struggle). */
static pid_t rock_ring_child = -1;

static int rockChildFirst(void) {
    if (!hasActiveChildProcess() || (server.maxmemory_policy & MAXMEMORY_FLAG_LFU)) return 0;
    if (server.child_pid != rock_ring_child) {
        rock_ring_child = server.child_pid;
        rockRingClear();
    }
    return 1;
}

/* A value of `db` became hot (paged in, or written): note it while eviction
 * struggles, or while a forked child lives (rockPerformEvictions() then
 * takes the values paged in first). Costs nothing otherwise. */
static void rockEvictNoteHot(redisDb *db, sds key) {
    int child_first = rockChildFirst();
    if (!rock_struggling && !rock_scan.idle && !child_first) return;
    if (db < server.db || db >= server.db + server.dbnum) return;
    rockRingPush(db->id, key);
}

/* A value came back into RAM (rock_keys.c, rockRestoreValue()): evict-all
 * sweeps it again, and eviction notes it as hot. */
static void rockEvictValueHot(redisDb *db, sds key) {
    rockTouched(db, key);
    rockEvictNoteHot(db, key);
}

/* A value's last pin went: its command has run. The ring drops pinned
 * values rather than look at them again at every call (below the floor,
 * with 50 clients, a few dozen are pinned at any time); they come back
 * here. */
static void rockEvictUnpinned(sds skey) {
    if (!rock_struggling && !rock_scan.idle) return;
    redisDb *db = sdslen(skey) >= 4 ? rockDbBySid(rockGetSid((const unsigned char *)skey)) : NULL;
    if (db == NULL) return;
    sds key = sdsnewlen(skey + 4, sdslen(skey) - 4);
    dictEntry *de = dictFind(db->dict, key);
    if (de && rockEvictMovable(dictGetVal(de))) rockRingPush(db->id, key);
    sdsfree(key);
}

/* At start-up: be told of values coming back into RAM, and unpinned. */
void rockEvictInit(void) {
    rockKeysOnValueHot(rockEvictValueHot);
    rockInflightOnUnpinned(rockEvictUnpinned);
}

/* signalModifiedKey() hook: a value was written or changed in place. */
void rockEvictNoteModified(redisDb *db, robj *key) {
    if (!rock_struggling && !rock_scan.idle) return;
    if (db < server.db || db >= server.db + server.dbnum) return;
    dictEntry *de = dictFind(db->dict, key->ptr);
    if (de == NULL) return;
    robj *o = dictGetVal(de);
    if (!rockEvictMovable(o)) return;
    rockRingPush(db->id, key->ptr);
}

/* The oldest noted value that can still move, or NULL, looking at `tries`
 * entries at most. A value still pinned goes back to the end of the ring,
 * and so, with `skip_fresh`, does one read ahead of its command and not
 * used yet; stale entries are dropped. */
static dictEntry *rockRingPop(redisDb **dbout, int tries, int skip_fresh) {
    int volatile_only = rockVolatileOnly();
    for (; tries > 0 && rock_ring_len; tries--) {
        rock_ks_stats.eviction_samples++;
        int dbid = rock_ring[rock_ring_head].dbid;
        sds key = rock_ring[rock_ring_head].key;
        rock_ring_head = (rock_ring_head + 1) % ROCK_HOT_RING;
        rock_ring_len--;
        redisDb *db = server.db + dbid;
        dictEntry *de = dbid < server.dbnum ? dictFind(db->dict, key) : NULL;
        if (de && volatile_only && dictFind(db->expires, key) == NULL) de = NULL;
        if (de && !rockIsCold(dictGetVal(de))) { /* a cold one is done with */
            robj *val = dictGetVal(de);
            /* Held back now: read ahead of its command and not used yet, it
             * goes back in the ring for a later pick; pinned (a command
             * waits on it), it comes back when unpinned (rockEvictUnpinned(),
             * or while a child lives, at once: the unpin note needs a
             * struggle). */
            int pinned = rockIsPinned(db, key), held = pinned || (skip_fresh && rockIsFresh(val));
            if (!held && rockEvictMovable(val)) {
                sdsfree(key);
                *dbout = db;
                return de;
            }
            if (held && (!pinned || (!rock_struggling && !rock_scan.idle))) rockRingPush(dbid, key);
        }
        sdsfree(key);
    }
    return NULL;
}

typedef struct rockScanCtx {
    redisDb *db;
    int volatile_only;
    dictEntry *best;
    unsigned long long score;
} rockScanCtx;

/* A movable value the walk passes over because it is pinned goes into the
 * ring: it moves once its command has run, and a walk that ends with
 * nothing found must not have skipped it. */
static void rockScanCallback(void *privdata, const dictEntry *de) {
    rockScanCtx *ctx = privdata;
    dictEntry *pinned = rockConsider(ctx->db, (dictEntry *)de, ctx->volatile_only, &ctx->best, &ctx->score);
    if (pinned) rockRingPush(ctx->db->id, dictGetKey(pinned));
}

/* One step of the walk. Returns a movable entry (and its db), or NULL with
 * *exhausted set when a whole cycle found nothing. */
static dictEntry *rockScanStep(redisDb **dbout, int *exhausted) {
    *exhausted = 0;
    if (rockScanIdle()) {
        *exhausted = 1;
        return NULL;
    }
    rock_scan.idle = 0;
    if (rock_scan.dbid >= server.dbnum) rock_scan.dbid = 0;
    redisDb *db = server.db + rock_scan.dbid;
    rockScanCtx ctx = {db, rockVolatileOnly(), NULL, 0};
    dict *d = ctx.volatile_only ? db->expires : db->dict;
    int done = dictSize(d) == 0;
    for (int j = 0; !done && j < ROCK_SCAN_STEPS; j++) {
        rock_scan.cursor = dictScan(d, rock_scan.cursor, rockScanCallback, NULL, &ctx);
        if (rock_scan.cursor == 0) done = 1;
    }
    if (ctx.best) rock_scan.found_in_cycle = 1;
    if (done) {
        /* This database's cycle is over; go on to the next one. */
        rock_scan.empty_dbs = rock_scan.found_in_cycle ? 0 : rock_scan.empty_dbs + 1;
        rock_scan.found_in_cycle = 0;
        rock_scan.cursor = 0;
        rock_scan.dbid = (rock_scan.dbid + 1) % server.dbnum;
        if (ctx.best == NULL && rock_scan.empty_dbs >= server.dbnum) {
            rock_scan.empty_dbs = 0;
            rock_scan.idle = 1;
            rock_scan.idle_min_size = rock.min_value_size;
            rock_scan.idle_policy = server.maxmemory_policy;
            *exhausted = 1;
        }
    }
    *dbout = db;
    return ctx.best;
}

/* How many bytes may wait for the writer thread (rockWriteBacklog()):
 * enough to batch well, small next to maxmemory. */
static long long rockPendingLimit(void) {
    long long limit = (long long)server.maxmemory / 8;
    if (limit < 1024 * 1024) limit = 1024 * 1024;
    if (limit > 64 * 1024 * 1024) limit = 64 * 1024 * 1024;
    return limit;
}

/* Returns C_OK when memory is under maxmemory or will be once the writer
 * has committed what is pending; ROCK_EVICTIONS_RUNNING when it made
 * progress and ran out of its time budget (performEvictions() then answers
 * EVICT_RUNNING and upstream's eviction timer goes on between commands, so
 * an idle server, after CONFIG SET maxmemory, keeps moving values); C_ERR
 * when not enough could be moved, so that upstream's policy decides.
 *
 * Values handed to the writer are still in RAM (as records in the pending
 * buffer) until committed, so they count as freed already: eviction does
 * not run ahead of the writer. When the buffer is full and memory is well
 * over the limit, the event loop waits for the writer (back-pressure). */
/* Set when eviction stopped because the writer was behind: once it has
 * committed a batch, eviction resumes by itself (rockEvictAfterWrites()),
 * not only at the next command, so an idle server gets under maxmemory. */
static int rock_evict_after_writes = 0;

/* Set when eviction found the writer behind (a full backlog, and memory
 * still over maxmemory on top of it): until it hands back a batch, commands
 * that may grow memory wait for it (rockPrepareCommand()), and the rest
 * run. Only past the whole limit does the event loop itself wait (so
 * page-ins can't grow memory without bound either). */
static int rock_writer_behind = 0;

int rockWriterBehind(void) {
    /* Nothing outstanding: its queue was dropped (rockResetStore() wakes
     * the waiters through rockEvictAfterWrites()); nothing to wait for. */
    return rock_writer_behind && rockWriteOutstanding() > 0;
}

/* The writer handed batches back: it is no longer behind, and eviction
 * stopped for it resumes (the commands that waited for it re-run:
 * rockWakeWriteWaiters(), called alongside by rock.c). */
void rockEvictAfterWrites(void) {
    rock_writer_behind = 0;
    if (!rock_evict_after_writes) return;
    rock_evict_after_writes = 0;
    if (server.maxmemory && zmalloc_used_memory() > server.maxmemory) startEvictionTimeProc();
}

/* The memory upstream's policy (-OOM, or deleting keys) should be judged
 * by once no value can move: Redis's own (the heap less replica and AOF
 * buffers, less what waits for the writer while it can still commit it:
 * values, deletes, access-field updates and a split collection's element
 * writes, rockWriteBacklog()) plus RocksDB's table readers, which grow with
 * the data on disk. The access-field updates of values dropped clean under
 * LFU (about 150 bytes each) are what a sudden shrink of maxmemory queues
 * most of: counted in, a shrink to just above the floor had the policy
 * delete keys for RAM the writer was about to give back.
 * Left out: RocksDB's memtables and block cache, bounded by their sizes
 * (from maxmemory) and by the reads in flight, which no eviction shrinks. */
static size_t rockOwnMemory(int writer_can_commit) {
    size_t used = zmalloc_used_memory(), skip = freeMemoryGetNotCountedMemory();
    if (writer_can_commit) skip += (size_t)rockWriteBacklog();
    used = used > skip ? used - skip : 0;
    return used + rockTableReadersMemory();
}

static size_t rockPolicyMemory(void) {
    return rockOwnMemory(!rockWriteError() && rockDiskHasRoom());
}

size_t rockEvictPolicyMemory(void) {
    return rockPolicyMemory();
}

/* Redis's own memory as the policy counts it, without RocksDB's table
 * readers: with RocksDB's memory (rockExternalMemory()) what eviction
 * moves values to keep under maxmemory. */
size_t rockEvictOwnMemory(void) {
    size_t used = rockPolicyMemory(), readers = rockTableReadersMemory();
    return used > readers ? used - readers : 0;
}

/* How far `used` is over maxmemory once the values pinned for commands
 * about to run are left out (they move once those have run). */
static size_t rockUnpinnedExcess(size_t used) {
    if (used > server.maxmemory) {
        size_t pinned = rockPinnedMemory();
        used = used > pinned ? used - pinned : 0;
    }
    return used > server.maxmemory ? used - server.maxmemory : 0;
}

/* Upstream's policy loop (performEvictions(), patch 0014), once nothing
 * more can move, deletes keys (allkeys-*, volatile-*) until what it measures
 * by rockEvictionMemory() has dropped by rockEvictionExcess(). With the tier
 * on, both are Redis's own memory (rockPolicyMemory()): deleting a cold key
 * frees its key alone (its value is on disk, its delete queued) and never
 * shrinks RocksDB's memtables, block cache or table readers. An excess that
 * counted them, as getMaxmemoryState() does, could not be freed: the loop
 * would delete every key and then refuse the write with -OOM. */
size_t rockEvictionMemory(void) {
    if (!rock_store.db || !server.maxmemory) return zmalloc_used_memory();
    return rockPolicyMemory();
}

/* The excess to delete keys for: Redis's own memory over maxmemory, less
 * RocksDB's table readers (they shrink only as compactions drop the deleted
 * records) and the pinned values. `upstream_tofree` is upstream's figure,
 * kept with the tier off. */
size_t rockEvictionExcess(size_t upstream_tofree) {
    if (!rock_store.db || !server.maxmemory) return upstream_tofree;
    size_t used = rockPolicyMemory(), readers = rockTableReadersMemory();
    return rockUnpinnedExcess(used > readers ? used - readers : 0);
}

/* While nothing can be written: drop hot-clean values, coldest first (as
 * sampled from each database's hot-clean set), until `need` bytes are freed,
 * none is left, or the time slice is over. Returns the bytes freed. */
static long long rockEvictCleanOnly(long long need) {
    monotime timer;
    elapsedStart(&timer);
    long long freed = 0;
    int misses = 0, iterations = 0;
    while (freed < need && misses < ROCK_EVICT_SAMPLE_ROUNDS) {
        redisDb *bestdb = NULL;
        dictEntry *best = rockSampleDbs(1, &bestdb);
        if (best == NULL) break;
        long long before = (long long)zmalloc_used_memory();
        if (rockEvictEntry(bestdb, best) == ROCK_EVICT_OK)
            freed += before - (long long)zmalloc_used_memory();
        else
            misses++;
        if ((++iterations & 15) == 0 && elapsedUs(timer) > ROCK_EVICT_TIME_LIMIT_US) break;
    }
    return freed;
}

/* When upstream's policy last had to act because no value could move
 * (0: never), and server.stat_evictedkeys as last counted. */
static mstime_t rock_nothing_movable_ms;
static long long rock_seen_evicted;

/* Keys upstream's policy deleted since the last call. With the tier on it
 * deletes keys only once no value can move (patch 0014), so each of them
 * is one deleted for want of a movable value (nothing_movable_deletes).
 * Counted by difference, once a second (rockFloorCron()) and when the
 * figure is read, not on the eviction path. */
void rockEvictCountPolicyDeletes(void) {
    long long n = server.stat_evictedkeys;
    if (n > rock_seen_evicted) rock_ks_stats.nothing_movable_deletes += n - rock_seen_evicted;
    rock_seen_evicted = n; /* less after CONFIG RESETSTAT */
}

/* Has the policy acted for want of a movable value in the last
 * ROCK_NOTHING_MOVABLE_MS? (rock_eviction's `nothing-movable`.) */
#define ROCK_NOTHING_MOVABLE_MS 10000
int rockEvictNothingMovable(void) {
    return rock_nothing_movable_ms && mstime() - rock_nothing_movable_ms < ROCK_NOTHING_MOVABLE_MS;
}

mstime_t rockEvictNothingMovableSince(void) {
    return rock_nothing_movable_ms;
}

/* Nothing more can move: C_OK (the command goes on) when only RocksDB's
 * bounded memory, or values paged in for commands about to run (pinned:
 * they move once those have run), keep the total over maxmemory; C_ERR
 * (the policy decides) when Redis's own memory is over without them. */
static int rockNothingMoves(void) {
    if (rockUnpinnedExcess(rockPolicyMemory()) == 0) {
        rock_ks_stats.external_overshoots++;
        return C_OK;
    }
    rock_nothing_movable_ms = mstime();
    return C_ERR;
}

/* The maxmemory state modules see: RM_GetContextFlags()'s OOM and
 * OOM_WARNING flags, RM_GetUsedMemoryRatio(), RM_Call()'s "M" flag on a
 * thread-safe context. Upstream's getMaxmemoryState() counts RocksDB's
 * memtables and block cache, which no eviction shrinks: a module would see
 * OOM, and refuse writes, while commands go on (rockNothingMoves()). So
 * modules get the memory the policy is judged by, as commands do. A module
 * may ask from a thread of its own, without the GIL: this only reads (the
 * disk state as the last check left it; rockDiskHasRoom() may check anew). */
int rockModuleMaxmemoryState(float *level) {
    if (!rock_store.db || !server.maxmemory) return getMaxmemoryState(NULL, NULL, NULL, level);
    size_t used = rockOwnMemory(!rockWriteError() && !rockDiskLow());
    if (level) *level = (float)used / (float)server.maxmemory;
    return used > server.maxmemory ? C_ERR : C_OK;
}

/* While loading, the key just loaded (rockLoadingMemoryCheck()): its value
 * is the first one tried. */
static redisDb *rock_hint_db;
static sds rock_hint_key;

/* Are there more values paged in and not modified since (the hot-clean
 * sets) than values pinned for commands? While the walk is known to find
 * nothing (rockScanIdle()), what became movable since is in the ring,
 * oldest first: below the floor, a few values at a time, each moving right
 * after its command. Once the values paged in since stay in RAM (maxmemory
 * back above the floor, or after a shrink that moved every value out),
 * taking them in the order they came would be FIFO, not the policy: the
 * most used values would go as often as any. Then the hot-clean sets are
 * sampled first, as they are without the latch; a sample of values all
 * pinned still leaves the ring its turn. */
static int rockCleanBeyondPinned(void) {
    unsigned long clean = 0;
    for (int j = 0; j < server.dbnum; j++) clean += dictSize(rock_ks.dbs[j].clean);
    return clean > rockPinnedCount() + (unsigned long)server.maxmemory_samples;
}

static dictEntry *rockHintEntry(redisDb **dbout) {
    redisDb *db = rock_hint_db;
    rock_hint_db = NULL;
    dictEntry *de = dictFind(db->dict, rock_hint_key);
    if (de == NULL || !rockEvictMovable(dictGetVal(de)) || rockIsPinned(db, rock_hint_key)) return NULL;
    if (rockVolatileOnly() && dictFind(db->expires, rock_hint_key) == NULL) return NULL;
    *dbout = db;
    return de;
}

int rockPerformEvictions(void) {
    size_t tofree;
    if (!rock_store.db) return C_ERR;
    if (getMaxmemoryState(NULL, NULL, &tofree, NULL) == C_OK) return C_OK;
    if (rockWriteError() || !rockDiskHasRoom()) {
        /* Nothing can be written: only hot-clean values can go (their disk
         * copy is current). Otherwise every read of a cold value while the
         * disk is full would add to memory for good (the soak: 48 MB
         * maxmemory, 315 MB used after 10 s of reads on a full disk). */
        if (rockEvictCleanOnly((long long)tofree) >= (long long)tofree) return C_OK;
        return rockNothingMoves();
    }

    long long limit = rockPendingLimit();
    long long need = (long long)tofree - rockPendingBytes();
    if (need <= 0) return C_OK;

    monotime timer;
    elapsedStart(&timer);
    long long freed = 0, moved = 0, iterations = 0;
    int rounds = 0, failures = 0, timed_out = 0, scanning = 0;

    while (freed < need) {
        /* Queued deletes count toward the backlog (they hold RAM until
         * committed), not as memory already freed: eviction moves values
         * to make up for them. */
        if (rockWriteBacklog() >= limit) {
            /* The writer is behind, and memory still over: commands that
             * may grow memory wait for it (so writes never take memory past
             * maxmemory plus what is pending), the rest run; only when even
             * that did not hold memory (page-ins took it past the cap), or
             * while loading (no command runs), does the event loop wait. */
            if (need - freed <= limit && !server.loading && rockWriteOutstanding() > 0) {
                rock_writer_behind = 1;
                rock_evict_after_writes = 1;
                return C_OK;
            }
            if (!rockWriteWaitOne() || rockWriteError()) break;
            continue;
        }
        redisDb *bestdb = NULL;
        dictEntry *best = NULL;
        /* While a forked child lives, no defrag runs (it would copy pages
         * the child shares), so slots freed in old slabs stay held until
         * the child is gone: reads of values of other sizes (a read-back
         * after a restart, a scan) would swap the values in RAM for them
         * and thin every slab (25-35 MB at a 48 MB maxmemory in the soak).
         * Values paged in since are taken first instead, oldest first:
         * their slots are the ones just filled, and the values that were
         * in RAM when the child started stay. Not those read ahead of
         * their command (they would be read again), and a few entries a
         * call at most (pinned ones go round again). */
        if (rock_hint_db) best = rockHintEntry(&bestdb);
        if (best == NULL && rockChildFirst()) best = rockRingPop(&bestdb, ROCK_CHILD_FIRST_TRIES, 1);
        int latched = rockScanIdle();
        if (best == NULL && latched && rockCleanBeyondPinned()) best = rockSampleDbs(1, &bestdb);
        if (best == NULL && rounds < ROCK_EVICT_SAMPLE_ROUNDS && !latched) best = rockSampleDbs(0, &bestdb);
        if (best == NULL && (rounds >= ROCK_EVICT_SAMPLE_ROUNDS || latched)) {
            /* Sampling keeps missing: the values noted hot, then the walk. */
            int exhausted = 0;
            rock_struggling = 1;
            best = rockRingPop(&bestdb, rock_ring_len, 0);
            if (best == NULL) best = rockScanStep(&bestdb, &exhausted);
            scanning = 1;
            if (best == NULL) {
                if (exhausted) break;
                if ((++iterations & 15) == 0 && elapsedUs(timer) > ROCK_EVICT_TIME_LIMIT_US) {
                    timed_out = 1;
                    break;
                }
                continue;
            }
        }
        if (best == NULL) {
            rounds++;
            continue;
        }
        long long before = (long long)zmalloc_used_memory() - rockPendingBytes();
        int ret = rockEvictEntry(bestdb, best);
        if (ret == ROCK_EVICT_ERROR) break;
        if (ret == ROCK_EVICT_OK) {
            if (!scanning) rounds = 0; /* once walking, keep walking this call */
            moved++;
            freed += before - ((long long)zmalloc_used_memory() - rockPendingBytes());
        } else if (++failures >= ROCK_EVICT_SAMPLE_ROUNDS * 4) {
            /* Only values that can't move (too small once serialized,
             * pinned) keep coming up: give up rather than spin. */
            break;
        }
        /* By iterations, not moves: a loop that moves nothing must stop too. */
        if ((++iterations & 15) == 0 && elapsedUs(timer) > ROCK_EVICT_TIME_LIMIT_US) {
            timed_out = 1;
            break;
        }
    }

    /* Done; or out of time but moving (the next command goes on, as with
     * upstream's EVICT_RUNNING); or out of time in the middle of a walk
     * that has not yet covered the keyspace, while the overshoot is still
     * small (the walk goes on at the next command); else nothing more can
     * move: the policy. */
    if (rounds < ROCK_EVICT_SAMPLE_ROUNDS) rock_struggling = 0;
    if (freed >= need) return C_OK;
    if (timed_out && moved) return ROCK_EVICTIONS_RUNNING;
    if (timed_out && scanning && need - freed <= limit) return ROCK_EVICTIONS_RUNNING;
    /* What is still over the limit may be RocksDB's own memory (memtables,
     * blocks pinned by reads in flight, counted by rockExternalMemory()),
     * which nothing here can shrink: refusing writes (noeviction) or
     * deleting keys (allkeys-*) would not free it. The policy applies only
     * when Redis's own memory, less what waits for the writer, is over. */
    return rockNothingMoves();
}

/* The value of the key just loaded moves out, and only it, when the load's
 * hot share has no room for it (rockLoadingShareOver()): nothing sampled.
 * As eviction does, the writer is waited for when its backlog is full. */
static void rockLoadingMoveHint(void) {
    if (rockWriteError() || !rockDiskHasRoom()) return;
    long long limit = rockPendingLimit();
    while (rockWriteBacklog() >= limit)
        if (!rockWriteWaitOne() || rockWriteError()) return;
    redisDb *db;
    dictEntry *de = rockHintEntry(&db);
    if (de) rockEvictEntry(db, de);
}

/* Loading (an RDB, an AOF, a replica's full sync) runs no command, so no
 * eviction: over maxmemory, move values out as keys arrive, so a dataset
 * larger than RAM loads. Only into the live keyspace: a diskless load into
 * a temporary one (repl-diskless-load swapdb) stays in RAM, as upstream.
 *
 * The value of the key just loaded goes first: no value has been used yet,
 * and at a high cold share sampling the keyspace for each value costs the
 * event loop tens of keys looked at per value, for a choice as good as
 * random. So the values a load
 * leaves in RAM are the first ones it read, sized from the start for the
 * keys still to come when the RDB says how many (rock_load.c, "The load's
 * hot share"); the RDB's LRU/LFU fields steer eviction from then on. */
void rockLoadingMemoryCheck(redisDb *db) {
    rock_scan.idle = 0; /* the keys loaded since a walk are noted nowhere */
    int hint_db;
    sds hint = rockLoadingTakeLastKey(&hint_db);
    rockLoadingKeyDone(db);
    rockWriteTick(); /* rockCron(), which no timer runs while loading */
    if (!rock_store.db || !server.maxmemory || db < server.db || db >= server.db + server.dbnum) return;
    if (hint && hint_db < server.dbnum) {
        rock_hint_db = server.db + hint_db;
        rock_hint_key = hint;
        if (rockLoadingShareOver() > 0) rockLoadingMoveHint();
    }
    if (zmalloc_used_memory() > server.maxmemory) rockPerformEvictions();
    rock_hint_db = NULL;
}

/* performEvictions() skips a replica that ignores maxmemory (the default):
 * it must not delete keys on its own. Moving values to disk changes no key,
 * so a replica does that under maxmemory like a master. */
void rockReplicaEvictions(void) {
    if (!rock_store.db || !server.maxmemory || !server.masterhost || !server.repl_slave_ignore_maxmemory) return;
    if (server.loading || isInsideYieldingLongCommand() || areClientsPaused()) return;
    rockPerformEvictions();
}

/* ---------------------------------------------------------------------------
 * rock-debug-evict-all
 * ------------------------------------------------------------------------ */

static dict **rock_touched; /* per db, keys that may be hot */
static int rock_sweep_all;   /* sweep the whole keyspace next */

/* The keyspace changed wholesale (FLUSHDB, SWAPDB, MOVE, ...): the next
 * evict-all sweep walks every key. */
void rockEvictSweepAll(void) {
    rock_sweep_all = 1;
    rock_scan.idle = 0;
}

static void rockTouchedInit(void) {
    if (rock_touched) return;
    rock_touched = zmalloc(sizeof(dict *) * server.dbnum);
    for (int j = 0; j < server.dbnum; j++) rock_touched[j] = dictCreate(&setDictType);
    rock_sweep_all = 1;
}

/* A key of `db` may now have its value in RAM. */
void rockTouched(redisDb *db, sds key) {
    if (!rock.debug_evict_all || !rock_store.db || db->id < 0 || db->id >= server.dbnum) return;
    /* A deleted key has nothing to sweep (and holding a copy of its name
     * until the command is done would count against maxmemory). */
    if (dictFind(db->dict, key) == NULL) return;
    rockTouchedInit();
    dictEntry *de = dictAddRaw(rock_touched[db->id], key, NULL);
    if (de) dictSetKey(rock_touched[db->id], de, sdsdup(key));
}

/* Evict one entry for evict-all; keeps it for the next sweep when pinned. */
static int rockSweepEntry(redisDb *db, dictEntry *de) {
    robj *val = dictGetVal(de);
    if (rockIsCold(val) || rockSentinelOf(val) == NULL) return 1;
    return rockEvictEntry(db, de) != ROCK_EVICT_PINNED;
}

/* processCommand() calls this once a command (and any client it unblocked)
 * is done. */
void rockCommandDone(void) {
    if (!rock.debug_evict_all || !rock_store.db) {
        if (rock_touched) {
            for (int j = 0; j < server.dbnum; j++) dictRelease(rock_touched[j]);
            zfree(rock_touched);
            rock_touched = NULL;
        }
        return;
    }
    if (server.loading || isInsideYieldingLongCommand()) return;
    rockTouchedInit();
    if (rock_sweep_all) {
        for (int j = 0; j < server.dbnum; j++) {
            redisDb *db = server.db + j;
            dictEmpty(rock_touched[j], NULL);
            dictIterator *di = dictGetSafeIterator(db->dict);
            dictEntry *de;
            while ((de = dictNext(di)) != NULL)
                if (!rockSweepEntry(db, de)) rockTouched(db, dictGetKey(de));
            dictReleaseIterator(di);
        }
        rock_sweep_all = 0;
    } else {
        for (int j = 0; j < server.dbnum; j++) {
            dict *t = rock_touched[j];
            if (dictSize(t) == 0) continue;
            redisDb *db = server.db + j;
            dictIterator *di = dictGetSafeIterator(t);
            dictEntry *te;
            while ((te = dictNext(di)) != NULL) {
                dictEntry *de = dictFind(db->dict, dictGetKey(te));
                if (de == NULL || rockSweepEntry(db, de)) dictDelete(t, dictGetKey(te));
            }
            dictReleaseIterator(di);
        }
    }
    rockWriteFlush();
}
