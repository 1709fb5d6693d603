/* rock_write.c -- redis-rock: writing to RocksDB off the event loop.
 *
 * Layer 2 (threads; docs/architecture.md, "Layers").
 *
 * This file owns the write path:
 *   - the writer thread: it takes every queued write (value puts, deletes of
 *     single keys, range deletes of a flushed database's storage id,
 *     updates of a record's LRU/LFU field) in arrival order and commits
 *     them as one WriteBatch (WAL off);
 *   - the pending buffer: a value moved out of RAM is serialized on the event
 *     loop and kept here, under its RocksDB key, until its batch is
 *     committed. Reads of a key whose value is pending are served from this
 *     buffer, never from RocksDB, so a reader thread can never miss a value
 *     that is not committed yet;
 *   - completions: a pipe wakes the event loop (rock_handoff.c, the
 *     mechanism the reader pool shares), which drops the committed
 *     values from the buffer (unless a newer value for the same key has
 *     arrived meanwhile);
 *   - failures: when RocksDB refuses a batch (a full disk, an I/O error),
 *     the writer retries that same batch every second before anything else,
 *     so order is kept; meanwhile its values stay in the buffer (nothing is
 *     lost, reads keep working), the failure is logged and shown by ROCK
 *     REPORT, and eviction stops. RocksDB resumes by itself once space is
 *     free again, and so do we;
 *   - the free-space guard: eviction also stops, before RocksDB ever hits a
 *     full disk, when the free space on rock-dir drops under
 *     rock-min-free-disk (checked every 100 ms, and in between by counting
 *     the bytes handed to the writer). Flushes free space (their files are
 *     dropped and compacted at once) and eviction resumes by itself.
 *
 * Ordering: one writer thread commits batches in queue order, so a delete
 * queued after a put of the same key always wins, and a put queued after a
 * delete always survives. A value leaves the pending buffer only after its
 * batch is committed, so "pending or in RocksDB" holds for every cold key at
 * every moment. */

#include "server.h"

#include "rock_handoff.h"

#include <pthread.h>
#include <sys/statvfs.h>
#ifdef __GLIBC__
#include <malloc.h>

static void rockSetWriteError(const char *err, int no_space);
#endif

#define ROCK_WRITE_BATCH_OPS 1024
#define ROCK_WRITE_BATCH_BYTES (4 * 1024 * 1024)
#define ROCK_WRITE_RETRY_MS 1000
#define ROCK_DISK_CHECK_MS 100
#define ROCK_DISK_RESUME_SLACK (16LL * 1024 * 1024)

#define ROCK_OP_PUT 0
#define ROCK_OP_DELETE 1
#define ROCK_OP_DELETE_RANGE 2
#define ROCK_OP_ACCESS 3 /* merge: a record's new LRU/LFU field (rock_store.c) */
#define ROCK_OP_DELETE_ELEMENTS 4 /* range delete of one key's element records */
#define ROCK_OP_ELEMENT 5 /* a point command's put or delete of one element
                           * record, or its put of a metadata record */
#define ROCK_OP_BARRIER 6 /* rockWriteBarrier(): runs alone, between batches */

/* A value waiting in the pending buffer. Shared by the buffer entry and the
 * queued put; its reference count is only touched on the main thread. */
typedef struct rockPendingValue {
    sds rec;
    int refs;
    size_t cost;       /* RAM it holds while pending, for eviction's sums */
    uint64_t split_version; /* written element by element, as this version
                             * (rock_split.c), or 0: one record */
    uint64_t old_split_version; /* the key's split version it replaces,
                             * whose elements go in the same batch, or 0 */
} rockPendingValue;

typedef struct rockWriteOp {
    int kind;                /* ROCK_OP_* */
    sds skey;                /* RocksDB key (range: start) */
    sds end;                 /* range: end (exclusive) */
    rockPendingValue *pv;    /* put: the value */
    size_t cost;             /* delete, access: RAM it holds until committed */
    unsigned int lru;        /* access: the new LRU/LFU field, tagged with
                              * its kind (rockFieldTag()) */
    long long elements;      /* put: element records written (writer thread) */
    sds val;                 /* element: the value to put, NULL: delete */
    rockSplitInfo *si;       /* element: its key's split state (a reference) */
    int pending;             /* element: in rock_wr.elements until committed */
} rockWriteOp;

/* One committed batch handed back to the main thread, or (notice set) the
 * news that a batch failed and will be retried. */
typedef struct rockWriteBatch {
    rockWriteOp **ops;
    int count;
    char *err;               /* RocksDB error, or NULL */
    int notice;              /* failure notice: ops stay with the writer */
    int dropped;             /* never committed: writes failed, writer stopped */
} rockWriteBatch;

/* Jobs the writer runs between batches (rock_wr.jobs): asked for with
 * rockWriteAsk(), which sets the bit; the writer's wait ends on any bit set,
 * so a new job needs a bit and a branch in rockWriterMain(), nothing more. */
#define ROCK_JOB_TRIM (1 << 0)    /* malloc_trim(), then a measurement */
#define ROCK_JOB_MEASURE (1 << 1) /* mallinfo2() */
#define ROCK_JOB_PURGE (1 << 2)   /* jemalloc's dirty pages back */
#define ROCK_JOB_L0 (1 << 3)      /* RocksDB's L0 trigger set to l0_trigger */
#define ROCK_JOB_COMPACT (1 << 4) /* RocksDB's automatic compactions turned on */

