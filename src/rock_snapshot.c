/* rock_snapshot.c -- redis-rock: the keyspace snapshot's contents.
 *
 * Layer 3 (keyspace; docs/architecture.md, "Layers").
 *
 * Keyspace side. A keyspace snapshot is an RDB file written by upstream's
 * rdbSave() and read by its rdbLoad(), in which a cold value is not its
 * payload but a reference to its record in RocksDB: the snapshot holds the
 * keys, TTLs, hot values, FUNCTION libraries, module aux data and the
 * replication id and offset, and it is only ever loaded together with the
 * RocksDB checkpoint taken at the same instant (rock_warm.c, above, owns
 * the files and the pairing). This file owns what goes into the stream:
 *
 *   - header aux fields (rockRdbSaveAuxFields(), rdbSaveInfoAuxFields(),
 *     patch 0040): the snapshot's format, its pair id, the identity of the
 *     stock-format RDB it supersedes, where its checkpoint is, and the
 *     storage ids and split version
 *     counter, so no storage id or version is used twice over a restart;
 *   - a cold key (rockRdbSaveCold(), patch 0013, while a snapshot is
 *     written): type byte ROCK_RDB_TYPE_REF, the key, then its Redis type
 *     (and module type id), and a split collection's metadata (version,
 *     element count, record header);
 *   - after each database's walk (rockRdbSaveColdDb(), patch 0018), "rock-hot"
 *     aux fields: the hot keys whose disk copy is still valid (with the
 *     stamp and access field of their clean entry), those whose disk copy is
 *     outdated, and the split state of hot split collections, so that the
 *     records of those keys are reused or deleted as before the restart.
 *
 * Loading, the reference is accepted only while rock_warm.c loads the
 * snapshot it paired (rock_snapshot.loading), never in a stock-format RDB,
 * a RESTORE payload or a replica's sync: it becomes the type's cold
 * sentinel, and rockSnapshotKeyDone(), right after rdbLoadRio() added the
 * key (or dropped it: expired on a master), counts it cold and adopts its
 * split state, or deletes its records. */

#include "server.h"

/* An RDB type byte upstream does not use: a cold value's reference. */
#define ROCK_RDB_TYPE_REF 200
/* Entries of a "rock-hot" aux field. */
#define ROCK_HOT_CLEAN 1
#define ROCK_HOT_STALE 2
#define ROCK_HOT_SPLIT 3
#define ROCK_HOT_CHUNK (1024 * 1024) /* bytes of entries per aux field */

/* rdb.c, not in its header */
ssize_t rdbSaveAuxField(rio *rdb, void *key, size_t keylen, void *val, size_t vallen);
ssize_t rdbSaveAuxFieldStrStr(rio *rdb, char *key, char *val);

struct rockSnapshotState rock_snapshot;

static struct {
    int pending;        /* a reference was read, its key not yet added */
    sds key;
    int dbid;
    robj *sentinel;
    rockSplitInfo *si;  /* its split state, or NULL */
    long long loaded;   /* server.rdb_last_load_keys_loaded before its key */
} rock_ref;

/* ---------------------------------------------------------------------------
 * Writing
 * ------------------------------------------------------------------------ */

/* rdbSaveInfoAuxFields(): the snapshot's header fields. Returns the bytes
 * written, -1 on error, 0 outside a snapshot. */
ssize_t rockRdbSaveAuxFields(rio *rdb) {
    if (!rock_snapshot.writing) return 0;
    sds state = sdscatprintf(sdsempty(), "%u %llu %d", rock_store.next_sid,
                             (unsigned long long)rock_store.next_split_version, server.dbnum);
    for (int j = 0; j < server.dbnum; j++) state = sdscatprintf(state, " %u", rock_store.sids[j]);
    ssize_t n = 0, r;
    const char *f[][2] = {{"rock-snapshot", ROCK_SNAPSHOT_FORMAT},
                          {"rock-pair", rock_snapshot.pair},
                          {"rock-supersedes", rock_snapshot.supersedes},
                          {"rock-checkpoint", rock_snapshot.checkpoint},
                          {"rock-state", state}};
    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
        if ((r = rdbSaveAuxFieldStrStr(rdb, (char *)f[i][0], (char *)f[i][1])) == -1) {
            n = -1;
            break;
        }
        n += r;
    }
    sdsfree(state);
    return n;
}

/* rockRdbSaveCold() while a snapshot is written: the reference that stands
 * for the value of cold key `key`. */
