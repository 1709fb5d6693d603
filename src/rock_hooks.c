/* rock_hooks.c -- redis-rock: the keyspace hooks upstream calls.
 *
 * The top of the keyspace layer: what the patched upstream code tells the
 * tier about keys, and what it asks of it, routed to the files below:
 *   - lookups of cold keys outside the read path (nested commands, cluster
 *     routing) and the values' stand-ins;
 *   - every value a command looks up: counted as served from RAM or disk,
 *     and handed to the RAM sizing model (rock_sizing.c);
 *   - a key removed, overwritten or modified: its disk copy is dropped or
 *     outdated, reads in flight for it voided, eviction and point writes
 *     told;
 *   - FLUSHDB/FLUSHALL (rockKeysEmptyDbs(): rock.c resets the store when
 *     nothing is live) and SWAPDB;
 *   - call() around every command: the executing client, point reads,
 *     RENAME of a cold split collection without a page-in (its split state
 *     carried to the destination), keys a write names noted for evict-all.
 * The moving of values itself is rock_keys.c's. */

#include "server.h"
#include "rock_read.h"

/* RENAME/RENAMENX of a cold split collection running now (rockRenameCold()
 * said it needs no page-in): set by rockCallEnter(). */
static struct {
    redisDb *db;
    sds src, dst;
    int dst_existed;   /* the destination existed when the command began */
    int dst_removed;   /* ...and its old value has been deleted since */
} rock_rename;

/* Right before a top-level command's proc (rockCallEnter()). */
static void rockRenameEnter(client *c) {
    if (c->argc != 3 || !sdsEncodedObject(c->argv[1]) ||
        !rockRenameCold(c->db, c->cmd, c->argv, c->argc, c->argv[1]->ptr))
        return;
    rock_rename.db = c->db;
    rock_rename.src = sdsdup(c->argv[1]->ptr);
    rock_rename.dst = sdsdup(c->argv[2]->ptr);
    rock_rename.dst_existed = dictFind(c->db->dict, rock_rename.dst) != NULL;
    rock_rename.dst_removed = 0;
}

static void rockRenameLeave(void) {
    sdsfree(rock_rename.src);
    sdsfree(rock_rename.dst);
    memset(&rock_rename, 0, sizeof(rock_rename));
}

/* Is `key` of `db` the source of the rename running now? */
static int rockRenaming(redisDb *db, sds key) {
    return rock_rename.src && rock_rename.db == db && sdscmp(key, rock_rename.src) == 0;
}

/* The source leaves the keyspace. When it is the rename's own delete (the
 * destination holds the sentinel now: added after its old value, if any,
 * was deleted; an expiry of the source on lookup comes before both), its
 * split state and disk copy become the destination's. Returns 1 when so. */
static int rockRenameCarry(redisDb *db, sds key, robj *val) {
    if (!rockRenaming(db, key) || !rockIsCold(val)) return 0;
    if (rock_rename.dst_existed && !rock_rename.dst_removed) return 0;
    dictEntry *dde = dictFind(db->dict, rock_rename.dst);
    if (dde == NULL || dictGetVal(dde) != val) return 0;
    rockDb *rdb = &rock_ks.dbs[db->id];
    dictEntry *se = dictSize(rdb->split) ? dictUnlink(rdb->split, key) : NULL;
    if (se == NULL) return 0;
    rockSplitInfo *si = dictGetVal(se);
    si->refs++; /* the dict's reference, moved */
    dictFreeUnlinkedEntry(rdb->split, se);
    /* The source's metadata record goes, the destination's comes: both
     * queued in key order, so a page-in of the destination (which waits
     * for si->ops) or a fork sees the new one. */
    sds skey = rockStorageKey(db->id, key), dkey = rockStorageKey(db->id, rock_rename.dst);
    rockVoidRead(skey);
    rockWriteDelete(skey);
    rockSplitForget(rdb, rock_rename.dst, dkey);
    dictAdd(rdb->split, sdsdup(rock_rename.dst), si);
    rockWriteElement(dkey, rockSplitMeta(si), si, 0);
    sdsfree(skey);
    rock_ks_stats.split_renames++;
    rockRenameLeave();
    return 1; /* cold count: one cold key left, one came */
}

/* ---------------------------------------------------------------------------
 * Upstream hooks
 * ------------------------------------------------------------------------ */