static struct {
    rockHandoff h;            /* h.queue: rockWriteOp waiting for the writer;
                               * h.done: rockWriteBatch handed back; h.lock
                               * also guards jobs and l0_trigger */
    list *staged;             /* main thread only: ops not handed over yet */
    size_t staged_bytes;      /* ...and the bytes they carry */
    int jobs;                 /* ROCK_JOB_* asked for and not run yet */
    int l0_trigger;           /* ROCK_JOB_L0's value (rockWriteRequestL0Trigger) */
    /* Main thread only. */
    dict *pending;            /* skey -> rockPendingValue */
    dict *elements;           /* element key -> its last queued element op,
                               * until the op is committed (rockPendingElement()) */
    long long element_ops;    /* element ops queued and not yet handed back */
    long long element_bytes;  /* ...and the RAM they hold */
    dict *access;             /* skey -> its last queued access op, until the
                               * op leaves the queue (rockPendingAccess()) */
    long long pending_bytes;  /* RAM held by pending values (records + overhead) */
    redisAtomic long long trims;   /* malloc_trim() calls, by the writer thread */
    redisAtomic long long trim_us; /* ...and the time they took */
    redisAtomic long long glibc_in_use; /* glibc's heap in use, at most 100 ms ago */
    redisAtomic long long glibc_system; /* ...and what it holds from the system */
    redisAtomic long long measures;     /* mallinfo2() calls (every 100 ms) */
    redisAtomic long long measure_us;   /* ...and the time they took */
    redisAtomic long long purges;   /* jemalloc purges, by the writer thread */
    redisAtomic long long purge_us; /* ...and the time they took */
    long long delete_bytes;   /* RAM held by queued single-key deletes */
    long long deletes_queued; /* ...and their number */
    long long access_bytes;   /* RAM held by queued access-field updates */
    long long outstanding;    /* ops queued and not yet handed back */
    int disk_full;            /* writes failed for lack of space */
    int disk_low;             /* free space under rock-min-free-disk */
    sds write_error;          /* last write error while writes fail */
    char *dir;                /* rock-dir, whose free space is checked */
    rockWriteCronProc *cron;  /* registered at start (rockWriteStart()) */
    long long failures;       /* failure notices since writes last worked */
    int halting;              /* rockWriteHalt() is throwing writes away */
    long long ops_since_reset;/* writes queued since RocksDB was (re)created */
    long long disk_timer;
    monotime last_tick;       /* the timer's work last done (rockWriteTick()) */
    long long disk_free;      /* free bytes on rock-dir at the last check */
    long long disk_written;   /* rock_write_stats.write_bytes + pending at that check */
    /* The one barrier that may be queued (rockWriteBarrier()); `barrier`
     * is set while it waits, under h.lock. */
    int barrier;
    rockWriteBarrierProc *barrier_fn;
    void *barrier_arg;
} rock_wr;

static dictType rockPendingDictType = {
    dictSdsHash, NULL, NULL, dictSdsKeyCompare, dictSdsDestructor, NULL, NULL
};

/* Keys are the ops' own copies: nothing to free. */
static dictType rockAccessDictType = {
    dictSdsHash, NULL, NULL, dictSdsKeyCompare, NULL, NULL, NULL
};

/* ---------------------------------------------------------------------------
 * Writer thread
 * ------------------------------------------------------------------------ */

static void rockCommitBatch(rockWriteBatch *b) {
    rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
    int ranges = 0;
    for (int j = 0; j < b->count; j++) {
        rockWriteOp *op = b->ops[j];
        if (op->kind == ROCK_OP_PUT) {
            /* The elements of the version this put replaces go in the same
             * batch: a snapshot (the fork stream) never sees the old
             * metadata record without its elements. */
            if (op->pv->old_split_version) {
                sds p = rockSplitPrefixInto(NULL, op->skey, sdslen(op->skey), op->pv->old_split_version);
                sds e = rockSplitPrefixEnd(p);
                rocksdb_writebatch_delete_range(wb, p, sdslen(p), e, sdslen(e));
                sdsfree(p);
                sdsfree(e);
            }
            /* A big collection goes element by element; should its record
             * not parse (it always does: rdbSaveObject() wrote it), it is
             * stored whole, which every reader takes as well. */
            if (op->pv->split_version == 0 ||
                rockSplitBatch(wb, op->skey, sdslen(op->skey), op->pv->rec, sdslen(op->pv->rec),
                               op->pv->split_version, &op->elements) == C_ERR)
                rocksdb_writebatch_put(wb, op->skey, sdslen(op->skey), op->pv->rec, sdslen(op->pv->rec));
        } else if (op->kind == ROCK_OP_DELETE) {
            rocksdb_writebatch_delete(wb, op->skey, sdslen(op->skey));
        } else if (op->kind == ROCK_OP_ACCESS) {
            unsigned char operand[4];
            rockAccessOperand(op->lru, operand);
            rocksdb_writebatch_merge(wb, op->skey, sdslen(op->skey), (const char *)operand, sizeof(operand));
        } else if (op->kind == ROCK_OP_ELEMENT) {
            if (op->val) rocksdb_writebatch_put(wb, op->skey, sdslen(op->skey), op->val, sdslen(op->val));
            else rocksdb_writebatch_delete(wb, op->skey, sdslen(op->skey));
        } else if (op->kind == ROCK_OP_DELETE_ELEMENTS) {
            rocksdb_writebatch_delete_range(wb, op->skey, sdslen(op->skey), op->end, sdslen(op->end));
        } else {
            rocksdb_writebatch_delete_range(wb, op->skey, sdslen(op->skey), op->end, sdslen(op->end));
            ranges++;
        }
    }
    rocksdb_write(rock_store.db, rock_store.wopts, wb, &b->err);
    rocksdb_writebatch_destroy(wb);
    if (b->err || ranges == 0) return;

    /* A flushed database's disk comes back in rock_compact.c's thread,
     * once no snapshot still sees the records. (FLUSHALL replaces RocksDB
     * outright: rockResetStore().) */
    for (int j = 0; j < b->count; j++) {
        rockWriteOp *op = b->ops[j];
        if (op->kind == ROCK_OP_DELETE_RANGE) rockCompactAsk(op->skey, sdslen(op->skey), op->end, sdslen(op->end));
    }
}

/* Writer thread: give a batch (or a failure notice) to the main thread. */
static void rockHandBack(rockWriteBatch *b) {
    rockHandoffGiveBack(&rock_wr.h, (void **)&b, 1);
}

/* glibc's heap figures (ROCK REPORT's glibc_heap_*): Redis allocates from
 * jemalloc, so glibc's heap is RocksDB's (and libstdc++'s), the part of RSS
 * outside jemalloc's figures. mallinfo2() takes each arena's lock in turn:
 * in the writer, never on the event loop. */
static void rockWriteMeasureGlibc(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    monotime start = getMonotonicUs();
    struct mallinfo2 mi = mallinfo2();
    atomicIncr(rock_wr.measure_us, (long long)(getMonotonicUs() - start));
    atomicIncr(rock_wr.measures, 1);
    atomicSet(rock_wr.glibc_in_use, (long long)(mi.uordblks + mi.hblkhd));
    atomicSet(rock_wr.glibc_system, (long long)(mi.arena + mi.hblkhd));
#endif
}

