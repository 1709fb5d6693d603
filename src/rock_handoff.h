/* rock_handoff.h -- redis-rock: the hand-off between the event loop and a
 * tier thread pool (layer 2, rock_handoff.c).
 *
 * Both of the tier's thread kinds, the writer (rock_write.c) and the reader
 * pool (rock_readers.c), work the same way, as upstream's bio.c does: the
 * main thread queues work under a lock and signals a condition; a thread
 * takes work, does it without the lock, and hands the result back on a
 * `done` list; a pipe wakes the event loop, which drains that list on the
 * main thread. This is that mechanism, written once. What a thread does with
 * its work, and what the main thread does with a result, stay with the pool.
 * A pool whose threads hand nothing back (the compaction thread,
 * rock_compact.c) has no completion function and no pipe.
 * `queue` and `stop` are guarded by `lock`, as are any fields of the pool's
 * own that its thread loop reads together with them. */

#ifndef __REDIS_ROCK_HANDOFF_H
#define __REDIS_ROCK_HANDOFF_H

#include "server.h"

#include <pthread.h>

/* Wait on `cond` (created with CLOCK_MONOTONIC; `lock` held) for at most
 * `us` microseconds. Returns pthread_cond_timedwait()'s result. */
static inline int rockCondWaitUs(pthread_cond_t *cond, pthread_mutex_t *lock, long long us) {
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += us / 1000000;
    deadline.tv_nsec += (us % 1000000) * 1000;
    if (deadline.tv_nsec >= 1000000000) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000;
    }
    return pthread_cond_timedwait(cond, lock, &deadline);
}

/* A thread of the tier sleeps up to `ms` on `cond` (created with
 * CLOCK_MONOTONIC), less when *stop is set under `lock` and `cond`
 * broadcast. Returns the stop flag. Used for a writer's retry wait and the
 * debug delays, so that shutdown never waits them out. */
static inline int rockThreadSleepOn(pthread_mutex_t *lock, pthread_cond_t *cond, int *stop, long long ms) {
    monotime until = getMonotonicUs() + ms * 1000;
    pthread_mutex_lock(lock);
    while (!*stop) {
        monotime now = getMonotonicUs();
        if (now >= until || rockCondWaitUs(cond, lock, until - now) == ETIMEDOUT) break;
    }
    int stopped = *stop;
    pthread_mutex_unlock(lock);
    return stopped;
}

typedef void rockHandoffCompleteProc(void *result);
typedef void rockHandoffDrainedProc(void);

typedef struct rockHandoff {
    const char *name;          /* "reader", "writer": in fatal log lines */
    pthread_mutex_t lock;      /* guards queue, done, stop */
    pthread_cond_t work;       /* queue has work, or stop (or the pool's own ask) */
    pthread_cond_t done_cond;  /* a result was handed back */
    pthread_cond_t stop_cond;  /* wakes a thread's sleep early: stop (or the pool's own halt) */
    list *queue;               /* work waiting for a thread */
    list *done;                /* results waiting for the main thread */
    int stop;
    int pipe_rd, pipe_wr;      /* wakes the event loop */
    pthread_t *threads;        /* NULL: not running (or a forked child) */
    int nthreads;
    void *(*main)(void *);
    rockHandoffCompleteProc *complete; /* main thread: each result */
    rockHandoffDrainedProc *drained;   /* main thread: after a wake-up's pass, or NULL */
} rockHandoff;

void rockHandoffInit(rockHandoff *h, const char *name, rockHandoffCompleteProc *complete,
                     rockHandoffDrainedProc *drained);
void rockHandoffStart(rockHandoff *h, int nthreads, void *(*main)(void *));
void rockHandoffStop(rockHandoff *h);
/* Are the threads running (not stopped, not in a forked child)? */
static inline int rockHandoffRunning(const rockHandoff *h) {
    return h->threads != NULL;
}
void rockHandoffDetachChild(rockHandoff *h);
void rockHandoffGiveBack(rockHandoff *h, void **results, int n);
int rockHandoffSleep(rockHandoff *h, long long ms);
void rockHandoffDrain(rockHandoff *h);

#endif /* __REDIS_ROCK_HANDOFF_H */
