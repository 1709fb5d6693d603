/* rock_compact.c -- redis-rock: giving a flushed database's disk back.
 *
 * The threads layer (layer 2). FLUSHDB (and FLUSHALL while a fork stream
 * runs) drops a database's records with one range delete of its old
 * storage id (rock_write.c). RocksDB takes the range's whole files at once
 * when it can (DeleteFilesInRange, not while blob files exist: rock_write.c
 * says why); everything else stays on disk until compaction happens to
 * reach the range, which under a steady load can take minutes and on an
 * idle server forever. The soak's FLUSHDB, with its dataset written again
 * at once, had the old and new datasets and compaction's outputs share
 * rock-dir: 1,270-1,470 MB of 1,536 for a 490 MB dataset.
 *
 * This file owns one thread that compacts each flushed range as soon as it
 * can (CompactRange: the range tombstone goes down the levels with the
 * covered records and drops them, blob references counted as garbage), not
 * exclusive, so RocksDB's own compactions and flushes go on beside it. A
 * snapshot taken before the delete (a fork stream's) still sees the
 * records: compacting then would only copy them, so the thread waits until
 * no snapshot is held. Ranges asked for meanwhile queue up.
 *
 * rockCompactHalt() (before RocksDB closes: shutdown, a store reset) drops
 * what is queued, pauses manual compaction so that one in progress ends at
 * once, and waits for the thread to be idle; rockCompactResume() after a
 * reopen. The thread does not exist in a forked child, which never asks. */

#include "server.h"

#include "rock_handoff.h"

#include <pthread.h>

#define ROCK_COMPACT_SNAPSHOT_POLL_MS 100

typedef struct rockCompactRange {
    sds start, end;
} rockCompactRange;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;  /* work, halt or stop; and the thread going idle */
    list *queue;          /* rockCompactRange * */
    int busy;             /* the thread works on a range */
    int halted;           /* drop work: RocksDB is about to close */
    int stop;
    int running;
    pthread_t thread;
    redisAtomic long long done;   /* ranges compacted */
} rock_cp;

static void rockCompactFreeRange(rockCompactRange *r) {
    sdsfree(r->start);
    sdsfree(r->end);
    zfree(r);
}

static void rockCompactOne(rockCompactRange *r) {
    /* A snapshot older than the delete still sees the records. */
    while (rockStoreProperty("rocksdb.num-snapshots") > 0) {
        if (rockThreadSleepOn(&rock_cp.lock, &rock_cp.cond, &rock_cp.halted, ROCK_COMPACT_SNAPSHOT_POLL_MS)) return;
    }
    rocksdb_compactoptions_t *co = rocksdb_compactoptions_create();
    rocksdb_compactoptions_set_exclusive_manual_compaction(co, 0);
    /* No status comes back through the C API: a failure (a full disk) is
     * RocksDB's background error, which the writer's next batch meets. */
    rocksdb_compact_range_opt(rock_store.db, co, r->start, sdslen(r->start), r->end, sdslen(r->end));
    rocksdb_compactoptions_destroy(co);
    atomicIncr(rock_cp.done, 1);
}

static void *rockCompactMain(void *arg) {
    UNUSED(arg);
    rockThreadInit("rock_compact");
    pthread_mutex_lock(&rock_cp.lock);
    while (!rock_cp.stop) {
        if (listLength(rock_cp.queue) == 0 || rock_cp.halted) {
            pthread_cond_wait(&rock_cp.cond, &rock_cp.lock);
            continue;
        }
        listNode *ln = listFirst(rock_cp.queue);
        rockCompactRange *r = listNodeValue(ln);
        listDelNode(rock_cp.queue, ln);
        rock_cp.busy = 1;
        pthread_mutex_unlock(&rock_cp.lock);
        rockCompactOne(r);
        rockCompactFreeRange(r);
        pthread_mutex_lock(&rock_cp.lock);
        rock_cp.busy = 0;
        pthread_cond_broadcast(&rock_cp.cond);
    }
    pthread_mutex_unlock(&rock_cp.lock);
    return NULL;
}

