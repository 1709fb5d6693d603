/* rock_load.c -- redis-rock: an RDB load over maxmemory: how many values
 * stay in RAM, and big collections bigger than RAM.
 *
 * Layer 3 (keyspace; docs/architecture.md, "Layers").
 *
 * Keyspace side (beside eviction, rock_evict.c). The load's hot share (the
 * section of that name below) decides from the RDB's key counts which values
 * a load keeps in RAM. Loading (an RDB at start-up,
 * DEBUG RELOAD, a replica's full sync, an AOF's RDB preamble) builds each
 * value whole in RAM before its key is added; rockLoadingMemoryCheck() then
 * moves values to disk key by key. A hash, set or sorted set bigger than
 * maxmemory would still pass the bound while it loads. This file spills it
 * instead, element by element, as it loads:
 *
 *   - rdbLoadObject() calls rockLoadingSpill() after each element it adds to
 *     a hash table, set or skiplist (patch 0035). Every ROCK_LOAD_CHECK
 *     elements, when used_memory is over maxmemory and the collection is big
 *     enough to be stored element by element (rock-split-min-elements), the
 *     elements in RAM are queued as element records of a new split version
 *     (rock_split.c's format, each served to readers until committed as a
 *     point write's would be) and removed from the object, and the writer is
 *     waited for every ROCK_LOAD_FLUSH elements (loading blocks anyway);
 *   - at the end of the value, rockLoadingObjectDone() (same patch) spills
 *     the rest, records the split state and the metadata record, and hands
 *     rdbLoadRio() the type's cold sentinel instead of the object: the key
 *     is added cold, as a key whose value was moved to disk, so nothing
 *     ever sees the partial object (a module's `loaded` notification
 *     included);
 *   - rockLoadingMemoryCheck(), right after the key, calls
 *     rockLoadingKeyDone(): the key is counted cold with the LRU/LFU field
 *     the RDB gave it (set on the shared sentinel by objectSetLRUOrLFU(),
 *     taken from there and put back), or, when rdbLoadRio() dropped it (an
 *     expired key on a master), its split state and records are deleted.
 *
 * Only into the server's own databases (not a diskless full sync's
 * temporary ones), never for a key already present (DEBUG RELOAD's merge
 * modes), and not while writes fail. Duplicate elements in a corrupt RDB
 * are caught by rdbLoadObject() only within what is in RAM at a time. */

#include "server.h"

/* Check memory every this many elements added to one collection. */
#define ROCK_LOAD_CHECK 1024
/* Wait for the writer after this many element records queued. */
#define ROCK_LOAD_FLUSH 1024

static struct {
    robj *val;          /* the collection being spilled (rdbLoadObject's) */
    sds key;
    int dbid;
    sds skey;
    rockSplitInfo *si;  /* its split state: version, queued writes */
    uint64_t spilled;   /* elements written so far */
    unsigned long added;/* elements added since the last memory check */
    int done;           /* handed over as the sentinel, key not yet seen */
    unsigned int sentinel_lru; /* the sentinel's field before rdbLoadRio() */
} rock_load;

static void rockLoadingPeak(void) {
    size_t used = zmalloc_used_memory();
    if ((long long)used > rock_ks_stats.loading_peak_memory) rock_ks_stats.loading_peak_memory = (long long)used;
}

/* Forget the spill state; with `drop`, the records written are deleted. */
static void rockLoadingForget(int drop) {
    if (rock_load.si == NULL) return;
    if (drop && rock_store.db) {
        rockWriteDeleteElements(rock_load.skey, rock_load.si->version);
        rockWriteDelete(rock_load.skey);
    }
    rockSplitInfoRelease(rock_load.si);
    sdsfree(rock_load.key);
    sdsfree(rock_load.skey);
    memset(&rock_load, 0, sizeof(rock_load));
}

/* Is the load going to the server's own databases? A diskless full sync
 * with repl-diskless-load swapdb loads into temporary ones. */
static int rockLoadingMainDbs(void) {
    return !(server.masterhost && server.repl_state == REPL_STATE_TRANSFER &&
             server.repl_diskless_load == REPL_DISKLESS_LOAD_SWAPDB);
}

