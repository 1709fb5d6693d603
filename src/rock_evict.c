/* rock_evict.c -- redis-rock: moving values to disk under maxmemory.
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
 * draws several samples so a mostly-cold keyspace still finds hot values. */

#include "server.h"

#define ROCK_EVICT_SAMPLE_ROUNDS 16   /* sampling rounds before giving up */
#define ROCK_EVICT_TIME_LIMIT_US 2000 /* per call; the rest waits for the next command */

/* How cold a value is: larger means a better victim. */
static unsigned long long rockColdness(robj *o) {
    if (server.maxmemory_policy & MAXMEMORY_FLAG_LFU)
        return 255 - LFUDecrAndReturn(o);
    return estimateObjectIdleTime(o);
}

/* Sample one database and return the coldest movable entry, or NULL. */
static dictEntry *rockSampleDb(redisDb *db, unsigned long long *best_score) {
    int volatile_only = (server.maxmemory_policy & MAXMEMORY_FLAG_ALLKEYS) == 0 &&
                        server.maxmemory_policy != MAXMEMORY_NO_EVICTION;
    dict *d = volatile_only ? db->expires : db->dict;
    if (dictSize(d) == 0) return NULL;

    dictEntry *samples[64];
    int count = dictGetSomeKeys(d, samples, server.maxmemory_samples * 4 > 64 ? 64 : server.maxmemory_samples * 4);
    dictEntry *best = NULL;
    for (int j = 0; j < count; j++) {
        dictEntry *de = samples[j];
        if (volatile_only) de = dictFind(db->dict, dictGetKey(de));
        if (de == NULL) continue;
        robj *o = dictGetVal(de);
        if (rockIsCold(o) || o->type >= ROCK_OBJ_TYPES || rock.cold[o->type] == NULL) continue;
        if (o->type == OBJ_STRING && rockValueTooSmall(o, NULL)) continue;
        if (rockIsPinned(db, dictGetKey(de))) continue;
        unsigned long long score = rockColdness(o);
        if (best == NULL || score > *best_score) {
            best = de;
            *best_score = score;
        }
    }
    return best;
}

/* Returns C_OK when memory is under maxmemory, or when it made progress and
 * ran out of its time budget (the next command continues); C_ERR when no
 * value could be moved, so that upstream's policy decides. */
int rockPerformEvictions(void) {
    size_t tofree;
    if (!rock.db || rock.disk_full) return C_ERR;
    if (getMaxmemoryState(NULL, NULL, &tofree, NULL) == C_OK) return C_OK;

    monotime timer;
    elapsedStart(&timer);
    static int next_db = 0;
    long long freed = 0, moved = 0;
    int rounds = 0;

    while (freed < (long long)tofree) {
        dictEntry *best = NULL;
        redisDb *bestdb = NULL;
        unsigned long long best_score = 0;
        for (int i = 0; i < server.dbnum; i++) {
            redisDb *db = server.db + (next_db++ % server.dbnum);
            unsigned long long score;
            dictEntry *de = rockSampleDb(db, &score);
            if (de && (best == NULL || score > best_score)) {
                best = de;
                bestdb = db;
                best_score = score;
            }
        }
        if (best == NULL) {
            if (++rounds >= ROCK_EVICT_SAMPLE_ROUNDS) break;
            continue;
        }
        rounds = 0;
        long long before = (long long)zmalloc_used_memory();
        int ret = rockEvictEntry(bestdb, best);
        if (ret == ROCK_EVICT_ERROR) break;
        if (ret == ROCK_EVICT_OK) {
            moved++;
            freed += before - (long long)zmalloc_used_memory();
        }
        if ((moved & 15) == 0 && elapsedUs(timer) > ROCK_EVICT_TIME_LIMIT_US) break;
    }

    if (freed >= (long long)tofree) return C_OK;
    return moved ? C_OK : C_ERR;
}
