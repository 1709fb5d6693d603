/* rock_compact.c -- redis-rock: giving a flushed database's disk back.
 *
 * The threads layer (layer 2). FLUSHDB (and FLUSHALL while a fork stream
 * runs) drops a database's records with one range delete of its old
 * storage id (rock_write.c); the writer then asks this file for the range's
 * disk. Left alone, the records would stay on disk until compaction
 * happened to reach the range, which under a steady load can take minutes
 * and on an idle server forever. The soak's FLUSHDB, with its dataset
 * written again at once, had the old and new datasets and compaction's
 * outputs share rock-dir: 1,270-1,470 MB of 1,536 for a 490 MB dataset.
 *
 * One thread (a hand-off pool without results, rock_handoff.c) takes each
 * flushed range in turn, once no snapshot is held: a snapshot taken before
 * the delete (a fork's stream) still sees the records, and reads them
 * through fresh iterators until it ends. Then
 *  - the files wholly in the range go at once (DeleteFilesInRange, which
 *    ignores snapshots: hence the wait), unless blob files exist: RocksDB
 *    7.8 unlinks a deleted file's blob references without counting them as
 *    garbage, and a blob file orphaned so stays on disk until every older
 *    one has gone;
 *  - the rest is compacted (CompactRange, not exclusive, so RocksDB's own
 *    compactions and flushes go on beside it): the range tombstone goes down
 *    the levels with the covered records and drops them, blob references
 *    counted as garbage.
 * Ranges asked for meanwhile queue up.
 *
 * rockCompactHalt() (before RocksDB closes: shutdown, a store reset) drops
 * what is queued, pauses manual compaction so that one in progress ends at
 * once, and waits for the thread to be idle; rockCompactResume() after a
 * reopen. The thread does not exist in a forked child, which never asks. */

#include "server.h"

#include "rock_handoff.h"

#define ROCK_COMPACT_SNAPSHOT_POLL_MS 100

typedef struct rockCompactRange {
    sds start, end;
} rockCompactRange;

/* h.queue holds rockCompactRange *; h.lock guards it and the flags below;
 * h.done_cond is broadcast when the thread goes idle, h.stop_cond when
 * halted is set. */
static struct {
    rockHandoff h;
    int busy;   /* the thread works on a range */
    int halted; /* drop work: RocksDB is about to close */
    redisAtomic long long done; /* ranges given back (not counting halted ones) */
} rock_cp;

static void rockCompactFreeRange(rockCompactRange *r) {
    sdsfree(r->start);
    sdsfree(r->end);
    zfree(r);
}

/* The files wholly in [start, end), where `start` is a storage id alone and
 * `end` the next one. DeleteFilesInRange includes its end key, and `end` is
 * a possible live key of the next database: stop just under it, at this id
 * followed by 0xff bytes. */
static void rockCompactDeleteFiles(rockCompactRange *r) {
    char *err = NULL;
    char fend[4 + 16];
    memcpy(fend, r->start, 4);
    memset(fend + 4, 0xff, 16);
    rocksdb_delete_file_in_range(rock_store.db, r->start, sdslen(r->start), fend, sizeof(fend), &err);
    if (err) {
        serverLog(LL_WARNING, "rock: deleting a flushed database's files failed: %s", err);
        rocksdb_free(err);
    }
}

/* Returns 0 if halted before the range was given back. */
static int rockCompactOne(rockCompactRange *r) {
    /* A snapshot older than the delete still sees the records. One taken
     * later does not need them, but cannot be told apart: wait for none. */
    while (rockStoreProperty("rocksdb.num-snapshots") > 0) {
        if (rockThreadSleepOn(&rock_cp.h.lock, &rock_cp.h.stop_cond, &rock_cp.halted, ROCK_COMPACT_SNAPSHOT_POLL_MS))
            return 0;
    }
    if (sdslen(r->start) == 4 && rockStoreProperty("rocksdb.num-blob-files") == 0) rockCompactDeleteFiles(r);
    rocksdb_compactoptions_t *co = rocksdb_compactoptions_create();
    rocksdb_compactoptions_set_exclusive_manual_compaction(co, 0);
    /* No status comes back through the C API: a failure (a full disk) is
     * RocksDB's background error, which the writer's next batch meets. */
    rocksdb_compact_range_opt(rock_store.db, co, r->start, sdslen(r->start), r->end, sdslen(r->end));
    rocksdb_compactoptions_destroy(co);
    pthread_mutex_lock(&rock_cp.h.lock);
    int halted = rock_cp.halted;
    pthread_mutex_unlock(&rock_cp.h.lock);
    return !halted;
}

