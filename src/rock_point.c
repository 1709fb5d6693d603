/* rock_point.c -- redis-rock: point reads of big collections on disk.
 *
 * Keyspace side, a sibling of the read path (rock_read.c, rock_read.h).
 * A cold hash, set or sorted set stored element by element (rock_split.c)
 * answers the commands that read only the elements they name without being
 * paged in:
 *
 *   HGET HMGET HEXISTS HSTRLEN, SISMEMBER SMISMEMBER, ZSCORE ZMSCORE
 *
 * Before such a command runs (rockPrepareCommand()), a point job reads the
 * collection's metadata record and the named elements' records in one
 * MultiGet on a reader thread; the client waits as for any read. When the
 * job is back and the key is still cold with the same split version, the
 * results wait in the client's stash; the command re-runs, and right before
 * its proc runs (rockCallEnter()) the key's sentinel is replaced by a small
 * object of the key's type holding only the elements found
 * (rock.point_value). The upstream command runs on it unchanged, so its
 * reply, keyspace notifications and tracking are stock's; right after
 * (rockCallLeave()) the sentinel is put back and the key stays cold.
 *
 * Nothing else ever sees that object: the commands above read nothing but
 * the elements they name (no length, no iteration), they run alone (not
 * in MULTI/EXEC, scripts or modules: those page the collection in), and a
 * lookup that expires the key deletes the cold value (rockKeyRemoved()
 * takes the object for cold).
 *
 * The metadata record is read with the elements so that a version the
 * writer could not store element by element is noticed: the command then
 * pages the collection in (the fallback), never answers from nothing. */

#include "server.h"
#include "rock_read.h"

typedef struct rockPointStash {
    int dbid;
    sds key;
    uint64_t version;
    struct redisCommand *cmd;
    int argc;
    int fallback;      /* the metadata did not match: page the value in */
    int nvals;
    sds *vals;         /* per element named (argv[2..]): value, NULL if absent */
} rockPointStash;

static struct {
    redisDb *db;       /* where rock.point_value stands in, while it does */
    sds key;
} rock_point;

/* The type a point command reads, or -1 when the command (with this many
 * arguments) is not one. */
static int rockPointType(struct redisCommand *cmd, int argc) {
    redisCommandProc *p = cmd->proc;
    if (argc < 3) return -1;
    if (p == hgetCommand || p == hexistsCommand || p == hstrlenCommand) return argc == 3 ? OBJ_HASH : -1;
    if (p == hmgetCommand) return OBJ_HASH;
    if (p == sismemberCommand || p == zscoreCommand) return argc == 3 ? (p == zscoreCommand ? OBJ_ZSET : OBJ_SET) : -1;
    if (p == smismemberCommand) return OBJ_SET;
    if (p == zmscoreCommand) return OBJ_ZSET;
    return -1;
}

/* The split version of a cold key, or 0 when it is not stored element by
 * element. */
static uint64_t rockPointVersion(redisDb *db, sds key) {
    dict *split = rock.dbs[db->id].split;
    dictEntry *se = dictSize(split) ? dictFind(split, key) : NULL;
    return se ? dictGetUnsignedIntegerVal(se) : 0;
}

void rockPointDrop(client *c) {
    if (c->rock == NULL || c->rock->point == NULL) return;
    rockPointStash *ps = c->rock->point;
    for (int j = 0; j < ps->nvals; j++) sdsfree(ps->vals[j]);
    zfree(ps->vals);
    sdsfree(ps->key);
    zfree(ps);
    c->rock->point = NULL;
}

/* A cold key the command `cmd argv` needs (rockPrepareOne()). Returns -1
 * when it is not a point read of a split collection (page it in as usual),
 * 0 when the elements it names are read already (it runs now), 1 when a
 * point job was queued for them (the client waits). */
int rockPointPrepare(client *c, redisDb *db, struct redisCommand *cmd, robj **argv, int argc, dictEntry *de) {
    int type = rockPointType(cmd, argc);
    if (type < 0 || ((robj *)dictGetVal(de))->type != type) return -1;
    sds key = dictGetKey(de);
    uint64_t version = rockPointVersion(db, key);
    if (version == 0) return -1;
    for (int j = 2; j < argc; j++)
        if (!sdsEncodedObject(argv[j])) return -1;
    sds skey = rockStorageKey(db->id, key);
    if (rockPendingGet(skey)) { /* not committed yet: in RAM, restored as usual */
        sdsfree(skey);
        return -1;
    }
    rockPointStash *ps = c->rock ? c->rock->point : NULL;
    if (ps && ps->dbid == db->id && ps->version == version && ps->cmd == cmd && ps->argc == argc &&
        sdscmp(ps->key, key) == 0) {
        sdsfree(skey);
        return ps->fallback ? -1 : 0;
    }
    rockPointDrop(c);

    rockReadJob *job = zcalloc(sizeof(*job));
    job->point = 1;
    job->skey = skey;
    job->key = sdsdup(key);
    job->sid = rock.dbs[db->id].sid;
    job->version = version;
    job->cmd = cmd;
    job->argc = argc;
    job->nkeys = argc - 1;
    job->pkeys = zmalloc(sizeof(sds) * job->nkeys);
    job->pvals = zcalloc(sizeof(sds) * job->nkeys);
    job->pkeys[0] = sdsdup(skey);
    for (int j = 2; j < argc; j++)
        job->pkeys[j - 1] = rockSplitElementKey(NULL, skey, sdslen(skey), version, argv[j]->ptr, sdslen(argv[j]->ptr));
    job->waiters = listCreate();
    listAddNodeTail(job->waiters, c);
    rockClient(c)->pending++;
    job->start = getMonotonicUs();
    listAddNodeTail(rock_io.jobs, job);
    job->node = listLast(rock_io.jobs);
    listAddNodeTail(rock_io.staged, job);
    return 1;
}

