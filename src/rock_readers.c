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

#include <fcntl.h>
#include <pthread.h>

#define ROCK_READ_BATCH 32

static struct {
    pthread_t *threads;
    int nthreads;
    pthread_mutex_t lock;     /* guards queue, done, stop */
    pthread_cond_t cond;      /* queue has work, or stop */
    pthread_cond_t stop_cond; /* wakes the debug delay early: stop only */
    list *queue;              /* jobs waiting for a reader */
    int share;                /* how many of them a reader takes at a time */
    list *done;               /* jobs read, waiting for the main thread */
    int stop;
    int pipe_rd, pipe_wr;     /* wakes the event loop */
    list *staged;             /* main thread: jobs of this pass, not yet handed over */
    rockReadersPointProc *point;
    rockReadersCompleteProc *complete;
    rockReadersDrainedProc *drained;
    struct hdr_histogram *latency; /* microseconds per value read */
} readers;

static void rockReadersStartThreads(void);

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
        pthread_mutex_lock(&readers.lock);
        while (!readers.stop && listLength(readers.queue) == 0) {
            /* Idle: hand in the block counts of the last reads within
             * ROCK_BLOCK_HARVEST_US, then sleep until there is work. */
            long long harvest_us = rockStoreBlockCountsPending();
            if (harvest_us < 0) {
                pthread_cond_wait(&readers.cond, &readers.lock);
            } else if (harvest_us == 0 || rockCondWaitUs(&readers.cond, &readers.lock, harvest_us) == ETIMEDOUT) {
                pthread_mutex_unlock(&readers.lock);
                rockStoreHarvestBlockCounts();
                pthread_mutex_lock(&readers.lock);
            }
        }
        if (readers.stop) {
            pthread_mutex_unlock(&readers.lock);
            rockStoreReaderExit();
            return NULL;
        }
        while (n < readers.share && listLength(readers.queue)) {
            listNode *ln = listFirst(readers.queue);
            batch[n++] = listNodeValue(ln);
            listDelNode(readers.queue, ln);
        }
        pthread_mutex_unlock(&readers.lock);

        /* Tests widen the window in which a read is in flight. */
        if (rock.debug_read_delay_ms)
            rockThreadSleep(&readers.lock, &readers.stop_cond, &readers.stop, rock.debug_read_delay_ms);
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
        pthread_mutex_lock(&readers.lock);
        int wake = listLength(readers.done) == 0;
        for (int j = 0; j < n; j++) listAddNodeTail(readers.done, batch[j]);
        pthread_mutex_unlock(&readers.lock);
        if (wake && write(readers.pipe_wr, "x", 1) == -1) {
            /* Pipe full: the main thread is already due to wake up. */
        }
    }
}

/* ---------------------------------------------------------------------------
 * The hand-off from the main thread
 * ------------------------------------------------------------------------ */

/* Queue `job` for this event-loop pass's hand-off. */
void rockReadersStage(rockReadJob *job) {
    listAddNodeTail(readers.staged, job);
}

int rockReadersStaged(void) {
    return readers.staged ? (int)listLength(readers.staged) : 0;
}

/* rockBeforeSleep(): hand every read this event-loop pass queued (commands,
 * read-ahead) to the readers at once: one lock and one wake-up for the
 * pass instead of one per read. The readers split them: each takes an
 * equal share (at most ROCK_READ_BATCH, one MultiGet), so that the reads
 * of a pass go to the disk from every reader at once, not one after the
 * other from a single MultiGet. */
void rockReadersSubmit(void) {
    if (readers.staged == NULL || listLength(readers.staged) == 0) return;
    pthread_mutex_lock(&readers.lock);
    listJoin(readers.queue, readers.staged);
    int nthreads = readers.nthreads > 0 ? readers.nthreads : 1;
    int share = (int)((listLength(readers.queue) + nthreads - 1) / nthreads);
    readers.share = share > ROCK_READ_BATCH ? ROCK_READ_BATCH : share;
    if (listLength(readers.queue) > (unsigned long)readers.share)
        pthread_cond_broadcast(&readers.cond);
    else
        pthread_cond_signal(&readers.cond);
    pthread_mutex_unlock(&readers.lock);
}

