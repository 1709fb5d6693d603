/* rock_point.c -- redis-rock: point reads of big collections on disk.
 *
 * Layer 3 (keyspace; docs/architecture.md, "Layers").
 *
 * Keyspace side, a sibling of the read path (rock_read.c, rock_read.h).
 * A cold hash, set or sorted set stored element by element (rock_split.c)
 * answers the commands that touch only the elements they name without being
 * paged in (point commands):
 *
 *   reads:  HGET HMGET HEXISTS HSTRLEN, SISMEMBER SMISMEMBER, ZSCORE ZMSCORE,
 *           and HLEN SCARD ZCARD (the count is in RAM: no read at all)
 *   writes: HSET HMSET HSETNX HDEL HINCRBY HINCRBYFLOAT, SADD SREM,
 *           ZADD ZREM ZINCRBY
 *
 * Before such a command runs (rockPrepareCommand()), a point job reads the
 * named elements' records in one MultiGet on a reader thread (the
 * metadata record is not read: its version, count and header are in RAM,
 * rockSplitInfo); the client waits as for any read. When the
 * job is back and the key is still cold with the same split version, the
 * results wait in the client's stash; the command re-runs, and right before
 * its proc runs (rockCallEnter()) the key's sentinel is replaced by a small
 * object of the key's type holding only the elements found
 * (rock_ks.point_value), whose length (hashTypeLength(), setTypeSize(),
 * zsetLength(): patch 0034) is the collection's. The upstream command runs
 * on it unchanged, so its reply, keyspace notifications, tracking and
 * propagation are stock's; right after (rockCallLeave()) the elements it
 * changed are queued for the writer, each as one record put or delete,
 * with the metadata record's new count, and the sentinel is put back: the
 * key stays cold, and its next eviction has nothing to write. A write that
 * empties the collection deletes the key as on stock (rockKeyRemoved()).
 *
 * Nothing else ever sees that object: the commands above touch nothing but
 * the elements they name and the length, they run alone (not in MULTI/EXEC,
 * scripts or modules: those page the collection in), and a lookup that
 * expires the key deletes the cold value (rockKeyRemoved() takes the object
 * for cold).
 *
 * Queued element writes are served to later point reads from the writer's
 * table (rockPendingElement(), looked up when the job is made: no later
 * write of the key can be queued while it is in flight, the per-key queues
 * see to it). A page-in of the whole collection (readers, synchronous
 * reads, forks) waits until they are committed.
 *
 * The RAM state is trusted over the disk's metadata record: the writer
 * stores every split version's put in one batch with its metadata (and
 * retries a failed batch, keeping the record pending meanwhile, when point
 * commands page the value in from the pending buffer), so once the put is
 * not pending the version in RAM is the one on disk. */

#include "server.h"
#include "rock_read.h"

typedef struct rockPointStash {
    int dbid;
    sds key;
    uint64_t version;
    uint64_t writes;   /* the key's point writes when its elements were read */
    struct redisCommand *cmd;
    int argc;
    int write;
    int n;             /* distinct elements named */
    sds *eles;
    sds *vals;         /* their values before the command, NULL if absent */
    rockSplitInfo *si; /* whose readers it counts in, until it is used */
} rockPointStash;

static struct {
    redisDb *db;       /* where rock_ks.point_value stands in, while it does */
    sds key;
    rockPointStash *ps;
    rockSplitInfo *si; /* the key's split state (a reference) */
    uint64_t base;     /* elements not among those named */
} rock_point;

/* ---------------------------------------------------------------------------
 * Which commands, which elements
 * ------------------------------------------------------------------------ */

/* Is `cmd argv` a point command? Sets its type, whether it writes, and the
 * argv positions of the elements it names (*pos, zmalloc'ed, *n of them).
 * Returns 0 when it is not one (or its arguments are not what it takes:
 * the command then pages the collection in and replies as stock would). */