/* Reader thread: one MultiGet of the job's records. */
void rockPointRead(rockReadJob *job) {
    int n = job->nkeys;
    size_t *klens = zmalloc(sizeof(size_t) * n), *vlens = zmalloc(sizeof(size_t) * n);
    char **vals = zmalloc(sizeof(char *) * n), **errs = zmalloc(sizeof(char *) * n);
    for (int j = 0; j < n; j++) klens[j] = sdslen(job->pkeys[j]);
    rocksdb_multi_get(rock.db, rock.ropts_nofill, n, (const char *const *)job->pkeys, klens, vals, vlens, errs);
    job->status = ROCK_READ_OK;
    for (int j = 0; j < n; j++) {
        if (errs[j]) {
            serverLog(LL_WARNING, "rock: RocksDB read failed: %s", errs[j]);
            rocksdb_free(errs[j]);
            job->status = ROCK_READ_ERROR;
        } else if (vals[j]) {
            job->pvals[j] = sdsnewlen(vals[j], vlens[j]);
            rocksdb_free(vals[j]);
        }
    }
    zfree(klens);
    zfree(vlens);
    zfree(vals);
    zfree(errs);
}

void rockPointFreeJob(rockReadJob *job) {
    for (int j = 0; j < job->nkeys; j++) {
        sdsfree(job->pkeys[j]);
        sdsfree(job->pvals[j]);
    }
    zfree(job->pkeys);
    zfree(job->pvals);
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
    client *c = listLength(job->waiters) ? listNodeValue(listFirst(job->waiters)) : NULL;
    redisDb *db = NULL;
    for (int j = 0; !job->voided && j < server.dbnum; j++)
        if (rock.dbs[j].sid == job->sid) db = server.db + j;
    dictEntry *de = db ? dictFind(db->dict, job->key) : NULL;
    int valid = de && rockIsCold(dictGetVal(de)) && rockPointVersion(db, job->key) == job->version;
    if (c && valid) {
        rockClientState *st = rockClient(c);
        if (job->status != ROCK_READ_OK) {
            rock.stats.errors++;
            if (st->failed_key == NULL) st->failed_key = sdsdup(job->key);
        } else {
            rockPointDrop(c);
            rockPointStash *ps = zcalloc(sizeof(*ps));
            ps->dbid = db->id;
            ps->key = sdsdup(job->key);
            ps->version = job->version;
            ps->cmd = job->cmd;
            ps->argc = job->argc;
            sds meta = job->pvals[0];
            uint64_t v = 0;
            if (meta && rockSplitIsMeta(meta, sdslen(meta))) rockSplitMetaInfo(meta, &v, NULL);
            if (v != job->version) {
                /* Stored whole after all (or missing): page it in. */
                ps->fallback = 1;
            } else {
                ps->nvals = job->nkeys - 1;
                ps->vals = zmalloc(sizeof(sds) * ps->nvals);
                for (int j = 1; j < job->nkeys; j++) {
                    ps->vals[j - 1] = job->pvals[j];
                    if (job->pvals[j]) rock.stats.read_bytes += sdslen(job->pvals[j]);
                    job->pvals[j] = NULL;
                }
            }
            st->point = ps;
            rock.stats.reads += job->nkeys;
            rock.stats.element_reads += job->nkeys - 1;
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

/* Right before a top-level command's proc: when its elements are stashed
 * and still current, stand them in for the cold collection. */
void rockPointEnter(client *c) {
    rockPointStash *ps = c->rock ? c->rock->point : NULL;
    if (ps == NULL || rock.point_value || ps->fallback || ps->cmd != c->cmd || ps->argc != c->argc ||
        ps->dbid != c->db->id)
        return;
    dictEntry *de = dictFind(c->db->dict, ps->key);
    if (de == NULL || !rockIsCold(dictGetVal(de)) || rockPointVersion(c->db, ps->key) != ps->version) {
        rockPointDrop(c);
        return;
    }
    int type = ((robj *)dictGetVal(de))->type;
    robj *o = type == OBJ_HASH ? createHashObject() : type == OBJ_SET ? createSetObject() : createZsetObject();
    for (int j = 0; j < ps->nvals; j++) {
        sds ele = c->argv[j + 2]->ptr, v = ps->vals[j];
        if (v == NULL) continue;
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
    rockPointDrop(c);
    incrRefCount(o); /* ours: the dict's may go with an expiry */
    dictSetVal(c->db->dict, de, o);
    rock.point_value = o;
    rock_point.db = c->db;
    rock_point.key = sdsdup(dictGetKey(de));
    rock.stats.point_reads++;
}

/* Right after it: the key is cold again (unless the lookup expired it). */
void rockPointLeave(void) {
    robj *o = rock.point_value;
    if (o == NULL) return;
    rock.point_value = NULL;
    dictEntry *de = dictFind(rock_point.db->dict, rock_point.key);
    if (de && dictGetVal(de) == o) dictSetVal(rock_point.db->dict, de, rock.cold[o->type]);
    decrRefCount(o);
    sdsfree(rock_point.key);
    rock_point.key = NULL;
    rock_point.db = NULL;
}
