/* rock_sizing.c -- redis-rock: how much RAM the workload needs (ROCK SIZING).
 *
 * Layer 3 (keyspace; docs/architecture.md, "Layers").
 *
 * This file owns the RAM sizing model. From the value accesses commands make
 * (rockValueAccessed(), rock_hooks.c), the values they write and the keys
 * they delete, it predicts the share of value accesses that would be served
 * from RAM at any maxmemory. The method (docs/performance.md, "RAM sizing"):
 *
 *   - a spatially hashed sample of keys (SHARDS, Waldspurger et al., FAST
 *     2015): a key is in the sample when a hash of its db and name falls
 *     under a threshold. The threshold starts at one key in
 *     rock-sizing-sample-every (each sampled access costs a few thousand
 *     instructions: the rate bounds the model's CPU) and drops by a quarter
 *     whenever the sample would outgrow the model's memory
 *     (rock-sizing-memory), the keys above it dropped with it: the sample
 *     stays a uniform share R of the keys, whatever their number.
 *   - miniature simulation (Waldspurger et al., ATC 2017): ROCK_SIZING_CACHES
 *     small caches replay the sampled accesses. Cache j holds a fixed share
 *     2^(-0.5 (j+1)) of the sampled keys' value bytes, standing for a RAM
 *     budget for values of that share of all value bytes; each evicts as the
 *     tier does (rock_evict.c): the coldest of maxmemory-samples random
 *     residents, by the LRU idle time or the LFU counter of the value's own
 *     access field (val->lru after the lookup updated it). Keys stay in RAM
 *     whatever moves, so one field per key serves every cache. A key weighs
 *     its value, and in a cache a miss brought it into, the hot-clean entry
 *     a value paged in has besides (a value written, or never moved out,
 *     has none).
 *   - the ROCK_SIZING_FINE smallest caches are replayed a second time, from
 *     a sample ROCK_SIZING_FINE_DENSITY times as dense (rock_sizing_fine.c):
 *     at 1 key in 128, the smallest cache follows about 6 keys, and which
 *     hot keys a sample holds moves its share by 10 points either way. A
 *     fine cache keeps only its residents (a key out of every cache needs
 *     no state: its field is in its object), so the denser sample costs
 *     memory only for what the small caches hold; one that outgrows what
 *     was allocated for it is not used until the model starts over. They
 *     run while values are on disk under a maxmemory (their CPU is that
 *     of a request from RAM's hash and size for one access in 8), and
 *     count from when they start.
 *   - a sampled access that misses a cache counts 1/R misses for it (the
 *     Horvitz-Thompson estimate of the misses of all keys); the predicted
 *     share from RAM is 1 - misses / accesses, accesses being the exact
 *     value_hits_ram + value_hits_disk. The hottest keys of a skewed
 *     workload, which a sample holds or not by chance, hit in every cache but
 *     the smallest and so weigh little on the estimate.
 *   - the result is a curve, shares of the value bytes against shares from
 *     RAM (rockSizingCurve()), which rock_sizing_ram.c turns into shares at
 *     a maxmemory, with what it weighs of the values in RAM now.
 *
 * A written value (a new key, or a value replaced) is in RAM at any
 * maxmemory: it enters every cache. A value eviction would not move (under
 * rock-min-value-size, of a type that never moves, without a TTL under
 * volatile-*) hits at any size: those hits are counted exactly, at every
 * access, not from the sample. A key seen first at an access enters every
 * cache uncounted (its history is unknown); after the model starts over
 * with keys there, a background scan takes them in first, and the counts
 * start when it is done (rockSizingFill()). The counts cover the accesses since the last CONFIG
 * RESETSTAT, as value_hits_* do, or since the model last started over
 * (FLUSHALL, SWAPDB, a change of rock-sizing-memory or of the policy's kind,
 * LRU or LFU, whose fields differ). */

#include "server.h"
#include "rock_read.h"
#include "rock_sizing.h"

#include <math.h>

#define ROCK_SIZING_MAX_KEYS 65535     /* cache positions are 16 bits */
#define ROCK_SIZING_MIN_KEYS 64
#define ROCK_SIZING_MIN_SAMPLED 100    /* sampled accesses before predictions */
#define ROCK_SIZING_RECHECK 256        /* sampled keys whose TTL may have changed */