static int rockLoadingSpillable(robj *o) {
    if (!rockSplitEncoding(o)) return 0;
    return rockCollectionSize(o) + (long long)(rock_load.val == o ? rock_load.spilled : 0) >=
           (rock.split_min_elements > 0 ? rock.split_min_elements : 1);
}

/* Queue element `ele` (value `val`, NULL for a set's member) as a record
 * of the collection being spilled. */
static void rockLoadingQueue(const char *ele, size_t elen, sds val) {
    sds ekey = rockSplitElementKey(NULL, rock_load.skey, sdslen(rock_load.skey), rock_load.si->version, ele, elen);
    rockWriteElement(ekey, val ? val : sdsempty(), rock_load.si, 1);
    if (++rock_load.spilled % ROCK_LOAD_FLUSH == 0) {
        rockLoadingPeak();
        rockWriteFlush();
    }
}

/* Move every element of `o` in RAM to the writer's queue, one at a time
 * (the RAM an element held is freed as its record is queued). */
static void rockLoadingMoveAll(robj *o) {
    if (o->type == OBJ_ZSET) {
        zset *zs = o->ptr;
        while (zs->zsl->length) {
            zskiplistNode *x = zs->zsl->header->level[0].forward;
            double score = x->score;
            memrev64ifbe(&score);
            rockLoadingQueue(x->ele, sdslen(x->ele), sdsnewlen(&score, 8));
            zsetDel(o, x->ele);
        }
        dictEmpty(zs->dict, NULL); /* its table: the dict was sized for all */
        return;
    }
    dict *d = o->ptr;
    dictIterator *di = dictGetSafeIterator(d);
    dictEntry *de;
    while ((de = dictNext(di)) != NULL) {
        sds ele = dictGetKey(de);
        rockLoadingQueue(ele, sdslen(ele), o->type == OBJ_HASH ? sdsdup(dictGetVal(de)) : NULL);
        dictDelete(d, ele);
    }
    dictReleaseIterator(di);
    dictEmpty(d, NULL);
}

/* rdbLoadObject(): element added to `o`, the value of `key` in db `dbid`. */
void rockLoadingSpill(robj *o, sds key, int dbid) {
    if (!server.loading || !rock_store.db || !server.maxmemory) return;
    if (++rock_load.added < ROCK_LOAD_CHECK) return;
    rock_load.added = 0;
    rockLoadingPeak();
    if (zmalloc_used_memory() <= server.maxmemory || !rockLoadingSpillable(o)) return;
    if (rock_load.val != o || rock_load.dbid != dbid || sdscmp(rock_load.key, key) != 0) {
        /* A collection not spilled yet (a stale state is from a load that
         * failed). */
        rockLoadingForget(1);
        if (!rockLoadingMainDbs() || dbid < 0 || dbid >= server.dbnum) return;
        if (dictFind(server.db[dbid].dict, key) != NULL) return;
        if (rockWriteError() || !rockDiskHasRoom()) return;
        rock_load.val = o;
        rock_load.key = sdsdup(key);
        rock_load.dbid = dbid;
        rock_load.skey = rockStorageKey(dbid, key);
        rock_load.si = zcalloc(sizeof(rockSplitInfo));
        rock_load.si->version = rockSplitNewVersion();
        rock_load.si->refs = 1;
    }
    rockLoadingMoveAll(o);
    rockWriteFlush();
}

static sds rock_load_last;
static int rock_load_last_db = -1;

/* ---------------------------------------------------------------------------
 * The load's hot share
 *
 * Over maxmemory, a load moves out the value of each key it loads, so the
 * values it leaves in RAM are the first ones it read. The keys still to
 * come take RAM of their own (a dict entry, the name, a TTL's entry: about
 * 40 bytes for a key with no TTL; the dict's table is sized up front). Counted only as they arrive, they would push the
 * values kept earlier out one at a time, each found by sampling a keyspace
 * mostly cold already, and each leaving a hole in a slab of its size class
 * that nothing refills while loading (active defrag's loading effort moves
 * a few percent of what it scans). So when the RDB says how many keys are
 * coming (its RESIZEDB opcode, per database), their room is set aside from
 * the start: the value of the key just loaded moves out when memory at the
 * load's end would be over maxmemory with it in RAM, that is Redis's memory
 * now (less what waits for the writer) + the keys to come at the RAM each
 * key loaded so far took without its value + RocksDB's memory grown with
 * the data (rockExternalMemoryProjected()). A key's own RAM is measured
 * between rockLoadingObjectDone() (its value complete, its name allocated)
 * and rockLoadingShareSample() (the key added, with its TTL), two calls on
 * the event loop between which only upstream's adding of the key runs (the
 * threads' own allocations move the count by a few bytes at most).
 * ------------------------------------------------------------------------ */