static int rockPointParse(struct redisCommand *cmd, robj **argv, int argc, int *type, int *write, int **pos,
                          int *n) {
    redisCommandProc *p = cmd->proc;
    int first = 2, step = 1, last = argc - 1;
    *write = 0;
    if (p == hgetCommand || p == hexistsCommand || p == hstrlenCommand) {
        *type = OBJ_HASH;
        if (argc != 3) return 0;
    } else if (p == hmgetCommand) {
        *type = OBJ_HASH;
        if (argc < 3) return 0;
    } else if (p == hlenCommand || p == scardCommand || p == zcardCommand) {
        *type = p == hlenCommand ? OBJ_HASH : p == scardCommand ? OBJ_SET : OBJ_ZSET;
        if (argc != 2) return 0;
    } else if (p == hsetCommand || p == hsetnxCommand) {
        *type = OBJ_HASH;
        *write = 1;
        step = 2;
        if (argc < 4 || argc % 2 || (p == hsetnxCommand && argc != 4)) return 0;
    } else if (p == hdelCommand) {
        *type = OBJ_HASH;
        *write = 1;
        if (argc < 3) return 0;
    } else if (p == hincrbyCommand || p == hincrbyfloatCommand) {
        *type = OBJ_HASH;
        *write = 1;
        last = 2;
        if (argc != 4) return 0;
    } else if (p == sismemberCommand || p == smismemberCommand) {
        *type = OBJ_SET;
        if (argc < 3 || (p == sismemberCommand && argc != 3)) return 0;
    } else if (p == saddCommand || p == sremCommand) {
        *type = OBJ_SET;
        *write = 1;
        if (argc < 3) return 0;
    } else if (p == zscoreCommand || p == zmscoreCommand) {
        *type = OBJ_ZSET;
        if (argc < 3 || (p == zscoreCommand && argc != 3)) return 0;
    } else if (p == zremCommand) {
        *type = OBJ_ZSET;
        *write = 1;
        if (argc < 3) return 0;
    } else if (p == zincrbyCommand) {
        *type = OBJ_ZSET;
        *write = 1;
        first = last = 3;
        if (argc != 4) return 0;
    } else if (p == zaddCommand) {
        *type = OBJ_ZSET;
        *write = 1;
        while (first < argc && sdsEncodedObject(argv[first])) {
            const char *o = argv[first]->ptr;
            if (strcasecmp(o, "nx") && strcasecmp(o, "xx") && strcasecmp(o, "gt") && strcasecmp(o, "lt") &&
                strcasecmp(o, "ch") && strcasecmp(o, "incr"))
                break;
            first++;
        }
        /* score member pairs: the members */
        if (argc - first < 2 || (argc - first) % 2) return 0;
        first++;
        step = 2;
    } else {
        return 0;
    }
    *n = 0;
    *pos = zmalloc(sizeof(int) * (argc > 2 ? argc : 1));
    for (int j = first; j <= last && j < argc; j += step) {
        if (!sdsEncodedObject(argv[j])) {
            zfree(*pos);
            *pos = NULL;
            return 0;
        }
        (*pos)[(*n)++] = j;
    }
    return 1;
}

/* The split version of a cold key, or 0 when it is not stored element by
 * element; and the number of point writes it has had. */
static uint64_t rockPointVersion(redisDb *db, sds key, uint64_t *writes) {
    rockSplitInfo *si = rockSplitLookup(db->id, key);
    if (writes) *writes = si ? si->writes : 0;
    return si ? si->version : 0;
}


/* Are the elements `eles` read when the key had had `seen` point writes
 * still current? Only a write of one of them since makes them stale (a
 * command ahead in the key's queue may have written it): reads queued
 * behind a write of other elements keep what they read. */
static int rockPointFresh(rockSplitInfo *si, uint64_t seen, sds *eles, int n) {
    if (si->writes == seen) return 1;
    if (seen < si->forgotten || si->written == NULL) return 0;
    for (int j = 0; j < n; j++) {
        dictEntry *de = dictFind(si->written, eles[j]);
        if (de && dictGetUnsignedIntegerVal(de) > seen) return 0;
    }
    return 1;
}

/* A job or stash no longer holds elements read of `si`. */
static void rockPointUnread(rockSplitInfo *si) {
    if (si == NULL) return;
    si->readers--;
    rockSplitInfoRelease(si);
}

static void rockPointFreeStash(rockPointStash *ps) {
    rockPointUnread(ps->si);
    for (int j = 0; j < ps->n; j++) {
        sdsfree(ps->eles[j]);
        if (ps->vals) sdsfree(ps->vals[j]);
    }
    zfree(ps->eles);
    zfree(ps->vals);
    sdsfree(ps->key);
    zfree(ps);
}