typedef struct rockSizingKey {
    uint64_t id;       /* hash of db and name */
    uint32_t size;     /* RAM bytes of the value when last seen in RAM */
    uint32_t field;    /* its LRU/LFU field */
    uint16_t members;  /* bit j: resident in cache j */
    uint16_t paged;    /* bit j: ...paged in there (it has a hot-clean entry) */
    uint8_t movable;   /* can move to disk (else: a hit at any size) */
    uint8_t entry;     /* its hot-clean entry's bytes / 8 */
    uint16_t pos[ROCK_SIZING_CACHES]; /* index in cache j's slots */
} rockSizingKey;

typedef struct rockSizingCache {
    uint16_t *slots;   /* the resident keys (indices into rs.keys) */
    uint32_t count;
    uint64_t used;     /* their value bytes */
    double misses;     /* estimated misses of all keys since the reset */
} rockSizingCache;

static struct {
    size_t memory;          /* bytes allocated for the model (0: off) */
    long long configured;   /* the budget it was built for (rockSizingBudget()) */
    uint32_t max;           /* keys it holds */
    rockSizingKey *keys;
    uint32_t n;
    rockSizingIndex index;  /* id -> keys[] */
    uint64_t bytes;         /* value bytes of the movable sampled keys */
    uint32_t movable_n;     /* ...and their number */
    int filling;            /* learning the keys already there (rockSizingFill()) */
    int fill_db;            /* ...the db it scans, and where */
    unsigned long fill_cursor;
    rockSizingCache cache[ROCK_SIZING_CACHES];
    double share[ROCK_SIZING_CACHES];
    long long fixed_accesses; /* accesses to values eviction would not move */
    long long sampled;      /* sampled accesses counted */
    long long base;         /* value accesses already counted when it began */
    int volatile_only;      /* only keys with a TTL move (volatile-*) */
    long long every;        /* rock-sizing-sample-every it started with */
} rs;

/* Sampled keys modified under volatile-*, whether they can move to be
 * looked at again once their command is done (rockSizingRecheck()): SET
 * ... EX writes the value (dbAdd()) before its TTL, and EXPIRE, PERSIST
 * change the TTL alone. */
static struct {
    int dbid;
    sds key;
} rs_recheck[ROCK_SIZING_RECHECK];
static int rs_recheck_count;

/* Keys are in the sample when (rockSizingHash() & 0xffffffff) < this (and
 * in the fine caches' denser sample under rock_sizing_fine_threshold, in
 * rock_sizing_fine.c); 0 while the model is off. */
uint64_t rock_sizing_threshold;

static int rockSizingInSample(uint64_t id) {
    return (id & 0xffffffffULL) < rock_sizing_threshold;
}

/* ---------------------------------------------------------------------------
 * Keys, caches
 * ------------------------------------------------------------------------ */

static uint32_t rockSizingSlot(uint64_t id) {
    return rockSizingIndexSlot(&rs.index, id);
}

/* What key k weighs in cache j: its value, and the hot-clean entry a value
 * paged in also has (one written, or never moved since, has none). */
static uint64_t rockSizingCost(const rockSizingKey *e, int j) {
    return e->size + ((e->paged >> j) & 1u) * 8u * e->entry;
}

/* Key k enters cache j: `paged`, read back from disk (a miss there). */
static void rockSizingCacheAdd(int j, uint32_t k, int paged) {
    rockSizingCache *c = &rs.cache[j];
    rockSizingKey *e = &rs.keys[k];
    c->slots[c->count] = (uint16_t)k;
    e->pos[j] = (uint16_t)c->count++;
    e->members |= 1u << j;
    if (paged) e->paged |= 1u << j;
    c->used += rockSizingCost(e, j);
}

static void rockSizingCacheDel(int j, uint32_t k) {
    rockSizingCache *c = &rs.cache[j];
    rockSizingKey *e = &rs.keys[k];
    uint16_t p = e->pos[j], last = c->slots[--c->count];
    c->slots[p] = last;
    rs.keys[last].pos[j] = p;
    c->used -= rockSizingCost(e, j);
    e->members &= ~(1u << j);
    e->paged &= ~(1u << j);
}

static uint32_t rockSizingCacheField(const void *p, uint32_t i) {
    return rs.keys[((const rockSizingCache *)p)->slots[i]].field;
}

