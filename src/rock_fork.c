/* rock_fork.c -- redis-rock: cold values in fork-based persistence.
 *
 * Layer 3 (keyspace; docs/architecture.md, "Layers").
 *
 * This file owns how a forked child (BGSAVE, AOF rewrite, replication full
 * sync, disk-based or diskless) writes values that live in RocksDB without
 * ever calling RocksDB itself: RocksDB is multi-threaded, and its threads do
 * not exist in the child.
 *
 *   - A module's child (RM_Fork) is refused while values are cold: it could
 *     only see them as missing.
 *   - rockForkPrepare(), on the main thread right before fork(): takes a
 *     RocksDB snapshot and an iterator on it, and a pipe; notes, per
 *     database, its storage id and how many cold keys it has.
 *   - rockForkParent(), right after fork(): a stream thread walks the
 *     snapshot database by database (only those with cold keys) and writes
 *     every record `[key][record]` of that database's storage id to the pipe,
 *     then an end-of-database mark. A collection stored element by element
 *     goes as its whole-value record, in pieces written as they are built.
 *   - In the child, the RDB and AOF writers skip cold keys while they walk a
 *     database's dict, then call rockRdbSaveColdDb()/rockAofRewriteColdDb(),
 *     which read that database's section of the stream and write every key
 *     that is cold in the child's own copy of the keyspace. A cold value not
 *     yet committed by the writer thread is in the pending buffer, which the
 *     child has in its copy of memory: it is written from there (it is newer
 *     than anything in RocksDB), the stream's record is skipped. Likewise
 *     an access-field update not yet handed back (rockPendingAccess()) is
 *     patched into the record the child writes.
 *
 * Consistency: the snapshot is taken on the main thread right before fork(),
 * and every cold key's value is, at that moment, in the pending buffer or
 * committed in RocksDB; a cold value can't change without being paged in. So
 * the child writes the dataset exactly as it was at the fork. The child
 * counts what it wrote against its cold count and fails the save (a clear
 * log line, no bad file) if any value is missing.
 *
 * Records stream in key order, so within each database the child writes
 * the hot keys first, then the cold ones: the file holds the same keys,
 * values and TTLs as a stock server's, in another order.
 *
 * While a stream runs, emptying every database (FLUSHALL) drops each old
 * storage id with a range delete instead of replacing RocksDB, so the child
 * keeps its snapshot. Shutdown and a failed store stop the stream first; a
 * child still reading it then fails its save. */

#include "server.h"
#include "rock_readers.h"

#include <pthread.h>
#include <poll.h>
#include <fcntl.h>

#define ROCK_STREAM_END 0xffffffffu   /* end of one database's section */
#define ROCK_STREAM_ERROR 0xfffffffeu /* the parent could not read RocksDB */
#define ROCK_STREAM_PIECES 0xfffffffdu /* as a value's length: pieces follow */
#define ROCK_STREAM_BUF (256 * 1024)
#define ROCK_FORK_READAHEAD (256 * 1024)
#define ROCK_FORK_REFRESH_US 200000 /* a fresh iterator this often (below) */

typedef struct rockForkDb {
    uint32_t sid;
    long long cold;
} rockForkDb;

static struct {
    /* Between rockForkPrepare() and rockForkParent()/rockForkChild(). */
    int prepared;
    int fds[2];
    const rocksdb_snapshot_t *snap;
    rocksdb_readoptions_t *ropts;
    rocksdb_iterator_t *iter;
    rockForkDb *dbs;          /* server.dbnum entries */

    /* Parent: the stream thread. */
    pthread_t thread;
    int running;              /* a thread was started and not joined */
    redisAtomic int cancel;   /* set by the main thread: stop streaming */
    redisAtomic int finished; /* set by the thread as it ends */
    char *error;              /* RocksDB iteration error (after join) */

    /* Child: reading the stream. */
    int child_fd;
    char *buf;
    size_t buf_len, buf_pos;
    sds rec;                  /* record rockRdbSaveCold() writes now */
} rock_fork = {0, {-1, -1}, NULL, NULL, NULL, NULL, 0, 0, 0, 0, NULL, -1, NULL, 0, 0, NULL};

