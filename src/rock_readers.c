/* rock_readers.c -- redis-rock: the reader pool (layer 2).
 *
 * This file owns the reader threads (rock-io-threads) and their hand-off:
 *   - jobs staged during an event-loop pass go to the readers at once
 *     (rockReadersSubmit(), from beforeSleep): one lock and one wake-up per
 *     pass; each reader takes an equal share, at most ROCK_READ_BATCH, and
 *     serves it with one RocksDB MultiGet (point jobs through the read
 *     function the page-in side registered);
 *   - a split collection's metadata record read whole is assembled from its
 *     element records here, on the reader;
 *   - completions: a pipe wakes the event loop, which hands each job back
 *     to the page-in side's completion function (rock_read.c);
 *   - the read latency histogram (microseconds per value read).
 * It knows jobs, RocksDB and nothing of clients or keys' state. */

#include "server.h"
#include "rock_readers.h"
#include "rock_handoff.h"

static void rockReadLatencyInit(void);

#define ROCK_READ_BATCH 32

static struct {
    rockHandoff h;            /* queue, done, lock, threads: rock_handoff.c */
    int share;                /* how many queued jobs a reader takes at a time
                               * (under h.lock) */
    list *staged;             /* main thread: jobs of this pass, not yet handed over */
    rockReadersPointProc *point;
    rockReadersCompleteProc *complete;
    struct hdr_histogram *latency; /* microseconds per value read */
} readers;

/* ---------------------------------------------------------------------------
 * Reader threads
 * ------------------------------------------------------------------------ */

/* A failed read, logged by a reader thread: about one line a second at most
 * (a damaged file can fail every read), with how many were not logged. Every
 * failure is still counted (errors) and fails its command. */
static void rockReaderLogError(const char *err) {
    static redisAtomic long long last_ms, suppressed;
    long long now = mstime(), last;
    atomicGet(last_ms, last);
    if (now - last < 1000) {
        atomicIncr(suppressed, 1);
        return;
    }
    atomicSet(last_ms, now);
    long long n;
    atomicGet(suppressed, n);
    atomicSet(suppressed, 0); /* racing threads may lose a count: a log figure */
    if (n) serverLog(LL_WARNING, "rock: RocksDB read failed: %s (and %lld more in the last second)", err, n);
    else serverLog(LL_WARNING, "rock: RocksDB read failed: %s", err);
}

/* A collection stored element by element came back as its metadata
 * record: read its elements and make the whole-value record of it. */
static void rockReaderAssemble(rockReadJob *job) {
    if (!rockSplitIsMeta(job->rec, sdslen(job->rec))) return;
    char *err;
    int owned;
    sds whole = rockSplitAssemble(job->skey, sdslen(job->skey), job->rec, sdslen(job->rec), rock_store.ropts_nofill, &err,
                                  &owned, &job->elements);
    sdsfree(job->rec);
    job->rec = whole;
    if (whole == NULL) {
        rockReaderLogError(err);
        if (owned) rocksdb_free(err);
        job->status = ROCK_READ_ERROR;
    }
}

static void *rockReaderMain(void *arg) {
    UNUSED(arg);
    rockThreadInit("rock_reader");
    rockStoreReaderInit();
    rockReadJob *batch[ROCK_READ_BATCH];
    const char *keys[ROCK_READ_BATCH];
    size_t klens[ROCK_READ_BATCH], vlens[ROCK_READ_BATCH];
    char *vals[ROCK_READ_BATCH], *errs[ROCK_READ_BATCH];

    while (1) {
        int n = 0;
        pthread_mutex_lock(&readers.h.lock);
        while (!readers.h.stop && listLength(readers.h.queue) == 0) {
            /* Idle: hand in the block counts of the last reads within
             * ROCK_BLOCK_HARVEST_US, then sleep until there is work. */
            long long harvest_us = rockStoreBlockCountsPending();
            if (harvest_us < 0) {
                pthread_cond_wait(&readers.h.work, &readers.h.lock);
            } else if (harvest_us == 0 || rockCondWaitUs(&readers.h.work, &readers.h.lock, harvest_us) == ETIMEDOUT) {
                pthread_mutex_unlock(&readers.h.lock);
                rockStoreHarvestBlockCounts();
                pthread_mutex_lock(&readers.h.lock);
            }
        }
        if (readers.h.stop) {
            pthread_mutex_unlock(&readers.h.lock);
            rockStoreReaderExit();
            return NULL;
        }
        while (n < readers.share && listLength(readers.h.queue)) {
            listNode *ln = listFirst(readers.h.queue);
            batch[n++] = listNodeValue(ln);
            listDelNode(readers.h.queue, ln);
        }
        pthread_mutex_unlock(&readers.h.lock);

        /* Tests widen the window in which a read is in flight. */
        if (rock.debug_read_delay_ms) rockHandoffSleep(&readers.h, rock.debug_read_delay_ms);
        int fill = 0, m = 0, np = 0;
        rockReadJob *whole[ROCK_READ_BATCH], *points[ROCK_READ_BATCH];
        if (rock_store.db == NULL) {
            /* The store could not be recreated (rockResetStore): fail. */
            for (int j = 0; j < n; j++) batch[j]->status = ROCK_READ_ERROR;
            goto handback;
        }
        for (int j = 0; j < n; j++) {
            if (batch[j]->point) { /* metadata + elements: rock_point.c */
                points[np++] = batch[j];
                continue;
            }
            whole[m] = batch[j];
            keys[m] = batch[j]->skey;
            klens[m++] = sdslen(batch[j]->skey);
            fill |= batch[j]->fill;
        }
        if (np) readers.point(points, np);
        if (m) rocksdb_multi_get(rock_store.db, fill ? rock_store.ropts : rock_store.ropts_nofill, m, keys, klens, vals, vlens, errs);
        for (int j = 0; j < m; j++) {
            if (errs[j]) {
                rockReaderLogError(errs[j]);
                rocksdb_free(errs[j]);
                whole[j]->status = ROCK_READ_ERROR;
            } else if (vals[j] == NULL) {
                whole[j]->status = ROCK_READ_NOTFOUND;
            } else {
                whole[j]->rec = sdsnewlen(vals[j], vlens[j]);
                whole[j]->status = ROCK_READ_OK;
                rocksdb_free(vals[j]);
                rockReaderAssemble(whole[j]);
            }
        }
        rockStoreCountBatch();

handback:
        rockHandoffGiveBack(&readers.h, (void **)batch, n);
    }
}