static void *rockWriterMain(void *arg) {
    UNUSED(arg);
    rockThreadInit("rock_writer");
    while (1) {
        pthread_mutex_lock(&rock_wr.h.lock);
        while (!rock_wr.h.stop && !rock_wr.jobs && listLength(rock_wr.h.queue) == 0)
            pthread_cond_wait(&rock_wr.h.work, &rock_wr.h.lock);
        int jobs = rock_wr.h.stop ? 0 : rock_wr.jobs;
        if (jobs & ROCK_JOB_L0) {
            int files = rock_wr.l0_trigger;
            rock_wr.jobs &= ~ROCK_JOB_L0;
            pthread_mutex_unlock(&rock_wr.h.lock);
            rockStoreSetL0Trigger(files);
            continue;
        }
        if (jobs & ROCK_JOB_COMPACT) {
            rock_wr.jobs &= ~ROCK_JOB_COMPACT;
            pthread_mutex_unlock(&rock_wr.h.lock);
            rockStoreResumeCompactions();
            continue;
        }
        if (jobs & ROCK_JOB_PURGE) {
            rock_wr.jobs &= ~ROCK_JOB_PURGE;
            pthread_mutex_unlock(&rock_wr.h.lock);
#if defined(USE_JEMALLOC)
            monotime start = getMonotonicUs();
            jemalloc_purge();
            atomicIncr(rock_wr.purge_us, (long long)(getMonotonicUs() - start));
            atomicIncr(rock_wr.purges, 1);
#endif
            continue;
        }
        if (jobs & ROCK_JOB_TRIM) {
            rock_wr.jobs &= ~(ROCK_JOB_TRIM | ROCK_JOB_MEASURE); /* it measures after */
            pthread_mutex_unlock(&rock_wr.h.lock);
#ifdef __GLIBC__
            monotime start = getMonotonicUs();
            malloc_trim(0);
            atomicIncr(rock_wr.trim_us, (long long)(getMonotonicUs() - start));
            atomicIncr(rock_wr.trims, 1);
#endif
            rockWriteMeasureGlibc();
            continue;
        }
        if (jobs & ROCK_JOB_MEASURE) {
            rock_wr.jobs &= ~ROCK_JOB_MEASURE;
            pthread_mutex_unlock(&rock_wr.h.lock);
            rockWriteMeasureGlibc();
            continue;
        }
        if (listLength(rock_wr.h.queue) == 0) { /* stop, and nothing left */
            pthread_mutex_unlock(&rock_wr.h.lock);
            return NULL;
        }
        int max = listLength(rock_wr.h.queue) < ROCK_WRITE_BATCH_OPS ? listLength(rock_wr.h.queue) : ROCK_WRITE_BATCH_OPS;
        rockWriteBatch *b = zcalloc(sizeof(*b));
        b->ops = zmalloc(sizeof(rockWriteOp *) * max);
        size_t bytes = 0;
        while (b->count < max && bytes < ROCK_WRITE_BATCH_BYTES) {
            listNode *ln = listFirst(rock_wr.h.queue);
            rockWriteOp *op = listNodeValue(ln);
            /* A barrier ends the batch before it, and goes alone. */
            if (op->kind == ROCK_OP_BARRIER && b->count > 0) break;
            listDelNode(rock_wr.h.queue, ln);
            b->ops[b->count++] = op;
            if (op->kind == ROCK_OP_BARRIER) break;
            bytes += sdslen(op->skey) + (op->pv ? sdslen(op->pv->rec) : 0);
        }
        if (b->ops[0]->kind == ROCK_OP_BARRIER) {
            rockWriteBarrierProc *fn = rock_wr.barrier_fn;
            void *arg = rock_wr.barrier_arg;
            rock_wr.barrier = 0;
            pthread_mutex_unlock(&rock_wr.h.lock);
            fn(arg, 1);
            rockHandBack(b);
            continue;
        }
        pthread_mutex_unlock(&rock_wr.h.lock);

        /* Tests widen the window in which values are pending. */
        if (rock.debug_write_delay_ms)
            rockHandoffSleep(&rock_wr.h, rock.debug_write_delay_ms);
        rockCommitBatch(b);
        while (b->err) {
            /* Tell the main thread, then retry this same batch: later ones
             * wait, so order is kept. At shutdown, give up. */
            rockWriteBatch *notice = zcalloc(sizeof(*notice));
            notice->notice = 1;
            notice->count = b->count;
            notice->err = b->err;
            b->err = NULL;
            rockHandBack(notice);
            if (rockHandoffSleep(&rock_wr.h, ROCK_WRITE_RETRY_MS)) {
                b->dropped = 1;
                break;
            }
            rockCommitBatch(b);
        }
        rockHandBack(b);
    }
}

/* ---------------------------------------------------------------------------
 * Main thread: queueing
 * ------------------------------------------------------------------------ */

static void rockPendingUnref(rockPendingValue *pv) {
    if (--pv->refs > 0) return;
    sdsfree(pv->rec);
    zfree(pv);
}

/* Hand every staged op to the writer: one lock and one wake-up for all the
 * writes an event-loop pass queued (beforeSleep), instead of one per write.
 * Also called before the main thread waits for the writer, and whenever a
 * full batch is staged, so a long command's writes start early. Order is
 * kept: the staged ops go after everything queued before them. */
void rockWriteSubmit(void) {
    if (!rockHandoffRunning(&rock_wr.h) || rock_wr.staged == NULL || listLength(rock_wr.staged) == 0) return;
    pthread_mutex_lock(&rock_wr.h.lock);
    listJoin(rock_wr.h.queue, rock_wr.staged);
    pthread_cond_signal(&rock_wr.h.work);
    pthread_mutex_unlock(&rock_wr.h.lock);
    rock_wr.staged_bytes = 0;
}

static void rockEnqueue(rockWriteOp *op) {
    rock_wr.outstanding++;
    rock_wr.ops_since_reset++;
    listAddNodeTail(rock_wr.staged, op);
    rock_wr.staged_bytes += sdslen(op->skey) + (op->pv ? sdslen(op->pv->rec) : 0);
    if (listLength(rock_wr.staged) >= ROCK_WRITE_BATCH_OPS || rock_wr.staged_bytes >= ROCK_WRITE_BATCH_BYTES)
        rockWriteSubmit();
}