void rockPointDrop(client *c) {
    if (c->rock == NULL || c->rock->point == NULL) return;
    rockPointFreeStash(c->rock->point);
    c->rock->point = NULL;
}

static rockPointStash *rockPointNewStash(redisDb *db, sds key, uint64_t version, uint64_t writes,
                                         struct redisCommand *cmd, int argc) {
    rockPointStash *ps = zcalloc(sizeof(*ps));
    ps->dbid = db->id;
    ps->key = sdsdup(key);
    ps->version = version;
    ps->writes = writes;
    ps->cmd = cmd;
    ps->argc = argc;
    ps->write = (cmd->flags & CMD_WRITE) != 0;
    return ps;
}

/* The distinct elements of argv at `pos` (copies). */
static sds *rockPointDistinct(robj **argv, int *pos, int n, int *out) {
    sds *eles = zmalloc(sizeof(sds) * (n ? n : 1));
    dict *seen = n > 1 ? dictCreate(&setDictType) : NULL;
    *out = 0;
    for (int j = 0; j < n; j++) {
        sds e = argv[pos[j]]->ptr;
        if (seen) {
            if (dictFind(seen, e)) continue;
            dictAdd(seen, sdsdup(e), NULL);
        }
        eles[(*out)++] = sdsdup(e);
    }
    if (seen) dictRelease(seen);
    return eles;
}

/* A cold key the command `cmd argv` needs (rockPrepareOne()). Returns -1
 * when it is not a point command on a split collection (page it in as
 * usual), 0 when it can run now (its elements are read already, or it
 * names none), 1 when a point job was queued (the client waits). */
int rockPointPrepare(client *c, redisDb *db, struct redisCommand *cmd, robj **argv, int argc, dictEntry *de) {
    int type, write, n, *pos;
    if (!rockPointParse(cmd, argv, argc, &type, &write, &pos, &n)) return -1;
    sds key = dictGetKey(de);
    uint64_t writes, version = rockPointVersion(db, key, &writes);
    if (version == 0) {
        zfree(pos);
        return -1;
    }
    /* Of another type: the command answers WRONGTYPE from a stand-in with
     * no elements, reading nothing. */
    if (((robj *)dictGetVal(de))->type != type) n = 0;
    sds skey = rockStorageKey(db->id, key);
    if (rockPendingGet(skey)) { /* not committed yet: in RAM, restored as usual */
        sdsfree(skey);
        zfree(pos);
        return -1;
    }
    rockPointStash *ps = c->rock ? c->rock->point : NULL;
    /* Read for this command, and none of its elements written since (a
     * command ahead of it in the key's queue may have written one). */
    if (ps && ps->dbid == db->id && ps->version == version && ps->cmd == cmd && ps->argc == argc &&
        sdscmp(ps->key, key) == 0 && rockPointFresh(rockSplitLookup(db->id, key), ps->writes, ps->eles, ps->n)) {
        sdsfree(skey);
        zfree(pos);
        return 0;
    }
    rockPointDrop(c);
    if (n == 0) { /* HLEN SCARD ZCARD (the count is in RAM), WRONGTYPE */
        rockClient(c)->point = rockPointNewStash(db, key, version, writes, cmd, argc);
        sdsfree(skey);
        zfree(pos);
        return 0;
    }

    rockReadJob *job = zcalloc(sizeof(*job));
    job->point = 1;
    job->skey = skey;
    job->key = sdsdup(key);
    job->sid = rock_store.sids[db->id];
    job->version = version;
    job->writes = writes;
    job->psi = rockSplitLookup(db->id, key);
    job->psi->refs++;
    job->psi->readers++;
    job->cmd = cmd;
    job->argc = argc;
    int distinct;
    job->peles = rockPointDistinct(argv, pos, n, &distinct);
    zfree(pos);
    job->nkeys = distinct;
    job->pkeys = zmalloc(sizeof(sds) * job->nkeys);
    job->pvals = zcalloc(sizeof(sds) * job->nkeys);
    job->pfixed = zcalloc(job->nkeys);
    for (int j = 0; j < distinct; j++) {
        sds ekey = rockSplitElementKey(NULL, skey, sdslen(skey), version, job->peles[j], sdslen(job->peles[j]));
        int found;
        sds queued = rockPendingElement(ekey, &found);
        if (found) { /* a point write not committed yet: newer than the disk */
            job->pfixed[j] = 1;
            job->pvals[j] = queued ? sdsdup(queued) : NULL;
        }
        job->pkeys[j] = ekey;
    }
    job->waiters = listCreate();
    listAddNodeTail(job->waiters, c);
    rockClient(c)->pending++;
    job->start = getMonotonicUs();
    listAddNodeTail(rock_io.jobs, job);
    job->node = listLast(rock_io.jobs);
    rockReadersStage(job);
    return 1;
}