/* Share of cache j's accesses that miss (`a` the sample's accesses): its
 * fine cache's estimate where there is one that has counted enough. */
static double rockSizingMissShare(int j, double a) {
    double fine = rockSizingFineMissShare(j);
    return fine >= 0 ? fine : rs.cache[j].misses / a;
}

/* Evict from cache j until its values fit its share of the bytes. */
static void rockSizingFit(int j) {
    rockSizingCache *c = &rs.cache[j];
    double cap = rs.share[j] * (double)rs.bytes;
    while ((double)c->used > cap && c->count)
        rockSizingCacheDel(j, c->slots[rockSizingVictim(c->count, rockSizingCacheField, c)]);
}

static void rockSizingFitAll(void) {
    for (int j = 0; j < ROCK_SIZING_CACHES; j++) rockSizingFit(j);
    rockSizingFineFitAll((double)rs.bytes);
}

/* Change what key k's value weighs. */
static void rockSizingSetValue(uint32_t k, size_t size, int movable) {
    rockSizingKey *e = &rs.keys[k];
    if (size > UINT32_MAX) size = UINT32_MAX;
    if (e->movable) {
        rs.bytes -= e->size;
        rs.movable_n--;
    }
    for (int j = 0; j < ROCK_SIZING_CACHES; j++)
        if (e->members & (1u << j)) rs.cache[j].used = rs.cache[j].used - e->size + size;
    e->size = (uint32_t)size;
    e->movable = movable != 0;
    if (e->movable) {
        rs.bytes += e->size;
        rs.movable_n++;
    } else {
        for (int j = 0; j < ROCK_SIZING_CACHES; j++)
            if (e->members & (1u << j)) rockSizingCacheDel(j, k);
    }
}

/* Put key k in every cache it is not in (its value is in RAM at any size). */
static void rockSizingResident(uint32_t k) {
    if (!rs.keys[k].movable) return;
    for (int j = 0; j < ROCK_SIZING_CACHES; j++)
        if (!(rs.keys[k].members & (1u << j))) rockSizingCacheAdd(j, k, 0);
}

/* Take key k (at table slot `slot`) out of the model. */
static void rockSizingDrop(uint32_t k, uint32_t slot) {
    rockSizingSetValue(k, 0, 0); /* out of every cache and of the bytes */
    rockSizingIndexDelete(&rs.index, slot);
    uint32_t last = --rs.n;
    if (k != last) {
        rs.keys[k] = rs.keys[last];
        rs.index.table[rockSizingSlot(rs.keys[k].id)] = k + 1;
        for (int j = 0; j < ROCK_SIZING_CACHES; j++)
            if (rs.keys[k].members & (1u << j)) rs.cache[j].slots[rs.keys[k].pos[j]] = (uint16_t)k;
    }
}

/* The sample outgrew the model's memory: lower the threshold by a quarter
 * until it fits again, dropping the keys above it. */
static void rockSizingShrink(void) {
    while (rs.n > rs.max) {
        rock_sizing_threshold = rock_sizing_threshold * 3 / 4;
        if (rock_sizing_threshold == 0) rock_sizing_threshold = 1;
        rockSizingFineThreshold(rock_sizing_threshold);
        for (uint32_t k = rs.n; k-- > 0;) {
            if ((rs.keys[k].id & 0xffffffffULL) >= rock_sizing_threshold) rockSizingDrop(k, rockSizingSlot(rs.keys[k].id));
        }
    }
    rockSizingFitAll();
}

static void rockSizingSetEntry(uint32_t k, sds key);

/* A new key at an empty table slot: returns its index. */
static uint32_t rockSizingNew(uint32_t slot, uint64_t id, sds key) {
    uint32_t k = rs.n++;
    memset(&rs.keys[k], 0, sizeof(rs.keys[k]));
    rs.keys[k].id = id;
    rockSizingSetEntry(k, key);
    rs.index.table[slot] = k + 1;
    return k;
}

size_t rockSizingValueSize(int dbid, sds key, robj *val, int *movable) {
    /* A list emptied by the command that is running (its keyspace event
     * comes before its deletion) can be looked up by a module's callback:
     * objectComputeSize() would read its missing first node. */
    if ((val->type == OBJ_LIST && listTypeLength(val) == 0) || rockCollectionSize(val) == 0) {
        *movable = 0;
        return sizeof(robj);
    }
    *movable = rockEvictWouldMove(server.db + dbid, key, val);
    robj keyobj;
    initStaticStringObject(keyobj, key);
    return objectComputeSize(&keyobj, val, 5, dbid);
}