/* ---------------------------------------------------------------------------
 * Parent
 * ------------------------------------------------------------------------ */

static int rockForkFinished(void) {
    int v;
    atomicGet(rock_fork.finished, v);
    return v;
}

static int rockForkCancelled(void) {
    int v;
    atomicGet(rock_fork.cancel, v);
    return v;
}

static void rockForkReleaseSnapshot(void) {
    if (rock_fork.iter) rocksdb_iter_destroy(rock_fork.iter);
    if (rock_fork.ropts) rocksdb_readoptions_destroy(rock_fork.ropts);
    if (rock_fork.snap) rocksdb_release_snapshot(rock_store.db, rock_fork.snap);
    rock_fork.iter = NULL;
    rock_fork.ropts = NULL;
    rock_fork.snap = NULL;
    zfree(rock_fork.dbs);
    rock_fork.dbs = NULL;
}

/* Wait for the stream thread of an earlier fork; with `cancel`, make it stop
 * first. Returns once no thread runs. */
void rockForkStreamStop(int cancel) {
    if (!rock_fork.running) return;
    if (cancel) atomicSet(rock_fork.cancel, 1);
    pthread_join(rock_fork.thread, NULL);
    rock_fork.running = 0;
    if (rock_fork.error) {
        serverLog(LL_WARNING, "rock: streaming cold values to the child failed: %s", rock_fork.error);
        zfree(rock_fork.error);
        rock_fork.error = NULL;
    } else if (cancel && !rockForkFinished()) {
        serverLog(LL_NOTICE, "rock: stopped streaming cold values to the child");
    }
    rockForkReleaseSnapshot();
}

/* Is a stream thread still using its snapshot? (One that has finished is
 * joined here.) */
int rockForkStreaming(void) {
    if (!rock_fork.running) return 0;
    if (rockForkFinished()) {
        rockForkStreamStop(0);
        return 0;
    }
    return 1;
}

/* Write all of buf to the non-blocking pipe, waiting for room; gives up when
 * cancelled or when the child is gone (EPIPE). */
static int rockStreamWrite(int fd, const char *buf, size_t len) {
    while (len) {
        if (rockForkCancelled()) return -1;
        ssize_t n = write(fd, buf, len);
        if (n > 0) {
            buf += n;
            len -= n;
            continue;
        }
        if (n == -1 && errno != EAGAIN && errno != EINTR) return -1;
        struct pollfd p = {fd, POLLOUT, 0};
        poll(&p, 1, 100);
    }
    return 0;
}

typedef struct rockStreamOut {
    int fd;
    char *buf;
    size_t len;
} rockStreamOut;

static int rockStreamPut(rockStreamOut *o, const void *p, size_t len) {
    if (o->len + len > ROCK_STREAM_BUF) {
        if (rockStreamWrite(o->fd, o->buf, o->len) == -1) return -1;
        o->len = 0;
        if (len > ROCK_STREAM_BUF) return rockStreamWrite(o->fd, p, len);
    }
    memcpy(o->buf + o->len, p, len);
    o->len += len;
    return 0;
}

static int rockStreamPutLen(rockStreamOut *o, uint32_t v) {
    return rockStreamPut(o, &v, sizeof(v));
}

/* An iterator holds what RocksDB had when it was made: the memtables of
 * that moment, flushed or not, and every file of that version, compacted
 * away or not, with their table readers. Under writes, one held for a
 * whole stream keeps 10-20 MB of RocksDB's heap outside every figure
 * counted against maxmemory. The snapshot alone is what
 * keeps the stream consistent, so the thread lets its iterator go and takes
 * a fresh one on the same snapshot every ROCK_FORK_REFRESH_US.
 *
 * It also lets go before writing a large record (ROCK_STREAM_DETACH bytes
 * or more, copied first): the write waits for the child, and meanwhile an
 * iterator standing on a key holds the block of every version of it still
 * in a file (each L0 file and level has its own), plus a read-ahead buffer
 * per file grown to that size: tens of MB of blocks and glibc heap for a
 * few-MB value overwritten a few times (performance.md). The fresh
 * iterator seeks just past
 * the key written, so no version of it is read again. */
