/* rock_keys.c -- redis-rock: the keyspace side of the SSD tier.
 *
 * This file owns what happens to a key when its value moves:
 *   - eviction of one value (rockEvictEntry): serialize, queue the write
 *     (rock_write.c), swap in the type's sentinel; or, for a hot-clean value, just drop it (its disk copy
 *     is still valid: clean re-eviction writes nothing);
 *   - paging one value back (rockLoadEntry), marking it hot-clean;
 *   - the hooks upstream calls when keys are looked up, deleted, overwritten,
 *     modified, flushed or swapped, which keep RocksDB in step with the
 *     keyspace so disk space never leaks and a stale copy is never served;
 *   - which keys a command needs the *value* of (rockKeyNeedsValue): metadata
 *     and overwrite-only access keeps values cold.
 *
 * Paging in or out is never a modification: no keyspace event, no
 * signalModifiedKey (WATCH and client tracking see nothing). */

#include "server.h"

/* ---------------------------------------------------------------------------
 * Which keys need their value
 * ------------------------------------------------------------------------ */

/* Commands that only look at a key's existence, type or TTL, or replace it
 * whole, whatever their key-spec flags say. (TOUCH is not one: it sets the
 * access field, which the disk record keeps: the value is paged in, and its
 * clean drop updates the record's field, rockEvictEntry().) */
static int rockCommandNeverNeedsValue(struct redisCommand *cmd) {
    redisCommandProc *p = cmd->proc;
    return p == existsCommand || p == typeCommand || p == ttlCommand ||
           p == pttlCommand || p == expiretimeCommand || p == pexpiretimeCommand ||
           p == expireCommand || p == pexpireCommand || p == expireatCommand ||
           p == pexpireatCommand || p == persistCommand || p == delCommand ||
           p == unlinkCommand || p == watchCommand ||
           p == scanCommand || p == randomkeyCommand || p == keysCommand ||
           p == dbsizeCommand || p == rockEvictCommand || p == rockStatusCommand;
}

/* True when the key-spec flags of one key say the command reads or updates
 * its value (as opposed to only overwriting or removing it). */
static int rockFlagsNeedValue(int flags) {
    if (flags & CMD_KEY_ACCESS) return 1;
    if (flags & (CMD_KEY_OW | CMD_KEY_RM)) return 0;
    return 1;
}

/* Does one key reference (a key-spec result entry) need the value? */
int rockKeyRefNeedsValue(struct redisCommand *cmd, int flags) {
    return !rockCommandNeverNeedsValue(cmd) && rockFlagsNeedValue(flags);
}

/* Does `cmd argv` need the value of `key`? Used both before a command runs
 * (to decide what to page in) and by the safety net when a lookup meets a
 * sentinel during execution. */
int rockKeyNeedsValue(struct redisCommand *cmd, robj **argv, int argc, sds key) {
    if (cmd == NULL) return 1;
    if (rockCommandNeverNeedsValue(cmd)) return 0;
    getKeysResult result = GETKEYS_RESULT_INIT;
    int need = 1, found = 0;
    int n = getKeysFromCommandWithSpecs(cmd, argv, argc, GET_KEYSPEC_DEFAULT, &result);
    for (int j = 0; j < n; j++) {
        robj *k = argv[result.keys[j].pos];
        if (sdsEncodedObject(k) && sdscmp(k->ptr, key) == 0) {
            int kn = rockFlagsNeedValue(result.keys[j].flags);
            need = found ? (need || kn) : kn;
            found = 1;
        }
    }
    getKeysFreeResult(&result);
    return need;
}

/* ---------------------------------------------------------------------------
 * Evict and load
 * ------------------------------------------------------------------------ */

/* `key`'s split state is now `si` (the dict takes the reference): returns
 * the version of the state it replaces, or 0. */
static uint64_t rockSplitPut(rockDb *rdb, sds key, rockSplitInfo *si) {
    uint64_t old_version = 0;
    dictEntry *existing, *se = dictAddRaw(rdb->split, key, &existing);
    if (se) {
        dictSetKey(rdb->split, se, sdsdup(key));
        dictSetVal(rdb->split, se, si);
    } else {
        rockSplitInfo *old = dictGetVal(existing);
        old_version = old->version;
        rockSplitInfoRelease(old);
        dictSetVal(rdb->split, existing, si);
    }
    return old_version;
}