/* lookupKey() met a sentinel (the safety net). Return the value to use: the
 * paged-in value, or the sentinel itself when the executing command does not
 * need the value (EXISTS, TYPE, TTL, SET overwrite, ...). */
robj *rockLookupCold(redisDb *db, robj *key, robj *val) {
    if (rock_ks.existence_only) return val;
    /* While loading, commands of an AOF run without call() (the executing
     * client, if any, is the one that sent DEBUG LOADAOF): whatever the
     * command, it gets the value, and the value counts as modified. */
    client *c = server.loading ? NULL : rock_ks.executing_client;
    if (c && c->cmd && !rockKeyNeedsValue(c->cmd, c->argv, c->argc, key->ptr))
        return val;
    if (rock_rename.src && rockRenaming(db, key->ptr)) return val; /* the sentinel moves */
    dictEntry *de = dictFind(db->dict, key->ptr);
    serverAssert(de != NULL);
    rock_ks_stats.sync_loads++;
    robj *loaded = rockLoadEntry(db, de);
    /* Paged in while the command runs: rockCallEnter() saw no hot-clean key
     * then and may not have noted the command's keys. A write command may
     * change the value without signalModifiedKey() (stream consumer groups:
     * XACK, XCLAIM, XGROUP), and a caller we can't tell at all (AOF replay
     * calls commands directly) may too: from here the disk copy is not to
     * be trusted, or an eviction would drop the value as clean and serve
     * the stale copy afterwards. */
    if (loaded && (c == NULL || c->cmd == NULL || (c->cmd->flags & CMD_WRITE)))
        rockKeyModified(db, key);
    /* A failed read (logged and counted) leaves the key cold; the lookup
     * then reports the key as missing for this one command. Declared keys
     * never get here: rockPrepareCommand() fails the command before it runs. */
    return loaded;
}

/* lookupKey() found `val` for a command (patch 0036; rockValueAccessed() in
 * rock.h is the inline part): one value access,
 * served from RAM or from disk (value_hits_ram, value_hits_disk), and the
 * RAM sizing model's input (rock_sizing.c). Counted: lookups by a command
 * that reads the value (rockCommandValueClass(); TYPE, EXISTS, TTL, DEL,
 * SET's check before it overwrites are not). From disk: the value was paged
 * in for this access (by the command's wait, read-ahead or the safety net
 * above), or a point read of a cold collection serves it. */
void rockValueAccessedSlow(redisDb *db, robj *key, robj *val, int flags) {
    UNUSED(flags);
    client *c = rock_ks.executing_client;
    if (rock_ks.existence_only || server.loading) return;
    int class = rockCommandValueClass(c->cmd);
    if (class == ROCK_READS_NEVER) return;
    /* A read lookup reads; a write lookup of a command whose keys differ
     * (SUNIONSTORE's destination, COPY's, ...) may only check existence:
     * asked per key, for write lookups alone (one or two a command, where
     * asking for every source would cost a key extraction each). */
    if (class == ROCK_READS_SOME && (flags & LOOKUP_WRITE) &&
        !rockKeyNeedsValue(c->cmd, c->argv, c->argc, key->ptr))
        return;
    if (rockIsCold(val)) return; /* handed on without reading it (RENAME) */
    if (rock_ks.ncounted < ROCK_COUNTED_MAX) rock_ks.counted[rock_ks.ncounted++] = val;
    if (val == rock_ks.point_value) {
        rock_ks_stats.value_hits_disk++;
        return; /* a stand-in: not the value, nothing for the model */
    }
    if (rockFreshTake(val)) {
        rock_ks_stats.value_hits_disk++;
    } else {
        rock_ks_stats.value_hits_ram++;
        if (rock_sizing_threshold && !rockSurelyMovable(val)) rockSizingHitInRam(db, key->ptr, val);
    }
    uint64_t id;
    if (rockSizingSampled(db->id, key->ptr, &id)) rockSizingAccess(db, key->ptr, val, id);
}

/* A command a script or a module runs (scriptCall(), RM_Call()), right
 * before call(): the values it needs that are cold (a script's undeclared
 * keys; declared ones were paged in before the script started) are paged
 * in here, synchronously. A failed read refuses the command with *err (when
 * err is not NULL) rather than run it without its value: a write would take
 * the key for missing and assert creating it over the one on disk. */