#define ROCK_SHARE_MIN_SAMPLES 64 /* keys measured before the share applies */

static struct {
    uint64_t expected;     /* keys the RDB announced (RESIZEDB) */
    uint64_t samples;      /* keys whose own RAM was measured */
    uint64_t key_bytes;    /* their sum */
    long long before;      /* used memory at rockLoadingObjectDone(), less the name */
    long long loaded_bytes;/* server.loading_loaded_bytes last seen (a new load resets it) */
    size_t readers;        /* RocksDB's table readers' memory at the first RESIZEDB */
    long long loaded;      /* keys added by then */
    int pending;           /* a sample is open */
} rock_share;

static long long rockLoadingProcessed(void) {
    return server.rdb_last_load_keys_loaded + server.rdb_last_load_keys_expired;
}

/* rdbLoadRio(): a RESIZEDB opcode announces `keys` keys of the database
 * that follows. The first one of a load comes before any key. */
void rockLoadingExpectKeys(uint64_t keys) {
    if (!server.loading) return;
    if (rockLoadingProcessed() == 0) {
        memset(&rock_share, 0, sizeof(rock_share));
        rock_share.readers = rockTableReadersMemory(); /* files already there (DEBUG RELOAD NOFLUSH) */
    }
    rock_share.expected += keys;
}

static void rockLoadingShareOpen(sds key) {
    rock_share.pending = 0;
    if (!server.loading || !rock_share.expected) return;
    rock_share.before = (long long)zmalloc_used_memory() - (long long)sdsZmallocSize(key);
    rock_share.loaded = server.rdb_last_load_keys_loaded;
    rock_share.pending = 1;
}

/* rockLoadingKeyDone(), first: the key of the value rdbLoadObject()
 * completed last is in (or was dropped). */
static void rockLoadingShareSample(void) {
    if (!rock_share.pending) return;
    rock_share.pending = 0;
    if (server.rdb_last_load_keys_loaded != rock_share.loaded + 1) return; /* dropped: expired */
    long long cost = (long long)zmalloc_used_memory() - rock_share.before;
    if (cost <= 0) return; /* a thread freed more meanwhile: no figure */
    rock_share.samples++;
    rock_share.key_bytes += (uint64_t)cost;
}

/* Bytes by which memory at the load's end would be over maxmemory if the
 * value of the key just loaded stayed in RAM (0 or less: it stays). Asked
 * only for keys rdbLoadObject() read (an RDB, an AOF's RDB base, a
 * RESTORE in an AOF: then no key is to come, and the projection is the
 * memory now). 0 when no RESIZEDB said how many keys come, for a keyspace
 * snapshot's load (its values in RAM fit at its save), and until enough
 * keys were measured. */
long long rockLoadingShareOver(void) {
    if (server.loading_loaded_bytes < rock_share.loaded_bytes) { /* a load that began with no RESIZEDB */
        memset(&rock_share, 0, sizeof(rock_share));
        return 0;
    }
    rock_share.loaded_bytes = server.loading_loaded_bytes;
    if (!rock_share.expected || rock_share.samples < ROCK_SHARE_MIN_SAMPLES || rock_snapshot.loading ||
        !server.maxmemory)
        return 0;
    long long processed = rockLoadingProcessed();
    long long to_come = (long long)rock_share.expected - processed;
    if (to_come < 0) to_come = 0;
    double scale = processed > 0 ? (double)rock_share.expected / (double)processed : 1;
    /* A record is about as big as the key and value in the RDB. */
    double record = processed > 0 ? (double)server.loading_loaded_bytes / (double)processed : 0;
    long long at_end = (long long)zmalloc_used_memory() - rockPendingBytes() +
                       (long long)((double)to_come * (double)rock_share.key_bytes / (double)rock_share.samples) +
                       (long long)rockExternalMemoryProjected(rock_share.readers, scale, rock_share.expected, record);
    return at_end - (long long)server.maxmemory;
}