#define ROCK_STREAM_DETACH (256 * 1024)
static redisAtomic long long rock_stream_refreshes;

long long rockForkStreamRefreshes(void) {
    long long v;
    atomicGet(rock_stream_refreshes, v);
    return v;
}

static void rockStreamRelease(void) {
    rocksdb_iter_destroy(rock_fork.iter);
    rock_fork.iter = NULL;
}

/* A fresh iterator on the snapshot at the first key after `at`. */
static rocksdb_iterator_t *rockStreamResume(sds at) {
    rock_fork.iter = rockStoreIterAfter(rock_fork.ropts, at, sdslen(at));
    atomicIncr(rock_stream_refreshes, 1);
    sdsfree(at);
    return rock_fork.iter;
}

/* One piece of a collection stored element by element (the sink of
 * rockSplitAssembleTo()). */
static int rockStreamPiece(void *ctx, const char *piece, size_t len) {
    rockStreamOut *o = ctx;
    return rockStreamPutLen(o, (uint32_t)len) == 0 && rockStreamPut(o, piece, len) == 0 ? 0 : -1;
}

/* A collection stored element by element goes to the child as its
 * whole-value record, its elements read from the same snapshot, in pieces
 * written as they are built: `[key][ROCK_STREAM_PIECES]([len][bytes])...[0]`.
 * Assembled whole first, a collection of a few MB would be that much more
 * of the parent's heap (and page faults) for as long as the child reads it.
 * The stream's iterator, standing on the metadata record, is let go first
 * (its copy is `meta`); the caller takes a fresh one after `at`. Returns 1,
 * or 0 when the stream must end (the child is gone, or an error was sent). */
static int rockStreamSplit(rockStreamOut *o, sds at, const char *v, size_t vlen) {
    sds meta = sdsnewlen(v, vlen);
    rockStreamRelease();
    int ok = rockStreamPutLen(o, (uint32_t)(sdslen(at) - 4)) == 0 &&
             rockStreamPut(o, at + 4, sdslen(at) - 4) == 0 &&
             rockStreamPutLen(o, ROCK_STREAM_PIECES) == 0;
    if (ok) {
        char *err;
        int owned;
        sds rest = rockSplitAssembleTo(at, sdslen(at), meta, sdslen(meta), rock_fork.ropts, rockStreamPiece, o,
                                       &err, &owned, NULL);
        if (rest == NULL && err != rockSplitRefused) {
            rock_fork.error = zstrdup(err);
            rockStreamPutLen(o, ROCK_STREAM_ERROR);
        }
        if (rest == NULL && owned) rocksdb_free(err);
        ok = rest != NULL && rockStreamPutLen(o, 0) == 0;
        sdsfree(rest);
    }
    sdsfree(meta);
    return ok;
}