/* Reader thread: the element records of a batch's point jobs, all in one
 * MultiGet that leaves the block cache alone (as any lone read). */
void rockPointReadBatch(rockReadJob **jobs, int njobs) {
    int total = 0;
    for (int j = 0; j < njobs; j++) total += jobs[j]->nkeys;
    const char **keys = zmalloc(sizeof(char *) * total);
    size_t *klens = zmalloc(sizeof(size_t) * total), *vlens = zmalloc(sizeof(size_t) * total);
    char **vals = zmalloc(sizeof(char *) * total), **errs = zmalloc(sizeof(char *) * total);
    int e = 0;
    for (int j = 0; j < njobs; j++) {
        for (int k = 0; k < jobs[j]->nkeys; k++, e++) {
            keys[e] = jobs[j]->pkeys[k];
            klens[e] = sdslen(jobs[j]->pkeys[k]);
        }
    }
    rocksdb_multi_get(rock_store.db, rock_store.ropts_nofill, total, keys, klens, vals, vlens, errs);
    e = 0;
    for (int j = 0; j < njobs; j++) {
        rockReadJob *job = jobs[j];
        job->status = ROCK_READ_OK;
        for (int k = 0; k < job->nkeys; k++, e++) {
            if (errs[e]) {
                serverLog(LL_WARNING, "rock: RocksDB read failed: %s", errs[e]);
                rocksdb_free(errs[e]);
                job->status = ROCK_READ_ERROR;
            } else if (vals[e]) {
                if (!job->pfixed[k]) job->pvals[k] = sdsnewlen(vals[e], vlens[e]);
                rocksdb_free(vals[e]);
            }
        }
    }
    zfree(keys);
    zfree(klens);
    zfree(vlens);
    zfree(vals);
    zfree(errs);
}

static void rockPointFreeJob(rockReadJob *job) {
    rockPointUnread(job->psi);
    for (int j = 0; j < job->nkeys; j++) {
        sdsfree(job->pkeys[j]);
        sdsfree(job->pvals[j]);
        if (job->peles) sdsfree(job->peles[j]);
    }
    zfree(job->pkeys);
    zfree(job->pvals);
    zfree(job->peles);
    zfree(job->pfixed);
    listRelease(job->waiters);
    sdsfree(job->skey);
    sdsfree(job->key);
    zfree(job);
}

/* Main thread: a point job is back. Its results are kept for the client's
 * re-run when the key is still cold with the version they were read of;
 * otherwise the re-run looks again. */
void rockPointComplete(rockReadJob *job) {
    listDelNode(rock_io.jobs, job->node);
    long long records = job->nkeys;
    client *c = listLength(job->waiters) ? listNodeValue(listFirst(job->waiters)) : NULL;
    redisDb *db = job->voided ? NULL : rockDbBySid(job->sid);
    dictEntry *de = db ? dictFind(db->dict, job->key) : NULL;
    int valid = de && rockIsCold(dictGetVal(de)) && rockPointVersion(db, job->key, NULL) == job->version &&
                rockPointFresh(rockSplitLookup(db->id, job->key), job->writes, job->peles, job->nkeys);
    if (c && valid) {
        rockClientState *st = rockClient(c);
        if (job->status != ROCK_READ_OK) {
            rock_ks_stats.errors++;
            if (st->failed_key == NULL) st->failed_key = sdsdup(job->key);
        } else {
            rockPointDrop(c);
            rockPointStash *ps = rockPointNewStash(db, job->key, job->version, job->writes, job->cmd, job->argc);
            ps->n = job->nkeys;
            ps->si = job->psi; /* the job's reader reference, moved */
            job->psi = NULL;
            ps->eles = job->peles;
            ps->vals = zmalloc(sizeof(sds) * ps->n);
            job->peles = NULL;
            for (int j = 0; j < job->nkeys; j++) {
                ps->vals[j] = job->pvals[j];
                if (job->pvals[j]) rock_ks_stats.read_bytes += sdslen(job->pvals[j]);
                job->pvals[j] = NULL;
            }
            st->point = ps;
            rock_ks_stats.reads += records;
            rock_ks_stats.element_reads += records;
            rockRecordReadLatency(getMonotonicUs() - job->start);
        }
    }
    listIter li;
    listNode *ln;
    listRewind(job->waiters, &li);
    while ((ln = listNext(&li)) != NULL) {
        client *w = listNodeValue(ln);
        rockClient(w)->pending--;
        rockMaybeWake(w);
    }
    rockPointFreeJob(job);
}