/* `key`'s disk copy is now version `version` of a split collection of
 * `count` elements, from whole-value record `rec`, replacing any older
 * split state of the key: returns the version replaced (its elements are
 * to be deleted with the put, rockWritePut()), or 0. */
static uint64_t rockSplitNote(rockDb *rdb, sds key, sds rec, uint64_t version, uint64_t count) {
    rockSplitInfo *si = zcalloc(sizeof(*si));
    si->version = version;
    si->count = count;
    memcpy(si->header, rec, sizeof(si->header));
    si->refs = 1;
    return rockSplitPut(rdb, key, si);
}

/* `key`'s disk copy is no longer split (deleted, or about to be replaced
 * by a whole value): its element records are deleted. */
static void rockSplitForget(rockDb *rdb, sds key, sds skey) {
    dictEntry *de = dictSize(rdb->split) ? dictUnlink(rdb->split, key) : NULL;
    if (de == NULL) return;
    rockWriteDeleteElements(skey, ((rockSplitInfo *)dictGetVal(de))->version);
    dictFreeUnlinkedEntry(rdb->split, de);
}

/* `key` in database `dbid` is now the split collection `si` (a reference
 * taken), its records written by the caller (rock_load.c). */
void rockSplitAdopt(int dbid, sds key, rockSplitInfo *si) {
    si->refs++;
    rockSplitPut(&rock.dbs[dbid], key, si);
}

/* ...or no longer: the state alone is dropped, the caller deletes its
 * records. */
void rockSplitDrop(int dbid, sds key) {
    dictDelete(rock.dbs[dbid].split, key);
}

/* ---------------------------------------------------------------------------
 * RENAME of a cold split collection: O(1) in I/O
 * ------------------------------------------------------------------------ */

/* A split collection's element records hold its version, not its name
 * (rock_split.c): RENAME/RENAMENX of a cold one runs on the sentinel, which
 * upstream's renameGenericCommand() moves like any value (dbAdd() of the
 * destination, then dbDelete() of the source); when the source leaves
 * (rockKeyRemoved()), its split state goes to the destination and only the
 * metadata record is rewritten under the new name. */
static struct {
    redisDb *db;
    sds src, dst;
    int dst_existed;   /* the destination existed when the command began */
    int dst_removed;   /* ...and its old value has been deleted since */
} rock_rename;

/* Can `cmd argv` rename `key` (its source) without paging it in? A cold
 * split collection whose put is committed (its elements are on disk under
 * its version: a pending one pages in from the pending buffer instead). */
int rockRenameCold(redisDb *db, struct redisCommand *cmd, robj **argv, int argc, sds key) {
    if ((cmd->proc != renameCommand && cmd->proc != renamenxCommand) || argc != 3) return 0;
    if (!sdsEncodedObject(argv[1]) || !sdsEncodedObject(argv[2])) return 0;
    if (sdscmp(argv[1]->ptr, key) != 0 || sdscmp(argv[1]->ptr, argv[2]->ptr) == 0) return 0;
    if (rockSplitLookup(db->id, key) == NULL) return 0;
    dictEntry *de = dictFind(db->dict, key);
    if (de == NULL || !rockIsCold(dictGetVal(de))) return 0;
    sds skey = rockStorageKey(db->id, key);
    int pending = rockPendingGet(skey) != NULL;
    sdsfree(skey);
    return !pending;
}

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
    rockDb *rdb = &rock.dbs[db->id];
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
    rock.stats.split_renames++;
    rockRenameLeave();
    return 1; /* cold count: one cold key left, one came */
}

/* Size of a compact encoding's blob (its RDB payload is about that), or -1
 * when the value is not in a compact encoding (then it is not small). */
static long long rockCompactSize(robj *val) {
    switch (val->encoding) {
    case OBJ_ENCODING_LISTPACK: return (long long)lpBytes(val->ptr);
    case OBJ_ENCODING_INTSET: return (long long)intsetBlobLen(val->ptr);
    case OBJ_ENCODING_QUICKLIST: {
        quicklist *ql = val->ptr;
        return ql->len == 1 ? (long long)ql->head->sz : -1;
    }
    default: return -1;
    }
}