/* The key rdbLoadObject() loaded last into the server's own databases (a
 * copy, its buffer reused), while over maxmemory or while the load's hot
 * share applies: eviction moves its value out first
 * (rockLoadingTakeLastKey()). */
static void rockLoadingNoteKey(sds key, int dbid) {
    if (!server.loading || !server.maxmemory || !rockLoadingMainDbs()) return;
    if (zmalloc_used_memory() <= server.maxmemory && !rock_share.expected) return;
    rock_load_last = sdscpylen(rock_load_last ? rock_load_last : sdsempty(), key, sdslen(key));
    rock_load_last_db = dbid;
}

/* The key loaded last, once (NULL when none was noted since). The key may
 * have been dropped since (expired on a master): look it up. */
sds rockLoadingTakeLastKey(int *dbid) {
    if (rock_load_last_db < 0) return NULL;
    *dbid = rock_load_last_db;
    rock_load_last_db = -1;
    return rock_load_last;
}

/* rdbLoadObject(): `o` is complete. Returns it, or, when it was spilled,
 * the rest spilled too, its type's cold sentinel (the key is added cold). */
robj *rockLoadingObjectDone(robj *o, sds key, int dbid) {
    if (o) rockLoadingNoteKey(key, dbid);
    if (o == NULL || rock_load.si == NULL || rock_load.done || rock_load.val != o || rock_load.dbid != dbid ||
        sdscmp(rock_load.key, key) != 0) {
        if (o) rockLoadingShareOpen(key);
        return o;
    }
    /* A sorted set's rest may have become a listpack (rdbLoadObject()
     * converts small ones after loading): the split format holds the
     * encoding the whole collection has. */
    if (o->type == OBJ_ZSET && o->encoding != OBJ_ENCODING_SKIPLIST) zsetConvert(o, OBJ_ENCODING_SKIPLIST);
    rockLoadingMoveAll(o);
    rockSplitInfo *si = rock_load.si;
    si->count = rock_load.spilled;
    si->header[0] = ROCK_FORMAT_V2;
    si->header[1] = o->encoding;
    rockFieldSet(si->header, o->lru);
    si->header[ROCK_HEADER_LEN] = o->type == OBJ_HASH ? RDB_TYPE_HASH : o->type == OBJ_SET ? RDB_TYPE_SET : RDB_TYPE_ZSET_2;
    rockSplitAdopt(dbid, key, si);
    rockWriteElement(sdsdup(rock_load.skey), rockSplitMeta(si), si, 0);
    rockWriteFlush();
    robj *sentinel = rock_store.cold[o->type];
    rock_load.done = 1;
    rock_load.sentinel_lru = sentinel->lru;
    rock_load.val = sentinel;
    decrRefCount(o);
    rock_ks_stats.loading_spills++;
    rockLoadingShareOpen(key);
    return sentinel;
}

/* rockLoadingMemoryCheck(), after rdbLoadRio() added the key (or dropped
 * it): count a spilled collection's key cold, or forget it. */
void rockLoadingKeyDone(redisDb *db) {
    rockLoadingShareSample();
    rockLoadingPeak();
    rockSnapshotKeyDone(db);
    if (!rock_load.done) return;
    robj *sentinel = rock_load.val;
    unsigned int lru = sentinel->lru;
    sentinel->lru = rock_load.sentinel_lru;
    dictEntry *de = db == server.db + rock_load.dbid ? dictFind(db->dict, rock_load.key) : NULL;
    if (de && dictGetVal(de) == sentinel) {
        rockSplitInfo *si = rock_load.si;
        if (lru != rock_load.sentinel_lru) { /* the RDB's LRU/LFU field */
            rockFieldSet(si->header, lru);
            rockWriteElement(sdsdup(rock_load.skey), rockSplitMeta(si), si, 0);
        }
        rock_ks.dbs[rock_load.dbid].cold++;
        rock_ks.cold++;
        rock_ks_stats.evictions++;
        rockLoadingForget(0);
    } else {
        rockSplitDrop(rock_load.dbid, rock_load.key);
        rockLoadingForget(1);
    }
}

/* The dataset is replaced (emptyData()): a spill in progress is void. */
void rockLoadingReset(void) {
    rockLoadingForget(0);
    memset(&rock_share, 0, sizeof(rock_share));
}