static void rockEnqueuePut(sds skey, rockPendingValue *pv) {
    rockWriteOp *op = zcalloc(sizeof(*op));
    op->kind = ROCK_OP_PUT;
    op->skey = sdsdup(skey);
    op->pv = pv;
    pv->refs++;
    rockEnqueue(op);
}

static void rockAccessForget(sds skey);

/* Drop the pending value of `skey`, if any (a newer write supersedes it). */
static void rockPendingDrop(sds skey) {
    if (dictSize(rock_wr.pending) == 0) return;
    dictEntry *de = dictFind(rock_wr.pending, skey);
    if (de == NULL) return;
    rockPendingValue *pv = dictGetVal(de);
    rock_wr.pending_bytes -= pv->cost;
    rockPendingUnref(pv);
    dictDelete(rock_wr.pending, skey);
}

/* Queue the value record `rec` under `skey`; takes ownership of `rec`. From
 * now until it is committed, reads of `skey` are served from the buffer.
 * With a `split_version`, the writer stores it element by element as that
 * version (rock_split.c); with an `old_split_version`, the elements of that
 * version (the key's split copy this put replaces) are deleted with it. */
void rockWritePut(sds skey, sds rec, uint64_t split_version, uint64_t old_split_version) {
    rockPendingDrop(skey);
    rockAccessForget(skey);
    rockPendingValue *pv = zcalloc(sizeof(*pv));
    pv->rec = rec;
    pv->split_version = split_version;
    pv->old_split_version = old_split_version;
    pv->refs = 1; /* the buffer's reference */
    /* The record, two copies of the key (buffer, queued op), the op, the
     * value struct, a dict entry and a list node. */
    pv->cost = sdsZmallocSize(rec) + 2 * sdsZmallocSize(skey) + sizeof(rockWriteOp) +
               sizeof(rockPendingValue) + sizeof(dictEntry) + sizeof(listNode);
    dictAdd(rock_wr.pending, sdsdup(skey), pv);
    rock_wr.pending_bytes += pv->cost;
    rockEnqueuePut(skey, pv);
}

/* Queue the delete of `skey`. */
void rockWriteDelete(sds skey) {
    rockPendingDrop(skey);
    rockAccessForget(skey);
    rockWriteOp *op = zcalloc(sizeof(*op));
    op->kind = ROCK_OP_DELETE;
    op->skey = sdsdup(skey);
    /* Counted: a mass delete of cold keys (DEL, expiry) behind a stalled
     * writer holds RAM too, and the writer's back-pressure must see it
     * (rockWriteBacklog()). */
    op->cost = sizeof(*op) + sdsZmallocSize(op->skey) + sizeof(listNode);
    rock_wr.delete_bytes += op->cost;
    rock_wr.deletes_queued++;
    rockEnqueue(op);
}

/* Forget the queued access update of `skey`, if any: a newer put or a
 * delete supersedes it (the op itself still commits, before them). */
static void rockAccessForget(sds skey) {
    if (rock_wr.access && dictSize(rock_wr.access)) dictDelete(rock_wr.access, skey);
}

/* Queue an update of the LRU/LFU field of the record under `skey` to `lru`
 * (a merge, applied by rock_store.c's operator). For a value dropped clean
 * whose field moved on while it was in RAM; the record must exist, or be
 * pending, and any later delete of it is queued after this.
 *
 * Until the op has left the queue, a read of the record may or may not see
 * it: rockPendingAccess() tells the reads issued meanwhile what to patch
 * in. (No new update can be queued while such a read is in flight: the key
 * is cold, and only a clean drop of a hot value queues one.) */
void rockWriteAccess(sds skey, unsigned int lru) {
    rockWriteOp *op = zcalloc(sizeof(*op));
    op->kind = ROCK_OP_ACCESS;
    op->skey = sdsdup(skey);
    op->lru = rockFieldTag(lru);
    /* The op, its key, a list node and an entry of the access dict (keyed
     * by the op's own key copy). */
    op->cost = sizeof(*op) + sdsZmallocSize(op->skey) + sizeof(listNode) + sizeof(dictEntry);
    rock_wr.access_bytes += op->cost;
    rockAccessForget(skey);
    dictAdd(rock_wr.access, op->skey, op);
    rockEnqueue(op);
}

/* The LRU/LFU field (tagged: rockFieldTag()) of the access update queued
 * for `skey` and not yet handed back by the writer: 1 and *lru set, or 0.
 * A forked child asks its copy (taken with the snapshot it streams). */
int rockPendingAccess(sds skey, unsigned int *lru) {
    if (rock_wr.access == NULL || dictSize(rock_wr.access) == 0) return 0;
    rockWriteOp *op = dictFetchValue(rock_wr.access, skey);
    if (op == NULL) return 0;
    *lru = op->lru;
    return 1;
}

/* An op leaves the queue for good (committed, or dropped). */
static void rockFreeOp(rockWriteOp *op) {
    if (op->pv) rockPendingUnref(op->pv);
    if (op->kind == ROCK_OP_BARRIER) {
        /* Dropped unrun (rockWriteHalt()): its owner is told so. */
        pthread_mutex_lock(&rock_wr.h.lock);
        int unrun = rock_wr.barrier;
        rock_wr.barrier = 0;
        pthread_mutex_unlock(&rock_wr.h.lock);
        if (unrun) rock_wr.barrier_fn(rock_wr.barrier_arg, 0);
    }
    if (op->kind == ROCK_OP_DELETE) {
        rock_wr.delete_bytes -= op->cost;
        rock_wr.deletes_queued--;
    } else if (op->kind == ROCK_OP_ACCESS) {
        rock_wr.access_bytes -= op->cost;
        if (dictSize(rock_wr.access) && dictFetchValue(rock_wr.access, op->skey) == op)
            dictDelete(rock_wr.access, op->skey);
    } else if (op->kind == ROCK_OP_ELEMENT) {
        rock_wr.element_bytes -= op->cost;
        rock_wr.element_ops--;
        if (op->pending) {
            /* The entry stands for the newest op of its element (keyed by
             * that op's key copy): it goes with that op only. */
            dictEntry *de = dictFind(rock_wr.elements, op->skey);
            if (de && dictGetVal(de) == op) dictDelete(rock_wr.elements, op->skey);
        }
        op->si->ops--;
        rockSplitInfoRelease(op->si);
        sdsfree(op->val);
    }
    sdsfree(op->skey);
    sdsfree(op->end);
    zfree(op);
}