void rockCompactStart(void) {
    if (rock_cp.running) return;
    pthread_mutex_init(&rock_cp.lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&rock_cp.cond, &ca);
    pthread_condattr_destroy(&ca);
    rock_cp.queue = listCreate();
    rock_cp.busy = rock_cp.halted = rock_cp.stop = 0;
    if (pthread_create(&rock_cp.thread, NULL, rockCompactMain, NULL) != 0) {
        serverLog(LL_WARNING, "rock: can't start the thread that compacts flushed databases' ranges; "
                  "their disk comes back as compaction reaches them");
        return;
    }
    rock_cp.running = 1;
}

/* Any thread (the writer, after committing a FLUSHDB's range delete): ask
 * for [start, end) to be compacted. */
void rockCompactAsk(const char *start, size_t start_len, const char *end, size_t end_len) {
    if (!rock_cp.running) return;
    rockCompactRange *r = zmalloc(sizeof(*r));
    r->start = sdsnewlen(start, start_len);
    r->end = sdsnewlen(end, end_len);
    pthread_mutex_lock(&rock_cp.lock);
    if (rock_cp.halted) {
        pthread_mutex_unlock(&rock_cp.lock);
        rockCompactFreeRange(r);
        return;
    }
    listAddNodeTail(rock_cp.queue, r);
    pthread_cond_broadcast(&rock_cp.cond);
    pthread_mutex_unlock(&rock_cp.lock);
}

/* Main thread, before RocksDB closes (the writer halted first, so nothing
 * asks meanwhile): drop queued ranges, end a compaction in progress, wait
 * for the thread to be idle. */
void rockCompactHalt(void) {
    if (!rock_cp.running) return;
    pthread_mutex_lock(&rock_cp.lock);
    rock_cp.halted = 1;
    listNode *ln;
    while ((ln = listFirst(rock_cp.queue)) != NULL) {
        rockCompactFreeRange(listNodeValue(ln));
        listDelNode(rock_cp.queue, ln);
    }
    pthread_cond_broadcast(&rock_cp.cond);
    int busy = rock_cp.busy;
    pthread_mutex_unlock(&rock_cp.lock);
    /* Makes a running CompactRange return early (RocksDB waits for its
     * current job to stop); the store closes right after, and a reopened
     * one starts with manual compaction enabled. */
    if (busy && rock_store.db) rocksdb_disable_manual_compaction(rock_store.db);
    pthread_mutex_lock(&rock_cp.lock);
    while (rock_cp.busy) pthread_cond_wait(&rock_cp.cond, &rock_cp.lock);
    pthread_mutex_unlock(&rock_cp.lock);
}

/* After RocksDB reopened (a store reset). */
void rockCompactResume(void) {
    if (!rock_cp.running) return;
    pthread_mutex_lock(&rock_cp.lock);
    rock_cp.halted = 0;
    pthread_mutex_unlock(&rock_cp.lock);
}

/* Shutdown, after rockCompactHalt(). */
void rockCompactStop(void) {
    if (!rock_cp.running) return;
    pthread_mutex_lock(&rock_cp.lock);
    rock_cp.stop = 1;
    pthread_cond_broadcast(&rock_cp.cond);
    pthread_mutex_unlock(&rock_cp.lock);
    pthread_join(rock_cp.thread, NULL);
    rock_cp.running = 0;
    listRelease(rock_cp.queue);
    rock_cp.queue = NULL;
}

/* In a forked child: the thread does not exist there. */
void rockCompactDetachChild(void) {
    rock_cp.running = 0;
}

/* ROCK REPORT: flushed ranges compacted, and queued or in progress. */
void rockCompactStats(long long *done, long long *waiting) {
    atomicGet(rock_cp.done, *done);
    *waiting = 0;
    if (!rock_cp.running) return;
    pthread_mutex_lock(&rock_cp.lock);
    *waiting = listLength(rock_cp.queue) + rock_cp.busy;
    pthread_mutex_unlock(&rock_cp.lock);
}
