/* rock_keys.c -- redis-rock: the keyspace side of the SSD tier.
 *
 * This file owns the keyspace layer's state (rock_ks: per database the
 * hot-clean, stale and split sets and the cold count; the executing client)
 * and what happens to a key when its value moves:
 *   - eviction of one value (rockEvictEntry): serialize, queue the write
 *     (rock_write.c), swap in the type's sentinel; or, for a hot-clean
 *     value, just drop it (its disk copy is still valid: clean re-eviction
 *     writes nothing);
 *   - paging one value back (rockLoadEntry, rockReadRecord), marking it
 *     hot-clean; eviction is told through the function it registered
 *     (rockKeysOnValueHot());
 *   - which keys a command needs the *value* of (rockKeyNeedsValue): metadata
 *     and overwrite-only access keeps values cold.
 * The hooks upstream calls when keys are looked up, deleted, overwritten,
 * modified, flushed or swapped are rock_hooks.c's, above this file.
 *
 * Paging in or out is never a modification: no keyspace event, no
 * signalModifiedKey (WATCH and client tracking see nothing). */

#include "server.h"
#include "rock_readers.h"

struct rockKeyspace rock_ks;
rockStats rock_ks_stats; /* the keyspace layer's counters (rock.h) */

void rockKeysResetStats(void) {
    memset(&rock_ks_stats, 0, sizeof(rock_ks_stats));
}

/* ROCK EVICT and ROCK STATUS take key names whose values they never read
 * (they move them out, or say where they are). Found at start-up
 * (rockKeysInit()) in the table of original names, which rename-command
 * leaves alone: the same command structs as the live table's. */
static struct redisCommand *rock_evict_cmd, *rock_status_cmd;

int rockIsOwnKeyCommand(struct redisCommand *cmd) {
    return cmd == rock_evict_cmd || cmd == rock_status_cmd;
}

/* At start-up, after rockStoreInit(): the per-db state. */
void rockKeysInit(void) {
    rock_evict_cmd = lookupCommandByCStringLogic(server.orig_commands, "rock|evict");
    rock_status_cmd = lookupCommandByCStringLogic(server.orig_commands, "rock|status");
    rock_ks.dbs = zcalloc(sizeof(rockDb) * server.dbnum);
    for (int j = 0; j < server.dbnum; j++) {
        rock_ks.dbs[j].clean = dictCreate(&setDictType);
        rock_ks.dbs[j].stale = dictCreate(&setDictType);
        rock_ks.dbs[j].split = dictCreate(&rockSplitDictType);
    }
}

/* Every 100 ms (rockCron()): the per-db dicts shrink once sparse, as
 * upstream's databasesCron() shrinks the keyspace's. The hot-clean set
 * grows with the hot values (100,000 entries at 2 x maxmemory of 500-byte
 * values) and left at that size, with a few hundred hot values after
 * maxmemory shrinks, would keep its table's RAM (8 bytes a bucket, 1 MB
 * there) and leave eviction's samples of it (dictGetSomeKeys() walks a few
 * buckets) mostly empty: the policy's pick would be a value at random. A
 * shrink in progress moves ROCK_KEYS_REHASH_STEPS buckets a tick besides
 * the steps the dict's own lookups make. */
#define ROCK_KEYS_REHASH_STEPS 1000
static void rockKeysShrink(dict *d) {
    if (d == NULL) return;
    if (!dictIsRehashing(d) && htNeedsResize(d)) dictResize(d);
    if (dictIsRehashing(d)) dictRehash(d, ROCK_KEYS_REHASH_STEPS);
}

static dict *rock_fresh;

void rockKeysCron(void) {
    for (int j = 0; j < server.dbnum; j++) {
        rockKeysShrink(rock_ks.dbs[j].clean);
        rockKeysShrink(rock_ks.dbs[j].stale);
        rockKeysShrink(rock_ks.dbs[j].split);
    }
    rockKeysShrink(rock_fresh);
}

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
           p == dbsizeCommand || rockIsOwnKeyCommand(cmd);
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

/* Whether a command reads the values of the keys it names, as far as its
 * command struct alone tells (ROCK_READS_*, rock.h): for the value-access
 * counters, asked at every lookup (rockValueAccessed()), so the answer is
 * kept per command id. SOME: key specs that differ, or flags that depend on
 * the arguments (SET's GET, ...): the caller asks rockKeyNeedsValue(). */
unsigned char *rock_value_class; /* by command id; 0: not known yet */
int rock_value_class_len;