/* Note the hot-clean entry key k's value would have (`key` its name). */
static void rockSizingSetEntry(uint32_t k, sds key) {
    rs.keys[k].entry = rockSizingEntryUnits(key);
}

/* ---------------------------------------------------------------------------
 * Life cycle
 * ------------------------------------------------------------------------ */

static void rockSizingRecheckClear(void) {
    while (rs_recheck_count) sdsfree(rs_recheck[--rs_recheck_count].key);
}

static void rockSizingFree(void) {
    rockSizingRecheckClear();
    rock_sizing_threshold = 0;
    zfree(rs.keys);
    zfree(rs.index.table);
    for (int j = 0; j < ROCK_SIZING_CACHES; j++) zfree(rs.cache[j].slots);
    rockSizingFineFree();
    memset(&rs, 0, sizeof(rs));
}

/* Start over (the counts included): empty sample, every key sampled. */
void rockSizingReset(void) {
    if (rs.memory == 0) return;
    rs.n = 0;
    memset(rs.index.table, 0, sizeof(uint32_t) * (rs.index.mask + 1));
    for (int j = 0; j < ROCK_SIZING_CACHES; j++) {
        rs.cache[j].count = 0;
        rs.cache[j].used = 0;
        rs.cache[j].misses = 0;
    }
    rockSizingFineClear();
    rock_sizing_threshold = ROCK_SIZING_ALL / (rock.sizing_sample_every > 0 ? rock.sizing_sample_every : 1);
    rs.every = rock.sizing_sample_every;
    rs.bytes = 0;
    rs.movable_n = 0;
    rs.filling = 0;
    for (int d = 0; server.db && d < server.dbnum; d++)
        if (dictSize(server.db[d].dict)) rs.filling = 1;
    rs.fill_db = 0;
    rs.fill_cursor = 0;
    rs.fixed_accesses = 0;
    rs.sampled = 0;
    rs.base = rock_ks_stats.value_hits_ram + rock_ks_stats.value_hits_disk;
    rockSizingFineRecount(rs.base);
    rockSizingCachePolicy((server.maxmemory_policy & MAXMEMORY_FLAG_LFU) != 0);
    rs.volatile_only = rockVolatileOnly();
    rockSizingRecheckClear();
    rockSizingFineThreshold(rock_sizing_threshold);
}

/* CONFIG RESETSTAT: the counts start again (the value_hits_* counters are
 * reset with them); what the caches hold stays. */
void rockSizingResetStats(void) {
    for (int j = 0; j < ROCK_SIZING_CACHES; j++) rs.cache[j].misses = 0;
    rs.fixed_accesses = 0;
    rs.sampled = 0;
    rs.base = 0;
    rockSizingFineRecount(0);
}

/* The model's budget: rock-sizing-memory, and at most a 64th of maxmemory,
 * so that a server with a small maxmemory keeps its room for data. */
static long long rockSizingBudget(void) {
    long long budget = rock.sizing_memory;
    if (budget && server.maxmemory && (unsigned long long)budget > server.maxmemory / 64)
        budget = (long long)(server.maxmemory / 64);
    if (rock.sizing_memory && budget < 1) budget = 1; /* the smallest model */
    return budget;
}

/* Build the model for its budget (at start-up, and when rock-sizing-memory
 * or rock-sizing-sample-every is set; not when maxmemory changes, so that
 * used_memory does not jump under a CONFIG SET maxmemory): as many keys as
 * the bytes hold, all allocated now. A new budget or rate starts over. */