ssize_t rockSnapshotSaveRef(rio *rdb, robj *key, int dbid) {
    robj *val = dictFetchValue(server.db[dbid].dict, key->ptr);
    if (val == NULL || !rockIsCold(val)) return -1;
    if (rdbSaveType(rdb, ROCK_RDB_TYPE_REF) == -1 || rdbSaveStringObject(rdb, key) == -1 ||
        rdbSaveLen(rdb, val->type) == -1)
        return -1;
    if (val->type == OBJ_MODULE && rdbSaveLen(rdb, ((moduleValue *)val->ptr)->type->id) == -1) return -1;
    rockSplitInfo *si = rockSplitLookup(dbid, key->ptr);
    if (rdbSaveLen(rdb, si != NULL) == -1) return -1;
    if (si && (rdbSaveLen(rdb, si->version) == -1 || rdbSaveLen(rdb, si->count) == -1 ||
               rioWrite(rdb, si->header, ROCK_HEADER_LEN + 1) == 0))
        return -1;
    return 1;
}

static void rockHotEntry(sds *buf, int kind, sds key) {
    uint32_t len = sdslen(key);
    unsigned char k = kind;
    *buf = sdscatlen(*buf, &k, 1);
    *buf = sdscatlen(*buf, &len, 4);
    *buf = sdscatlen(*buf, key, len);
}

static int rockHotFlush(rio *rdb, sds *buf, int dbid, int force) {
    if (sdslen(*buf) <= 4 || (!force && sdslen(*buf) < ROCK_HOT_CHUNK)) return 0;
    int ret = rdbSaveAuxField(rdb, "rock-hot", 8, *buf, sdslen(*buf)) == -1 ? -1 : 0;
    uint32_t id = dbid;
    sdsclear(*buf);
    *buf = sdscatlen(*buf, &id, 4);
    return ret;
}

/* rockRdbSaveColdDb() while a snapshot is written: the tier state of the hot
 * keys of database `dbid`. A split collection that point writes changed in
 * RAM is written as outdated (its next eviction writes it whole), not as
 * clean: which elements changed is not kept. */
ssize_t rockSnapshotSaveHot(rio *rdb, int dbid) {
    rockDb *rdb_state = &rock_ks.dbs[dbid];
    uint32_t id = dbid;
    sds buf = sdsnewlen(&id, 4);
    dictIterator *di;
    dictEntry *de;
    int err = 0;

    di = dictGetIterator(rdb_state->split);
    while (!err && (de = dictNext(di)) != NULL) {
        robj *val = dictFetchValue(server.db[dbid].dict, dictGetKey(de));
        if (val == NULL || rockIsCold(val)) continue; /* with its reference */
        rockSplitInfo *si = dictGetVal(de);
        rockHotEntry(&buf, ROCK_HOT_SPLIT, dictGetKey(de));
        buf = sdscatlen(buf, &si->version, 8);
        buf = sdscatlen(buf, &si->count, 8);
        buf = sdscatlen(buf, si->header, ROCK_HEADER_LEN + 1);
        err = rockHotFlush(rdb, &buf, dbid, 0);
    }
    dictReleaseIterator(di);
    di = dictGetIterator(rdb_state->clean);
    while (!err && (de = dictNext(di)) != NULL) {
        rockSplitInfo *si = rockSplitLookup(dbid, dictGetKey(de));
        if (si && si->dirty && dictSize(si->dirty)) {
            rockHotEntry(&buf, ROCK_HOT_STALE, dictGetKey(de));
        } else {
            uint64_t v = dictGetUnsignedIntegerVal(de);
            rockHotEntry(&buf, ROCK_HOT_CLEAN, dictGetKey(de));
            buf = sdscatlen(buf, &v, 8);
        }
        err = rockHotFlush(rdb, &buf, dbid, 0);
    }
    dictReleaseIterator(di);
    di = dictGetIterator(rdb_state->stale);
    while (!err && (de = dictNext(di)) != NULL) {
        rockHotEntry(&buf, ROCK_HOT_STALE, dictGetKey(de));
        err = rockHotFlush(rdb, &buf, dbid, 0);
    }
    dictReleaseIterator(di);
    if (!err) err = rockHotFlush(rdb, &buf, dbid, 1);
    sdsfree(buf);
    return err ? -1 : 0;
}

/* ---------------------------------------------------------------------------
 * Loading
 * ------------------------------------------------------------------------ */

int rockSnapshotIsRef(int type) {
    return rock_snapshot.loading && type == ROCK_RDB_TYPE_REF;
}