static void *rockStreamThread(void *arg) {
    UNUSED(arg);
    rockThreadInit("rock_stream"); /* 15 characters at most */
    rockStreamOut o = {rock_fork.fds[1], zmalloc(ROCK_STREAM_BUF), 0};
    rocksdb_iterator_t *it = rock_fork.iter;
    monotime refreshed = getMonotonicUs();
    int ok = 1;
    for (int j = 0; ok && j < server.dbnum; j++) {
        if (rock_fork.dbs[j].cold == 0) continue;
        unsigned char prefix[4];
        rockPutSid(prefix, rock_fork.dbs[j].sid);
        rocksdb_iter_seek(it, (char *)prefix, 4);
        while (ok && rocksdb_iter_valid(it)) {
            size_t klen, vlen;
            const char *k = rocksdb_iter_key(it, &klen);
            if (klen < 4 || memcmp(k, prefix, 4) != 0) break;
            const char *v = rocksdb_iter_value(it, &vlen);
            if (rockSplitIsMeta(v, vlen)) {
                sds at = sdsnewlen(k, klen);
                ok = rockStreamSplit(&o, at, v, vlen);
                if (ok) it = rockStreamResume(at); /* frees at */
                else sdsfree(at);
                refreshed = getMonotonicUs();
                continue;
            }
            /* Let the iterator go before the write (above): on time, or
             * for a large record, copied first. */
            sds copy = NULL, at = NULL;
            if (getMonotonicUs() - refreshed >= ROCK_FORK_REFRESH_US || vlen >= ROCK_STREAM_DETACH) {
                at = sdsnewlen(k, klen);
                k = at;
                copy = sdsnewlen(v, vlen);
                v = copy;
                rockStreamRelease();
                it = NULL;
            }
            ok = rockStreamPutLen(&o, (uint32_t)(klen - 4)) == 0 &&
                 rockStreamPut(&o, k + 4, klen - 4) == 0 &&
                 rockStreamPutLen(&o, (uint32_t)vlen) == 0 &&
                 rockStreamPut(&o, v, vlen) == 0;
            sdsfree(copy);
            if (at) {
                it = rockStreamResume(at); /* frees at */
                refreshed = getMonotonicUs();
            } else {
                rocksdb_iter_next(it);
            }
        }
        char *err = NULL;
        if (!ok) break;
        rocksdb_iter_get_error(it, &err);
        if (err) {
            rock_fork.error = zstrdup(err);
            rocksdb_free(err);
            rockStreamPutLen(&o, ROCK_STREAM_ERROR);
            ok = 0;
        }
        if (ok) ok = rockStreamPutLen(&o, ROCK_STREAM_END) == 0;
    }
    /* After an error, what is buffered ends with its mark: the child then
     * says why its save fails, not just that the stream ended early. */
    if (ok || rock_fork.error) rockStreamWrite(o.fd, o.buf, o.len);
    zfree(o.buf);
    close(rock_fork.fds[1]);
    rock_fork.fds[1] = -1;
    /* Let go of the snapshot now: held, it would keep every overwritten or
     * deleted record, and every file compaction replaced, on disk. (RocksDB
     * stays open while this thread runs: rockForkStreamStop() comes first.) */
    if (rock_fork.iter) rocksdb_iter_destroy(rock_fork.iter);
    rock_fork.iter = NULL;
    rocksdb_release_snapshot(rock_store.db, rock_fork.snap);
    rock_fork.snap = NULL;
    atomicSet(rock_fork.finished, 1);
    return NULL;
}

/* redisFork() calls this before fork(), once the fork is otherwise allowed.
 * For an RDB or AOF child while values are cold: snapshot, iterator, pipe.
 * Returns C_ERR (errno set) when the stream can't be set up. */
int rockForkPrepare(int purpose) {
    rock_fork.prepared = 0;
    /* A module's child (RM_Fork) would find placeholders where cold values
     * are, and could save or send them as missing: refuse it, clearly. */
    if (rock_store.db && purpose == CHILD_TYPE_MODULE && rockColdKeys() > 0) {
        serverLog(LL_WARNING, "rock: refusing a module's fork (RM_Fork): %lld values are on disk, "
                  "and a forked child can't read them (it would see them as missing)", rockColdKeys());
        errno = ENOTSUP;
        return C_ERR;
    }
    if (!rock_store.db || (purpose != CHILD_TYPE_RDB && purpose != CHILD_TYPE_AOF)) return C_OK;
    /* The previous child is gone (RDB and AOF children are exclusive): its
     * stream thread ends at once if it has not already. */
    rockForkStreamStop(1);
    /* A keyspace snapshot's child writes references, not values. */
    if (rockColdKeys() == 0 || rock_snapshot.writing) return C_OK;

    if (pipe(rock_fork.fds) == -1) {
        serverLog(LL_WARNING, "rock: can't create the pipe to stream cold values to a child: %s", strerror(errno));
        return C_ERR;
    }
    fcntl(rock_fork.fds[1], F_SETFL, fcntl(rock_fork.fds[1], F_GETFL) | O_NONBLOCK);
#ifdef F_SETPIPE_SZ
    fcntl(rock_fork.fds[1], F_SETPIPE_SZ, 1024 * 1024); /* best effort */
#endif
    rock_fork.dbs = zmalloc(sizeof(rockForkDb) * server.dbnum);
    for (int j = 0; j < server.dbnum; j++) {
        rock_fork.dbs[j].sid = rock_store.sids[j];
        rock_fork.dbs[j].cold = rock_ks.dbs[j].cold;
    }
    /* Point writes of split collections are not in the pending buffer the
     * child inherits: committed first, they are in the snapshot. */
    if (rockWriteElementOps() > 0) rockWriteFlush();
    rock_fork.snap = rocksdb_create_snapshot(rock_store.db);
    rock_fork.ropts = rocksdb_readoptions_create();
    rocksdb_readoptions_set_snapshot(rock_fork.ropts, rock_fork.snap);
    rocksdb_readoptions_set_fill_cache(rock_fork.ropts, 0);
    /* Readahead is per file the iterator has open (every L0 file, one per
     * level), outside the Redis heap: kept small, since the parent's RSS
     * under a BGSAVE with writes grows with it (memory.md). */
    rocksdb_readoptions_set_readahead_size(rock_fork.ropts, ROCK_FORK_READAHEAD);
    /* Created now, on the main thread: it pins the files it reads, so a
     * flush's file deletion can't take them away from the child. */
    rock_fork.iter = rocksdb_create_iterator(rock_store.db, rock_fork.ropts);
    rock_fork.prepared = 1;
    return C_OK;
}