void rockSizingConfigure(void) {
    long long budget = rockSizingBudget();
    if (rs.memory && rs.configured == budget && rs.every != rock.sizing_sample_every) {
        rockSizingReset(); /* a new rate: start over */
        return;
    }
    if (rs.configured == budget && (rs.memory || budget == 0)) return;
    rockSizingFree();
    rs.configured = budget;
    if (budget == 0) return;
    /* Per key of the sample: its record, its positions, its table slots,
     * and the fine caches' residents it stands for (each with up to four
     * table slots). */
    size_t per = sizeof(rockSizingKey) + ROCK_SIZING_CACHES * sizeof(uint16_t) + 4 * sizeof(uint32_t) +
                 rockSizingFinePerKey();
    size_t max = (size_t)budget / per;
    if (max < ROCK_SIZING_MIN_KEYS) max = ROCK_SIZING_MIN_KEYS;
    if (max > ROCK_SIZING_MAX_KEYS) max = ROCK_SIZING_MAX_KEYS;
    rs.max = (uint32_t)max;
    rs.keys = zmalloc(sizeof(rockSizingKey) * (max + 1));
    rockSizingIndexInit(&rs.index, rs.keys, sizeof(rockSizingKey), max);
    rs.memory = zmalloc_size(rs.keys) + zmalloc_size(rs.index.table);
    for (int j = 0; j < ROCK_SIZING_CACHES; j++) {
        rs.cache[j].slots = zmalloc(sizeof(uint16_t) * (max + 1));
        rs.memory += zmalloc_size(rs.cache[j].slots);
        rs.share[j] = rockSizingShare(j);
    }
    rs.memory += rockSizingFineAlloc((uint32_t)max);
    rockSizingCacheSeed();
    rs.configured = budget;
    rockSizingReset();
}

/* ---------------------------------------------------------------------------
 * Input: accesses, writes, deletions
 * ------------------------------------------------------------------------ */

static int rockSizingLearn(int dbid, sds key, robj *val, uint64_t id);

/* The policy changed kind (LRU <-> LFU: the fields kept mean nothing now;
 * allkeys-* <-> volatile-*: what can move is another set): start over. */
static void rockSizingCheckPolicy(void) {
    int lfu = (server.maxmemory_policy & MAXMEMORY_FLAG_LFU) != 0;
    if (lfu != rockSizingCacheLfu() || rockVolatileOnly() != rs.volatile_only) rockSizingReset();
}

/* Whether each key noted by rockSizingModified() can move, now that its
 * command is done. One written by the command counts as in RAM at any
 * size (rockSizingWrite()); one on disk keeps its size. */
static void rockSizingRecheck(void) {
    while (rs_recheck_count) {
        int dbid = rs_recheck[--rs_recheck_count].dbid;
        sds key = rs_recheck[rs_recheck_count].key;
        uint64_t id;
        dictEntry *de = dbid < server.dbnum ? dictFind(server.db[dbid].dict, key) : NULL;
        if (de && rockSizingSampled(dbid, key, &id) && !rockIsColdOrPoint(dictGetVal(de))) {
            int movable;
            size_t size = rockSizingValueSize(dbid, key, dictGetVal(de), &movable);
            rockSizingFineSeen(id, key, size, movable, ((robj *)dictGetVal(de))->lru, 0, 0, (double)rs.bytes);
        }
        if (de && rockSizingSampled(dbid, key, &id) && rs.index.table[rockSizingSlot(id)]) {
            uint32_t k = rs.index.table[rockSizingSlot(id)] - 1;
            robj *val = dictGetVal(de);
            if (rockIsColdOrPoint(val)) {
                int ttl = dictFind(server.db[dbid].expires, key) != NULL;
                rockSizingSetValue(k, rs.keys[k].size, rs.keys[k].size > 0 && (!rs.volatile_only || ttl));
            } else {
                int movable;
                size_t size = rockSizingValueSize(dbid, key, val, &movable);
                int was = rs.keys[k].movable;
                rockSizingSetValue(k, size, movable);
                if (movable && !was) rockSizingResident(k);
            }
        }
        sdsfree(key);
    }
    rockSizingFitAll();
}

/* A command modified sampled-or-not key `key` of `db` under volatile-*
 * (signalModifiedKey()): if sampled, whether it can move is looked at
 * again after its command. */
void rockSizingModified(redisDb *db, sds key) {
    uint64_t id;
    if (!rs.memory || !rockVolatileOnly() || !rockSizingSampled(db->id, key, &id)) return;
    if (rs.index.table[rockSizingSlot(id)] == 0 && !rockSizingFineOn()) return;
    if (rs_recheck_count == ROCK_SIZING_RECHECK) rockSizingRecheck();
    rs_recheck[rs_recheck_count].dbid = db->id;
    rs_recheck[rs_recheck_count].key = sdsdup(key);
    rs_recheck_count++;
}

/* A command read the value `val` of sampled key `key` (in RAM now, wherever
 * it was); `id` its rockSizingHash(). */
