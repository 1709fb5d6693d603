/* rock_handoff.c -- redis-rock: the event loop <-> tier threads hand-off.
 *
 * Layer 2, under the writer (rock_write.c), the reader pool
 * (rock_readers.c) and the compaction thread (rock_compact.c, which hands
 * nothing back: no pipe). It owns the mechanics they share
 * (rock_handoff.h): the lock and conditions, the wake-up pipe and its file
 * event, handing results back from a thread and draining them on the main
 * thread, starting, stopping and joining the threads, a thread's
 * interruptible sleep, and a forked child's view (no threads; the pipe
 * stays the parent's). */

#include "server.h"
#include "rock_handoff.h"

#include <fcntl.h>

/* The wake-up pipe's file event: drain the results handed back, then call
 * the pool's `drained` function. */
static void rockHandoffWake(aeEventLoop *el, int fd, void *privdata, int mask) {
    UNUSED(el); UNUSED(mask);
    rockHandoff *h = privdata;
    if (server.in_fork_child) return; /* the parent's wake-up */
    char buf[64];
    while (read(fd, buf, sizeof(buf)) > 0);
    rockHandoffDrain(h);
    if (h->drained) h->drained();
}

/* The wake-up pipe, watched by the event loop. Fatal on failure. */
static void rockHandoffPipe(rockHandoff *h) {
    int fds[2];
    if (pipe(fds) == -1 || anetNonBlock(NULL, fds[0]) == ANET_ERR || anetNonBlock(NULL, fds[1]) == ANET_ERR) {
        serverLog(LL_WARNING, "Fatal: rock: can't create the %s wake-up pipe: %s", h->name, strerror(errno));
        exit(1);
    }
    anetCloexec(fds[0]);
    anetCloexec(fds[1]);
    h->pipe_rd = fds[0];
    h->pipe_wr = fds[1];
    if (aeCreateFileEvent(server.el, h->pipe_rd, AE_READABLE, rockHandoffWake, h) == AE_ERR) {
        serverLog(LL_WARNING, "Fatal: rock: can't watch the %s wake-up pipe", h->name);
        exit(1);
    }
}

/* Set up `h` (its threads are started by rockHandoffStart()): the lock and
 * conditions (monotonic clock, for timed waits), the lists, and the wake-up
 * pipe watched by the event loop, unless `complete` is NULL (a pool whose
 * threads hand nothing back: rock_compact.c). Fatal on failure, at
 * start-up. */
void rockHandoffInit(rockHandoff *h, const char *name, rockHandoffCompleteProc *complete,
                     rockHandoffDrainedProc *drained) {
    h->name = name;
    h->complete = complete;
    h->drained = drained;
    h->pipe_rd = h->pipe_wr = -1;
    if (complete) rockHandoffPipe(h);
    pthread_mutex_init(&h->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&h->work, &attr);
    pthread_cond_init(&h->done_cond, &attr);
    pthread_cond_init(&h->stop_cond, &attr);
    pthread_condattr_destroy(&attr);
    h->queue = listCreate();
    h->done = listCreate();
}

/* Start `nthreads` threads running `main` (again, after a stop). */
void rockHandoffStart(rockHandoff *h, int nthreads, void *(*main)(void *)) {
    h->main = main;
    h->nthreads = nthreads;
    h->threads = zmalloc(sizeof(pthread_t) * nthreads);
    for (int j = 0; j < nthreads; j++) {
        if (pthread_create(&h->threads[j], NULL, main, h) != 0) {
            serverLog(LL_WARNING, "Fatal: rock: can't start %s thread %d", h->name, j);
            exit(1);
        }
    }
}

/* Set `stop`, wake every thread (and its sleeps), join them. Work still
 * queued stays queued: each pool decides what its threads do with it when
 * they see `stop` (the readers leave it; the writer finishes it). */
void rockHandoffStop(rockHandoff *h) {
    if (h->threads == NULL) return;
    pthread_mutex_lock(&h->lock);
    h->stop = 1;
    pthread_cond_broadcast(&h->work);
    pthread_cond_broadcast(&h->stop_cond);
    pthread_mutex_unlock(&h->lock);
    for (int j = 0; j < h->nthreads; j++) pthread_join(h->threads[j], NULL);
    zfree(h->threads);
    h->threads = NULL;
    h->stop = 0;
}

/* In a forked child: the threads do not exist. The wake-up pipe is the
 * parent's; it stays registered (the epoll instance is shared with the
 * parent: unregistering it here would unregister it there), and its handler
 * does nothing in a child. */
void rockHandoffDetachChild(rockHandoff *h) {
    h->threads = NULL;
}

/* A thread hands `n` results back to the main thread, waking the event loop
 * if the done list was empty (else it is due to wake already). */
void rockHandoffGiveBack(rockHandoff *h, void **results, int n) {
    pthread_mutex_lock(&h->lock);
    int wake = listLength(h->done) == 0;
    for (int j = 0; j < n; j++) listAddNodeTail(h->done, results[j]);
    pthread_cond_broadcast(&h->done_cond);
    pthread_mutex_unlock(&h->lock);
    if (wake && write(h->pipe_wr, "x", 1) == -1) {
        /* Pipe full: the main thread is already due to wake up. */
    }
}

/* A thread sleeps up to `ms` (a retry wait, a debug delay), less when the
 * pool stops. Returns the stop flag. */
int rockHandoffSleep(rockHandoff *h, long long ms) {
    return rockThreadSleepOn(&h->lock, &h->stop_cond, &h->stop, ms);
}

/* Main thread: hand every result back so far to the pool's completion
 * function, in order. Called on a wake-up, and directly by a pool that
 * waits for its threads (the writer's flush), which skips `drained`. */
void rockHandoffDrain(rockHandoff *h) {
    pthread_mutex_lock(&h->lock);
    list *done = h->done;
    h->done = listCreate();
    pthread_mutex_unlock(&h->lock);
    listNode *ln;
    while ((ln = listFirst(done)) != NULL) {
        void *result = listNodeValue(ln);
        listDelNode(done, ln);
        h->complete(result);
    }
    listRelease(done);
}