/* redisFork(), in the parent, after fork(): start streaming (or clean up if
 * the fork failed). */
void rockForkParent(int childpid) {
    if (!rock_fork.prepared) return;
    rock_fork.prepared = 0;
    close(rock_fork.fds[0]);
    rock_fork.fds[0] = -1;
    if (childpid == -1) {
        close(rock_fork.fds[1]);
        rock_fork.fds[1] = -1;
        rockForkReleaseSnapshot();
        return;
    }
    atomicSet(rock_fork.cancel, 0);
    atomicSet(rock_fork.finished, 0);
    if (pthread_create(&rock_fork.thread, NULL, rockStreamThread, NULL) != 0) {
        /* The child will find the stream closed and fail its save. */
        serverLog(LL_WARNING, "rock: can't start the thread streaming cold values to the child");
        close(rock_fork.fds[1]);
        rock_fork.fds[1] = -1;
        rockForkReleaseSnapshot();
        return;
    }
    rock_fork.running = 1;
}

/* ---------------------------------------------------------------------------
 * Child
 * ------------------------------------------------------------------------ */

/* redisFork(), in the child, after fork(), whatever the child is for (RDB,
 * AOF rewrite, a SCRIPT DEBUG session, a module's RM_Fork). The tier is
 * inert here: RocksDB and the tier's threads belong to the parent (a lock
 * one of them held at fork time would never be released), so no RocksDB
 * call, no eviction to disk, no queued write or read. Cold values come
 * from the stream (RDB, AOF) or the pending buffer in the child's copy of
 * memory; any other read of a cold value fails with an error. The table
 * and blob files it inherited open are closed first, so that the disk
 * space of those the parent deletes is freed at once, not when the child
 * exits. */
void rockForkChild(void) {
    rockStoreCloseFilesInChild();
    rock_store.db = NULL;
    rock_store.cache = NULL; /* its mutexes too */
    rockReadersDetachChild();
    rockWriteDetachChild();
    rockCompactDetachChild();
    if (!rock_fork.prepared) return;
    rock_fork.prepared = 0;
    close(rock_fork.fds[1]);
    rock_fork.child_fd = rock_fork.fds[0];
    rock_fork.buf = zmalloc(ROCK_STREAM_BUF);
    rock_fork.buf_len = rock_fork.buf_pos = 0;
}

/* Read exactly len bytes of the stream. */
static int rockChildRead(void *dst, size_t len) {
    char *p = dst;
    while (len) {
        if (rock_fork.buf_pos == rock_fork.buf_len) {
            ssize_t n = read(rock_fork.child_fd, rock_fork.buf, ROCK_STREAM_BUF);
            if (n == -1 && errno == EINTR) continue;
            if (n <= 0) return -1;
            rock_fork.buf_len = n;
            rock_fork.buf_pos = 0;
        }
        size_t take = rock_fork.buf_len - rock_fork.buf_pos;
        if (take > len) take = len;
        memcpy(p, rock_fork.buf + rock_fork.buf_pos, take);
        rock_fork.buf_pos += take;
        p += take;
        len -= take;
    }
    return 0;
}

