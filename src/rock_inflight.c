/* rock_inflight.c -- redis-rock: reads in flight, pins, per-client read state.
 *
 * The bottom of the keyspace layer's read side, shared by the page-in path
 * (rock_read.c), arrival order (rock_order.c), read-ahead (rock_ahead.c) and
 * point reads (rock_point.c), and asked by the keyspace hooks and eviction:
 *   - rock_io: the jobs not yet completed, the ones in flight by RocksDB
 *     key (so that several clients share one read), the pins, the per-key
 *     queues and the clients waiting for the writer;
 *   - a client's read state (rockClient());
 *   - voiding: a read whose key changed meanwhile (deleted, overwritten,
 *     re-evicted, flushed) is marked so that its result is thrown away;
 *   - pins: a value paged in for a waiting command can't be evicted again
 *     before that command has run.
 * It calls nothing above it: the files that use it call in. */

#include "server.h"
#include "rock_read.h"

rockReadIo rock_io;

static dictType rockSkeyDictType = {
    dictSdsHash, NULL, NULL, dictSdsKeyCompare, NULL, NULL, NULL
};

static dictType rockPinDictType = {
    dictSdsHash, NULL, NULL, dictSdsKeyCompare, dictSdsDestructor, NULL, NULL
};

/* The queue lists are freed by hand when they empty. */
static dictType rockQueueDictType = {
    dictSdsHash, NULL, NULL, dictSdsKeyCompare, dictSdsDestructor, NULL, NULL
};

rockClientState *rockClient(client *c) {
    if (c->rock == NULL) {
        c->rock = zcalloc(sizeof(rockClientState));
        c->rock->pins = listCreate();
        c->rock->places = listCreate();
        listSetFreeMethod(c->rock->places, (void (*)(void *))sdsfree);
    }
    return c->rock;
}

/* Is the value of `key` pinned: paged in for a command that has not run? */
int rockIsPinned(redisDb *db, sds key) {
    static sds buf; /* reused: eviction asks this of many values */
    if (rock_io.pinned == NULL || dictSize(rock_io.pinned) == 0) return 0;
    buf = rockStorageKeyInto(buf, db->id, key);
    int pinned = dictFind(rock_io.pinned, buf) != NULL;
    if (sdsalloc(buf) > 1024) { /* a long key: don't keep its room */
        sdsfree(buf);
        buf = NULL;
    }
    return pinned;
}

/* How many values are pinned now. */
unsigned long rockPinnedCount(void) {
    return rock_io.pinned ? dictSize(rock_io.pinned) : 0;
}

/* The RAM of the values pinned now (sampled as MEMORY USAGE does). Eviction
 * asks it only once nothing else could move: a page-in that took memory
 * over maxmemory must not hand the command that waits for it over to the
 * policy (-OOM, or allkeys-* deleting keys, the one read included). */
size_t rockPinnedMemory(void) {
    if (rock_io.pinned == NULL || dictSize(rock_io.pinned) == 0) return 0;
    size_t bytes = 0;
    dictIterator *di = dictGetIterator(rock_io.pinned);
    dictEntry *pe;
    while ((pe = dictNext(di)) != NULL) {
        sds skey = dictGetKey(pe);
        if (sdslen(skey) < 4) continue;
        redisDb *db = rockDbBySid(rockGetSid((const unsigned char *)skey));
        if (db == NULL) continue;
        sds key = sdsnewlen(skey + 4, sdslen(skey) - 4);
        dictEntry *de = dictFind(db->dict, key);
        if (de && !rockIsCold(dictGetVal(de))) {
            robj keyobj;
            initStaticStringObject(keyobj, key);
            bytes += objectComputeSize(&keyobj, dictGetVal(de), 5, db->id);
        }
        sdsfree(key);
    }
    dictReleaseIterator(di);
    return bytes;
}

void rockPin(client *c, sds skey) {
    dictEntry *de = dictFind(rock_io.pinned, skey);
    if (de == NULL) {
        de = dictAddRaw(rock_io.pinned, sdsdup(skey), NULL);
        dictSetSignedIntegerVal(de, 0);
    }
    dictSetSignedIntegerVal(de, dictGetSignedIntegerVal(de) + 1);
    listAddNodeTail(rockClient(c)->pins, sdsdup(skey));
}