/* Queue the delete of every record whose key starts with `start` and sorts
 * before `end`. */
static void rockWriteDeleteRange(sds start, sds end) {
    rockWriteOp *op = zcalloc(sizeof(*op));
    op->kind = ROCK_OP_DELETE_RANGE;
    op->skey = sdsdup(start);
    op->end = sdsdup(end);
    rockEnqueue(op);
}

/* Queue a barrier: `fn(arg, 1)` runs on the writer thread once every write
 * queued before it is committed and before any queued after it is, so what
 * RocksDB holds then is the queue's state at this call (a checkpoint of the
 * instant a fork happened). Should the queue be thrown away first
 * (rockWriteHalt()), `fn(arg, 0)` runs instead, on the main thread. One
 * barrier at a time: C_ERR while one waits, or when there is no writer. */
int rockWriteBarrier(rockWriteBarrierProc *fn, void *arg) {
    if (!rockHandoffRunning(&rock_wr.h)) return C_ERR;
    pthread_mutex_lock(&rock_wr.h.lock);
    int busy = rock_wr.barrier;
    if (!busy) {
        rock_wr.barrier = 1;
        rock_wr.barrier_fn = fn;
        rock_wr.barrier_arg = arg;
    }
    pthread_mutex_unlock(&rock_wr.h.lock);
    if (busy) return C_ERR;
    rockWriteOp *op = zcalloc(sizeof(*op));
    op->kind = ROCK_OP_BARRIER;
    op->skey = sdsempty();
    rockEnqueue(op);
    rockWriteSubmit();
    return C_OK;
}

/* Is a barrier queued and not run yet? */
int rockWriteBarrierWaiting(void) {
    if (!rockHandoffRunning(&rock_wr.h)) return 0;
    pthread_mutex_lock(&rock_wr.h.lock);
    int waiting = rock_wr.barrier;
    pthread_mutex_unlock(&rock_wr.h.lock);
    return waiting;
}

/* Queue the delete of every element record of version `version` of the
 * key whose whole-value RocksDB key is `skey`. */
void rockWriteDeleteElements(sds skey, uint64_t version) {
    rockWriteOp *op = zcalloc(sizeof(*op));
    op->kind = ROCK_OP_DELETE_ELEMENTS;
    op->skey = rockSplitPrefixInto(NULL, skey, sdslen(skey), version);
    op->end = rockSplitPrefixEnd(op->skey);
    rockEnqueue(op);
}

/* Queue a point command's write of one record of a split collection
 * (rock_point.c): the put of `val` (taken), or with `val` NULL the delete,
 * under `rkey` (taken); `si` is the key's split state, whose `ops` counts
 * it until committed. With `pending`, reads issued before it commits get
 * it from rockPendingElement() (element records; a metadata record is
 * never read for its count: that is si->count). */
void rockWriteElement(sds rkey, sds val, rockSplitInfo *si, int pending) {
    rockWriteOp *op = zcalloc(sizeof(*op));
    op->kind = ROCK_OP_ELEMENT;
    op->skey = rkey;
    op->val = val;
    op->si = si;
    op->pending = pending;
    si->refs++;
    si->ops++;
    op->cost = sizeof(*op) + sdsZmallocSize(rkey) + (val ? sdsZmallocSize(val) : 0) + sizeof(listNode) +
               (pending ? sizeof(dictEntry) : 0);
    rock_wr.element_bytes += op->cost;
    rock_wr.element_ops++;
    if (pending) {
        dictEntry *existing, *de = dictAddRaw(rock_wr.elements, op->skey, &existing);
        if (de == NULL) de = existing;
        dictSetVal(rock_wr.elements, de, op);
        dictSetKey(rock_wr.elements, de, op->skey);
    }
    rockEnqueue(op);
}

/* The value of the newest element write queued for `ekey` and not yet
 * committed: *found = 1 and the value (NULL: deleted), or *found = 0. */
sds rockPendingElement(sds ekey, int *found) {
    rockWriteOp *op = rock_wr.elements && dictSize(rock_wr.elements) ? dictFetchValue(rock_wr.elements, ekey) : NULL;
    *found = op != NULL;
    return op ? op->val : NULL;
}

/* Element writes queued and not yet committed (a fork waits for them). */
long long rockWriteElementOps(void) {
    return rock_wr.element_ops;
}

/* The pending record of `skey` (owned by the buffer), or NULL. */
sds rockPendingGet(sds skey) {
    if (rock_wr.pending == NULL || dictSize(rock_wr.pending) == 0) return NULL;
    rockPendingValue *pv = dictFetchValue(rock_wr.pending, skey);
    return pv ? pv->rec : NULL;
}

/* A forked child walks the pending buffer it inherited (rock_fork.c). */
dictIterator *rockPendingIterator(void) {
    if (rock_wr.pending == NULL) rock_wr.pending = dictCreate(&rockPendingDictType);
    return dictGetIterator(rock_wr.pending);
}

sds rockPendingRecord(dictEntry *de) {
    return ((rockPendingValue *)dictGetVal(de))->rec;
}

long long rockPendingBytes(void) {
    return rock_wr.pending ? rock_wr.pending_bytes : 0;
}

/* RAM the writer's queue holds: pending values, queued deletes, access
 * updates and point commands' element writes. What
 * eviction's back-pressure (rockPerformEvictions()) compares with its cap. */
long long rockWriteBacklog(void) {
    return rockPendingBytes() + rock_wr.delete_bytes + rock_wr.access_bytes + rock_wr.element_bytes;
}

/* Single-key deletes queued for the writer, and the RAM they hold. */
long long rockQueuedDeletes(void) {
    return rock_wr.deletes_queued;
}

long long rockQueuedDeleteBytes(void) {
    return rock_wr.delete_bytes;
}

/* malloc_trim() calls by the writer thread and the microseconds they took;
 * likewise its jemalloc purges. */
void rockWriteTrimStats(long long *trims, long long *us, long long *purges, long long *purge_us) {
    atomicGet(rock_wr.trims, *trims);
    atomicGet(rock_wr.trim_us, *us);
    atomicGet(rock_wr.purges, *purges);
    atomicGet(rock_wr.purge_us, *purge_us);
}

/* glibc's heap as the writer last measured it (every 100 ms): bytes in
 * use, and bytes it holds from the system (in use, free but not given
 * back); the measurements taken and the microseconds they took. */