/* Is a value too small to be worth moving (rock-min-value-size)? Strings
 * are measured by their bytes in RAM (RDB's LZF may shrink them a lot on
 * disk, and RAM is what eviction saves); other types by their serialized
 * size `rec`, or, when `rec` is NULL (the cheap pre-check), by the size of
 * their compact encoding if they have one. */
int rockValueTooSmall(robj *val, sds rec) {
    if (rock.debug_evict_all || rock.min_value_size == 0) return 0; /* every value moves */
    if (val->type == OBJ_STRING) {
        if (val->encoding == OBJ_ENCODING_INT) return 1;
        return (long long)sdslen(val->ptr) < rock.min_value_size;
    }
    if (rec) return (long long)sdslen(rec) < rock.min_value_size;
    if (val->type == OBJ_MODULE || val->type == OBJ_STREAM) return 0;
    long long size = rockCompactSize(val);
    return size >= 0 && size < rock.min_value_size;
}

/* Free a value that has just moved to disk. A big hash, set or sorted set
 * (ROCK_FREE_ASYNC_ELEMENTS or more: about 25 ms of the event loop per
 * 100,000 elements) is freed by the lazyfree thread, as upstream's
 * lazyfree-lazy-eviction does for the keys it evicts; until it is,
 * used_memory still counts it (lazyfree_pending_objects). */
#define ROCK_FREE_ASYNC_ELEMENTS 8192
static void rockFreeMoved(redisDb *db, robj *val) {
    if (val->refcount == 1 && (val->encoding == OBJ_ENCODING_HT || val->encoding == OBJ_ENCODING_SKIPLIST) &&
        rockCollectionSize(val) >= ROCK_FREE_ASYNC_ELEMENTS)
        freeObjAsync(NULL, val, db->id);
    else
        decrRefCount(val);
}

/* Move the value of `de` to RocksDB. Returns one of ROCK_EVICT_*. */
int rockEvictEntry(redisDb *db, dictEntry *de) {
    robj *val = dictGetVal(de);
    sds key = dictGetKey(de);
    rockDb *rdb = &rock.dbs[db->id];

    if (!rock.db) return ROCK_EVICT_DISABLED;
    if (rockIsCold(val)) return ROCK_EVICT_ALREADY;
    robj *sentinel = rockSentinelOf(val);
    if (sentinel == NULL) return ROCK_EVICT_TYPE;
    if (rockIsPinned(db, key)) return ROCK_EVICT_PINNED;

    if (rockValueTooSmall(val, NULL)) return ROCK_EVICT_SMALL;
    dictEntry *ce = dictSize(rdb->clean) ? dictFind(rdb->clean, key) : NULL;
    if (ce) {
        /* A split collection point writes changed in RAM: those elements
         * are written now (rockKeyModified()), not the whole value. */
        rockSplitInfo *si = dictSize(rdb->split) ? rockSplitLookup(db->id, key) : NULL;
        /* Its LRU/LFU field is kept in RAM (the next page-in takes it from
         * there, point commands update it there). */
        if (si) rockAccessOperand(val->lru, si->header + 2);
        if (si && si->dirty) {
            if (rock.write_error || !rockDiskHasRoom()) return ROCK_EVICT_ERROR;
            rockPointFlushDirty(db, key, val, si);
        }
        /* Clean re-eviction: the disk copy is the same value. No value
         * write, so it goes on while writes can't (a full disk). The
         * record's LRU/LFU field is updated (a 3-byte merge) when the
         * value's moved on while in RAM and either the policy is LFU (its
         * counter decides what stays in RAM) or TOUCH set it (that is
         * TOUCH's job); not for reads under other policies, where it would
         * cost a write and a second block read per cold read (the idle time
         * of a cold key is then that of its last write; see
         * docs/performance.md, "Access-field updates"). Not while the disk
         * can't take it either. */
        int lfu = (server.maxmemory_policy & MAXMEMORY_FLAG_LFU) != 0;
        if (val->lru != rockCleanDiskField(ce) && (lfu || rockCleanTouched(ce)) && !rock.write_error &&
            rockDiskHasRoom()) {
            sds skey = rockStorageKey(db->id, key);
            rockWriteAccess(skey, val->lru);
            sdsfree(skey);
        }
        dictDelete(rdb->clean, key);
        rock.stats.clean_drops++;
    } else {
        if (rock.write_error || !rockDiskHasRoom()) return ROCK_EVICT_ERROR;
        robj *keyobj = createStringObject(key, sdslen(key));
        sds rec = rockSerialize(keyobj, val, db->id);
        decrRefCount(keyobj);
        if (rec == NULL) return ROCK_EVICT_ERROR;
        if (rockValueTooSmall(val, rec)) {
            sdsfree(rec);
            return ROCK_EVICT_SMALL;
        }
        /* Queued for the writer thread; served from the pending buffer
         * until committed. The put supersedes an outdated record (a split
         * one's older elements included: rock_split.c). */
        if (dictSize(rdb->stale)) dictDelete(rdb->stale, key);
        sds skey = rockStorageKey(db->id, key);
        rockVoidRead(skey);
        long long elements = rockSplitEligible(val);
        uint64_t version = elements ? rock.next_split_version++ : 0, old_version = 0;
        if (version) old_version = rockSplitNote(rdb, key, rec, version, elements);
        else rockSplitForget(rdb, key, skey);
        rockWritePut(skey, rec, version, old_version);
        sdsfree(skey);
    }
    dictSetVal(db->dict, de, sentinel);
    rockFreeMoved(db, val);
    rdb->cold++;
    rock.stats.evictions++;
    return ROCK_EVICT_OK;
}