/* Told of every value no longer pinned, by its storage key: eviction,
 * which does not look at pinned values again until then, registers it. */
static void (*rock_on_unpinned)(sds skey);

void rockInflightOnUnpinned(void (*proc)(sds skey)) {
    rock_on_unpinned = proc;
}

void rockUnpinAll(client *c) {
    if (c->rock == NULL) return;
    listNode *ln;
    while ((ln = listFirst(c->rock->pins)) != NULL) {
        sds skey = listNodeValue(ln);
        dictEntry *de = dictFind(rock_io.pinned, skey);
        if (de) {
            int64_t n = dictGetSignedIntegerVal(de) - 1;
            if (n <= 0) {
                dictDelete(rock_io.pinned, skey);
                if (rock_on_unpinned) rock_on_unpinned(skey);
            } else {
                dictSetSignedIntegerVal(de, n);
            }
        }
        sdsfree(skey);
        listDelNode(c->rock->pins, ln);
    }
}

/* A new job for `skey` (which it takes), registered as in flight; the caller
 * hands it to the readers. */
rockReadJob *rockNewJob(redisDb *db, sds key, sds skey) {
    rockReadJob *job = zcalloc(sizeof(*job));
    job->skey = skey;
    job->key = sdsdup(key);
    job->sid = rock_store.sids[db->id];
    job->waiters = listCreate();
    job->start = getMonotonicUs();
    /* The read may land before or after that update commits: patched in at
     * completion either way. */
    job->has_access = rockPendingAccess(skey, &job->access);
    listAddNodeTail(rock_io.jobs, job);
    job->node = listLast(rock_io.jobs);
    dictAdd(rock_io.inflight, job->skey, job);
    return job;
}

/* The key behind `skey` changed (deleted, overwritten, re-evicted, paged in
 * synchronously): a read in flight for it must not be applied. */
void rockVoidRead(sds skey) {
    if (rock_io.inflight == NULL || dictSize(rock_io.inflight) == 0) return;
    rockReadJob *job = dictFetchValue(rock_io.inflight, skey);
    if (job == NULL) return;
    job->voided = 1;
    dictDelete(rock_io.inflight, skey);
}

/* A storage id was dropped (FLUSHDB/FLUSHALL): void its reads. */
void rockVoidReadsOfSid(uint32_t sid) {
    if (rock_io.jobs == NULL) return;
    listIter li;
    listNode *ln;
    listRewind(rock_io.jobs, &li);
    while ((ln = listNext(&li)) != NULL) {
        rockReadJob *job = listNodeValue(ln);
        if (job->sid == sid && !job->voided) {
            job->voided = 1;
            if (!job->point) dictDelete(rock_io.inflight, job->skey);
        }
    }
}

/* The database whose storage id is `sid` now, or NULL (flushed since). */
redisDb *rockDbBySid(uint32_t sid) {
    for (int j = 0; j < server.dbnum; j++)
        if (rock_store.sids[j] == sid) return server.db + j;
    return NULL;
}

/* The db `SELECT index` switches to, or NULL when index is not a valid one. */
redisDb *rockSelectedDb(robj *index) {
    long long id;
    if (getLongLongFromObject(index, &id) != C_OK || id < 0 || id >= server.dbnum) return NULL;
    return server.db + id;
}

/* The error a client gets when a value it needs can't be read. */
void rockReplyReadFailed(client *c, const char *key) {
    addReplyErrorFormat(c, "rock: can't read the value of '%s' from disk (see the server log)", key);
}

/* Reads queued or in a reader's hands (ROCK REPORT reads_in_flight). */
long long rockReadsInFlight(void) {
    return rock_io.jobs ? (long long)listLength(rock_io.jobs) : 0;
}

void rockInflightInit(void) {
    rock_io.jobs = listCreate();
    rock_io.inflight = dictCreate(&rockSkeyDictType);
    rock_io.pinned = dictCreate(&rockPinDictType);
    rock_io.queues = dictCreate(&rockQueueDictType);
    rock_io.write_waiters = listCreate();
}