void rockWriteGlibcHeap(long long *in_use, long long *system, long long *measures, long long *measure_us) {
    atomicGet(rock_wr.glibc_in_use, *in_use);
    atomicGet(rock_wr.glibc_system, *system);
    atomicGet(rock_wr.measures, *measures);
    atomicGet(rock_wr.measure_us, *measure_us);
}

long long rockPendingCount(void) {
    return rock_wr.pending ? (long long)dictSize(rock_wr.pending) : 0;
}

/* A storage id was dropped (FLUSHDB/FLUSHALL): its pending values will never
 * be read again; free them now (their queued puts are undone by the range
 * delete queued after them). */
void rockPendingDropSid(uint32_t sid) {
    if (rock_wr.pending == NULL || dictSize(rock_wr.pending) == 0) return;
    unsigned char p[4] = {sid >> 24, sid >> 16, sid >> 8, sid};
    dictIterator *di = dictGetSafeIterator(rock_wr.pending);
    dictEntry *de;
    while ((de = dictNext(di)) != NULL) {
        sds skey = dictGetKey(de);
        if (sdslen(skey) >= 4 && memcmp(skey, p, 4) == 0) rockPendingDrop(skey);
    }
    dictReleaseIterator(di);
}

/* ---------------------------------------------------------------------------
 * Main thread: completions, failures, retries
 * ------------------------------------------------------------------------ */

static int rockIsNoSpaceError(const char *err) {
    return strstr(err, "No space left") != NULL || strstr(err, "NoSpace") != NULL;
}

static void rockFailureNotice(rockWriteBatch *b) {
    rock_write_stats.errors++;
    rock_write_stats.write_errors++;
    /* Logged when it starts, then once a minute while it lasts. */
    if (rock_wr.failures++ % 60 == 0)
        serverLog(LL_WARNING, "rock: RocksDB write of %d operations failed: %s (values stay in RAM; "
                  "retrying every second, later writes wait)", b->count, b->err);
    rockSetWriteError(b->err, rockIsNoSpaceError(b->err));
    rocksdb_free(b->err);
    zfree(b);
}

static void rockCompleteBatch(rockWriteBatch *b) {
    if (b->notice) {
        rockFailureNotice(b);
        return;
    }
    if (b->ops[0]->kind == ROCK_OP_BARRIER) { /* always alone: no write */
        rockFreeOp(b->ops[0]);
        rock_wr.outstanding--;
        zfree(b->ops);
        zfree(b);
        return;
    }
    if (b->dropped) { /* given up at shutdown or reset */
        if (!rock_wr.halting)
            serverLog(LL_WARNING, "rock: dropping %d RocksDB writes that failed (writer stopped)", b->count);
    } else {
        rock_write_stats.write_batches++;
        if (rock_wr.write_error) {
            rock_wr.failures = 0;
            rockSetWriteError(NULL, 0);
        }
    }
    for (int j = 0; j < b->count; j++) {
        rockWriteOp *op = b->ops[j];
        if (op->kind == ROCK_OP_PUT) {
            dictEntry *de = dictFind(rock_wr.pending, op->skey);
            if (!b->dropped) {
                rock_write_stats.writes++;
                rock_write_stats.write_bytes += sdslen(op->pv->rec);
                if (op->elements) {
                    rock_write_stats.split_writes++;
                    rock_write_stats.element_writes += op->elements;
                }
                /* Committed: drop it from the buffer, unless a newer value
                 * for the key replaced it there meanwhile. */
                if (de && dictGetVal(de) == op->pv) {
                    rock_wr.pending_bytes -= op->pv->cost;
                    rockPendingUnref(op->pv);
                    dictDelete(rock_wr.pending, op->skey);
                }
            }
        } else if (!b->dropped && op->kind == ROCK_OP_DELETE) {
            rock_write_stats.deletes++;
        } else if (!b->dropped && op->kind == ROCK_OP_ACCESS) {
            rock_write_stats.access_updates++;
        } else if (!b->dropped && op->kind == ROCK_OP_ELEMENT) {
            rock_write_stats.element_writes++;
        }
        rockFreeOp(op);
    }
    rock_wr.outstanding -= b->count;
    zfree(b->ops);
    zfree(b);
}

static void rockWriteComplete(void *b) {
    rockCompleteBatch(b);
}

/* The batches handed back so far (rockCompleteBatch() each), without the
 * `committed` call a wake-up makes: for the waits below. */
static void rockWriteCompletionsApply(void) {
    rockHandoffDrain(&rock_wr.h);
}

/* Wait (blocking the event loop) until every queued write is committed,
 * or a new failure notice comes, or `ms` milliseconds have passed (a
 * stalled or full disk; `ms` < 0: no limit). Returns 1 when every queued
 * write is committed. A new failure notice is told by write_errors, which
 * only grows while this waits: rock_wr.failures is reset by the first batch
 * that succeeds, so a wait that began while writes failed would end at
 * their recovery with batches still queued. */
int rockWriteDrain(long long ms) {
    if (!rockHandoffRunning(&rock_wr.h)) return rock_wr.outstanding == 0;
    /* done_cond waits on CLOCK_MONOTONIC (rock_handoff.c). */
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    if (ms > 0) {
        deadline.tv_sec += ms / 1000;
        deadline.tv_nsec += (ms % 1000) * 1000000;
        if (deadline.tv_nsec >= 1000000000) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000;
        }
    }
    long long notices = rock_write_stats.write_errors;
    int timed_out = 0;
    rockWriteSubmit();
    while (rock_wr.outstanding > 0 && rock_write_stats.write_errors == notices && !timed_out) {
        pthread_mutex_lock(&rock_wr.h.lock);
        while (listLength(rock_wr.h.done) == 0 && !timed_out) {
            if (ms < 0)
                pthread_cond_wait(&rock_wr.h.done_cond, &rock_wr.h.lock);
            else
                timed_out = pthread_cond_timedwait(&rock_wr.h.done_cond, &rock_wr.h.lock, &deadline) == ETIMEDOUT;
        }
        pthread_mutex_unlock(&rock_wr.h.lock);
        rockWriteCompletionsApply();
    }
    return rock_wr.outstanding == 0;
}

/* rockWriteDrain() with no time limit: for ROCK EVICT, ROCK DISKKEYS,
 * evict-all and shutdown. */