/* Read and decode the value of a cold key, synchronously, without touching
 * its entry (`page_in`: as rockReadRecord()). NULL if it can't be read or
 * decoded (logged and counted). */
static robj *rockReadValue(redisDb *db, sds key, int page_in) {
    monotime start = getMonotonicUs();
    int from_pending;
    sds rec = rockReadRecord(db->id, key, &from_pending, page_in);
    if (rec == NULL) return NULL;
    robj *val = rockDeserialize(rec, key, db->id);
    sdsfree(rec);
    if (val == NULL) {
        rock.stats.errors++;
        serverLog(LL_WARNING, "rock: value of cold key '%s' (db %d) is malformed in RocksDB", key, db->id);
        return NULL;
    }
    if (!from_pending) rockRecordReadLatency(getMonotonicUs() - start);
    return val;
}

/* Page the value of a cold entry back in, synchronously. Returns the value,
 * or NULL if it could not be read (error logged and counted; the key stays
 * cold, nothing is lost). */
robj *rockLoadEntry(redisDb *db, dictEntry *de) {
    robj *val = dictGetVal(de);
    if (!rockIsCold(val)) return val;
    robj *loaded = rockReadValue(db, dictGetKey(de), 1);
    if (loaded) rockRestoreValue(db, de, loaded);
    return loaded;
}

/* Put a value read back from disk into its dict entry: the key becomes
 * hot-clean (its disk copy stays valid until modified). */
void rockRestoreValue(redisDb *db, dictEntry *de, robj *val) {
    rockDb *rdb = &rock.dbs[db->id];
    dictSetVal(db->dict, de, val);
    /* A split collection's LRU/LFU field is kept in RAM (point commands
     * update it there, not on disk). */
    rockSplitInfo *si = dictSize(rdb->split) ? rockSplitLookup(db->id, dictGetKey(de)) : NULL;
    if (si && val->refcount != OBJ_SHARED_REFCOUNT) val->lru = rockSplitAccess(si);
    /* Stamped with the clock of its page-in: the sampling in
     * rock_evict.c orders by it without a lookup of the value. */
    sds ckey = sdsdup(dictGetKey(de));
    dictEntry *existing, *ce = dictAddRaw(rdb->clean, ckey, &existing);
    if (ce == NULL) {
        sdsfree(ckey);
        ce = existing;
    }
    rockCleanInit(ce, LRU_CLOCK(), val->lru); /* val->lru: its record's, untouched yet */
    rockTouched(db, dictGetKey(de));
    rockEvictNoteHot(db, dictGetKey(de));
    rdb->cold--;
    rock.stats.loads++;
}