static void rockRefForget(void) {
    if (rock_ref.si) rockSplitInfoRelease(rock_ref.si);
    sdsfree(rock_ref.key);
    memset(&rock_ref, 0, sizeof(rock_ref));
}

/* rdbLoadRio(): the value of `key` is a reference. Returns the cold
 * sentinel that stands for it, or NULL (*error set). */
robj *rockSnapshotLoadRef(rio *rdb, sds key, int dbid, int *error) {
    *error = RDB_LOAD_ERR_OTHER;
    rockRefForget();
    uint64_t type = rdbLoadLen(rdb, NULL), split;
    robj *sentinel = NULL;
    if (type == RDB_LENERR) return NULL;
    if (type == OBJ_MODULE) {
        uint64_t moduleid = rdbLoadLen(rdb, NULL);
        moduleType *mt = moduleid == RDB_LENERR ? NULL : moduleTypeLookupModuleByID(moduleid);
        if (mt == NULL) {
            char name[10];
            moduleTypeNameByID(name, moduleid);
            serverLog(LL_WARNING, "rock: the keyspace snapshot holds cold values of module type '%s', "
                      "which no loaded module provides", name);
            return NULL;
        }
        sentinel = rockModuleSentinel(mt);
    } else if (type < ROCK_OBJ_TYPES) {
        sentinel = rock_store.cold[type];
    }
    if (sentinel == NULL || (split = rdbLoadLen(rdb, NULL)) == RDB_LENERR || split > 1) {
        serverLog(LL_WARNING, "rock: a bad cold-value reference in the keyspace snapshot (key '%s')", key);
        return NULL;
    }
    if (split) {
        rockSplitInfo *si = zcalloc(sizeof(*si));
        si->refs = 1;
        rock_ref.si = si;
        if ((si->version = rdbLoadLen(rdb, NULL)) == RDB_LENERR || (si->count = rdbLoadLen(rdb, NULL)) == RDB_LENERR ||
            rioRead(rdb, si->header, ROCK_HEADER_LEN + 1) == 0) {
            rockRefForget();
            return NULL;
        }
    }
    rock_ref.pending = 1;
    rock_ref.key = sdsdup(key);
    rock_ref.dbid = dbid;
    rock_ref.sentinel = sentinel;
    rock_ref.loaded = server.rdb_last_load_keys_loaded;
    *error = 0;
    return sentinel;
}

static void rockDropRecords(int dbid, sds key, rockSplitInfo *si) {
    sds skey = rockStorageKey(dbid, key);
    if (si) rockWriteDeleteElements(skey, si->version);
    rockWriteDelete(skey);
    sdsfree(skey);
    rock_ks_stats.warm_dropped++;
}

/* After rdbLoadRio() added a key (or dropped it): a reference's key is
 * counted cold, with its split state; a dropped one's records go. Whether
 * it was added is in upstream's count of keys loaded, which an added key
 * moves: no lookup of the key again (a hash and a walk of its bucket per
 * key, 1M of them in a warm start). */
void rockSnapshotKeyDone(redisDb *db) {
    if (!rock_ref.pending) return;
    if (db == server.db + rock_ref.dbid && server.rdb_last_load_keys_loaded != rock_ref.loaded) {
        if (rock_ref.si) rockSplitAdopt(rock_ref.dbid, rock_ref.key, rock_ref.si);
        rock_ks.dbs[rock_ref.dbid].cold++;
        rock_ks.cold++;
        rock_ks_stats.warm_reused++;
    } else {
        rockDropRecords(rock_ref.dbid, rock_ref.key, rock_ref.si);
    }
    rockRefForget();
}

/* A "rock-hot" aux field: the tier state of hot keys loaded before it. A
 * key no longer there (expired, dropped by a master while loading) has its
 * records deleted. */