void rockWriteFlush(void) {
    rockWriteDrain(-1);
}

/* Wait (blocking the event loop) for the writer to hand back at least one
 * batch. Eviction uses it when the pending buffer is full and memory is far
 * over the limit: back-pressure instead of unbounded growth. Returns 0 when
 * nothing was outstanding. */
int rockWriteWaitOne(void) {
    if (!rockHandoffRunning(&rock_wr.h) || rock_wr.outstanding == 0) return 0;
    rockWriteSubmit();
    pthread_mutex_lock(&rock_wr.h.lock);
    while (listLength(rock_wr.h.done) == 0)
        pthread_cond_wait(&rock_wr.h.done_cond, &rock_wr.h.lock);
    pthread_mutex_unlock(&rock_wr.h.lock);
    rockWriteCompletionsApply();
    rock_write_stats.write_waits++;
    return 1;
}

/* Record that writes fail (err set; no_space when the disk is full) or work
 * again (err NULL). While they fail, eviction stops. */
static void rockSetWriteError(const char *err, int no_space) {
    if (err == NULL) {
        if (rock_wr.write_error)
            serverLog(LL_WARNING, "rock: RocksDB writes succeed again; eviction to disk resumes");
        sdsfree(rock_wr.write_error);
        rock_wr.write_error = NULL;
        rock_wr.disk_full = 0;
        return;
    }
    if (rock_wr.write_error == NULL)
        serverLog(LL_WARNING, "rock: eviction to disk stopped: %s: %s",
                  no_space ? "rock-dir is out of space" : "RocksDB writes fail", err);
    sdsfree(rock_wr.write_error);
    rock_wr.write_error = sdsnew(err);
    rock_wr.disk_full = no_space;
}

/* Free bytes on the filesystem holding rock-dir, or -1; less what RocksDB
 * holds in memtables (WAL off: on disk only once flushed). */
static long long rockDiskFree(void) {
    struct statvfs vfs;
    uint64_t memtables = 0;
    if (statvfs(rock_wr.dir, &vfs) == -1) return -1;
    if (rock_store.db) rocksdb_property_int(rock_store.db, "rocksdb.cur-size-all-mem-tables", &memtables);
    return (long long)vfs.f_bavail * (long long)vfs.f_frsize - (long long)memtables;
}

/* Free bytes on rock-dir at the last check (every 100 ms), or -1. */
long long rockWriteDiskFree(void) {
    return rockHandoffRunning(&rock_wr.h) ? rock_wr.disk_free : -1;
}

/* Can eviction hand more values to the writer without taking rock-dir under
 * rock-min-free-disk? Counts what was written since the last check. */
int rockDiskHasRoom(void) {
    if (rock_wr.disk_low) return 0;
    if (rock.min_free_disk == 0 || rock_wr.disk_free < 0) return 1;
    long long since = rock_write_stats.write_bytes + rock_wr.pending_bytes - rock_wr.disk_written;
    if (rock_wr.disk_free - since >= rock.min_free_disk) return 1;
    rockDiskCheck();
    return !rock_wr.disk_low;
}

/* Every 100 ms (and when the estimate says the reserve may be reached). */
void rockDiskCheck(void) {
    rock_wr.disk_free = rockDiskFree();
    rock_wr.disk_written = rock_write_stats.write_bytes + rock_wr.pending_bytes;
    if (rock_wr.disk_free < 0) return;
    if (!rock_wr.disk_low && rock.min_free_disk && rock_wr.disk_free < rock.min_free_disk) {
        rock_wr.disk_low = 1;
        serverLog(LL_WARNING, "rock: eviction to disk stopped: %lld bytes free on rock-dir, under "
                  "rock-min-free-disk (%lld); it resumes when space is freed", rock_wr.disk_free, rock.min_free_disk);
    } else if (rock_wr.disk_low && (rock.min_free_disk == 0 ||
               rock_wr.disk_free >= rock.min_free_disk + ROCK_DISK_RESUME_SLACK)) {
        rock_wr.disk_low = 0;
        serverLog(LL_WARNING, "rock: %lld bytes free on rock-dir; eviction to disk resumes", rock_wr.disk_free);
    }
}

static void rockWriteTimerWork(void) {
    rock_wr.last_tick = getMonotonicUs();
    rockDiskCheck();
    rock_wr.cron(); /* the rest of rock's periodic work */
}

static int rockDiskTimer(aeEventLoop *el, long long id, void *data) {
    UNUSED(el); UNUSED(id); UNUSED(data);
    rockWriteTimerWork();
    return ROCK_DISK_CHECK_MS;
}

/* No timer runs while loading (an RDB, an AOF, a full sync), yet a load
 * writes the whole dataset through RocksDB: the loading path calls this
 * after each key, and the timer's work (the disk check, then the registered
 * cron) runs when ROCK_DISK_CHECK_MS have passed. The clock is read every
 * 64 calls. */
void rockWriteTick(void) {
    static unsigned int calls;
    if (!rockHandoffRunning(&rock_wr.h) || (++calls & 63) != 0) return;
    if (getMonotonicUs() - rock_wr.last_tick < (monotime)ROCK_DISK_CHECK_MS * 1000) return;
    rockWriteTimerWork();
}

/* ---------------------------------------------------------------------------
 * Start and stop
 * ------------------------------------------------------------------------ */

/* Start the writer for the store in `dir` (rock-dir, whose free space it
 * watches). `cron` is called every ROCK_DISK_CHECK_MS from its timer, after
 * the disk check; `committed` after each pass of batches handed back. */
void rockWriteStart(const char *dir, rockWriteCronProc *cron, rockWriteCommittedProc *committed) {
    rock_wr.dir = zstrdup(dir);
    rock_wr.cron = cron;
    rockHandoffInit(&rock_wr.h, "writer", rockWriteComplete, committed);
    rock_wr.disk_timer = aeCreateTimeEvent(server.el, ROCK_DISK_CHECK_MS, rockDiskTimer, NULL, NULL);
    rock_wr.staged = listCreate();
    rock_wr.pending = dictCreate(&rockPendingDictType);
    if (rock_wr.access == NULL) rock_wr.access = dictCreate(&rockAccessDictType);
    if (rock_wr.elements == NULL) rock_wr.elements = dictCreate(&rockAccessDictType);
    rockDiskCheck();
    rockHandoffStart(&rock_wr.h, 1, rockWriterMain);
}