/* The value of an entry, paged in synchronously if cold: for the few upstream
 * paths that read dict values without lookupKey() (DEBUG OBJECT, SDSLEN,
 * DIGEST-VALUE, MEMORY USAGE). When it can't be read (logged and counted)
 * the client gets the error a command gets for a failed read, and NULL: a
 * sentinel has no payload to look at. */
robj *rockEntryValueOrReply(client *c, dictEntry *de) {
    robj *val = rockEntryValueOrNull(c->db, de);
    if (val == NULL) rockReplyReadFailed(c, dictGetKey(de));
    return val;
}

/* The value of an entry for a read that ends before the caller returns
 * (DEBUG DIGEST's walk of the whole keyspace): a reference the caller
 * releases with decrRefCount(). A cold value is read and decoded, not paged
 * in: a digest of a dataset ten times maxmemory would otherwise bring all of
 * it into RAM at once, and the eviction that follows leaves the allocator's
 * pages sparse for minutes. NULL if it can't be read (logged and counted):
 * a sentinel has no payload to look at. */
robj *rockEntryValueCopy(redisDb *db, dictEntry *de) {
    robj *val = dictGetVal(de);
    if (rockIsCold(val)) return rockReadValue(db, dictGetKey(de), 0);
    incrRefCount(val);
    return val;
}

/* A value handed to module code straight from the dict (RM_Scan's key
 * handle): paged in synchronously if cold; NULL, for a key with no value,
 * when it can't be read (logged and counted). Module code never gets the
 * cold marker as a value. */
robj *rockEntryValueOrNull(redisDb *db, dictEntry *de) {
    robj *val = dictGetVal(de);
    if (!rockIsCold(val)) return val;
    rock.stats.sync_loads++;
    return rockLoadEntry(db, de);
}

/* ---------------------------------------------------------------------------
 * Upstream hooks
 * ------------------------------------------------------------------------ */

/* lookupKey() met a sentinel (the safety net). Return the value to use: the
 * paged-in value, or the sentinel itself when the executing command does not
 * need the value (EXISTS, TYPE, TTL, SET overwrite, ...). */