static void rockReadersCompletions(aeEventLoop *el, int fd, void *privdata, int mask) {
    UNUSED(el); UNUSED(privdata); UNUSED(mask);
    if (server.in_fork_child) return; /* the parent's wake-up */
    char buf[64];
    while (read(fd, buf, sizeof(buf)) > 0);

    pthread_mutex_lock(&readers.lock);
    list *done = readers.done;
    readers.done = listCreate();
    pthread_mutex_unlock(&readers.lock);

    listNode *ln;
    while ((ln = listFirst(done)) != NULL) {
        rockReadJob *job = listNodeValue(ln);
        listDelNode(done, ln);
        readers.complete(job);
    }
    listRelease(done);
    readers.drained();
}

/* ---------------------------------------------------------------------------
 * Start and stop
 * ------------------------------------------------------------------------ */

void rockReadersStart(int nthreads, rockReadersPointProc *point, rockReadersCompleteProc *complete,
                      rockReadersDrainedProc *drained) {
    int fds[2];
    if (pipe(fds) == -1 || anetNonBlock(NULL, fds[0]) == ANET_ERR || anetNonBlock(NULL, fds[1]) == ANET_ERR) {
        serverLog(LL_WARNING, "Fatal: rock: can't create the reader wake-up pipe: %s", strerror(errno));
        exit(1);
    }
    anetCloexec(fds[0]);
    anetCloexec(fds[1]);
    readers.pipe_rd = fds[0];
    readers.pipe_wr = fds[1];
    if (aeCreateFileEvent(server.el, readers.pipe_rd, AE_READABLE, rockReadersCompletions, NULL) == AE_ERR) {
        serverLog(LL_WARNING, "Fatal: rock: can't watch the reader wake-up pipe");
        exit(1);
    }
    pthread_mutex_init(&readers.lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&readers.cond, &attr);
    pthread_cond_init(&readers.stop_cond, &attr);
    pthread_condattr_destroy(&attr);
    readers.queue = listCreate();
    readers.done = listCreate();
    readers.staged = listCreate();
    readers.share = 1;
    readers.nthreads = nthreads;
    readers.point = point;
    readers.complete = complete;
    readers.drained = drained;
    rockReadLatencyInit();
    rockReadersStartThreads();
}

/* Stop the reader threads (before RocksDB closes, or while it is replaced).
 * Reads still queued stay queued for rockReadersResume(). */
void rockReadersPause(void) {
    if (readers.threads == NULL) return;
    pthread_mutex_lock(&readers.lock);
    readers.stop = 1;
    pthread_cond_broadcast(&readers.cond);
    pthread_cond_broadcast(&readers.stop_cond);
    pthread_mutex_unlock(&readers.lock);
    for (int j = 0; j < readers.nthreads; j++) pthread_join(readers.threads[j], NULL);
    zfree(readers.threads);
    readers.threads = NULL;
    readers.stop = 0;
}

static void rockReadersStartThreads(void) {
    readers.threads = zmalloc(sizeof(pthread_t) * readers.nthreads);
    for (int j = 0; j < readers.nthreads; j++) {
        if (pthread_create(&readers.threads[j], NULL, rockReaderMain, NULL) != 0) {
            serverLog(LL_WARNING, "Fatal: rock: can't start reader thread %d", j);
            exit(1);
        }
    }
}

/* In a forked child: the reader threads do not exist. The wake-up pipe is
 * the parent's; it stays registered (the epoll instance is shared with the
 * parent: unregistering it here would unregister it there), and its handler
 * does nothing in a child. */
void rockReadersDetachChild(void) {
    readers.threads = NULL;
}

void rockReadersResume(void) {
    if (readers.threads == NULL && readers.queue != NULL) rockReadersStartThreads();
}

/* ---------------------------------------------------------------------------
 * Read latency
 * ------------------------------------------------------------------------ */

/* The read latency histogram: 1 us .. 100 s, 2 significant digits, 22 KB.
 * Made when the tier starts, not at the first cold read, so that
 * used_memory does not jump by that much at the first read of a server's
 * life (a maxmemory set from used_memory a few KB above it, as upstream's
 * unit/maxmemory does, was passed by that alone). */
void rockReadLatencyInit(void) {
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