/* ---------------------------------------------------------------------------
 * Around the command's proc (rockCallEnter()/rockCallLeave())
 * ------------------------------------------------------------------------ */

/* Elements in the stand-in itself (not its length hook). */
static unsigned long rockPointRawSize(robj *o) {
    if (o->type == OBJ_ZSET) return ((zset *)o->ptr)->zsl->length;
    return dictSize((dict *)o->ptr);
}

/* hashTypeLength(), setTypeSize(), zsetLength() of the stand-in (patch
 * 0034): the collection's length as the command changes it. */
unsigned long rockPointLength(const robj *o) {
    return rock_point.base + rockPointRawSize((robj *)o);
}

/* Right before a top-level command's proc: when its elements are stashed
 * and still current, stand them in for the cold collection. */
void rockPointEnter(client *c) {
    rockPointStash *ps = c->rock ? c->rock->point : NULL;
    if (ps == NULL || rock_ks.point_value || ps->cmd != c->cmd || ps->argc != c->argc ||
        ps->dbid != c->db->id)
        return;
    dictEntry *de = dictFind(c->db->dict, ps->key);
    rockSplitInfo *si = rockSplitLookup(c->db->id, ps->key);
    if (de == NULL || !rockIsCold(dictGetVal(de)) || si == NULL || si->version != ps->version ||
        !rockPointFresh(si, ps->writes, ps->eles, ps->n)) {
        rockPointDrop(c);
        return;
    }
    int type = ((robj *)dictGetVal(de))->type;
    robj *o;
    if (type == OBJ_HASH) {
        o = createHashObject();
        hashTypeConvert(o, OBJ_ENCODING_HT);
    } else {
        o = type == OBJ_SET ? createSetObject() : createZsetObject();
    }
    uint64_t present = 0;
    for (int j = 0; j < ps->n; j++) {
        sds ele = ps->eles[j], v = ps->vals[j];
        if (v == NULL) continue;
        present++;
        if (type == OBJ_HASH) {
            hashTypeSet(o, ele, v, 0);
        } else if (type == OBJ_SET) {
            setTypeAdd(o, ele);
        } else if (sdslen(v) == 8) {
            double score;
            memcpy(&score, v, 8);
            memrev64ifbe(&score);
            int out;
            zsetAdd(o, score, ele, ZADD_IN_NONE, &out, NULL);
        }
    }
    c->rock->point = NULL; /* kept until rockPointLeave() */
    rockPointUnread(ps->si); /* used now: no longer a read to keep fresh */
    ps->si = NULL;
    /* The key's LRU/LFU field, kept in RAM (rockSplitInfo.header): the
     * command's lookup updates it as stock's would, rockPointLeave() keeps
     * it. */
    o->lru = rockSplitAccess(si);
    incrRefCount(o);       /* ours: the dict's may go with an expiry or a delete */
    dictSetVal(c->db->dict, de, o);
    rock_ks.point_value = o;
    rock_point.db = c->db;
    rock_point.key = sdsdup(dictGetKey(de));
    rock_point.ps = ps;
    rock_point.si = si;
    si->refs++;
    rock_point.base = si->count >= present ? si->count - present : 0;
    rock_ks_stats.point_reads++;
}

/* After a point write: queue what changed, each element alone, and the
 * metadata record's new count. */