void rockSizingAccess(redisDb *db, sds key, robj *val, uint64_t id) {
    rockSizingCheckPolicy();
    int movable;
    size_t size = rockSizingValueSize(db->id, key, val, &movable);
    /* A fine cache that does not hold the key misses it, even at the
     * key's first access (which the sample's caches take uncounted, its
     * past unknown): it keeps nothing of the keys out of it, and at its
     * size a key not among its few recent or frequent ones would not be
     * in RAM. */
    rockSizingFineSeen(id, key, size, movable, val->lru, 1, 1, (double)rs.bytes);
    if (!rockSizingInSample(id)) return;
    uint32_t slot = rockSizingSlot(id);
    if (rs.index.table[slot] == 0) {
        /* First seen: its past is unknown; it is in RAM now. */
        uint32_t k = rockSizingNew(slot, id, key);
        rs.keys[k].field = val->lru;
        rockSizingSetValue(k, size, movable);
        rockSizingResident(k);
        if (rs.n > rs.max) rockSizingShrink();
        else rockSizingFitAll();
        return;
    }
    uint32_t k = rs.index.table[slot] - 1;
    rs.keys[k].field = val->lru;
    rockSizingSetValue(k, size, movable);
    rs.sampled++;
    if (!rs.keys[k].movable) return;
    double w = (double)ROCK_SIZING_ALL / (double)rock_sizing_threshold;
    for (int j = 0; j < ROCK_SIZING_CACHES; j++) {
        if (rs.keys[k].members & (1u << j)) continue;
        rs.cache[j].misses += w;
        rockSizingCacheAdd(j, k, 1);
    }
    rockSizingFitAll();
}

/* Any access (sampled or not) served from RAM: one of a value eviction
 * would not move is a hit at any maxmemory. Counted exactly, not estimated
 * from the sample as misses are: the hottest keys weigh most on this share
 * (the top one of Zipf 0.99 over 200,000 keys takes 8% of the accesses),
 * and a sample holds them or not by chance. */
void rockSizingHitInRam(redisDb *db, sds key, robj *val) {
    if (rs.memory && !rockEvictWouldMove(db, key, val)) rs.fixed_accesses++;
}

/* Sampled key `key` got a new value `val` (dbAdd(), dbOverwrite()): a value
 * written is in RAM at any maxmemory. (A value modified in place was looked
 * up first: rockSizingAccess() saw it, at its size before the change.) */
void rockSizingWrite(redisDb *db, sds key, robj *val, uint64_t id) {
    rockSizingCheckPolicy();
    if (rockIsColdOrPoint(val)) {
        /* A value on disk under a new key (a warm start's load, RENAME):
         * not written, but there. */
        if (rockSizingInSample(id) && rs.index.table[rockSizingSlot(id)] == 0) rockSizingLearn(db->id, key, val, id);
        return;
    }
    int movable = rockSentinelOf(val) != NULL;
    size_t size = 0;
    /* A collection is added empty and filled after (dbAdd() from LPUSH,
     * SADD, ...): its size is taken at its next access (a fine cache takes
     * it in then). */
    if (val->type == OBJ_STRING) size = rockSizingValueSize(db->id, key, val, &movable);
    rockSizingFineSeen(id, key, size, movable, val->lru, val->type == OBJ_STRING, 0, (double)rs.bytes);
    if (!rockSizingInSample(id)) return;
    uint32_t slot = rockSizingSlot(id);
    uint32_t k = rs.index.table[slot] ? rs.index.table[slot] - 1 : rockSizingNew(slot, id, key);
    if (val->type != OBJ_STRING) size = rs.keys[k].size;
    rs.keys[k].field = val->lru;
    rockSizingSetValue(k, size, movable);
    rockSizingResident(k);
    if (rs.n > rs.max) rockSizingShrink();
    else rockSizingFitAll();
}

/* `key` left the keyspace. */
void rockSizingRemove(redisDb *db, sds key) {
    uint64_t id;
    if (!rockSizingSampled(db->id, key, &id)) return;
    rockSizingFineForget(id);
    uint32_t slot = rockSizingSlot(id);
    if (rs.index.table[slot]) rockSizingDrop(rs.index.table[slot] - 1, slot);
}

/* ---------------------------------------------------------------------------
 * Starting over with keys already there
 * ------------------------------------------------------------------------ */