static sds rockChildReadString(uint32_t len) {
    sds s = sdsnewlen(SDS_NOINIT, len);
    if (rockChildRead(s, len) == -1) {
        sdsfree(s);
        return NULL;
    }
    return s;
}

/* A record sent in pieces (rockStreamSplit()), whole again. NULL at the
 * stream's end, or with *failed set when the parent sent an error. */
static sds rockChildReadPieces(int *failed) {
    sds rec = sdsempty();
    for (;;) {
        uint32_t len;
        if (rockChildRead(&len, sizeof(len)) == -1) break;
        if (len == 0) return rec;
        if (len == ROCK_STREAM_ERROR) {
            *failed = 1;
            break;
        }
        rec = sdsMakeRoomFor(rec, len);
        if (rockChildRead(rec + sdslen(rec), len) == -1) break;
        sdsIncrLen(rec, len);
    }
    sdsfree(rec);
    return NULL;
}

/* Writes one cold key: `rec` is its record. Returns -1 on error. */
typedef int rockColdWriter(void *ctx, redisDb *db, robj *key, const sds rec, long long expire);

/* Is `key` cold in this (the child's) keyspace? */
static int rockChildIsCold(redisDb *db, sds key) {
    dictEntry *de = dictFind(db->dict, key);
    return de && rockIsCold(dictGetVal(de));
}

/* Write every cold key of database `dbid`, once each: from the pending
 * buffer when its value is there, else from the stream. */
/* Every 1,024 keys, at most once a second, tell the parent how far the save
 * is (INFO's current_save_keys_processed), as rdbSaveDb() does for the keys
 * of its dict walk. Writing to the child-info pipe is also how a child finds
 * out that its parent is gone: sendChildInfo() then exits. */
static void rockChildProgress(int dbid, long long written, long long want, char *pname) {
    static long long last;
    if ((written & 1023) != 0) return;
    long long now = mstime();
    if (now - last < 1000) return;
    last = now;
    size_t keys = 0;
    for (int j = 0; j < dbid; j++) keys += dictSize(server.db[j].dict);
    keys += dictSize(server.db[dbid].dict) - want + written;
    sendChildInfo(CHILD_INFO_TYPE_CURRENT_INFO, keys, pname);
}