static void rockPointWriteBack(robj *o) {
    rockPointStash *ps = rock_point.ps;
    rockSplitInfo *si = rock_point.si;
    sds skey = rockStorageKey(rock_point.db->id, rock_point.key);
    int changed = 0;
    for (int j = 0; j < ps->n; j++) {
        sds after = rockPointValueOf(o, ps->eles[j]), before = ps->vals[j];
        if ((after == NULL && before == NULL) ||
            (after && before && sdslen(after) == sdslen(before) && memcmp(after, before, sdslen(after)) == 0)) {
            sdsfree(after);
            continue;
        }
        if (!changed) si->writes++;
        changed = 1;
        rockPointNoteWritten(si, ps->eles[j]);
        sds ekey = rockSplitElementKey(NULL, skey, sdslen(skey), si->version, ps->eles[j], sdslen(ps->eles[j]));
        rockWriteElement(ekey, after, si, 1);
    }
    /* A page-in of the whole collection may be in flight: a command queued
     * behind this one asks for it at once, before this one has run. It
     * read (or will read) the records as they were before these writes
     * commit, so its value must not land; its client re-runs, and then
     * waits for the writer (rockNeedKey()) before reading again. */
    if (changed) rockVoidRead(skey);
    uint64_t count = rockPointLength(o);
    if (changed || count != si->count) {
        si->count = count;
        rockWriteElement(sdsdup(skey), rockSplitMeta(si), si, 0);
    }
    sdsfree(skey);
}

/* Right after it: the key is cold again (unless the command deleted it, or
 * the lookup expired it). */
void rockPointLeave(void) {
    robj *o = rock_ks.point_value;
    if (o == NULL) return;
    rock_ks.point_value = NULL;
    dictEntry *de = dictFind(rock_point.db->dict, rock_point.key);
    if (de && dictGetVal(de) == o) {
        rockFieldSet(rock_point.si->header, o->lru);
        if (rock_point.ps->write) rockPointWriteBack(o);
        dictSetVal(rock_point.db->dict, de, rock_store.cold[o->type]);
        decrRefCount(o); /* the dict's reference */
    }
    decrRefCount(o); /* ours */
    rockPointFreeStash(rock_point.ps);
    rockSplitInfoRelease(rock_point.si);
    sdsfree(rock_point.key);
    memset(&rock_point, 0, sizeof(rock_point));
}

/* ---------------------------------------------------------------------------
 * A hot split collection changed by point writes
 * ------------------------------------------------------------------------ */

/* Past this many changed elements a hot collection is rewritten whole at
 * its next eviction instead. */
#define ROCK_POINT_DIRTY_MAX 4096

/* A write is modifying `key`, hot and clean (paged in whole: its disk copy
 * is split state `si`, rockKeyModified()). When the executing command is a
 * point write of this key, the elements it names are noted as changed and
 * 1 is returned: the key stays clean, and its next eviction writes those
 * alone (rockPointFlushDirty()) instead of serializing the whole collection
 * on the event loop for the writer to split again. 0: the disk copy is to
 * be taken for outdated (any other write, too many changes, an encoding
 * the split format does not hold). A point write changes nothing but the
 * elements it names, in MULTI, a script or a module as well. */
int rockPointNoteDirty(redisDb *db, sds key, robj *val, rockSplitInfo *si) {
    client *c = rock_ks.executing_client;
    int type, write, n, *pos = NULL;
    int ok = c && c->cmd && !server.loading && val && c->db == db && c->argc >= 2 && sdsEncodedObject(c->argv[1]) &&
             sdscmp(c->argv[1]->ptr, key) == 0 && rockSplitEncoding(val) &&
             rockPointParse(c->cmd, c->argv, c->argc, &type, &write, &pos, &n) && write && type == val->type;
    if (ok && si->dirty == NULL) si->dirty = dictCreate(&setDictType);
    for (int j = 0; ok && j < n; j++) {
        sds e = c->argv[pos[j]]->ptr;
        if (dictFind(si->dirty, e) == NULL) dictAdd(si->dirty, sdsdup(e), NULL);
        ok = dictSize(si->dirty) <= ROCK_POINT_DIRTY_MAX;
    }
    zfree(pos);
    if (!ok && si->dirty) { /* the copy is outdated: nothing to write by element */
        dictRelease(si->dirty);
        si->dirty = NULL;
    }
    return ok;
}