/* After the model starts over (a policy of the other kind, SWAPDB, a new
 * budget or rate), the keys already in the keyspace are unknown to it until
 * a command reads or writes them. Left so, its sample holds only the keys
 * touched since: the values' bytes it sizes the caches by are those of the
 * working set seen so far, a key's first access counts as no miss, and a
 * Zipf workload's tail, which misses in RAM, is missing from both. 20,000
 * x 1 KB under allkeys-lru, switched to allkeys-lfu after 60,000 GETs:
 * 0.912 predicted at 2 x where 0.862 is measured. So a reset with keys
 * there scans the keyspace in the background and takes in every sampled
 * key it has not seen (rockSizingLearn()); the counts start when the scan
 * is done (until then a key's first access is still uncounted), and ROCK
 * SIZING says it is learning meanwhile. A FLUSHALL resets the model before
 * the keys go, so a full sync or DEBUG RELOAD scans what it loaded (the
 * keys written are known already: the scan only restarts the counts). */

#define ROCK_SIZING_FILL_VISITS 20000 /* buckets and keys looked at per cron tick (100 ms) ... */
#define ROCK_SIZING_FILL_TAKEN 1000   /* ...and sampled keys taken in */

typedef struct rockSizingFillCtx {
    int dbid;
    long visits, taken;
} rockSizingFillCtx;

/* The field of a value colder than any other under the policy: an LFU
 * counter of 0, or an LRU clock half its range ago (97 days: it stays that
 * old, where one tick ago would read as new once the clock has moved and
 * wrapped round). */
static uint32_t rockSizingColdest(void) {
    if (rockSizingCacheLfu()) return (uint32_t)(LFUGetTimeInMinutes() << 8);
    return (uint32_t)((LRU_CLOCK() + LRU_CLOCK_MAX / 2 + 1) & LRU_CLOCK_MAX);
}

/* Take in sampled key `key` of db `dbid` (id `id`, not in the sample yet,
 * value `val`), whose past the model does not know, into every cache, as a
 * write would: a value in RAM with its size, its field and its hot-clean
 * entry if it has one; a value on disk, whose size and field are on disk
 * only, with the mean size of the sampled values and the coldest field, so
 * that a cache evicts it first (the policy put it there) and only a cache
 * with room for all of it keeps it. A split collection on disk is taken at
 * that mean size too, until its next access. Returns 1 if taken in. */
static int rockSizingLearn(int dbid, sds key, robj *val, uint64_t id) {
    size_t size;
    int movable, paged = 0;
    uint32_t field;
    if (!rockIsColdOrPoint(val)) {
        size = rockSizingValueSize(dbid, key, val, &movable);
        field = val->lru;
        paged = dictFind(rock_ks.dbs[dbid].clean, key) != NULL;
    } else {
        /* No size to give it (no sampled value weighed yet): its first
         * access will. */
        if (rs.movable_n == 0 || rs.bytes / rs.movable_n == 0) return 0;
        size = (size_t)(rs.bytes / rs.movable_n);
        movable = !rs.volatile_only || dictFind(server.db[dbid].expires, key) != NULL;
        field = rockSizingColdest();
    }
    uint32_t k = rockSizingNew(rockSizingSlot(id), id, key);
    rs.keys[k].field = field;
    rockSizingSetValue(k, size, movable);
    if (rs.keys[k].movable)
        for (int j = 0; j < ROCK_SIZING_CACHES; j++) rockSizingCacheAdd(j, k, paged);
    if (rs.n > rs.max) rockSizingShrink();
    else rockSizingFitAll();
    return 1;
}

static void rockSizingFillKey(void *privdata, const dictEntry *de) {
    rockSizingFillCtx *ctx = privdata;
    sds key = dictGetKey(de);
    ctx->visits++;
    uint64_t id = rockSizingHash(ctx->dbid, (const unsigned char *)key, sdslen(key));
    if (!rockSizingInSample(id) || rs.index.table[rockSizingSlot(id)]) return;
    ctx->taken += rockSizingLearn(ctx->dbid, key, dictGetVal(de), id);
}

/* The scan is done: the counts start now. */
static void rockSizingFillDone(void) {
    rs.filling = 0;
    rockSizingResetStats();
    rs.base = rock_ks_stats.value_hits_ram + rock_ks_stats.value_hits_disk;
    rockSizingFineRecount(rs.base);
}