int rockPrepareNested(client *c, sds *err) {
    if (rockColdKeys() == 0) return C_OK;
    getKeysResult result = GETKEYS_RESULT_INIT;
    int n = getKeysFromCommandWithSpecs(c->cmd, c->argv, c->argc, GET_KEYSPEC_DEFAULT, &result);
    int ret = C_OK;
    for (int j = 0; j < n && ret == C_OK; j++) {
        robj *key = c->argv[result.keys[j].pos];
        if (!sdsEncodedObject(key)) continue;
        dictEntry *de = dictFind(c->db->dict, key->ptr);
        if (de == NULL || !rockIsCold(dictGetVal(de))) continue;
        if (!rockKeyNeedsValue(c->cmd, c->argv, c->argc, key->ptr)) continue;
        rock_ks_stats.sync_loads++;
        if (rockLoadEntry(c->db, de) == NULL) {
            if (err) *err = sdscatfmt(sdsempty(), "rock: can't read the value of '%S' from disk (see the server log)",
                                      (sds)key->ptr);
            ret = C_ERR;
        }
    }
    getKeysFreeResult(&result);
    return ret;
}

/* getNodeByQuery(): in a migrating or importing slot, is the key here? An
 * existence check: a cold key counts without being read (a read would be
 * synchronous, before the command runs, and a failed one would send the
 * client to the other node for a key this node has). */
robj *rockLookupForRouting(redisDb *db, robj *key, int flags) {
    rock_ks.existence_only++;
    robj *o = lookupKeyReadWithFlags(db, key, flags);
    rock_ks.existence_only--;
    return o;
}

/* The record of hot key `key` is outdated: its next eviction's put will
 * supersede it, and a delete of the key deletes it (rockKeyRemoved()). Until
 * then nothing is written: an overwrite or a change costs no RocksDB delete
 * (and no tombstone for compaction to carry) when a put follows anyway. */
static void rockMarkStale(rockDb *rdb, sds key) {
    dictEntry *existing;
    sds skey = sdsdup(key);
    if (dictAddRaw(rdb->stale, skey, &existing) == NULL) sdsfree(skey);
}

/* A key is leaving the keyspace (DEL, expire, eviction of the key): drop its
 * disk copy, if any (cold, hot-clean or stale). */
void rockKeyRemoved(redisDb *db, sds key, robj *val) {
    if (!rock_store.db) return;
    rockSizingRemove(db, key);
    if (rock_rename.src && rockRenameCarry(db, key, val)) return;
    if (rock_rename.src && rock_rename.db == db && sdscmp(key, rock_rename.dst) == 0) rock_rename.dst_removed = 1;
    rockDb *rdb = &rock_ks.dbs[db->id];
    int had_copy = 0;
    if (!rockIsColdOrPoint(val)) rockFreshForget(val);
    if (rockIsColdOrPoint(val)) {
        rdb->cold--;
        rock_ks.cold--;
        had_copy = 1;
    } else if (dictSize(rdb->clean) && dictDelete(rdb->clean, key) == DICT_OK) {
        had_copy = 1;
    } else if (dictSize(rdb->stale) && dictDelete(rdb->stale, key) == DICT_OK) {
        had_copy = 1;
    }
    if (had_copy) {
        sds skey = rockStorageKey(db->id, key);
        rockVoidRead(skey);
        rockWriteDelete(skey);
        rockSplitForget(rdb, key, skey);
        sdsfree(skey);
    }
}

/* The disk copy of hot key `key` (hot-clean or stale) no longer holds its
 * value `val`. Kept as stale when the next eviction's put will supersede
 * it; deleted now when the value is too small ever to be evicted
 * (rock-min-value-size), or the record would stay on disk for good. */
static void rockOutdateCopy(redisDb *db, sds key, robj *val) {
    rockDb *rdb = &rock_ks.dbs[db->id];
    if (val && !rockValueTooSmall(val, NULL)) {
        rockMarkStale(rdb, key);
        return;
    }
    if (dictSize(rdb->stale)) dictDelete(rdb->stale, key);
    sds skey = rockStorageKey(db->id, key);
    rockWriteDelete(skey);
    rockSplitForget(rdb, key, skey);
    sdsfree(skey);
}

/* dbOverwrite() replaces the value of a key that stays (SET, RESTORE
 * REPLACE, ...) with `val`: the old value's disk copy, if any, is outdated
 * (rockOutdateCopy()). */