static int rockChildColdDb(int dbid, rockColdWriter *writer, void *ctx) {
    if (rock_fork.child_fd == -1) return 0; /* no stream: rock off, or nothing cold */
    redisDb *db = server.db + dbid;
    long long want = rock_ks.dbs[dbid].cold, written = 0;
    if (want == 0) return 0;
    char *pname = server.in_fork_child == CHILD_TYPE_AOF ? "AOF rewrite" : "RDB";

    /* The stream's section for this database. */
    for (;;) {
        uint32_t klen, vlen;
        if (rockChildRead(&klen, sizeof(klen)) == -1) goto eof;
        if (klen == ROCK_STREAM_END) break;
        if (klen == ROCK_STREAM_ERROR) {
            serverLog(LL_WARNING, "rock: the parent could not read cold values from RocksDB");
            return -1;
        }
        sds key = rockChildReadString(klen);
        if (key == NULL) goto eof;
        if (rockChildRead(&vlen, sizeof(vlen)) == -1) { sdsfree(key); goto eof; }
        int failed = 0;
        sds rec = vlen == ROCK_STREAM_PIECES ? rockChildReadPieces(&failed) : rockChildReadString(vlen);
        if (rec == NULL) {
            sdsfree(key);
            if (!failed) goto eof;
            serverLog(LL_WARNING, "rock: the parent could not read cold values from RocksDB");
            return -1;
        }
        int ret = 0;
        if (rockChildIsCold(db, key)) {
            sds skey = rockStorageKey(dbid, key);
            int pending = rockPendingGet(skey) != NULL;
            unsigned int lru;
            if (!pending && rockPendingAccess(skey, &lru)) rockRecordSetAccess(rec, lru);
            sdsfree(skey);
            if (!pending) {
                robj keyobj;
                initStaticStringObject(keyobj, key);
                ret = writer(ctx, db, &keyobj, rec, getExpire(db, &keyobj));
                written++;
                rockChildProgress(dbid, written, want, pname);
            }
        }
        sdsfree(key);
        sdsfree(rec);
        if (ret == -1) return -1;
    }

    /* Cold values the writer thread had not committed at the fork. */
    dictIterator *di = rockPendingIterator();
    dictEntry *pe;
    int ret = 0;
    uint32_t sid = rock_store.sids[dbid];
    while (ret == 0 && (pe = dictNext(di)) != NULL) {
        sds skey = dictGetKey(pe);
        if (sdslen(skey) < 4 || rockGetSid((const unsigned char *)skey) != sid) continue;
        sds key = sdsnewlen(skey + 4, sdslen(skey) - 4);
        if (rockChildIsCold(db, key)) {
            robj keyobj;
            initStaticStringObject(keyobj, key);
            sds rec = rockPendingRecord(pe);
            unsigned int lru;
            /* The child's own copy of the buffer: patched in place. */
            if (rockPendingAccess(skey, &lru)) rockRecordSetAccess(rec, lru);
            ret = writer(ctx, db, &keyobj, rec, getExpire(db, &keyobj));
            written++;
        }
        sdsfree(key);
    }
    dictReleaseIterator(di);
    if (ret == -1) return -1;

    if (written != want) {
        serverLog(LL_WARNING, "rock: %lld of %lld cold values of db %d were not found in the "
                  "RocksDB snapshot; refusing to write an incomplete file", want - written, want, dbid);
        return -1;
    }
    return 0;

eof:
    serverLog(LL_WARNING, "rock: the stream of cold values from the parent ended early");
    return -1;
}

/* RDB (and AOF preamble): write the pair as rdbSaveKeyValuePair() does; its
 * rock hook (rockRdbSaveCold) takes the record from rock_fork.rec. */
static int rockRdbColdWriter(void *ctx, redisDb *db, robj *key, const sds rec, long long expire) {
    rio *rdb = ctx;
    if (!server.rdb_compression) {
        /* The record keeps the LZF-compressed strings it was written with
         * (rdbcompression yes at eviction time); `rdbcompression no` asks
         * for plain ones: decode the value here and save it afresh. */
        robj *o = rockDeserialize(rec, key->ptr, db->id);
        if (o == NULL) {
            serverLog(LL_WARNING, "rock: the record of cold key '%s' (db %d) is malformed", (char *)key->ptr, db->id);
            return -1;
        }
        int ret = rdbSaveKeyValuePair(rdb, key, o, expire, db->id);
        decrRefCount(o);
        return ret == -1 ? -1 : 0;
    }
    rock_fork.rec = rec;
    int ret = rdbSaveKeyValuePair(rdb, key, rock_store.cold[OBJ_STRING], expire, db->id);
    rock_fork.rec = NULL;
    return ret == -1 ? -1 : 0;
}

/* rdbSaveDb() in a forked child, after its dict walk (which skipped cold
 * keys). Returns -1 on error, else 0. */
ssize_t rockRdbSaveColdDb(rio *rdb, int dbid) {
    if (rock_snapshot.writing) return rockSnapshotSaveHot(rdb, dbid);
    if (!server.in_fork_child) return 0;
    return rockChildColdDb(dbid, rockRdbColdWriter, rdb);
}

/* The record rockRdbSaveCold() writes in a child, or NULL outside one. */
static sds rockForkCurrentRecord(void) {
    return rock_fork.rec;
}

/* AOF rewrite without preamble: decode the value (in the child's memory,
 * one at a time) and emit it as commands, as rewriteAppendOnlyFileRio()
 * does for a value in RAM. */