static int rockComputeValueClass(struct redisCommand *cmd) {
    if (rockCommandNeverNeedsValue(cmd)) return ROCK_READS_NEVER;
    if (cmd->key_specs_num == 0 || cmd->getkeys_proc) return ROCK_READS_SOME;
    int need = 0, skip = 0;
    for (int j = 0; j < cmd->key_specs_num; j++) {
        int flags = cmd->key_specs[j].flags;
        if (flags & CMD_KEY_VARIABLE_FLAGS) return ROCK_READS_SOME;
        if (rockFlagsNeedValue(flags)) need = 1;
        else skip = 1;
    }
    if (need && skip) return ROCK_READS_SOME;
    return need ? ROCK_READS_ALWAYS : ROCK_READS_NEVER;
}

int rockCommandValueClass(struct redisCommand *cmd) {
    if (cmd->id < 0) return rockComputeValueClass(cmd);
    if (cmd->id >= rock_value_class_len) {
        int len = cmd->id + 64;
        rock_value_class = zrealloc(rock_value_class, len);
        memset(rock_value_class + rock_value_class_len, 0, len - rock_value_class_len);
        rock_value_class_len = len;
    }
    if (rock_value_class[cmd->id] == 0) rock_value_class[cmd->id] = rockComputeValueClass(cmd);
    return rock_value_class[cmd->id];
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
void rockSplitForget(rockDb *rdb, sds key, sds skey) {
    dictEntry *de = dictSize(rdb->split) ? dictUnlink(rdb->split, key) : NULL;
    if (de == NULL) return;
    rockWriteDeleteElements(skey, ((rockSplitInfo *)dictGetVal(de))->version);
    dictFreeUnlinkedEntry(rdb->split, de);
}

/* `key` in database `dbid` is now the split collection `si` (a reference
 * taken), its records written by the caller (rock_load.c). */
void rockSplitAdopt(int dbid, sds key, rockSplitInfo *si) {
    si->refs++;
    rockSplitPut(&rock_ks.dbs[dbid], key, si);
}

/* ...or no longer: the state alone is dropped, the caller deletes its
 * records. */
void rockSplitDrop(int dbid, sds key) {
    dictDelete(rock_ks.dbs[dbid].split, key);
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
    rockDb *rdb = &rock_ks.dbs[db->id];

    if (!rock_store.db) return ROCK_EVICT_DISABLED;
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
        if (si) rockFieldSet(si->header, val->lru);
        if (si && si->dirty) {
            if (rockWriteError() || !rockDiskHasRoom()) return ROCK_EVICT_ERROR;
            if (rockPointFlushDirty(db, key, val, si)) rock_ks_stats.dirty_flushes++;
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
        if (val->lru != rockCleanDiskField(ce) && (lfu || rockCleanTouched(ce)) && !rockWriteError() &&
            rockDiskHasRoom()) {
            sds skey = rockStorageKey(db->id, key);
            rockWriteAccess(skey, val->lru);
            sdsfree(skey);
        }
        dictDelete(rdb->clean, key);
        rock_ks_stats.clean_drops++;
    } else {
        if (rockWriteError() || !rockDiskHasRoom()) return ROCK_EVICT_ERROR;
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
        uint64_t version = elements ? rockSplitNewVersion() : 0, old_version = 0;
        if (version) old_version = rockSplitNote(rdb, key, rec, version, elements);
        else rockSplitForget(rdb, key, skey);
        rockWritePut(skey, rec, version, old_version);
        sdsfree(skey);
    }
    dictSetVal(db->dict, de, sentinel);
    rockFreshForget(val);
    rockFreeMoved(db, val);
    rdb->cold++;
    rock_ks.cold++;
    rock_ks_stats.evictions++;
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
        rock_ks_stats.errors++;
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

/* Told of every value put back in RAM (rockKeysOnValueHot()): eviction,
 * which sits above this file, registers it at start-up. */
static rockKeyNoteProc *rock_value_hot;

void rockKeysOnValueHot(rockKeyNoteProc *proc) {
    rock_value_hot = proc;
}

/* ---------------------------------------------------------------------------
 * Values paged in and not used yet
 *
 * A value paged in for a command (or read ahead of it) is in RAM when the
 * command looks it up: that first lookup is still an access served from
 * disk (value_hits_disk). The values paged in and not looked up since are
 * kept here by address (rockRestoreValue() adds, rockFreshTake() takes at
 * the first counted lookup; eviction, removal and overwrite forget them).
 * Empty most of the time, and then free to ask. Bounded (ROCK_FRESH_MAX;
 * past it a value's first read counts as RAM): a value paged in for a
 * command that never looks it up stays until it moves out again or the
 * dataset is emptied.
 * ------------------------------------------------------------------------ */

#define ROCK_FRESH_MAX 65536

static uint64_t rockPtrHash(const void *key) {
    return ((uint64_t)(uintptr_t)key * 0x9E3779B97F4A7C15ULL) >> 16;
}

static dictType rockFreshDictType = {rockPtrHash, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
unsigned long rock_fresh_count; /* its size, for rockValueAccessed() (rock.h) */

static void rockFreshAdd(robj *val) {
    if (val->refcount == OBJ_SHARED_REFCOUNT) return;
    if (rock_fresh == NULL) rock_fresh = dictCreate(&rockFreshDictType);
    if (dictSize(rock_fresh) >= ROCK_FRESH_MAX) return; /* its first read counts as RAM */
    dictAdd(rock_fresh, val, NULL);
    rock_fresh_count = dictSize(rock_fresh);
}

/* Every value freed at once (FLUSHALL, FLUSHDB, a full sync, DEBUG RELOAD). */
void rockFreshReset(void) {
    if (rock_fresh) dictEmpty(rock_fresh, NULL);
    rock_fresh_count = 0;
}

/* Was `val` paged in and not looked up since? Forgets it. */
int rockFreshTake(robj *val) {
    if (rock_fresh_count == 0) return 0;
    int found = dictDelete(rock_fresh, val) == DICT_OK;
    rock_fresh_count = dictSize(rock_fresh);
    return found;
}

/* Was `val` paged in (or read ahead) and not looked up since? */
int rockIsFresh(robj *val) {
    return rock_fresh_count && dictFind(rock_fresh, val) != NULL;
}

/* `val` leaves RAM (evicted, deleted, replaced): not fresh any more. */
void rockFreshForget(robj *val) {
    if (rock_fresh_count == 0) return;
    dictDelete(rock_fresh, val);
    rock_fresh_count = dictSize(rock_fresh);
}

/* Put a value read back from disk into its dict entry: the key becomes
 * hot-clean (its disk copy stays valid until modified). */
void rockRestoreValue(redisDb *db, dictEntry *de, robj *val) {
    rockDb *rdb = &rock_ks.dbs[db->id];
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
    if (rock_value_hot) rock_value_hot(db, dictGetKey(de));
    rockFreshAdd(val);
    rdb->cold--;
    rock_ks.cold--;
    rock_ks_stats.loads++;
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
    rock_ks_stats.sync_loads++;
    return rockLoadEntry(db, de);
}

long long rockColdKeys(void) {
    return rock_ks.cold;
}

/* The hot-clean sets' entries over every database, and the bytes of their
 * tables' bucket arrays (*table_bytes), which grow and shrink with them
 * (rockKeysCron()) and so count apart from the fixed part. */
long long rockCleanKeys(long long *table_bytes) {
    long long entries = 0, bytes = 0;
    for (int j = 0; rock_ks.dbs && j < server.dbnum; j++) {
        entries += dictSize(rock_ks.dbs[j].clean);
        bytes += (long long)dictSlots(rock_ks.dbs[j].clean) * (long long)sizeof(dictEntry *);
    }
    if (table_bytes) *table_bytes = bytes;
    return entries;
}

/* The record of a cold key, read synchronously: from the pending buffer if
 * its write is not committed yet (*from_pending set), else from RocksDB.
 * NULL when it can't be read: a RocksDB error or a missing record, both
 * logged and counted. With `page_in` (the value is about to be paged in) a
 * read in flight for the same record is voided: it is redundant now. A read
 * that leaves the key cold (a copy, a save) leaves those reads alone. */
sds rockReadRecord(int dbid, sds key, int *from_pending, int page_in) {
    int found;
    /* A split collection's point writes are committed first: its elements
     * are read from RocksDB only (rock_point.c). */
    rockSplitInfo *si = rock_ks.dbs ? rockSplitLookup(dbid, key) : NULL;
    if (si && si->ops > 0) rockWriteFlush();
    sds skey = rockStorageKey(dbid, key);
    sds rec = rockPendingGet(skey);
    if (from_pending) *from_pending = rec != NULL;
    if (rec) {
        rec = sdsdup(rec);
        rock_ks_stats.pending_hits++;
        found = 1;
    } else {
        rec = rockDbGet(skey, &found);
    }
    unsigned int lru;
    if (rec && rockPendingAccess(skey, &lru)) rockRecordSetAccess(rec, lru);
    if (page_in) rockVoidRead(skey);
    sdsfree(skey);
    if (rec == NULL && !found) {
        rock_ks_stats.errors++;
        serverLog(LL_WARNING, "rock: value of cold key '%s' (db %d) is missing from RocksDB", key, dbid);
    }
    return rec;
}

/* The split state of `key` in database `dbid`, or NULL when its disk copy
 * is not split (or it has none). */
rockSplitInfo *rockSplitLookup(int dbid, sds key) {
    dict *split = rock_ks.dbs[dbid].split;
    return dictSize(split) ? dictFetchValue(split, key) : NULL;
}