void rockKeyOverwritten(redisDb *db, sds key, robj *old, robj *val) {
    if (!rock_store.db) return;
    uint64_t id;
    if (rockSizingSampled(db->id, key, &id)) rockSizingWrite(db, key, val, id);
    rockDb *rdb = &rock_ks.dbs[db->id];
    int had_copy = 0;
    if (!rockIsColdOrPoint(old)) rockFreshForget(old);
    if (rockIsColdOrPoint(old)) {
        rdb->cold--;
        rock_ks.cold--;
        /* A read of the old value in flight must not land. A pending put
         * of it stays queued and is superseded like the record. */
        sds skey = rockStorageKey(db->id, key);
        rockVoidRead(skey);
        sdsfree(skey);
        had_copy = 1;
    } else if (dictSize(rdb->clean) && dictDelete(rdb->clean, key) == DICT_OK) {
        had_copy = 1;
    } else if (dictSize(rdb->stale) && dictFind(rdb->stale, key)) {
        had_copy = 1;
    }
    if (!had_copy) return;
    /* A split copy's elements go now (a collection may be large), and its
     * metadata record with them: left behind without its elements, it
     * would read as a damaged collection to whatever walks the store (a
     * fork's stream fails on it, and with it every BGSAVE and full sync
     * until the key's next eviction). */
    if (dictSize(rdb->split) && rockSplitLookup(db->id, key)) {
        sds skey = rockStorageKey(db->id, key);
        rockSplitForget(rdb, key, skey);
        rockWriteDelete(skey);
        sdsfree(skey);
        if (dictSize(rdb->stale)) dictDelete(rdb->stale, key);
        return;
    }
    rockOutdateCopy(db, key, val);
}

/* A hot value was modified in place: its disk copy (if clean) is outdated. */
void rockKeyModified(redisDb *db, robj *key) {
    if (!rock_store.db) return;
    rockTouched(db, key->ptr);
    rockEvictNoteModified(db, key);
    /* Under volatile-* a TTL set or removed decides whether a value moves. */
    if (rock_sizing_threshold && !(server.maxmemory_policy & MAXMEMORY_FLAG_ALLKEYS)) rockSizingModified(db, key->ptr);
    rockDb *rdb = &rock_ks.dbs[db->id];
    if (dictSize(rdb->clean) == 0 || dictFind(rdb->clean, key->ptr) == NULL) return;
    robj *val = dictFetchValue(db->dict, key->ptr);
    /* A split collection changed by a point write stays clean: its next
     * eviction writes the elements changed (rock_point.c). */
    rockSplitInfo *si = dictSize(rdb->split) ? rockSplitLookup(db->id, key->ptr) : NULL;
    if (si && rockPointNoteDirty(db, key->ptr, val, si)) return;
    dictDelete(rdb->clean, key->ptr);
    rockOutdateCopy(db, key->ptr, val);
}

/* A stale key's value may shrink under rock-min-value-size after it was
 * marked (HDEL, LTRIM, ...): it would never be evicted, and its record
 * never superseded. rockCron() walks the stale keys, 100 buckets each
 * 100 ms, and deletes the records of those. */
#define ROCK_STALE_SWEEP_BUCKETS 100
typedef struct rockSweep {
    redisDb *db;
    list *gone;    /* keys found too small: deleted after the scan */
} rockSweep;

static void rockStaleSweepKey(void *privdata, const dictEntry *de) {
    rockSweep *sw = privdata;
    sds key = dictGetKey(de);
    robj *val = dictFetchValue(sw->db->dict, key);
    /* (A stale key is hot; a cold value's record is never deleted here.) */
    if (val && rockIsCold(val)) return;
    if (val == NULL || rockValueTooSmall(val, NULL)) listAddNodeTail(sw->gone, sdsdup(key));
}

/* One step of the walk: up to ROCK_STALE_SWEEP_BUCKETS buckets of the
 * stale set of one database, the next database with stale keys once the
 * walk of this one is complete. */
