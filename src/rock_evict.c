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
 * draws several samples so a mostly-cold keyspace still finds hot values.
 *
 * It also owns the debug mode rock-debug-evict-all: after every command,
 * every value that may have become hot (touched by a command, modified, or
 * paged in) moves to disk, whatever its size, and the writes are committed
 * before the next command; so each next access goes through the read path.
 * The whole keyspace is swept when the mode is switched on and after the
 * dataset is replaced (load, full sync, FLUSHALL, SWAPDB, DEBUG). */

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
        if (rockIsCold(o) || rockSentinelOf(o) == NULL) continue;
        if (rockValueTooSmall(o, NULL)) continue;
        if (rockIsPinned(db, dictGetKey(de))) continue;
        unsigned long long score = rockColdness(o);
        if (best == NULL || score > *best_score) {
            best = de;
            *best_score = score;
        }
    }
    return best;
}

/* How many bytes of values may wait for the writer thread: enough to batch
 * well, small next to maxmemory. */
static long long rockPendingLimit(void) {
    long long limit = (long long)server.maxmemory / 8;
    if (limit < 1024 * 1024) limit = 1024 * 1024;
    if (limit > 64 * 1024 * 1024) limit = 64 * 1024 * 1024;
    return limit;
}

/* Returns C_OK when memory is under maxmemory, will be once the writer has
 * committed what is pending, or when it made progress and ran out of its
 * time budget (the next command continues); C_ERR when not enough could be
 * moved, so that upstream's policy decides.
 *
 * Values handed to the writer are still in RAM (as records in the pending
 * buffer) until committed, so they count as freed already: eviction does
 * not run ahead of the writer. When the buffer is full and memory is well
 * over the limit, the event loop waits for the writer (back-pressure). */
int rockPerformEvictions(void) {
    size_t tofree;
    if (!rock.db || rock.write_error || !rockDiskHasRoom()) return C_ERR;
    if (getMaxmemoryState(NULL, NULL, &tofree, NULL) == C_OK) return C_OK;

    long long limit = rockPendingLimit();
    long long need = (long long)tofree - rockPendingBytes();
    if (need <= 0) return C_OK;

    monotime timer;
    elapsedStart(&timer);
    static unsigned int next_db = 0;
    long long freed = 0, moved = 0, iterations = 0;
    int rounds = 0, timed_out = 0;

    while (freed < need) {
        if (rockPendingBytes() >= limit) {
            /* The writer is behind. Let commands run while the overshoot
             * is small; beyond that, wait for it. */
            if (need - freed <= limit) return C_OK;
            if (!rockWriteWaitOne() || rock.write_error) break;
            continue;
        }
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
        long long before = (long long)zmalloc_used_memory() - rockPendingBytes();
        int ret = rockEvictEntry(bestdb, best);
        if (ret == ROCK_EVICT_ERROR) break;
        if (ret == ROCK_EVICT_OK) {
            rounds = 0;
            moved++;
            freed += before - ((long long)zmalloc_used_memory() - rockPendingBytes());
        } else if (++rounds >= ROCK_EVICT_SAMPLE_ROUNDS) {
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
     * upstream's EVICT_RUNNING); else nothing more can move: the policy. */
    if (freed >= need) return C_OK;
    return (timed_out && moved) ? C_OK : C_ERR;
}

/* ---------------------------------------------------------------------------
 * rock-debug-evict-all
 * ------------------------------------------------------------------------ */

static void rockTouchedInit(void) {
    if (rock.touched) return;
    rock.touched = zmalloc(sizeof(dict *) * server.dbnum);
    for (int j = 0; j < server.dbnum; j++) rock.touched[j] = dictCreate(&setDictType);
    rock.sweep_all = 1;
}

/* A key of `db` may now have its value in RAM. */
void rockTouched(redisDb *db, sds key) {
    if (!rock.debug_evict_all || !rock.db || db->id < 0 || db->id >= server.dbnum) return;
    rockTouchedInit();
    dictEntry *de = dictAddRaw(rock.touched[db->id], key, NULL);
    if (de) dictSetKey(rock.touched[db->id], de, sdsdup(key));
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
    if (!rock.debug_evict_all || !rock.db) {
        if (rock.touched) {
            for (int j = 0; j < server.dbnum; j++) dictRelease(rock.touched[j]);
            zfree(rock.touched);
            rock.touched = NULL;
        }
        return;
    }
    if (server.loading || isInsideYieldingLongCommand()) return;
    rockTouchedInit();
    if (rock.sweep_all) {
        for (int j = 0; j < server.dbnum; j++) {
            redisDb *db = server.db + j;
            dictEmpty(rock.touched[j], NULL);
            dictIterator *di = dictGetSafeIterator(db->dict);
            dictEntry *de;
            while ((de = dictNext(di)) != NULL)
                if (!rockSweepEntry(db, de)) rockTouched(db, dictGetKey(de));
            dictReleaseIterator(di);
        }
        rock.sweep_all = 0;
    } else {
        for (int j = 0; j < server.dbnum; j++) {
            dict *t = rock.touched[j];
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