/* One cron tick of the scan: at most ROCK_SIZING_FILL_VISITS buckets and
 * keys (a sparse table's empty buckets count: it is the walk that costs)
 * and ROCK_SIZING_FILL_TAKEN keys taken in (each weighs its value and
 * enters 16 caches): about a millisecond; 10,000,000 keys take 50 s. */
static void rockSizingFill(void) {
    rockSizingFillCtx ctx = {0, 0, 0};
    while (ctx.visits < ROCK_SIZING_FILL_VISITS && ctx.taken < ROCK_SIZING_FILL_TAKEN) {
        if (rs.fill_db >= server.dbnum) {
            rockSizingFillDone();
            return;
        }
        dict *d = server.db[rs.fill_db].dict;
        ctx.dbid = rs.fill_db;
        ctx.visits++;
        if (dictSize(d)) rs.fill_cursor = dictScan(d, rs.fill_cursor, rockSizingFillKey, NULL, &ctx);
        if (dictSize(d) == 0 || rs.fill_cursor == 0) {
            rs.fill_db++;
            rs.fill_cursor = 0;
        }
    }
}

/* ---------------------------------------------------------------------------
 * Output: the curve, the model's state, the values in RAM
 * ------------------------------------------------------------------------ */

size_t rockSizingMemory(void) {
    return rs.memory;
}

long long rockSizingKeys(void) {
    return rs.n;
}

/* R, the share of keys sampled. */
double rockSizingRate(void) {
    return rs.memory ? (double)rock_sizing_threshold / (double)ROCK_SIZING_ALL : 0;
}

static double rockSizingAccesses(void) {
    long long all = rock_ks_stats.value_hits_ram + rock_ks_stats.value_hits_disk - rs.base;
    return all > 0 ? (double)all : 0;
}

int rockSizingModelReady(const char **why) {
    static char buf[128];
    if (rs.memory) rockSizingRecheck();
    if (rs.memory == 0) {
        *why = "the sizing model is off (rock-sizing-memory 0)";
        return 0;
    }
    if (rs.filling) {
        snprintf(buf, sizeof(buf), "the model started over and is still learning the keys already there (db %d of %d)",
                 rs.fill_db + 1, server.dbnum);
        *why = buf;
        return 0;
    }
    if (rs.sampled >= ROCK_SIZING_MIN_SAMPLED && rs.bytes == 0) {
        *why = "no sampled key has a value eviction would move (too small, or without a TTL under volatile-*)";
        return 0;
    }
    if (rs.sampled < ROCK_SIZING_MIN_SAMPLED || rockSizingAccesses() == 0) {
        snprintf(buf, sizeof(buf), "not enough value accesses sampled yet (%lld of %d)", rs.sampled,
                 ROCK_SIZING_MIN_SAMPLED);
        *why = buf;
        return 0;
    }
    return 1;
}

/* The model's background work, every cron tick (100 ms). */
void rockSizingModelCron(void) {
    if (rs.memory == 0) return;
    rockSizingCheckPolicy(); /* a policy switched with no access since: start over now */
    rockSizingRecheck();
    rockSizingFineCheck(rock_sizing_threshold);
    if (rs.filling) rockSizingFill();
}

/* The curve: shares of all value bytes, small to large, and the predicted
 * share of accesses from RAM at each (0: no value in RAM; 1: all). Made
 * non-decreasing (a sampled policy may dip by chance). Returns the points. */
int rockSizingCurve(double *x, double *r) {
    double a = rockSizingAccesses();
    int n = 0;
    x[n] = 0;
    r[n++] = (double)rs.fixed_accesses / a;
    for (int j = ROCK_SIZING_CACHES - 1; j >= 0; j--) {
        x[n] = rs.share[j];
        r[n++] = 1 - rockSizingMissShare(j, a);
    }
    x[n] = 1;
    r[n++] = 1;
    for (int i = 0; i < n; i++) {
        if (r[i] < 0) r[i] = 0;
        if (r[i] > 1) r[i] = 1;
        if (i && r[i] < r[i - 1]) r[i] = r[i - 1];
    }
    return n;
}

double rockSizingValueBytes(void) {
    return (double)rs.bytes / rockSizingRate();
}

double rockSizingValueCount(void) {
    return rs.n ? (double)rs.n / rockSizingRate() : 0;
}