void rockStaleSweep(void) {
    static int dbid;
    static unsigned long cursor;
    if (!rock_store.db || rock.debug_evict_all || rock.min_value_size == 0) return;
    for (int tries = 0; dictSize(rock_ks.dbs[dbid].stale) == 0; tries++) {
        if (tries == server.dbnum) return;
        dbid = (dbid + 1) % server.dbnum;
        cursor = 0;
    }
    rockSweep sw = {server.db + dbid, listCreate()};
    int buckets = 0;
    do {
        cursor = dictScan(rock_ks.dbs[dbid].stale, cursor, rockStaleSweepKey, NULL, &sw);
    } while (cursor && ++buckets < ROCK_STALE_SWEEP_BUCKETS);
    listNode *ln;
    while ((ln = listFirst(sw.gone)) != NULL) {
        rockOutdateCopy(sw.db, listNodeValue(ln), NULL);
        sdsfree(listNodeValue(ln));
        listDelNode(sw.gone, ln);
    }
    listRelease(sw.gone);
    if (cursor == 0) dbid = (dbid + 1) % server.dbnum;
}

/* Databases are being emptied (FLUSHDB, FLUSHALL, replica full sync, ...).
 * dbnum is -1 for all. Each emptied db gets a fresh storage id; the old
 * id's records are dropped with one range delete. */
int rockKeysEmptyDbs(redisDb *dbarray, int dbnum) {
    if (!rock_store.db || dbarray != server.db) return 0;
    rockLoadingReset();
    int start = dbnum == -1 ? 0 : dbnum;
    int end = dbnum == -1 ? server.dbnum - 1 : dbnum;
    /* A fork stream reads a RocksDB snapshot, a save point's barrier is
     * about to checkpoint it: either way RocksDB must not be replaced. */
    int streaming = rockForkStreaming() || rockWriteBarrierWaiting();
    for (int j = start; j <= end; j++) {
        rockDb *rdb = &rock_ks.dbs[j];
        uint32_t old = rockStoreRenewSid(j);
        rock_ks.cold -= rdb->cold;
        rdb->cold = 0;
        dictEmpty(rdb->clean, NULL);
        dictEmpty(rdb->stale, NULL);
        dictEmpty(rdb->split, NULL);
        rockVoidReadsOfSid(old);
        if (dbnum != -1 || streaming) {
            rockPendingDropSid(old);
            rockWriteDeleteSid(old);
        }
    }
    rockEvictSweepAll();
    rockSizingReset();
    rockFreshReset(); /* their values are freed: no address may stay */
    /* Nothing is live: start over with an empty RocksDB (rockResetStore(),
     * by the caller), unless it is still read as it was (above). */
    return dbnum == -1 && !streaming;
}

/* SWAPDB: the tier state follows the dict it belongs to. */
void rockSwapDbs(int id1, int id2) {
    if (!rock_store.db) return;
    rockSizingReset(); /* its keys are known with their db */
    rockDb tmp = rock_ks.dbs[id1];
    rock_ks.dbs[id1] = rock_ks.dbs[id2];
    rock_ks.dbs[id2] = tmp;
    rockStoreSwapSids(id1, id2);
    rockEvictSweepAll();
}

/* TOUCH ran on a hot-clean value: its clean drop is to update the record's
 * access field whatever the policy (rockEvictEntry()). */
static void rockMarkTouched(redisDb *db, sds key) {
    dict *clean = rock_ks.dbs[db->id].clean;
    dictEntry *ce = dictSize(clean) ? dictFind(clean, key) : NULL;
    if (ce) rockCleanMarkTouched(ce);
}

/* call() wraps every command execution, nested ones included. For a write
 * command or TOUCH (or any command in evict-all mode) the keys it names are
 * taken before it runs: afterwards its argv may be rewritten for propagation
 * or re-encoded, and key extraction must not look at that. Frames nest like
 * call() itself. */
typedef struct rockCallFrame {
    client *prev;
    robj **keys;
    int nkeys;
    robj *sorted;   /* SORT_RO's key, a listpack sorted set before it ran */
} rockCallFrame;

/* SORT_RO converts the listpack sorted set it sorts to a skiplist in place,
 * as stock does (sort.c), though it is a read: a hot-clean copy dropped
 * after it would bring the listpack back at the next page-in, and OBJECT
 * ENCODING would differ from stock's. Returns the key (a reference) when
 * the command may convert its value; rockCallLeave() then looks. (SORT is
 * a write: every key it names counts as modified already.) */