static void *rockCompactMain(void *arg) {
    rockHandoff *h = arg;
    rockThreadInit("rock_compact");
    pthread_mutex_lock(&h->lock);
    while (!h->stop) {
        if (listLength(h->queue) == 0 || rock_cp.halted) {
            pthread_cond_wait(&h->work, &h->lock);
            continue;
        }
        listNode *ln = listFirst(h->queue);
        rockCompactRange *r = listNodeValue(ln);
        listDelNode(h->queue, ln);
        rock_cp.busy = 1;
        pthread_mutex_unlock(&h->lock);
        if (rockCompactOne(r)) atomicIncr(rock_cp.done, 1);
        rockCompactFreeRange(r);
        pthread_mutex_lock(&h->lock);
        rock_cp.busy = 0;
        pthread_cond_broadcast(&h->done_cond);
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

void rockCompactStart(void) {
    if (rockHandoffRunning(&rock_cp.h)) return;
    if (rock_cp.h.queue == NULL) rockHandoffInit(&rock_cp.h, "compaction", NULL, NULL);
    rock_cp.busy = rock_cp.halted = 0;
    rockHandoffStart(&rock_cp.h, 1, rockCompactMain);
}

/* Any thread (the writer, after committing a FLUSHDB's range delete): ask
 * for [start, end)'s disk back. */
void rockCompactAsk(const char *start, size_t start_len, const char *end, size_t end_len) {
    if (!rockHandoffRunning(&rock_cp.h)) return;
    rockCompactRange *r = zmalloc(sizeof(*r));
    r->start = sdsnewlen(start, start_len);
    r->end = sdsnewlen(end, end_len);
    pthread_mutex_lock(&rock_cp.h.lock);
    if (rock_cp.halted) {
        pthread_mutex_unlock(&rock_cp.h.lock);
        rockCompactFreeRange(r);
        return;
    }
    listAddNodeTail(rock_cp.h.queue, r);
    pthread_cond_signal(&rock_cp.h.work);
    pthread_mutex_unlock(&rock_cp.h.lock);
}

/* Main thread, before RocksDB closes (the writer halted first, so nothing
 * asks meanwhile): drop queued ranges, end a compaction in progress, wait
 * for the thread to be idle. */
void rockCompactHalt(void) {
    rockHandoff *h = &rock_cp.h;
    if (!rockHandoffRunning(h)) return;
    pthread_mutex_lock(&h->lock);
    rock_cp.halted = 1;
    listNode *ln;
    while ((ln = listFirst(h->queue)) != NULL) {
        rockCompactFreeRange(listNodeValue(ln));
        listDelNode(h->queue, ln);
    }
    pthread_cond_broadcast(&h->stop_cond);
    int busy = rock_cp.busy;
    pthread_mutex_unlock(&h->lock);
    /* Makes a running CompactRange return early (RocksDB waits for its
     * current job to stop); the store closes right after, and a reopened
     * one starts with manual compaction enabled. */
    if (busy && rock_store.db) rocksdb_disable_manual_compaction(rock_store.db);
    pthread_mutex_lock(&h->lock);
    while (rock_cp.busy) pthread_cond_wait(&h->done_cond, &h->lock);
    pthread_mutex_unlock(&h->lock);
}

/* After RocksDB reopened (a store reset). */
void rockCompactResume(void) {
    if (!rockHandoffRunning(&rock_cp.h)) return;
    pthread_mutex_lock(&rock_cp.h.lock);
    rock_cp.halted = 0;
    pthread_mutex_unlock(&rock_cp.h.lock);
}

/* Shutdown, after rockCompactHalt(). */
void rockCompactStop(void) {
    rockHandoffStop(&rock_cp.h);
}

/* In a forked child: the thread does not exist there. */
void rockCompactDetachChild(void) {
    rockHandoffDetachChild(&rock_cp.h);
}

/* ROCK REPORT: flushed ranges given back, and queued or in progress. */
void rockCompactStats(long long *done, long long *waiting) {
    atomicGet(rock_cp.done, *done);
    *waiting = 0;
    if (!rockHandoffRunning(&rock_cp.h)) return;
    pthread_mutex_lock(&rock_cp.h.lock);
    *waiting = listLength(rock_cp.h.queue) + rock_cp.busy;
    pthread_mutex_unlock(&rock_cp.h.lock);
}