robj *rockLookupCold(redisDb *db, robj *key, robj *val) {
    if (rock.existence_only) return val;
    /* While loading, commands of an AOF run without call() (the executing
     * client, if any, is the one that sent DEBUG LOADAOF): whatever the
     * command, it gets the value, and the value counts as modified. */
    client *c = server.loading ? NULL : rock.executing_client;
    if (c && c->cmd && !rockKeyNeedsValue(c->cmd, c->argv, c->argc, key->ptr))
        return val;
    if (rock_rename.src && rockRenaming(db, key->ptr)) return val; /* the sentinel moves */
    dictEntry *de = dictFind(db->dict, key->ptr);
    serverAssert(de != NULL);
    rock.stats.sync_loads++;
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
        rock.stats.sync_loads++;
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
    rock.existence_only++;
    robj *o = lookupKeyReadWithFlags(db, key, flags);
    rock.existence_only--;
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
    if (!rock.db) return;
    if (rock_rename.src && rockRenameCarry(db, key, val)) return;
    if (rock_rename.src && rock_rename.db == db && sdscmp(key, rock_rename.dst) == 0) rock_rename.dst_removed = 1;
    rockDb *rdb = &rock.dbs[db->id];
    int had_copy = 0;
    if (rockIsColdOrPoint(val)) {
        rdb->cold--;
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
    rockDb *rdb = &rock.dbs[db->id];
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
    if (!rock.db) return;
    rockDb *rdb = &rock.dbs[db->id];
    int had_copy = 0;
    if (rockIsColdOrPoint(old)) {
        rdb->cold--;
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
    /* A split copy's elements go now (a collection may be large); its
     * small metadata record waits, stale, for the next put or delete. */
    if (dictSize(rdb->split)) {
        sds skey = rockStorageKey(db->id, key);
        rockSplitForget(rdb, key, skey);
        sdsfree(skey);
    }
    rockOutdateCopy(db, key, val);
}

/* A hot value was modified in place: its disk copy (if clean) is outdated. */
void rockKeyModified(redisDb *db, robj *key) {
    if (!rock.db) return;
    rockTouched(db, key->ptr);
    rockEvictNoteModified(db, key);
    rockDb *rdb = &rock.dbs[db->id];
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
    if (!rock.db || rock.debug_evict_all || rock.min_value_size == 0) return;
    for (int tries = 0; dictSize(rock.dbs[dbid].stale) == 0; tries++) {
        if (tries == server.dbnum) return;
        dbid = (dbid + 1) % server.dbnum;
        cursor = 0;
    }
    rockSweep sw = {server.db + dbid, listCreate()};
    int buckets = 0;
    do {
        cursor = dictScan(rock.dbs[dbid].stale, cursor, rockStaleSweepKey, NULL, &sw);
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
void rockEmptyDbs(redisDb *dbarray, int dbnum) {
    if (!rock.db || dbarray != server.db) return;
    rockLoadingReset();
    int start = dbnum == -1 ? 0 : dbnum;
    int end = dbnum == -1 ? server.dbnum - 1 : dbnum;
    int streaming = rockForkStreaming();
    for (int j = start; j <= end; j++) {
        rockDb *rdb = &rock.dbs[j];
        uint32_t old = rdb->sid;
        rdb->sid = rock.next_sid++;
        rdb->cold = 0;
        dictEmpty(rdb->clean, NULL);
        dictEmpty(rdb->stale, NULL);
        dictEmpty(rdb->split, NULL);
        rockVoidReadsOfSid(old);
        if (dbnum != -1 || streaming) {
            rockPendingDropSid(old);
            rockDbDeleteSid(old);
        }
    }
    /* Nothing is live: start over with an empty RocksDB, unless a forked
     * child is still streaming from a snapshot of this one. */
    if (dbnum == -1 && !streaming) rockResetStore();
    rock.sweep_all = 1;
}

/* SWAPDB: the tier state follows the dict it belongs to. */
void rockSwapDbs(int id1, int id2) {
    if (!rock.db) return;
    rockDb tmp = rock.dbs[id1];
    rock.dbs[id1] = rock.dbs[id2];
    rock.dbs[id2] = tmp;
    rock.sweep_all = 1;
}

/* TOUCH ran on a hot-clean value: its clean drop is to update the record's
 * access field whatever the policy (rockEvictEntry()). */
static void rockMarkTouched(redisDb *db, sds key) {
    dict *clean = rock.dbs[db->id].clean;
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
} rockCallFrame;

static rockCallFrame *rock_frames;
static int rock_frames_depth, rock_frames_cap;

static int rockAnyClean(void) {
    for (int j = 0; j < server.dbnum; j++)
        if (dictSize(rock.dbs[j].clean)) return 1;
    return 0;
}

client *rockCallEnter(client *c) {
    client *prev = rock.executing_client;
    rock.executing_client = c;
    if (rock_frames_depth == rock_frames_cap) {
        rock_frames_cap = rock_frames_cap ? rock_frames_cap * 2 : 8;
        rock_frames = zrealloc(rock_frames, sizeof(rockCallFrame) * rock_frames_cap);
    }
    rockCallFrame *f = &rock_frames[rock_frames_depth++];
    f->prev = prev;
    f->keys = NULL;
    f->nkeys = 0;
    if (!rock.db) return prev;
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
    if (rock_frames_depth == 0 && rock.point_value) rockPointLeave();
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
    if (rock.db && rock.debug_evict_all) {
        redisCommandProc *p = c->cmd->proc;
        if (p == debugCommand || p == moveCommand || p == copyCommand) rock.sweep_all = 1;
    }
    int touch = c->cmd->proc == touchCommand;
    for (int j = 0; j < f.nkeys; j++) {
        if (modified) rockKeyModified(c->db, f.keys[j]);
        else rockTouched(c->db, f.keys[j]->ptr);
        if (touch) rockMarkTouched(c->db, f.keys[j]->ptr);
        decrRefCount(f.keys[j]);
    }
    zfree(f.keys);
    /* (Restored last: rockKeyModified() above looks at the command.) */
    rock.executing_client = prev;
}

long long rockColdKeys(void) {
    long long cold = 0;
    if (!rock.dbs) return 0; /* a forked child has cold keys and no rock.db */
    for (int j = 0; j < server.dbnum; j++) cold += rock.dbs[j].cold;
    return cold;
}