static robj *rockSortMayConvert(client *c) {
    if (c->cmd->proc != sortroCommand || c->argc < 2 || !sdsEncodedObject(c->argv[1])) return NULL;
    robj *val = dictFetchValue(c->db->dict, c->argv[1]->ptr);
    if (val == NULL || rockIsCold(val) || val->type != OBJ_ZSET || val->encoding != OBJ_ENCODING_LISTPACK)
        return NULL;
    incrRefCount(c->argv[1]);
    return c->argv[1];
}

static void rockSortConverted(client *c, robj *key) {
    robj *val = dictFetchValue(c->db->dict, key->ptr);
    if (val && !rockIsCold(val) && val->type == OBJ_ZSET && val->encoding == OBJ_ENCODING_SKIPLIST)
        rockKeyModified(c->db, key);
    decrRefCount(key);
}

static rockCallFrame *rock_frames;
static int rock_frames_depth, rock_frames_cap;

static int rockAnyClean(void) {
    for (int j = 0; j < server.dbnum; j++)
        if (dictSize(rock_ks.dbs[j].clean)) return 1;
    return 0;
}

client *rockCallEnter(client *c) {
    client *prev = rock_ks.executing_client;
    rock_ks.executing_client = c;
    rock_ks.ncounted = 0;
    if (rock_frames_depth == rock_frames_cap) {
        rock_frames_cap = rock_frames_cap ? rock_frames_cap * 2 : 8;
        rock_frames = zrealloc(rock_frames, sizeof(rockCallFrame) * rock_frames_cap);
    }
    rockCallFrame *f = &rock_frames[rock_frames_depth++];
    f->prev = prev;
    f->keys = NULL;
    f->nkeys = 0;
    f->sorted = NULL;
    if (!rock_store.db) return prev;
    f->sorted = rockSortMayConvert(c);
    /* A point read of a cold collection: its elements stand in for it. */
    if (rock_frames_depth == 1 && c->rock) rockPointEnter(c);
    if (rock_frames_depth == 1 && (c->cmd->proc == renameCommand || c->cmd->proc == renamenxCommand))
        rockRenameEnter(c);
    if (!rock.debug_evict_all &&
        !(((c->cmd->flags & CMD_WRITE) || c->cmd->proc == touchCommand) && rockAnyClean()))
        return prev;

    getKeysResult result = GETKEYS_RESULT_INIT;
    int n = getKeysFromCommand(c->cmd, c->argv, c->argc, &result);
    if (n > 0) {
        f->keys = zmalloc(sizeof(robj *) * n);
        for (int j = 0; j < n; j++) {
            robj *key = c->argv[result.keys[j].pos];
            if (!sdsEncodedObject(key)) continue;
            incrRefCount(key);
            f->keys[f->nkeys++] = key;
        }
    }
    getKeysFreeResult(&result);
    return prev;
}

void rockCallLeave(client *c, client *prev, long long dirty_before) {
    rockCallFrame f = rock_frames[--rock_frames_depth];
    rock_ks.ncounted = 0;
    if (rock_frames_depth == 0 && rock_ks.point_value) rockPointLeave();
    if (rock_frames_depth == 0 && rock_rename.src) rockRenameLeave();
    serverAssert(f.prev == prev);
    /* A write command may modify a value without signalModifiedKey() (stream
     * consumer group state), and even without counting a change in
     * server.dirty (PFADD that fails half-way on a corrupt HyperLogLog after
     * updating registers; BITFIELD OVERFLOW FAIL that grew the string but set
     * nothing): treat every key a write command names as modified, so a
     * stale disk copy is never taken for the current value. Costs a rewrite
     * of values a write left unchanged. */
    UNUSED(dirty_before);
    int modified = (c->cmd->flags & CMD_WRITE) != 0;
    if (rock_store.db && rock.debug_evict_all) {
        redisCommandProc *p = c->cmd->proc;
        if (p == debugCommand || p == moveCommand || p == copyCommand) rockEvictSweepAll();
    }
    if (f.sorted) rockSortConverted(c, f.sorted);
    int touch = c->cmd->proc == touchCommand;
    for (int j = 0; j < f.nkeys; j++) {
        if (modified) rockKeyModified(c->db, f.keys[j]);
        else rockTouched(c->db, f.keys[j]->ptr);
        if (touch) rockMarkTouched(c->db, f.keys[j]->ptr);
        decrRefCount(f.keys[j]);
    }
    zfree(f.keys);
    /* (Restored last: rockKeyModified() above looks at the command.) */
    rock_ks.executing_client = prev;
}