static void rockWriteJoin(void) {
    rockWriteSubmit();
    rockHandoffStop(&rock_wr.h); /* the writer finishes its queue first */
    rock_wr.jobs = 0;
}

/* Stop the writer and throw away every queued write and pending value: all
 * of them belong to storage ids that were just dropped (rockResetStore), or
 * RocksDB is about to close for good (shutdown: it is wiped at the next
 * start, and the dataset is in the RDB/AOF). A batch already being committed
 * finishes first. Returns how many queued writes were dropped. */
long long rockWriteHalt(void) {
    if (!rockHandoffRunning(&rock_wr.h)) return 0;
    rockWriteSubmit();
    pthread_mutex_lock(&rock_wr.h.lock);
    list *queue = rock_wr.h.queue;
    long long dropped = listLength(queue);
    rock_wr.h.queue = listCreate();
    pthread_mutex_unlock(&rock_wr.h.lock);
    listNode *ln;
    while ((ln = listFirst(queue)) != NULL) {
        rockFreeOp(listNodeValue(ln));
        rock_wr.outstanding--;
        listDelNode(queue, ln);
    }
    listRelease(queue);
    rock_wr.halting = 1;
    rockWriteJoin();
    rockWriteCompletionsApply();
    rock_wr.halting = 0;
    serverAssert(rock_wr.outstanding == 0);
    dictIterator *di = dictGetSafeIterator(rock_wr.pending);
    dictEntry *de;
    while ((de = dictNext(di)) != NULL) rockPendingDrop(dictGetKey(de));
    dictReleaseIterator(di);
    rock_wr.failures = 0;
    rockSetWriteError(NULL, 0);
    return dropped;
}

/* In a forked child: the writer thread does not exist. The wake-up pipe is
 * the parent's and stays registered (the epoll instance is shared with the
 * parent), its handler does nothing in a child; the disk timer is the
 * child's own copy and goes. Nothing is queued from here on (rock_store.db is
 * NULL in a child). */
void rockWriteDetachChild(void) {
    if (!rockHandoffRunning(&rock_wr.h)) return;
    if (rock_wr.disk_timer != AE_ERR) aeDeleteTimeEvent(server.el, rock_wr.disk_timer);
    rockHandoffDetachChild(&rock_wr.h);
}

/* Give the writer thread a job for between batches (a ROCK_JOB_* bit): set
 * it under its lock and wake it (rockWriterMain() runs the job and clears
 * the bit). ROCK_JOB_L0 carries `files`. */
static void rockWriteAsk(int job, int files) {
    if (!rockHandoffRunning(&rock_wr.h)) return;
    pthread_mutex_lock(&rock_wr.h.lock);
    rock_wr.jobs |= job;
    if (job == ROCK_JOB_L0) rock_wr.l0_trigger = files;
    pthread_cond_signal(&rock_wr.h.work);
    pthread_mutex_unlock(&rock_wr.h.lock);
}

/* Ask the writer thread to hand the free memory of the glibc heaps back to
 * the system (RocksDB allocates with glibc's malloc; compactions and reads
 * free large buffers glibc would keep in RSS). malloc_trim() walks every
 * arena, a cost that grows with RocksDB's heap: it runs in the writer, between
 * batches, never on the event loop. */
void rockWriteRequestTrim(void) {
    rockWriteAsk(ROCK_JOB_TRIM, 0);
}

/* Ask the writer thread to take glibc's heap figures anew (rockCron(), every
 * 100 ms, between the once-a-second trims). */
void rockWriteRequestMeasure(void) {
    rockWriteAsk(ROCK_JOB_MEASURE, 0);
}

/* Ask the writer thread to give jemalloc's dirty pages (freed, still
 * resident) of every arena back to the system at once (rockCron() asks when
 * they pass a limit). The purge takes milliseconds when tens of MB are
 * dirty: not on the event loop. */
void rockWriteRequestPurge(void) {
    rockWriteAsk(ROCK_JOB_PURGE, 0);
}

/* Ask the writer thread to set RocksDB's L0 compaction trigger (a
 * SetOptions call writes a file: not on the event loop). */
void rockWriteRequestL0Trigger(int files) {
    rockWriteAsk(ROCK_JOB_L0, files);
}

/* Ask the writer thread to turn RocksDB's automatic compactions on (a
 * SetOptions call, as above). */
void rockWriteRequestCompactions(void) {
    rockWriteAsk(ROCK_JOB_COMPACT, 0);
}

/* Writes queued or being committed. */
long long rockWriteOutstanding(void) {
    return rockHandoffRunning(&rock_wr.h) ? rock_wr.outstanding : 0;
}

/* Was anything written since RocksDB was created? */
int rockWriteDirty(void) {
    return rock_wr.ops_since_reset != 0;
}

/* RocksDB was opened with records in it (a warm start). */
void rockWriteMarkDirty(void) {
    rock_wr.ops_since_reset++;
}

void rockWriteResume(void) {
    if (rockHandoffRunning(&rock_wr.h)) return;
    rock_wr.ops_since_reset = 0;
    rockHandoffStart(&rock_wr.h, 1, rockWriterMain);
}

/* Drop every record of storage id `sid` (queued for the writer thread). */
void rockWriteDeleteSid(uint32_t sid) {
    unsigned char start[4], end[4];
    rockPutSid(start, sid);
    rockPutSid(end, sid + 1);
    sds s = sdsnewlen(start, 4), e = sdsnewlen(end, 4);
    rockWriteDeleteRange(s, e);
    /* ...and the element records of its split collections (rock_split.c). */
    rockPutSid((unsigned char *)s, sid | ROCK_SPLIT_BIT);
    rockPutSid((unsigned char *)e, (sid + 1) | ROCK_SPLIT_BIT);
    rockWriteDeleteRange(s, e);
    sdsfree(s);
    sdsfree(e);
}

rockStats rock_write_stats; /* the writer's counters (rock.h) */

void rockWriteResetStats(void) {
    memset(&rock_write_stats, 0, sizeof(rock_write_stats));
}

/* Whether writes fail: the last error (NULL while they succeed), and the
 * disk's state (ROCK REPORT, and eviction, which stops meanwhile). */
const char *rockWriteError(void) {
    return rock_wr.write_error;
}

int rockDiskFull(void) {
    return rock_wr.disk_full;
}

int rockDiskLow(void) {
    return rock_wr.disk_low;
}