static int rockAofColdWriter(void *ctx, redisDb *db, robj *key, const sds rec, long long expire) {
    rio *aof = ctx;
    robj *o = rockDeserialize(rec, key->ptr, db->id);
    if (o == NULL) {
        serverLog(LL_WARNING, "rock: the record of cold key '%s' (db %d) is malformed", (char *)key->ptr, db->id);
        return -1;
    }
    int ok;
    switch (o->type) {
    case OBJ_STRING: {
        static const char cmd[] = "*3\r\n$3\r\nSET\r\n";
        ok = rioWrite(aof, cmd, sizeof(cmd) - 1) && rioWriteBulkObject(aof, key) && rioWriteBulkObject(aof, o);
        break;
    }
    case OBJ_LIST: ok = rewriteListObject(aof, key, o); break;
    case OBJ_SET: ok = rewriteSetObject(aof, key, o); break;
    case OBJ_ZSET: ok = rewriteSortedSetObject(aof, key, o); break;
    case OBJ_HASH: ok = rewriteHashObject(aof, key, o); break;
    case OBJ_STREAM: ok = rewriteStreamObject(aof, key, o); break;
    case OBJ_MODULE: ok = rewriteModuleObject(aof, key, o, db->id); break;
    default: ok = 0; break;
    }
    decrRefCount(o);
    if (ok && expire != -1) {
        static const char cmd[] = "*3\r\n$9\r\nPEXPIREAT\r\n";
        ok = rioWrite(aof, cmd, sizeof(cmd) - 1) && rioWriteBulkObject(aof, key) &&
             rioWriteBulkLongLong(aof, expire);
    }
    return ok ? 0 : -1;
}

/* rewriteAppendOnlyFileRio() in a forked child, after its dict walk (which
 * skipped cold keys). Returns 0 on error, 1 on success, like the rewrite*
 * functions. */
int rockAofRewriteColdDb(rio *aof, int dbid) {
    if (!server.in_fork_child) return 1;
    return rockChildColdDb(dbid, rockAofColdWriter, aof) == -1 ? 0 : 1;
}

/* Does a forked child skip this value in its dict walk (it comes later,
 * from the stream)? */
int rockForkDefersValue(robj *val) {
    return server.in_fork_child && rock_fork.child_fd != -1 && rockIsCold(val);
}

/* Write a cold value into an RDB: its LRU/LFU opcode (when the policy saves
 * one; from the record's field), type byte, key and payload, exactly as
 * rdbSaveKeyValuePair() writes a value in RAM. Saved in this process (SAVE,
 * shutdown, DEBUG RELOAD), the record is read here; a forked child never
 * calls RocksDB and writes the record its parent streamed (rock_fork.c). */
ssize_t rockRdbSaveCold(rio *rdb, robj *key, int dbid, int savelru, int savelfu) {
    const char *payload;
    size_t plen;
    sds rec;

    if (rock_snapshot.writing) return rockSnapshotSaveRef(rdb, key, dbid);
    if (server.in_fork_child) {
        if (rockForkCurrentRecord() == NULL) {
            serverLog(LL_WARNING, "rock: a forked child met a cold value it has no record for");
            return -1;
        }
        rec = sdsdup(rockForkCurrentRecord());
    } else {
        rec = rockReadRecord(dbid, key->ptr, NULL, 0);
    }
    if (rec == NULL) return -1;
    ssize_t ret = -1;
    if (rockRecordRdbPayload(rec, sdslen(rec), &payload, &plen) == C_ERR) goto done;
    /* The access field, on an object that stands for the value (the upstream
     * helpers read only its lru). */
    robj meta = {.lru = rockRecordLru(rec)};
    if (savelru && (rdbSaveType(rdb, RDB_OPCODE_IDLE) == -1 ||
                    rdbSaveLen(rdb, estimateObjectIdleTime(&meta) / 1000) == -1)) goto done;
    if (savelfu) {
        uint8_t freq = LFUDecrAndReturn(&meta);
        if (rdbSaveType(rdb, RDB_OPCODE_FREQ) == -1 || rioWrite(rdb, &freq, 1) == 0) goto done;
    }
    if (rdbSaveType(rdb, (unsigned char)payload[0]) != -1 &&
        rdbSaveStringObject(rdb, key) != -1 &&
        rioWrite(rdb, payload + 1, plen - 1) != 0)
    {
        ret = 1;
    }
done:
    sdsfree(rec);
    return ret;
}