/* ---------------------------------------------------------------------------
 * The hand-off from the main thread
 * ------------------------------------------------------------------------ */

/* Queue `job` for this event-loop pass's hand-off. */
void rockReadersStage(rockReadJob *job) {
    listAddNodeTail(readers.staged, job);
}

/* rockBeforeSleep(): hand every read this event-loop pass queued (commands,
 * read-ahead) to the readers at once: one lock and one wake-up for the
 * pass instead of one per read. The readers split them: each takes an
 * equal share (at most ROCK_READ_BATCH, one MultiGet), so that the reads
 * of a pass go to the disk from every reader at once, not one after the
 * other from a single MultiGet. */
void rockReadersSubmit(void) {
    if (readers.staged == NULL || listLength(readers.staged) == 0) return;
    pthread_mutex_lock(&readers.h.lock);
    listJoin(readers.h.queue, readers.staged);
    int nthreads = readers.h.nthreads > 0 ? readers.h.nthreads : 1;
    int share = (int)((listLength(readers.h.queue) + nthreads - 1) / nthreads);
    readers.share = share > ROCK_READ_BATCH ? ROCK_READ_BATCH : share;
    if (listLength(readers.h.queue) > (unsigned long)readers.share)
        pthread_cond_broadcast(&readers.h.work);
    else
        pthread_cond_signal(&readers.h.work);
    pthread_mutex_unlock(&readers.h.lock);
}

static void rockReadersComplete(void *job) {
    readers.complete(job);
}

/* ---------------------------------------------------------------------------
 * Start and stop
 * ------------------------------------------------------------------------ */

void rockReadersStart(int nthreads, rockReadersPointProc *point, rockReadersCompleteProc *complete,
                      rockReadersDrainedProc *drained) {
    rockHandoffInit(&readers.h, "reader", rockReadersComplete, drained);
    readers.staged = listCreate();
    readers.share = 1;
    readers.point = point;
    readers.complete = complete;
    rockReadLatencyInit();
    rockHandoffStart(&readers.h, nthreads, rockReaderMain);
}

/* Stop the reader threads (before RocksDB closes, or while it is replaced).
 * Reads still queued stay queued for rockReadersResume(). */
void rockReadersPause(void) {
    rockHandoffStop(&readers.h);
}

void rockReadersDetachChild(void) {
    rockHandoffDetachChild(&readers.h);
}

void rockReadersResume(void) {
    if (readers.h.queue != NULL && !rockHandoffRunning(&readers.h))
        rockHandoffStart(&readers.h, readers.h.nthreads, rockReaderMain);
}

/* ---------------------------------------------------------------------------
 * Read latency
 * ------------------------------------------------------------------------ */

/* The read latency histogram: 1 us .. 100 s, 2 significant digits, 22 KB.
 * Made when the tier starts, not at the first cold read, so that
 * used_memory does not jump by that much at the first read of a server's
 * life (a maxmemory set from used_memory a few KB above it, as upstream's
 * unit/maxmemory does, was passed by that alone). */
static void rockReadLatencyInit(void) {
    if (readers.latency == NULL) hdr_init(1, 100LL * 1000 * 1000, 2, &readers.latency);
}

void rockRecordReadLatency(long long us) {
    rockReadLatencyInit();
    hdr_record_value(readers.latency, us < 1 ? 1 : us);
}

long long rockReadLatencyPercentile(double p) {
    if (readers.latency == NULL || readers.latency->total_count == 0) return 0;
    return hdr_value_at_percentile(readers.latency, p);
}

void rockReadLatencyReset(void) {
    if (readers.latency) hdr_reset(readers.latency);
}