static int rockSnapshotLoadHot(const char *p, size_t len) {
    const char *end = p + len;
    uint32_t dbid, klen;
    if (len < 4) return C_ERR;
    memcpy(&dbid, p, 4);
    p += 4;
    if ((int)dbid >= server.dbnum) return C_ERR;
    redisDb *db = server.db + dbid;
    rockDb *rdb = &rock_ks.dbs[dbid];
    while (p < end) {
        if (end - p < 5) return C_ERR;
        int kind = (unsigned char)*p;
        memcpy(&klen, p + 1, 4);
        p += 5;
        size_t extra = kind == ROCK_HOT_CLEAN ? 8 : kind == ROCK_HOT_SPLIT ? 16 + ROCK_HEADER_LEN + 1 : 0;
        if (kind < ROCK_HOT_CLEAN || kind > ROCK_HOT_SPLIT || (size_t)(end - p) < klen + extra) return C_ERR;
        sds key = sdsnewlen(p, klen);
        p += klen;
        robj *val = dictFetchValue(db->dict, key);
        if (kind == ROCK_HOT_SPLIT) {
            rockSplitInfo *si = zcalloc(sizeof(*si));
            si->refs = 1;
            memcpy(&si->version, p, 8);
            memcpy(&si->count, p + 8, 8);
            memcpy(si->header, p + 16, ROCK_HEADER_LEN + 1);
            if (val == NULL) {
                rockDropRecords(dbid, key, si);
            } else if (rockIsCold(val)) {
                /* Moved to disk while loading, under a new version: the
                 * elements of the old one go. */
                sds skey = rockStorageKey(dbid, key);
                rockWriteDeleteElements(skey, si->version);
                sdsfree(skey);
            } else {
                rockSplitAdopt(dbid, key, si);
            }
            rockSplitInfoRelease(si);
        } else if (val == NULL) {
            rockDropRecords(dbid, key, NULL);
        } else if (rockIsCold(val)) {
            /* Moved to disk while loading: its put superseded the record. */
        } else {
            dict *d = kind == ROCK_HOT_CLEAN ? rdb->clean : rdb->stale;
            dictEntry *existing, *e = dictAddRaw(d, sdsdup(key), &existing);
            if (e == NULL) return sdsfree(key), C_ERR;
            if (kind == ROCK_HOT_CLEAN) {
                uint64_t v;
                memcpy(&v, p, 8);
                dictSetUnsignedIntegerVal(e, v);
            }
        }
        p += extra;
        sdsfree(key);
    }
    return C_OK;
}

/* The "rock-state" field: storage ids and the split version counter as they
 * were. Databases the snapshot did not have get ids not used before. */
static int rockSnapshotLoadState(const char *s) {
    unsigned long long next_sid, next_version;
    int dbnum, off;
    if (sscanf(s, "%llu %llu %d%n", &next_sid, &next_version, &dbnum, &off) != 3 || dbnum < 1) return C_ERR;
    s += off;
    if (next_sid > rock_store.next_sid) rock_store.next_sid = next_sid;
    if (next_version > rock_store.next_split_version) rock_store.next_split_version = next_version;
    for (int j = 0; j < dbnum; j++) {
        unsigned int sid;
        if (sscanf(s, " %u%n", &sid, &off) != 1) return C_ERR;
        s += off;
        if (j < server.dbnum) rock_store.sids[j] = sid;
    }
    for (int j = dbnum; j < server.dbnum; j++) rock_store.sids[j] = rock_store.next_sid++;
    return C_OK;
}

#define ROCK_SNAPSHOT_NOT_RDB "This file is a redis-rock keyspace snapshot, not a stock RDB: its cold values " \
    "are in the RocksDB checkpoint it is paired with, and only redis-rock's start-up loads it " \
    "(docs/restarts.md, \"Warm restart\")."

/* redis-check-rdb met an aux field: what to say when it is a snapshot's
 * (NULL: nothing). */
const char *rockRdbCheckAux(robj *auxkey) {
    return strcasecmp(auxkey->ptr, "rock-snapshot") == 0 ? ROCK_SNAPSHOT_NOT_RDB : NULL;
}

/* rdbLoadRio(): an aux field. Returns 1 when it is the tier's (handled),
 * else 0. A snapshot's fields outside the load that paired it stop the
 * load: the file is not a stock-format RDB. */
int rockRdbLoadAux(robj *auxkey, robj *auxval) {
    sds k = auxkey->ptr;
    if (strncasecmp(k, "rock-", 5) != 0) return 0;
    if (!rock_snapshot.loading) {
        if (!strcasecmp(k, "rock-snapshot")) {
            serverLog(LL_WARNING, "%s", ROCK_SNAPSHOT_NOT_RDB);
            exit(1);
        }
        return 1;
    }
    sds v = auxval->ptr;
    int ok = 1;
    if (!strcasecmp(k, "rock-pair")) {
        ok = rock_snapshot.pair && !strcmp(v, rock_snapshot.pair);
    } else if (!strcasecmp(k, "rock-state")) {
        ok = rockSnapshotLoadState(v) == C_OK;
    } else if (!strcasecmp(k, "rock-hot")) {
        ok = rockSnapshotLoadHot(v, sdslen(v)) == C_OK;
    }
    if (!ok) {
        serverLog(LL_WARNING, "rock: the keyspace snapshot's '%s' field is wrong or damaged", k);
        exit(1);
    }
    return 1;
}
